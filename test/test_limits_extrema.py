"""The limits' compiled polynomial extrema (trajectory/limits.py ``unit_extrema``) are the ones
its source computes when Python runs it, bit for bit, and they bound a dense sampling: the
compiled code is the algorithm as written, whatever was done to make it cheaper to compile."""

from __future__ import annotations

import numpy as np

from robot_control.trajectory.limits import unit_extrema


def quintic_rows(count: int, seed: int) -> np.ndarray:
    """Rows of six ascending coefficients, with several interior extremes in [0, 1] among them."""
    rng = np.random.default_rng(seed)
    rows = rng.normal(size=(count, 6)) * np.logspace(0, 2, 6)
    rows[::7, 3:] = 0.0  # cubics, a line's and a constant's levels of the chain
    rows[::11, 1:] = 0.0
    return rows


def test_compiled_extrema_are_the_interpreted_source_bit_for_bit() -> None:
    rows = quintic_rows(200, 1)
    compiled, interpreted = np.zeros((len(rows), 4)), np.zeros((len(rows), 4))
    unit_extrema(rows, compiled)
    unit_extrema.py_func(rows, interpreted)
    assert np.array_equal(compiled, interpreted)


def test_extrema_bound_a_dense_sampling_and_are_reached() -> None:
    rows = quintic_rows(200, 2)
    out = np.zeros((len(rows), 4))
    unit_extrema(rows, out)
    s = np.linspace(0.0, 1.0, 20001)
    values = np.polynomial.polynomial.polyval(s, rows.T)  # (rows, samples)
    scale = np.abs(rows).sum(axis=1)
    assert np.all(out[:, 0] <= values.min(axis=1) + 1e-12 * scale)
    assert np.all(out[:, 2] >= values.max(axis=1) - 1e-12 * scale)
    at_min = np.polynomial.polynomial.polyval(out[:, 1], rows.T).diagonal()
    at_max = np.polynomial.polynomial.polyval(out[:, 3], rows.T).diagonal()
    assert np.allclose(at_min, out[:, 0], rtol=0, atol=1e-12 * scale.max())
    assert np.allclose(at_max, out[:, 2], rtol=0, atol=1e-12 * scale.max())
    assert np.all((out[:, [1, 3]] >= 0.0) & (out[:, [1, 3]] <= 1.0))
