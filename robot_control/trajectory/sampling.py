"""Compiled sampling of piecewise quintics (JointTrajectory, Hold) and of finite Fourier series
(FourierExcitation), shared by every caller.

The scalar ``sample(t)`` of a trajectory node, the vectorised ``sample(times)`` and the compiled
offline simulation all evaluate the reference with these kernels, so they agree to the last
bit (a lockstep run over the bus reproduces the offline run exactly).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def sample_into(knots, rows, first, last, t, out):
    """(q, q̇, q̈) at t into out (3, n): Σ_k τᵏ D_k of the segment holding t (Huo Ex. 3-7).

    ``rows`` (m, 3, 6, n) are the segments' ``derivative_rows``, ``first`` (3, n) the state at
    the first knot, held before it; after the last knot (or with a single knot) the last
    position ``last`` is held at rest.
    """
    n = out.shape[1]
    m = rows.shape[0]
    if t > knots[-1] or m == 0:
        for j in range(n):
            out[0, j] = last[j]
            out[1, j] = 0.0
            out[2, j] = 0.0
        return
    if t <= knots[0]:
        for r in range(3):
            for j in range(n):
                out[r, j] = first[r, j]
        return
    # the last knot ≤ t: np.searchsorted(knots, t, "right") − 1 by bisection (numba's version
    # brings its array library into every caller's cache load, ~0.1 s per process)
    lo, hi = 0, knots.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if not knots[mid] > t:  # NaN sorts last, as in numpy
            lo = mid + 1
        else:
            hi = mid
    i = lo - 1
    if i > m - 1:
        i = m - 1
    tau = t - knots[i]
    t2 = tau * tau
    t3 = t2 * tau
    t4 = t3 * tau
    t5 = t3 * t2
    D = rows[i]
    for r in range(3):
        for j in range(n):
            out[r, j] = (D[r, 0, j] + tau * D[r, 1, j] + t2 * D[r, 2, j] + t3 * D[r, 3, j]
                         + t4 * D[r, 4, j] + t5 * D[r, 5, j])


@njit(cache=True)
def sample_many(knots, rows, first, last, times, out):
    """``sample_into`` at each of ``times``; out is (k, 3, n)."""
    for k in range(times.shape[0]):
        sample_into(knots, rows, first, last, times[k], out[k])


# A finite Fourier series packed for ``series_sample_into`` (excitation.series_table): row 0 its
# start time, duration and harmonics L; row 1 the frequencies lω_f; then n rows each of a_jl/(lω_f),
# b_jl/(lω_f), a_jl, b_jl (L columns), and q_j0 in column 0 of the last n rows.
F_START, F_DURATION, F_HARMONICS = 0, 1, 2
F_FREQ, F_ROWS = 1, 2


@njit(cache=True)
def series_sample_into(table, t, out):
    """(q, q̇, q̈) at t into out (3, n) of q_j = q_j0 + Σ_l [a_jl/(lω_f) sin(lω_f τ) − b_jl/(lω_f)
    cos(lω_f τ)], τ = t − start clamped to [0, duration] (Swevers et al. 1997; excitation.py)."""
    n = out.shape[1]
    L = int(table[0, F_HARMONICS])
    tau = min(max(t - table[0, F_START], 0.0), table[0, F_DURATION])
    A, B = F_ROWS, F_ROWS + n
    a, b, centre = F_ROWS + 2 * n, F_ROWS + 3 * n, F_ROWS + 4 * n
    for j in range(n):
        out[0, j] = 0.0
        out[1, j] = 0.0
        out[2, j] = 0.0
    for l in range(L):  # noqa: E741 (the series' index, as in the formula)
        w = table[F_FREQ, l]
        s = np.sin(w * tau)
        c = np.cos(w * tau)
        for j in range(n):
            out[0, j] += table[A + j, l] * s - table[B + j, l] * c
            out[1, j] += table[a + j, l] * c + table[b + j, l] * s
            out[2, j] += w * (table[b + j, l] * c - table[a + j, l] * s)
    for j in range(n):
        out[0, j] = table[centre + j, 0] + out[0, j]


@njit(cache=True)
def series_sample_many(table, times, out):
    """``series_sample_into`` at each of ``times``; out is (k, 3, n)."""
    for k in range(times.shape[0]):
        series_sample_into(table, times[k], out[k])
