"""The simulated plant (integration, friction, contact, sensors), offline simulation, scenario
files, reports and plots. Submodules are imported where used (plotting pulls in matplotlib)."""
