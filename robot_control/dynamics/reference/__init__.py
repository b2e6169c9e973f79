"""Reference dynamics models (slow, exact oracles for the compiled algorithms)."""
