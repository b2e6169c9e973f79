"""The README's Python API example runs as printed and its comments hold: Y θ = τ, ABA inverts
RNEA, Ṁ − 2C skew-symmetric (checked with the example's own M and C), (A, B) of the right shape."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

# slow (scripts/test.sh --slow): the README's Python example, run whole
pytestmark = pytest.mark.slow

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_the_readme_python_example_runs_and_its_comments_hold():
    blocks = python_blocks()
    assert blocks, "the README shows no Python example"
    rng = np.random.default_rng(7)
    q, qd, qdd = (rng.uniform(-1.0, 1.0, 6) for _ in range(3))
    names = {"q": q, "qd": qd, "qdd": qdd}
    for block in blocks:
        exec(compile(block, str(README), "exec"), names)  # noqa: S102 (the README's own code)
    model, dyn = names["model"], names["dyn"]
    tau = names["tau"]
    assert np.allclose(names["qdd"], qdd, atol=1e-9)  # forward dynamics of RNEA's τ
    assert np.allclose(names["Y"] @ model.inertial_parameters(), tau, atol=1e-9)
    h = 1e-7  # Ṁ by a central difference along q̇
    Mdot = (dyn.mass_matrix(model, q + h * qd) - dyn.mass_matrix(model, q - h * qd)) / (2 * h)
    N = Mdot - 2 * names["C"]
    assert np.allclose(N, -N.T, atol=1e-5)
    assert names["M"].shape == (6, 6)
    assert names["A"].shape == (12, 12) and names["B"].shape == (12, 6)
