"""joint_trajectory_controller's variable-degree splines, as the quintic knots this package sends.

ros2_controllers' JTC interpolates between two waypoints with the polynomial their common fields
determine (``interpolate_between_points``): positions only → linear, positions and velocities →
cubic (Hermite), positions, velocities and accelerations → quintic (Huo Ex. 3-7). Here the same
segments are built, and the motion is expressed as knots (time, q, q̇, q̈) from which the
controller rebuilds a piecewise quintic (trajectory/schedule.py): a polynomial of degree ≤ 5
is its own quintic Hermite interpolant, so each segment is reproduced exactly.

Where neighbouring segments do not meet in velocity or acceleration (a linear or cubic spline's
corner — an impulse in JTC), one knot cannot carry both sides: the left segment is cut ``blend``
seconds short of the corner and a quintic joins its state there to the right segment's state at
the corner, so the reference stays C² and its acceleration finite. After the last point the
reference holds at rest (JTC zero-fills velocity and acceleration there), joined the same way.

Unlike JTC, the segment into the first waypoint always starts from the full current reference
(q, q̇, q̈) and ends with the first segment's state: continuity across a new goal is kept
whatever fields the waypoints carry (JTC interpolates linearly from the state to point 0).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from robot_control.trajectory.quintic import derivative_rows, powers, quintic_coefficients

Array = NDArray[np.float64]
Knots = tuple[Array, Array, Array, Array]

#: knot states closer than this (relative to their size) are the same state (no corner)
SAME_STATE = 1e-12


def linear_coefficients(p0: Array, p1: Array, T: float) -> Array:
    """(6, n) coefficients of q(τ) = p₀ + (p₁ − p₀) τ / T (JTC's positions-only segment)."""
    a = np.zeros((6, p0.size))
    a[0] = p0
    a[1] = (p1 - p0) / T
    return a


def cubic_coefficients(p0: Array, v0: Array, p1: Array, v1: Array, T: float) -> Array:
    """(6, n) coefficients of the cubic Hermite meeting (p, q̇) at both ends (JTC's cubic)."""
    a = np.zeros((6, p0.size))
    a[0] = p0
    a[1] = v0
    a[2] = (3.0 * (p1 - p0) / T - 2.0 * v0 - v1) / T
    a[3] = (2.0 * (p0 - p1) / T + v0 + v1) / T**2
    return a


def segment_coefficients(p0, v0, a0, p1, v1, a1, T: float) -> Array:
    """The polynomial JTC puts between two points: degree from the fields both give (None =
    not given); accelerations without velocities count as positions only, as in JTC."""
    if v0 is None or v1 is None:
        return linear_coefficients(p0, p1, T)
    if a0 is None or a1 is None:
        return cubic_coefficients(p0, v0, p1, v1, T)
    return quintic_coefficients(p0, v0, a0, p1, v1, a1, T)


def state_at(a: Array, tau: float) -> Array:
    """(3, n): (q, q̇, q̈) of the polynomial with coefficients ``a`` at τ."""
    return powers(tau) @ derivative_rows(a)


def _row(X: Array | None, i: int) -> Array | None:
    """Point i's values of an optional (k, n) field (NaN row = this point leaves it out)."""
    if X is None or np.isnan(X[i]).any():
        return None
    return X[i]


def _same(x: Array, y: Array) -> bool:
    return bool(np.all(np.abs(x - y) <= SAME_STATE * (1.0 + np.abs(x) + np.abs(y))))


def spline_knots(start: Array, times: Array, P: Array, V: Array | None, A: Array | None,
                 blend: float) -> Knots:
    """Knots of the motion from the current reference ``start`` (3, n) at time 0 through the
    waypoints at ``times`` (> 0, increasing) with JTC's variable-degree segments.

    P is (k, n); V and A are (k, n) or None, a NaN row where a point leaves the field out.
    ``blend`` (s) is the length of the quintic that rounds a corner (capped at half the segment
    before it).
    """
    k, n = P.shape
    coeffs = [segment_coefficients(P[i], _row(V, i), _row(A, i), P[i + 1], _row(V, i + 1),
                                   _row(A, i + 1), times[i + 1] - times[i]) for i in range(k - 1)]
    # point 0 is reached with the state its segment leaves with (a single point: at rest, the
    # hold that follows it), so the quintic from the start needs no corner there
    first = state_at(coeffs[0], 0.0) if coeffs else rest_state(P[0], n)
    out_t, out_x = [0.0, times[0]], [np.asarray(start, dtype=float), first]
    for i in range(1, k):
        right = state_at(coeffs[i], 0.0) if i < k - 1 else rest_state(P[-1], n)
        T = times[i] - times[i - 1]
        left = state_at(coeffs[i - 1], T)
        if not _same(left, right):  # a corner: round it over the last ``h`` of the segment
            h = min(blend, 0.5 * T)
            out_t.append(times[i] - h)
            out_x.append(state_at(coeffs[i - 1], T - h))
        out_t.append(times[i])
        out_x.append(right)
    X = np.stack(out_x)
    return np.asarray(out_t), X[:, 0].copy(), X[:, 1].copy(), X[:, 2].copy()


def rest_state(q: Array, n: int) -> Array:
    """(3, n): q at rest."""
    s = np.zeros((3, n))
    s[0] = q
    return s
