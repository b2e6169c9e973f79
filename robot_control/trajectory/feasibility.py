"""Can the arm execute this motion? Effort, velocity and acceleration along a piecewise quintic.

A motion is *feasible* when the joint torque its reference needs, τ = M(q)q̈ + C(q, q̇)q̇ + g(q)
+ friction(q̇) (the package's recursive Newton–Euler, Kim Table 2, compiled and batched over the
samples), stays within every joint's effort limit, and |q̇|, |q̈| within the velocity and
acceleration limits where the model or the node gives them. Positions are checked by the goal's
own limit check (trajectory/limits.py), exactly.

Sampling (where a torque peak could hide). Velocity and acceleration are polynomials: their
extremes are exact (limits.pieces_extrema). Torque is not, so each quintic segment is sampled
uniformly, both ends included:

1. ``MIN_INTERVALS`` (8) intervals per segment to start with — q̈ is a cubic and q̇ a quartic
   in τ, which 8 intervals follow closely before step 3 tightens it; every segment, however
   short, gets its own samples, so a violent 4 ms segment between slow ones is never stepped
   over; the same samples serve every joint;
2. no joint moves more than ``MAX_JOINT_STEP`` (0.1 rad, or 0.1 m) between two samples (a
   segment where one does is sampled more finely), so the sines and cosines of the joint angles
   in M, C and g cannot alias: a 0.1 rad phase step leaves a second difference that resolves
   them to 0.1 %;
3. refinement: between two samples h apart a function exceeds the larger sample by at most
   h²·max|τ̈|/8, and the second difference |τ_{i−1} − 2τ_i + τ_{i+1}| estimates h²|τ̈|. A
   segment whose samples are all within the limits but whose sampled peak plus that bound
   could cross one, with the bound above ``TOLERANCE`` (0.5 %) of the limit, is sampled twice
   as finely, up to ``MAX_INTERVALS`` (1024) intervals (a segment already over a limit is
   decided: refining it changes nothing but the time reported). What is left is a motion
   within the limit up to 0.5 % between samples.

Sampling at the control period instead would tie the result to a rate the check does not know
(a topic goal, a scenario) and still miss a peak between two ticks — the controller samples at
arbitrary phases — while costing 10 000 samples for a 10 s motion at 1 kHz.

Making a motion feasible (``scaled_to_limits``): slowing a motion down uniformly by k (every
time ×k) gives q̇/k and q̈/k², so the torque at each sample becomes g + (τ − g)/k² — friction
counted with the inertial part (zero in the bundled models; the check after scaling corrects
it) — and the smallest k that keeps every sample within its limit has a closed form. The
quintic through the time-scaled knots is exactly the time-scaled quintic, so the scaled motion
keeps the goal's path and the ratios of its point times. Chosen over time-optimal path
parameterisation (TOPP-RA, the ``toppra`` package): k is exact and cheap (no extra dependency
and no grid to tune), the result is again the goal's knots (what the controller receives),
and no point is reached earlier than the client asked relative to the others — at the cost of
being slower than the time-optimal timing where only a short part of the motion binds
(bench/feasibility.py measures how much slower).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from robot_control.dynamics import kernels as K
from robot_control.dynamics.friction import friction_torques
from robot_control.dynamics.packing import model_data
from robot_control.trajectory.joint_trajectory import Hold, JointTrajectory
from robot_control.trajectory.limits import limit_vector, pieces_extrema

Array = NDArray[np.float64]

MIN_INTERVALS = 8
MAX_JOINT_STEP = 0.1  # rad (m for a prismatic joint) of travel per sample interval, at most
MAX_INTERVALS = 1024
TOLERANCE = 5e-3  # of the limit: what may remain unresolved between samples
ROUNDING = 1e-9  # relative: a sample exactly at its limit (a scaled motion) is within it
MAX_SCALINGS = 8


# The rows go through the stack's own entry kernels (the controller's laws and the plant's hold
# torque load them anyway): a recursion of their own, compiled with numba's reference counting,
# was a second compile of Newton–Euler (3.8–4.9 s of CPU at a cold start).
@K.entry_point
def torques_along(D, q, qd, qdd, tau):
    """τ(q, q̇, q̈) at each row (Newton–Euler, Kim Table 2) into tau (k, n)."""
    for k in range(q.shape[0]):
        K.inverse_dynamics_kernel(D, q[k], qd[k], qdd[k], None, tau[k])


@K.entry_point
def gravity_along(D, q, gravity):
    """g(q) at each row (Newton–Euler at rest) into gravity (k, n)."""
    for k in range(q.shape[0]):
        K.gravity_kernel(D, q[k], gravity[k])


@dataclass(frozen=True)
class Violation:
    """The first place the motion exceeds a limit: which joint, when, what against what."""

    joint: str
    time: float  # s from the motion's start
    kind: str  # "effort", "velocity" or "acceleration"
    needed: float
    limit: float
    unit: str

    def __str__(self) -> str:
        what = "torque" if self.unit == "N·m" else "force" if self.unit == "N" else self.kind
        return (f"joint '{self.joint}' needs {what} {self.needed:.4g} {self.unit} at "
                f"t = {self.time:.4g} s, beyond its {self.kind} limit {self.limit:.4g} {self.unit}")


@dataclass(frozen=True)
class Feasibility:
    """A motion's check: its first violation (None: feasible), the uniform slowdown k ≥ 1 that
    makes it feasible (inf: none does, gravity alone exceeds a limit), the samples used."""

    violation: Violation | None
    slowdown: float
    samples: int
    peak_effort_ratio: float  # max |τ|/limit over the samples

    @property
    def feasible(self) -> bool:
        return self.violation is None


@dataclass(frozen=True)
class Limits:
    """Per-joint limits (inf: none), joint names and effort units, from a model and the node."""

    names: list[str]
    effort: Array
    velocity: Array
    acceleration: Array
    units: list[str]

    @classmethod
    def of(cls, model, acceleration: ArrayLike | None = None) -> Limits:
        """The model's effort and velocity limits, and ``acceleration`` (None or empty: none)."""
        n = model.nq
        prismatic = [b.joint.type == "prismatic" for b in model.bodies]
        return cls(list(model.joint_names), limit_vector(model.effort_limit, n, "effort", np.inf),
                   limit_vector(model.velocity_limit, n, "velocity", np.inf),
                   limit_vector(acceleration if acceleration is not None and
                                np.size(acceleration) else None, n, "acceleration", np.inf),
                   ["N" if p else "N·m" for p in prismatic])


@njit(cache=True)
def segment_samples(rows, durations, counts, out):
    """(q, q̇, q̈) into out (k, 3, n) at counts[s] + 1 uniform τ of each segment s, ends included:
    Σ_j τʲ D_j of its ``derivative_rows`` (Huo Ex. 3-7)."""
    k = 0
    for s in range(rows.shape[0]):
        h = durations[s] / counts[s]
        for i in range(counts[s] + 1):
            tau = i * h
            for r in range(3):
                for j in range(out.shape[2]):
                    v = 0.0
                    for p in range(5, -1, -1):  # Horner
                        v = v * tau + rows[s, r, p, j]
                    out[k, r, j] = v
            k += 1


def _sample(rows: Array, durations: Array, counts: Array) -> tuple[Array, Array, Array]:
    """(segment index, τ, (q, q̇, q̈) (k, 3, n)) at counts[s] + 1 uniform samples of each
    segment s."""
    seg = np.repeat(np.arange(len(counts)), counts + 1)
    first = np.concatenate(([0], np.cumsum(counts + 1)[:-1]))
    tau = (np.arange(seg.size) - first[seg]) * (durations / counts)[seg]
    out = np.empty((seg.size, 3, rows.shape[3]))
    segment_samples(rows, durations, counts, out)
    return seg, tau, out


def _per_segment_max(values: Array, seg: Array) -> Array:
    """Max of each segment's rows of ``values`` (rows in segment order)."""
    starts = np.flatnonzero(np.r_[True, seg[1:] != seg[:-1]])
    return np.maximum.reduceat(values, starts, axis=0)


def _largest_step(q: Array, seg: Array) -> Array:
    """Per segment, the largest |Δq| of any joint between neighbouring samples (a segment's
    last sample and the next one's first are the same knot: their step is 0)."""
    step = np.abs(np.diff(q, axis=0)).max(axis=1)
    return _per_segment_max(np.r_[step, 0.0], seg)


def _between_bound(values: Array, seg: Array) -> Array:
    """Per segment and joint, max |second difference|/8: how far the function may rise above
    its samples between them (module docstring, step 3)."""
    d2 = np.zeros_like(values)
    d2[1:-1] = np.abs(values[:-2] - 2.0 * values[1:-1] + values[2:])
    inside = np.r_[False, (seg[:-2] == seg[1:-1]) & (seg[1:-1] == seg[2:]), False]
    d2[~inside] = 0.0
    return _per_segment_max(d2, seg) / 8.0


def _effort_slowdown(tau: Array, gravity: Array, limit: Array) -> Array:
    """Per sample and joint the smallest k with |g + (τ − g)/k²| ≤ limit (inf if |g| > limit)."""
    d = tau - gravity
    with np.errstate(divide="ignore", invalid="ignore"):
        room = np.where(d > 0.0, limit - gravity, limit + gravity)
        k2 = np.where(d == 0.0, 0.0, np.abs(d) / room)
    k2 = np.where((room <= 0.0) & (d != 0.0), np.inf, k2)
    k2 = np.where(np.abs(gravity) > limit * (1.0 + ROUNDING), np.inf, k2)
    return np.sqrt(k2)


def check_motion_feasible(model, trajectory, limits: Limits | None = None) -> Feasibility:
    """The effort, velocity and acceleration check of a JointTrajectory or Hold (module
    docstring), with its first violation and the uniform slowdown that removes them all."""
    limits = limits or Limits.of(model)
    if isinstance(trajectory, Hold) or trajectory.coefficients.shape[0] == 0:
        q = trajectory.q if isinstance(trajectory, Hold) else trajectory.positions[-1]
        zero = np.zeros((1, model.nq))
        return _verdict(model, limits, q[None, :], zero, zero, np.zeros(1), None, None)
    durations = np.diff(trajectory.times_from_start)
    rows = trajectory.sampling_arrays()[1]                          # (m, 3, 6, n)
    counts = np.full(len(durations), MIN_INTERVALS)
    finite = np.isfinite(limits.effort)
    before = None  # (counts, effort) of the last round: a segment not refined keeps its torques
    while True:
        seg, tau, x = _sample(rows, durations, counts)
        q, qd, qdd = (np.ascontiguousarray(x[:, r]) for r in range(3))
        effort = _torques_refined(model, q, qd, qdd, seg, counts, before)
        before = counts, effort
        excess = _between_bound(effort, seg)
        peak = _per_segment_max(np.abs(effort), seg)
        over = (finite & (peak > limits.effort * (1.0 + ROUNDING))).any(axis=1)
        unresolved = ~over & (finite & (peak + excess > limits.effort)
                              & (excess > TOLERANCE * limits.effort)).any(axis=1)
        step = _largest_step(q, seg) / MAX_JOINT_STEP
        grow = (unresolved | (step > 1.0)) & (counts < MAX_INTERVALS)
        if not grow.any():
            break
        finer = np.maximum(2 * counts, np.ceil(counts * step))
        counts = np.where(grow, np.minimum(finer, MAX_INTERVALS), counts).astype(int)
    t = trajectory.times_from_start[seg] + tau
    return _verdict(model, limits, q, qd, qdd, t, effort, trajectory.pieces(),
                    trajectory.start_time)


def _torques(model, q: Array, qd: Array, qdd: Array) -> Array:
    """τ + friction at every sample."""
    effort = np.empty_like(q)
    torques_along(model_data(model).D, q, qd, qdd, effort)
    if np.any(model.friction[:, :3]):
        effort += np.array([friction_torques(model, v) for v in qd])
    return effort


def _torques_refined(model, q: Array, qd: Array, qdd: Array, seg: Array, counts: Array,
                     before: tuple[Array, Array] | None) -> Array:
    """τ + friction at every sample, computed only in the segments whose sampling changed
    since ``before`` (the last round's counts and torques; None: everywhere)."""
    if before is None:
        return _torques(model, q, qd, qdd)
    old_counts, old_effort = before
    fresh = (counts != old_counts)[seg]
    first = np.r_[0, np.cumsum(counts + 1)[:-1]]
    old_first = np.r_[0, np.cumsum(old_counts + 1)[:-1]]
    kept = np.flatnonzero(~fresh)
    effort = np.empty_like(q)
    effort[kept] = old_effort[old_first[seg[kept]] + kept - first[seg[kept]]]
    new = np.flatnonzero(fresh)
    effort[new] = _torques(model, q[new], qd[new], qdd[new])
    return effort


def _gravity(model, q: Array) -> Array:
    """g at every sample."""
    gravity = np.empty_like(q)
    gravity_along(model_data(model).D, q, gravity)
    return gravity


def _verdict(model, limits: Limits, q, qd, qdd, t, effort, pieces,
             origin: float = 0.0) -> Feasibility:
    """The earliest violation among effort (sampled) and velocity/acceleration (exact
    extremes), and the slowdown that removes every one."""
    effort = _torques(model, q, qd, qdd) if effort is None else effort
    found: list[Violation] = []
    ratio = np.divide(np.abs(effort), limits.effort, out=np.zeros_like(effort),
                      where=np.isfinite(limits.effort))
    over = ratio > 1.0 + ROUNDING
    if over.any():
        i, j = (int(x) for x in np.argwhere(over)[0])  # row-major: the earliest sample
        found.append(Violation(limits.names[j], float(t[i]), "effort", float(effort[i, j]),
                               float(limits.effort[j]), limits.units[j]))
    k = 1.0
    kinds = [kd for kd, lim in (("velocity", limits.velocity),
                                ("acceleration", limits.acceleration)) if np.isfinite(lim).any()]
    if pieces is not None and kinds:
        # a piece provably within a limit needs no search: it can neither violate nor set k
        ext = pieces_extrema(pieces, kinds, {kd: getattr(limits, kd) for kd in kinds})
        for kind in kinds:
            lim = getattr(limits, kind)
            mn, tmn, mx, tmx = ext[kind]
            values = np.stack([mn, mx])                             # (2, pieces, n)
            when = np.stack([tmn, tmx]) - origin  # times from the start, as t
            r = np.abs(values) / lim
            k = max(k, float(r.max() if kind == "velocity" else np.sqrt(r.max())))
            bad = r > 1.0 + ROUNDING
            if bad.any():
                e, s, j = np.unravel_index(np.argmin(np.where(bad, when, np.inf)), bad.shape)
                unit = limits.units[j].replace("N·m", "rad").replace("N", "m")
                found.append(Violation(limits.names[j], float(when[e, s, j]), kind,
                                       float(values[e, s, j]), float(lim[j]),
                                       unit + ("/s" if kind == "velocity" else "/s²")))
    if found:  # (a feasible motion needs no gravity: |g + (τ − g)/k²| ≤ max(|g|, |τ|) is moot)
        k = max(k, float(_effort_slowdown(effort, _gravity(model, q), limits.effort).max()))
    first = min(found, key=lambda v: v.time) if found else None
    peak = float(ratio.max(initial=0.0))
    return Feasibility(first, max(1.0, k) if first is not None else 1.0, len(t), peak)


def time_scaled(trajectory: JointTrajectory, k: float) -> JointTrajectory:
    """The motion slowed down by k: knot times ×k, velocities /k, accelerations /k² — exactly
    the time-scaled quintics — except the first knot, which keeps its state (the reference the
    motion starts from must not jump)."""
    T = trajectory.times_from_start * k
    V = trajectory.velocities / k
    A = trajectory.accelerations / (k * k)
    V[0], A[0] = trajectory.velocities[0], trajectory.accelerations[0]
    return JointTrajectory(T, trajectory.positions, V, A, start_time=trajectory.start_time,
                           joint_names=trajectory.joint_names, via_accelerations=trajectory.via_rule)


def scaled_to_limits(model, trajectory: JointTrajectory, limits: Limits | None = None
                     ) -> tuple[JointTrajectory, float, Feasibility]:
    """(the feasible motion, its total slowdown k, the first check) by uniform time scaling
    (module docstring); ValueError naming the violation if no slowdown helps (gravity alone
    beyond a limit, or a start state that already needs more than the limits)."""
    limits = limits or Limits.of(model)
    first = check_motion_feasible(model, trajectory, limits)
    if first.feasible:
        return trajectory, 1.0, first
    result, total = first, 1.0
    for _ in range(MAX_SCALINGS):
        if not np.isfinite(result.slowdown):
            break
        # the start state is not scaled, so a moving start may need a little more than k
        total *= max(result.slowdown, 1.0 + 1e-6) * (1.0 + ROUNDING)
        scaled = time_scaled(trajectory, total)
        result = check_motion_feasible(model, scaled, limits)
        if result.feasible:
            return scaled, total, first
    raise ValueError(f"no slower timing makes it feasible: {result.violation}")


def reference_feasibility(model, reference, sample_interval: float = 0.01) -> Feasibility | None:
    """The check of any joint-space reference: quintics as they are, another smooth one (a
    Fourier excitation) through its knots every ``sample_interval`` s — the quintics the stack
    sends the controller (trajectory/schedule.py); None for a Cartesian path (its joint motion
    is the controller's inverse kinematics, not known here)."""
    if isinstance(reference, JointTrajectory | Hold):
        return check_motion_feasible(model, reference)
    if not hasattr(reference, "sample") or getattr(reference, "dof", None) != model.nq:
        return None
    from robot_control.trajectory.schedule import knots_trajectory, trajectory_knots

    return check_motion_feasible(model, knots_trajectory(trajectory_knots(reference,
                                                                          sample_interval)))


def warm_up(model) -> None:
    """One check of a small motion and one gravity pass: loads the compiled kernels (seconds
    the first time they compile) that a first goal would otherwise wait for."""
    q = np.clip(np.zeros(model.nq), model.lower, model.upper)
    # the row kernels first, at the top level: their compile-once locks (dynamics/compile_once.py)
    # then make this process load what another node compiles instead of compiling it alongside
    D, tau = model_data(model).D, np.zeros(model.nq)
    K.inverse_dynamics_kernel(D, q, tau, tau, None, np.zeros(model.nq))
    K.gravity_kernel(D, q, np.zeros(model.nq))
    check_motion_feasible(model, JointTrajectory([0.0, 1.0], [q, q]))
    _gravity(model, q[None, :])
