"""Joint-space references: a set point (``Hold``) and quintics through waypoints.

All share the ``Trajectory`` protocol (``dof``, ``start_time``, ``duration``, ``sample(t)``), so a
controller loop samples any of them the same way.

Via-point rules, used where a knot's velocity or acceleration is not given:
- velocity (Craig §7.3 heuristic): the mean of the adjacent segment slopes d = Δq/T, or 0 where
  the slope changes sign or either slope is 0 (the joint turns round or pauses there);
- acceleration, ``via_accelerations="parabola"`` (default): 2(d_k − d_{k−1})/(T_{k−1} + T_k), the
  curvature of the parabola through the three neighbouring waypoints, so the joint already bends
  the right way at a turning point; ``"zero"``: q̈ = 0 at every via point.
- first and last knots: at rest (q̇ = q̈ = 0).
Every segment is the quintic (Huo Ex. 3-7) matching both of its knot states, so velocity and
acceleration are continuous at the via points whatever values the rules pick (C²).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from robot_control.trajectory.limits import LimitChecks, Piece, limit_vector, peak_ratios
from robot_control.trajectory.quintic import (
    REST_TO_REST_PEAK_ACCELERATION,
    REST_TO_REST_PEAK_VELOCITY,
    Quintic,
    derivative_rows,
    quintic_coefficients,
)
from robot_control.trajectory.sampling import sample_into, sample_many

Array = NDArray[np.float64]
VIA_ACCELERATION_RULES = ("parabola", "zero")


@runtime_checkable
class Trajectory(Protocol):
    """What a controller needs from a joint-space reference."""

    dof: int
    start_time: float
    duration: float

    def sample(self, t: float | ArrayLike) -> tuple[Array, Array, Array]:
        """(q_d, q̇_d, q̈_d) at time t: (n,) each for scalar t, (k, n) for k times."""
        ...


class Hold(LimitChecks):
    """A constant set point q at rest for all time."""

    duration = 0.0

    def __init__(self, q: ArrayLike, start_time: float = 0.0,
                 joint_names: Sequence[str] | None = None) -> None:
        self.q = np.atleast_1d(np.asarray(q, dtype=float)).copy()
        if self.q.ndim != 1 or not np.all(np.isfinite(self.q)):
            raise ValueError("a hold set point must be a finite 1-D vector")
        self.dof = self.q.size
        self.start_time = float(start_time)
        self.joint_names = list(joint_names) if joint_names else None

    def sample(self, t: float | ArrayLike) -> tuple[Array, Array, Array]:
        if np.ndim(t) == 0:
            return self.q.copy(), np.zeros(self.dof), np.zeros(self.dof)
        k = np.size(t)
        return np.tile(self.q, (k, 1)), np.zeros((k, self.dof)), np.zeros((k, self.dof))

    def pieces(self) -> list[Piece]:
        a = np.zeros((6, self.dof))
        a[0] = self.q
        return [(a, 0.0, self.start_time)]

    def sampling_arrays(self) -> tuple[Array, Array, Array, Array]:
        """(knots, rows, first, last) for ``trajectory.sampling.sample_into``: q at rest always."""
        first = np.zeros((3, self.dof))
        first[0] = self.q
        return np.array([self.start_time]), np.zeros((0, 3, 6, self.dof)), first, self.q


#: a demo sweep's waypoints keep this fraction of each joint's range inside its limits (a point
#: on a limit is "above the limit" after a rounding); its peak speed at most SWEEP_SPEED_FRACTION
#: of the velocity limit (the plant trips at 1.2×)
SWEEP_LIMIT_MARGIN = 0.01
SWEEP_SPEED_FRACTION = 0.8


def via_velocity_heuristic(positions: Array, durations: Array) -> Array:
    """Knot velocities by Craig's §7.3 heuristic (see module docstring); ends at rest."""
    d = np.diff(positions, axis=0) / durations[:, None]
    v = np.zeros_like(positions)
    same_sign = np.sign(d[:-1]) * np.sign(d[1:]) > 0.0
    v[1:-1] = np.where(same_sign, 0.5 * (d[:-1] + d[1:]), 0.0)
    return v


def via_acceleration_heuristic(positions: Array, durations: Array, rule: str = "parabola") -> Array:
    """Knot accelerations by ``rule`` (see module docstring); ends at rest."""
    if rule not in VIA_ACCELERATION_RULES:
        raise ValueError(f"via_accelerations must be one of {VIA_ACCELERATION_RULES}, got {rule!r}")
    a = np.zeros_like(positions)
    if rule == "parabola":
        d = np.diff(positions, axis=0) / durations[:, None]
        a[1:-1] = 2.0 * (d[1:] - d[:-1]) / (durations[:-1] + durations[1:])[:, None]
    return a


def rest_to_rest_durations(positions: Array, max_velocity: Array, max_acceleration: Array) -> Array:
    """Shortest T per segment for a rest-to-rest quintic: peaks 15/8·Δ/T and 10/√3·Δ/T² at limit."""
    delta = np.abs(np.diff(positions, axis=0))
    with np.errstate(divide="ignore", invalid="ignore"):
        tv = np.where(delta > 0.0, REST_TO_REST_PEAK_VELOCITY * delta / max_velocity, 0.0)
        ta = np.where(delta > 0.0,
                      np.sqrt(REST_TO_REST_PEAK_ACCELERATION * delta / max_acceleration), 0.0)
    return np.maximum(tv, ta).max(axis=1)


def _knot_array(values, k: int, n: int, what: str) -> Array:
    """(k, n) knot values; None, or a None / empty entry, leaves NaN = 'choose by the via rules'."""
    out = np.full((k, n), np.nan)
    if values is None:
        return out
    if len(values) != k:
        raise ValueError(f"{what}: expected {k} entries (one per point), got {len(values)}")
    for i, row in enumerate(values):
        if row is None:
            continue
        row = np.atleast_1d(np.asarray(row, dtype=float))
        if row.size == 0:
            continue
        if row.shape != (n,):
            raise ValueError(f"{what}[{i}] needs {n} values, got {row.size}")
        out[i] = row
    return out


class JointTrajectory(LimitChecks):
    """Quintic segments through knots (time from start, q, and optionally q̇, q̈); C² at the vias.

    ``times_from_start[0]`` may be > 0 (a ROS goal whose first point lies ahead): until the
    trajectory is anchored by ``starting_from`` it holds the first point before that time.
    After the last knot the last position is held at rest.
    """

    def __init__(self, times_from_start: ArrayLike, positions: ArrayLike,
                 velocities: Sequence | None = None, accelerations: Sequence | None = None, *,
                 start_time: float = 0.0, joint_names: Sequence[str] | None = None,
                 via_accelerations: str = "parabola") -> None:
        P = np.array(positions, dtype=float)
        if P.ndim == 1:
            P = P[:, None]
        if P.ndim != 2 or P.size == 0:
            raise ValueError("positions must be a non-empty (points, joints) array")
        k, n = P.shape
        times = np.atleast_1d(np.asarray(times_from_start, dtype=float))
        if times.shape != (k,):
            raise ValueError(f"need one time_from_start per point ({k}), got {times.size}")
        if not (np.all(np.isfinite(P)) and np.all(np.isfinite(times))):
            raise ValueError("positions and times must be finite")
        if times[0] < 0.0 or np.any(np.diff(times) <= 0.0):
            raise ValueError(f"times_from_start must be >= 0 and strictly increasing, got {times}")
        if joint_names is not None and len(joint_names) != n:
            raise ValueError(f"{len(joint_names)} joint names for {n} joints")
        if via_accelerations not in VIA_ACCELERATION_RULES:
            raise ValueError(f"via_accelerations must be one of {VIA_ACCELERATION_RULES}, "
                             f"got {via_accelerations!r}")
        V = _knot_array(velocities, k, n, "velocities")
        A = _knot_array(accelerations, k, n, "accelerations")
        self._given = (times.copy(), P.copy(), V.copy(), A.copy())
        self.via_rule = via_accelerations
        durations = np.diff(times)
        if k > 1:
            V = np.where(np.isnan(V), via_velocity_heuristic(P, durations), V)
            A = np.where(np.isnan(A),
                         via_acceleration_heuristic(P, durations, via_accelerations), A)
        else:
            V, A = np.nan_to_num(V), np.nan_to_num(A)
        self.positions, self.velocities, self.accelerations = P, V, A
        self.times_from_start = times
        self.start_time = float(start_time)
        self.duration = float(times[-1])
        self.dof = n
        self.joint_names = list(joint_names) if joint_names is not None else None
        self.coefficients = np.stack([
            quintic_coefficients(P[i], V[i], A[i], P[i + 1], V[i + 1], A[i + 1], durations[i])
            for i in range(k - 1)]) if k > 1 else np.zeros((0, 6, n))
        self._rows = (np.stack([derivative_rows(a) for a in self.coefficients]) if k > 1
                      else np.zeros((0, 3, 6, n)))
        self._knots = (self.start_time + times).tolist()
        self._knot_array = self.start_time + times
        self._first = np.stack([P[0], V[0], A[0]])
        self._last = P[-1].copy()

    # ------------------------------------------------------------ constructors
    @classmethod
    def through(cls, waypoints: ArrayLike, durations: ArrayLike, velocities: Sequence | None = None,
                accelerations: Sequence | None = None, **kwargs) -> JointTrajectory:
        """Through waypoints with one duration per segment, starting at the first waypoint."""
        durations = np.atleast_1d(np.asarray(durations, dtype=float))
        if np.any(~np.isfinite(durations)) or np.any(durations <= 0.0):
            raise ValueError(f"segment durations must be finite and > 0, got {durations}")
        if len(durations) != len(waypoints) - 1:
            raise ValueError(f"{len(waypoints)} waypoints need {len(waypoints) - 1} durations, "
                             f"got {len(durations)}")
        times = np.concatenate(([0.0], np.cumsum(durations)))
        return cls(times, waypoints, velocities, accelerations, **kwargs)

    @classmethod
    def sweep(cls, points: Sequence, segment: float, lower: ArrayLike, upper: ArrayLike,
              max_velocity: ArrayLike, **kwargs) -> JointTrajectory:
        """The demo sweep through ``points`` (each kept SWEEP_LIMIT_MARGIN of its range inside
        the position limits), ``segment`` s a segment, stretched uniformly until no joint passes
        SWEEP_SPEED_FRACTION of its velocity limit (exact time scaling: q̇ ∝ 1/T)."""
        P = np.asarray(points, dtype=float)
        lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
        span = np.where(np.isfinite(upper - lower), upper - lower, 0.0)
        P = np.clip(P, lower + SWEEP_LIMIT_MARGIN * span, upper - SWEEP_LIMIT_MARGIN * span)
        vmax = limit_vector(max_velocity, P.shape[1], "max_velocity", np.inf)
        traj = cls.through(P, [segment] * (len(P) - 1), **kwargs)
        stretch = peak_ratios(traj.pieces(), vmax * SWEEP_SPEED_FRACTION, np.full_like(vmax, np.inf))
        if stretch.max() <= 1.0:
            return traj
        return cls.through(P, [segment * float(stretch.max())] * (len(P) - 1), **kwargs)

    @classmethod
    def from_points(cls, positions: Sequence, times_from_start: Sequence,
                    velocities: Sequence | None = None, accelerations: Sequence | None = None,
                    **kwargs) -> JointTrajectory:
        """From trajectory_msgs/JointTrajectory points: per point positions, optional (possibly
        empty) velocities/accelerations and time_from_start in seconds."""
        return cls(times_from_start, positions, velocities, accelerations, **kwargs)

    @classmethod
    def with_limits(cls, waypoints: ArrayLike, max_velocity: ArrayLike,
                    max_acceleration: ArrayLike, min_duration: float = 1e-3,
                    **kwargs) -> JointTrajectory:
        """Through waypoints (at rest at both ends), each segment as short as the per-joint |q̇|
        and |q̈| limits allow.

        Start from the rest-to-rest minima (15/8·Δ/T, 10/√3·Δ/T²), then rescale every segment by
        its exact peak ratio r (q̇ ∝ 1/T, q̈ ∝ 1/T²) until each one's tightest limit is just met;
        the via rules couple neighbours, so this is iterated (a segment's peak need not be
        monotonic in its duration, so it may not settle). Each iterate is made feasible by a
        uniform stretch — exact time scaling — and the shortest feasible one is returned.
        """
        P = np.array(waypoints, dtype=float)
        P = P[:, None] if P.ndim == 1 else P
        if P.ndim != 2 or len(P) < 2:
            raise ValueError("need at least two waypoints, each a vector of joint positions")
        n = P.shape[1]
        vmax = limit_vector(max_velocity, n, "max_velocity", np.inf)
        amax = limit_vector(max_acceleration, n, "max_acceleration", np.inf)
        if not (np.all(vmax > 0.0) and np.all(amax > 0.0)):
            raise ValueError("velocity and acceleration limits must be > 0")
        if not min_duration > 0.0:
            raise ValueError(f"min_duration must be > 0, got {min_duration}")
        T = np.maximum(rest_to_rest_durations(P, vmax, amax), min_duration)
        best = None
        for _ in range(100):
            traj = cls.through(P, T, **kwargs)
            r = peak_ratios(traj.pieces(), vmax, amax)
            feasible = T * max(1.0, r.max() * (1.0 + 1e-12))
            if best is None or feasible.sum() < best.sum():
                best = feasible
            if np.all((np.abs(r - 1.0) <= 1e-9) | ((r <= 1.0) & (T <= min_duration))):
                break
            T = np.maximum(T * np.where(r > 0.0, r, 1.0), min_duration)
        return cls.through(P, best, **kwargs)

    def starting_from(self, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike,
                      t_now: float) -> JointTrajectory:
        """This motion re-anchored at time t_now to begin at the current reference (q, q̇, q̈).

        A first point ahead in time (time_from_start > 0) gets the current state prepended; a
        first point at time 0 is replaced by it. Via-point rules are re-applied to the new knot
        set, so the former first point becomes a proper via point.
        """
        times, P, V, A = (x.copy() for x in self._given)
        state = [np.asarray(x, dtype=float).reshape(self.dof) for x in (q, qd, qdd)]
        if times[0] > 0.0:
            times = np.concatenate(([0.0], times))
            P, V, A = (np.vstack((s, X)) for s, X in zip(state, (P, V, A), strict=True))
        else:
            P[0], V[0], A[0] = state
            if len(times) == 1:
                raise ValueError("a single point at time_from_start 0 would jump the reference; "
                                 "give it a time_from_start > 0")
        return type(self)(times, P, V, A, start_time=t_now, joint_names=self.joint_names,
                          via_accelerations=self.via_rule)

    # ---------------------------------------------------------------- sampling
    @property
    def end_time(self) -> float:
        return self.start_time + self.duration

    @property
    def knot_times(self) -> Array:
        """Absolute times of the knots."""
        return self._knot_array.copy()

    @property
    def segments(self) -> list[Quintic]:
        """Each segment as a stand-alone Quintic on the trajectory's clock."""
        P, T = self.positions, np.diff(self.times_from_start)
        return [Quintic(P[i], P[i + 1], T[i], self.velocities[i],
                        self.accelerations[i], self.velocities[i + 1], self.accelerations[i + 1],
                        start_time=self._knots[i]) for i in range(len(T))]

    def sample(self, t: float | ArrayLike) -> tuple[Array, Array, Array]:
        """(q_d, q̇_d, q̈_d) at t; first knot's state before the start, last position held after."""
        if np.ndim(t) != 0:
            times = np.asarray(t, dtype=float).ravel()
            out = np.empty((times.size, 3, self.dof))
            sample_many(self._knot_array, self._rows, self._first, self._last, times, out)
            return out[:, 0], out[:, 1], out[:, 2]
        out = np.empty((3, self.dof))
        sample_into(self._knot_array, self._rows, self._first, self._last, float(t), out)
        return out[0], out[1], out[2]

    def sampling_arrays(self) -> tuple[Array, Array, Array, Array]:
        """(knots, rows, first, last) for ``trajectory.sampling.sample_into`` (compiled callers)."""
        return self._knot_array, self._rows, self._first, self._last

    def pieces(self) -> list[Piece]:
        if self.coefficients.shape[0] == 0:
            return Hold(self.positions[-1], self.start_time).pieces()
        return [(self.coefficients[i], self._knots[i + 1] - self._knots[i], self._knots[i])
                for i in range(self.coefficients.shape[0])]
