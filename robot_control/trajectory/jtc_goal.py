"""A trajectory_msgs/JointTrajectory checked and planned as joint_trajectory_controller does.

The checks are JTC's ``validate_trajectory_msg`` (ros2_controllers) and more, each failing with a
FollowJointTrajectory error code *and* a sentence naming the problem (JTC only rejects,
ros2_controllers#700): joint names empty, duplicated, unknown or — unless partial goals are
allowed — incomplete → INVALID_JOINTS; no points, too many, sizes that do not match the joint
names, non-numbers, NaN/inf, time_from_start not strictly increasing, positions outside the
limits, velocities beyond them, a moving last point (unless allowed), a motion longer than the
cap or one whose interpolation leaves the limits → INVALID_GOAL; a stamped trajectory that has
already ended → OLD_HEADER_TIMESTAMP.

The plan starts from the current reference (q, q̇, q̈) now; waypoints at ``header.stamp`` (0 =
now) + ``time_from_start``; points already past are skipped, and a point at "now" must sit on
the current reference (within ``start_tolerance``) — it cannot be jumped to. Joints the goal
leaves out (partial goal) hold their current reference position. Segments are JTC's
variable-degree splines (trajectory/variable_degree.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from robot_control.foundation.log_text import names_text
from robot_control.trajectory.joint_trajectory import Hold, JointTrajectory
from robot_control.trajectory.variable_degree import spline_knots

Array = NDArray[np.float64]
NS = 1_000_000_000

# control_msgs/action/FollowJointTrajectory result codes
SUCCESSFUL = 0
INVALID_GOAL = -1
INVALID_JOINTS = -2
OLD_HEADER_TIMESTAMP = -3
PATH_TOLERANCE_VIOLATED = -4
GOAL_TOLERANCE_VIOLATED = -5
#: |q̈| beyond this is not an acceleration but garbage (the model sets no acceleration limits)
IMPLAUSIBLE_ACCELERATION = 1e6
#: a point at "now" this close to the current reference (rad or m, per joint) is on it
START_TOLERANCE = 0.01


class GoalError(ValueError):
    """A goal that cannot run: a FollowJointTrajectory error code and the reason."""

    def __init__(self, code: int, text: str) -> None:
        super().__init__(text)
        self.code = code
        self.text = text


@dataclass(frozen=True)
class GoalRules:
    """What a goal must satisfy, from the model and the node's JTC parameters."""

    joint_names: Sequence[str]
    lower: Array
    upper: Array
    velocity_limit: Array
    allow_partial_joints_goal: bool = False
    allow_nonzero_velocity_at_trajectory_end: bool = False
    max_points: int = 10_000
    max_duration: float = 600.0
    start_tolerance: float = START_TOLERANCE
    blend: float = 0.02
    stop_time: float = 0.25


@dataclass(frozen=True)
class Plan:
    """The motion a goal asks for: ``trajectory`` on its own clock from ``start_ns`` (now)."""

    trajectory: JointTrajectory
    start_ns: int
    end_ns: int
    joints: Array  # model indices of the joints the goal names, in the goal's order


def _numbers(values, what: str, names: Sequence[str]) -> Array:
    """The values as floats, each finite, or INVALID_GOAL naming the first that is not."""
    try:
        out = np.asarray(list(values), dtype=float)
    except (TypeError, ValueError) as exc:
        raise GoalError(INVALID_GOAL, f"{what} must be numbers ({exc})") from None
    if out.ndim != 1:
        raise GoalError(INVALID_GOAL, f"{what} must be a list of numbers")
    if not np.isfinite(out).all():
        j = int(np.flatnonzero(~np.isfinite(out))[0])
        who = f"joint '{names[j]}'" if j < len(names) else f"value {j}"
        raise GoalError(INVALID_GOAL, f"{what}: {who} is {out[j]}")
    return out


def goal_joints(names: Sequence[str], rules: GoalRules) -> Array:
    """Model indices of the goal's joint names, or INVALID_JOINTS naming what is wrong."""
    model = list(rules.joint_names)
    if not len(names):
        raise GoalError(INVALID_JOINTS, "the trajectory names no joints (joint_names is empty)")
    if len(names) > len(model):  # before any per-name work: a message may name 10⁵ joints
        raise GoalError(INVALID_JOINTS, f"{len(names)} joint names for an arm of {len(model)} "
                        f"joints ({names_text(names, quote=False)})")
    names = [str(n) for n in names]
    twice = sorted(n for n, k in Counter(names).items() if k > 1)
    if twice:
        raise GoalError(INVALID_JOINTS, f"joint names given twice: "
                        f"{names_text(twice, quote=False)}")
    unknown = [n for n in names if n not in model]
    if unknown:
        raise GoalError(INVALID_JOINTS, f"unknown joints {names_text(unknown, quote=False)} "
                        f"(this arm's joints: {names_text(model, quote=False)})")
    missing = [n for n in model if n not in names]
    if missing and not rules.allow_partial_joints_goal:
        raise GoalError(INVALID_JOINTS, f"the goal leaves out joints "
                        f"{names_text(missing, quote=False)}; "
                        "name them all or set allow_partial_joints_goal")
    return np.array([model.index(n) for n in names])


def read_points(msg, joints: Array, rules: GoalRules):
    """(times from start (k,) s, P, V or None, A or None) of the message's points, in the goal's
    joint order; V/A rows are NaN where a point leaves the field out."""
    points = list(msg.points)
    m = len(joints)
    names = [rules.joint_names[j] for j in joints]
    if not points:
        raise GoalError(INVALID_GOAL, "the trajectory has no points")
    if len(points) > rules.max_points:
        raise GoalError(INVALID_GOAL, f"{len(points)} points exceed max_trajectory_points "
                        f"({rules.max_points})")
    times = np.empty(len(points))
    P = np.empty((len(points), m))
    rates = {"velocities": np.full((len(points), m), np.nan),
             "accelerations": np.full((len(points), m), np.nan)}
    for i, point in enumerate(points):
        q = _numbers(point.positions, f"point {i} positions", names)
        if q.size != m:
            raise GoalError(INVALID_GOAL, f"point {i} has {q.size} positions for {m} joint names")
        P[i] = q
        for field, rows in rates.items():
            values = _numbers(getattr(point, field), f"point {i} {field}", names)
            if values.size not in (0, m):
                raise GoalError(INVALID_GOAL, f"point {i} has {values.size} {field} for {m} "
                                "joint names (give none or one per joint)")
            if values.size:
                rows[i] = values
        if len(point.effort):
            raise GoalError(INVALID_GOAL, f"point {i} gives effort: this controller computes the "
                            "torques itself (leave effort empty)")
        t = point.time_from_start
        times[i] = (int(t.sec) * NS + int(t.nanosec)) / NS
    V, A = (None if np.isnan(rows).all() else rows for rows in rates.values())
    return times, P, V, A


def check_values(times: Array, P: Array, V: Array | None, A: Array | None, joints: Array,
                 rules: GoalRules) -> None:
    """Increasing times, positions and velocities within the limits, a last point at rest."""
    names = [rules.joint_names[j] for j in joints]
    if times[0] < 0.0:
        raise GoalError(INVALID_GOAL, f"point 0 has a negative time_from_start {times[0]} s")
    step = np.diff(times)
    if np.any(step <= 0.0):
        i = int(np.flatnonzero(step <= 0.0)[0]) + 1
        raise GoalError(INVALID_GOAL, f"time_from_start must increase strictly: point {i} at "
                        f"{times[i]:.9g} s follows point {i - 1} at {times[i - 1]:.9g} s")
    lo, hi, vmax = rules.lower[joints], rules.upper[joints], rules.velocity_limit[joints]
    for what, X, below, above in (("position", P, lo, hi), ("velocity", V, -vmax, vmax),
                                  ("acceleration", A, -IMPLAUSIBLE_ACCELERATION,
                                   IMPLAUSIBLE_ACCELERATION)):
        if X is None:
            continue
        bad = (X < below) | (X > above)  # NaN: a point that leaves the field out
        if bad.any():
            i, j = (int(x) for x in np.argwhere(bad)[0])
            raise GoalError(INVALID_GOAL, f"point {i}: joint '{names[j]}' {what} {X[i, j]:.6g} "
                            f"is outside [{np.broadcast_to(below, (len(names),))[j]:.6g}, "
                            f"{np.broadcast_to(above, (len(names),))[j]:.6g}]")
    if V is not None and not rules.allow_nonzero_velocity_at_trajectory_end and \
            np.any(np.nan_to_num(V[-1]) != 0.0):
        j = int(np.flatnonzero(np.nan_to_num(V[-1]) != 0.0)[0])
        raise GoalError(INVALID_GOAL, f"the last point still moves (joint '{names[j]}' velocity "
                        f"{V[-1, j]:.6g}); end at rest or set "
                        "allow_nonzero_velocity_at_trajectory_end")


def _fill(X: Array | None, joints: Array, held: Array, zero: bool) -> Array | None:
    """A goal field (k, m) widened to all n joints: the others at ``held`` (rates: 0)."""
    if X is None:
        return None
    out = np.tile(np.zeros_like(held) if zero else held, (len(X), 1))
    out[:, joints] = X
    return out

def stop_trajectory(state: Array, T: float, lower: Array, upper: Array):
    """Come to rest from ``state`` (3, n) in ``T`` s: the quintic to (q_f, 0, 0) with
    q_f = q + q̇T/2 + q̈T²/12 (where it ends with no overshoot of the velocity's sign for a
    constant deceleration), inside the limits; at once (a hold) for T = 0 or a state at rest."""
    q, qd, qdd = state
    if T <= 0.0 or not (qd.any() or qdd.any()):
        return Hold(q)
    qf = np.clip(q + qd * T / 2.0 + qdd * T * T / 12.0, lower, upper)
    rest = np.zeros_like(q)
    return JointTrajectory(np.array([0.0, T]), np.stack([q, qf]), np.stack([qd, rest]),
                           np.stack([qdd, rest]))


def plan_goal(msg, rules: GoalRules, now_ns: int, current: Array) -> Plan:
    """The motion a trajectory_msgs/JointTrajectory asks for, from the current reference
    ``current`` (3, n) at ``now_ns``, or GoalError with the code and the reason."""
    joints = goal_joints(msg.joint_names, rules)
    times, P, V, A = read_points(msg, joints, rules)
    check_values(times, P, V, A, joints, rules)
    names = [rules.joint_names[j] for j in joints]
    stamp = int(msg.header.stamp.sec) * NS + int(msg.header.stamp.nanosec)
    start = stamp if stamp != 0 else now_ns
    end_ns = start + int(round(times[-1] * NS))
    if stamp != 0 and end_ns < now_ns:
        raise GoalError(OLD_HEADER_TIMESTAMP, f"the trajectory ended {(now_ns - end_ns) / NS:.3f}"
                        " s ago (header.stamp + the last time_from_start is in the past)")
    if (end_ns - now_ns) / NS > rules.max_duration:
        raise GoalError(INVALID_GOAL, f"the trajectory ends {(end_ns - now_ns) / NS:.6g} s from "
                        f"now, beyond max_trajectory_duration ({rules.max_duration:g} s)")
    rel = (start - now_ns) / NS + times  # s from now
    ahead = rel > 0.0
    now_points = np.flatnonzero(~ahead)
    if stamp == 0 and now_points.size:  # a point at "now" must be where the reference is
        gap = np.abs(P[0] - current[0, joints])
        if np.any(gap > rules.start_tolerance):
            j = int(np.argmax(gap))
            raise GoalError(INVALID_GOAL, f"point 0 is at time_from_start 0 but joint "
                            f"'{names[j]}' is {gap[j]:.4g} away from where the arm is commanded "
                            f"to be (> {rules.start_tolerance:g}); give it a time_from_start > 0")
    if not ahead.any():
        raise GoalError(INVALID_GOAL, "the trajectory has no point after now (a single point at "
                        "time_from_start 0 would be a jump; give it a time_from_start > 0)")
    held = current[0]
    P_all = _fill(P[ahead], joints, held, zero=False)
    V_all = _fill(None if V is None else V[ahead], joints, held, zero=True)
    A_all = _fill(None if A is None else A[ahead], joints, held, zero=True)
    knots = spline_knots(current, rel[ahead], P_all, V_all, A_all, rules.blend)
    trajectory = JointTrajectory(*knots, joint_names=list(rules.joint_names))
    problems = trajectory.check_limits(rules.lower, rules.upper, rules.velocity_limit)
    if problems:
        raise GoalError(INVALID_GOAL, "the motion from the current reference leaves the limits: "
                        + "; ".join(problems))
    return Plan(trajectory, now_ns, now_ns + int(round(rel[-1] * NS)), joints)
