"""Compiled sampling of piecewise quintics (JointTrajectory, Hold), shared by every caller.

The scalar ``sample(t)`` of a trajectory node, the vectorised ``sample(times)`` and the compiled
offline simulation all evaluate the reference with this one kernel, so they agree to the last
bit (a lockstep run over the bus reproduces the offline run exactly).
"""

from __future__ import annotations

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
