"""Task-space quintic between two end-effector poses, for the task-space laws (Huo C5, C13, C14).

Both position and orientation follow the normalised rest-to-rest quintic s(τ) = 10σ³ − 15σ⁴ + 6σ⁵,
σ = τ/T (Huo Ex. 3-7 with zero boundary rates):
    p(t) = p₀ + s(t) (p₁ − p₀)                      a straight line,
    R(t) = R₀ exp(s(t) [w]),  w = log(R₀ᵀ R₁)       the geodesic (constant axis, angle s·|w|).
Rates in the base frame, angular first as in ``foundation.spatial``: ω = R₀ w ṡ (exp(s[w]) leaves
w fixed), v = (p₁ − p₀) ṡ, and the classical accelerations ω̇ = R₀ w s̈, a = (p₁ − p₀) s̈ — the same
(ω; v of the frame origin) convention as ``jacobian(reference="world")`` and ``jacobian_dot_qd``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from robot_control.foundation.spatial import rotation_log, skew
from robot_control.trajectory.quintic import Quintic

Array = NDArray[np.float64]


def _check_pose(T: ArrayLike, what: str) -> Array:
    T = np.asarray(T, dtype=float)
    if T.shape != (4, 4) or not np.all(np.isfinite(T)):
        raise ValueError(f"{what} must be a finite 4×4 homogeneous transform")
    R = T[:3, :3]
    if (np.abs(R.T @ R - np.eye(3)).max() > 1e-6 or np.linalg.det(R) < 0.0
            or np.abs(T[3] - [0.0, 0.0, 0.0, 1.0]).max() > 0.0):
        raise ValueError(f"{what} is not a proper rigid transform (R orthonormal, det +1, last "
                         "row 0 0 0 1)")
    return T.copy()


class CartesianQuintic:
    """Pose trajectory from ``start`` to ``goal`` (4×4, base frame) in ``duration`` seconds.

    ``sample(t)`` returns (pose 4×4, twist (ω, v), acceleration (ω̇, a)); the start pose at rest
    before ``start_time`` and the goal pose at rest after the end.
    """

    dof = 6

    def __init__(self, start: ArrayLike, goal: ArrayLike, duration: float,
                 start_time: float = 0.0) -> None:
        self.start = _check_pose(start, "start pose")
        self.goal = _check_pose(goal, "goal pose")
        self.profile = Quintic(0.0, 1.0, duration, start_time=start_time)
        self.duration = self.profile.duration
        self.start_time = self.profile.start_time
        R0 = self.start[:3, :3]
        self.axis_angle = rotation_log(R0.T @ self.goal[:3, :3])   # w, in the start frame
        self.angle = float(np.linalg.norm(self.axis_angle))
        K = skew(self.axis_angle / self.angle) if self.angle > 0.0 else np.zeros((3, 3))
        # Rodrigues with the axis fixed: R(s) = R₀ + sin(sθ) R₀K + (1 − cos(sθ)) R₀K².
        self._R0, self._R0K, self._R0K2 = R0, R0 @ K, R0 @ K @ K
        self._omega_dir = R0 @ self.axis_angle                      # w in the base frame
        self._p0 = self.start[:3, 3].copy()
        self._dp = self.goal[:3, 3] - self._p0

    @property
    def end_time(self) -> float:
        return self.start_time + self.duration

    def sample(self, t: float | ArrayLike) -> tuple[Array, Array, Array]:
        """(pose, twist, acceleration) at t: (4, 4), (6,), (6,) — or (k, 4, 4), (k, 6), (k, 6)."""
        s, sd, sdd = self.profile.sample(t)
        if np.ndim(t) == 0:
            s, sd, sdd = float(s[0]), float(sd[0]), float(sdd[0])
            phi = s * self.angle
            T = np.eye(4)
            T[:3, :3] = self._R0 + np.sin(phi) * self._R0K + (1.0 - np.cos(phi)) * self._R0K2
            T[:3, 3] = self._p0 + s * self._dp
            twist = np.concatenate((sd * self._omega_dir, sd * self._dp))
            acc = np.concatenate((sdd * self._omega_dir, sdd * self._dp))
            return T, twist, acc
        s, sd, sdd = s[:, 0], sd[:, 0], sdd[:, 0]
        phi = (s * self.angle)[:, None, None]
        T = np.tile(np.eye(4), (s.size, 1, 1))
        T[:, :3, :3] = self._R0 + np.sin(phi) * self._R0K + (1.0 - np.cos(phi)) * self._R0K2
        T[:, :3, 3] = self._p0 + s[:, None] * self._dp
        twist = np.hstack((sd[:, None] * self._omega_dir, sd[:, None] * self._dp))
        acc = np.hstack((sdd[:, None] * self._omega_dir, sdd[:, None] * self._dp))
        return T, twist, acc


# A path of consecutive CartesianQuintic segments packed one row per segment for compiled
# sampling: start, end, duration, the profile's final s, the angle |w|, the profile's
# derivative rows (3 × 6), then R₀, R₀K, R₀K² (row-major), ω direction R₀w, p₀ and p₁ − p₀.
P_START, P_END, P_DURATION, P_FINAL, P_ANGLE, P_ROWS = 0, 1, 2, 3, 4, 5
P_R0, P_R0K, P_R0K2, P_OMEGA, P_P0, P_DP = 23, 32, 41, 50, 53, 56
PCOLS = 59


def path_table(segments: list[CartesianQuintic]) -> Array:
    """The (segments, PCOLS) table ``path_sample_into`` reads."""
    table = np.zeros((len(segments), PCOLS))
    for row, seg in zip(table, segments):
        row[P_START], row[P_END], row[P_DURATION] = seg.start_time, seg.end_time, seg.duration
        row[P_FINAL], row[P_ANGLE] = seg.profile._final[0], seg.angle
        row[P_ROWS : P_ROWS + 18] = seg.profile._rows[:, :, 0].ravel()
        for col, value in ((P_R0, seg._R0), (P_R0K, seg._R0K), (P_R0K2, seg._R0K2)):
            row[col : col + 9] = value.ravel()
        row[P_OMEGA : P_OMEGA + 3], row[P_P0 : P_P0 + 3] = seg._omega_dir, seg._p0
        row[P_DP : P_DP + 3] = seg._dp
    return table


@njit(cache=True)
def path_sample_into(table, t, T, rates):
    """(pose, twist, acceleration) of the segment active at t (the first with t < end, else the
    last): s(τ) = Σ τᵏ a_k clamped to [0, T], R = R₀ + sin(sθ)R₀K + (1 − cos(sθ))R₀K²,
    p = p₀ + s Δp, (ω; v) = ṡ(R₀w; Δp), (ω̇; a) = s̈(R₀w; Δp) (module docstring, Huo Ex. 3-7)."""
    k = table.shape[0] - 1
    for i in range(table.shape[0]):
        if t < table[i, P_END]:
            k = i
            break
    row = table[k]
    tau = t - row[P_START]
    if tau > row[P_DURATION]:
        s, sd, sdd = row[P_FINAL], 0.0, 0.0
    else:
        tau = tau if tau > 0.0 else 0.0
        t2 = tau * tau
        t3 = t2 * tau
        powers = (1.0, tau, t2, t3, t3 * tau, t3 * t2)
        s, sd, sdd = 0.0, 0.0, 0.0
        for j in range(6):
            s += powers[j] * row[P_ROWS + j]
            sd += powers[j] * row[P_ROWS + 6 + j]
            sdd += powers[j] * row[P_ROWS + 12 + j]
    phi = s * row[P_ANGLE]
    sin, versine = math.sin(phi), 1.0 - math.cos(phi)
    for r in range(3):
        for c in range(3):
            T[r, c] = (row[P_R0 + 3 * r + c] + sin * row[P_R0K + 3 * r + c]
                       + versine * row[P_R0K2 + 3 * r + c])
        T[r, 3] = row[P_P0 + r] + s * row[P_DP + r]
        T[3, r] = 0.0
        rates[r] = sd * row[P_OMEGA + r]
        rates[3 + r] = sd * row[P_DP + r]
        rates[6 + r] = sdd * row[P_OMEGA + r]
        rates[9 + r] = sdd * row[P_DP + r]
    T[3, 3] = 1.0
