"""Path and goal tolerances of a FollowJointTrajectory goal, with joint_trajectory_controller's
meaning (ros2_controllers ``tolerances.hpp``).

Per joint a tolerance on position, velocity and acceleration error; 0 means "not checked". A goal
entry overrides the default of its joint component-wise: 0 keeps the default, −1 erases it (not
checked), a positive value replaces it. ``goal_time_tolerance``: 0 keeps the default, −1 erases
it. Where JTC silently falls back to all defaults (an unknown joint, a negative value other than
−1) the goal is refused here with the reason. And where JTC's erased goal time means "wait
forever", here it means :data:`MAX_GOAL_TIME`: a goal always ends.
Acceleration errors are not measured (the state carries q and q̇), so acceleration tolerances
are read and kept but never trip.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]
COMPONENTS = ("position", "velocity", "acceleration")
#: the goal time of a goal that erased it (JTC: forever), s
MAX_GOAL_TIME = 60.0
ERASE = -1.0


class ToleranceError(ValueError):
    """A tolerance the goal cannot use; ``unknown_joint`` tells an INVALID_JOINTS case."""

    def __init__(self, text: str, unknown_joint: bool = False) -> None:
        super().__init__(text)
        self.unknown_joint = unknown_joint


@dataclass(frozen=True)
class Tolerances:
    """Per-joint (3, n) tolerances (rows position, velocity, acceleration; 0 = not checked) on
    the path and at the goal, and the time after the trajectory's end the goal may take, s."""

    path: Array
    goal: Array
    goal_time: float


def override(default: Array, entries: Sequence, names: Sequence[str], what: str) -> Array:
    """``default`` (3, n) with the goal's control_msgs/JointTolerance ``entries`` applied."""
    out = default.copy()
    index = {name: j for j, name in enumerate(names)}
    for entry in entries:
        j = index.get(entry.name)
        if j is None:
            raise ToleranceError(f"{what}: unknown joint '{entry.name}' (joints: "
                                 f"{', '.join(names)})", unknown_joint=True)
        for row, component in enumerate(COMPONENTS):
            value = float(getattr(entry, component))
            if value == ERASE:
                out[row, j] = 0.0
            elif value > 0.0 and np.isfinite(value):
                out[row, j] = value
            elif value != 0.0:
                raise ToleranceError(f"{what} of '{entry.name}': {component} {value} is not a "
                                     "tolerance (> 0; 0 = the default; -1 = none)")
    return out


def goal_time(requested_s: float, default_s: float) -> float:
    """The goal time for a goal's ``goal_time_tolerance`` (s): 0 = default, −1 = erased."""
    if requested_s == 0.0:
        return default_s
    if requested_s == ERASE:
        return MAX_GOAL_TIME
    if requested_s > 0.0 and np.isfinite(requested_s):
        return min(requested_s, MAX_GOAL_TIME)
    raise ToleranceError(f"goal_time_tolerance {requested_s} s is not a tolerance "
                         "(> 0; 0 = the default; -1 = none)")


def resolve(default: Tolerances, path_entries: Sequence, goal_entries: Sequence,
            goal_time_s: float, names: Sequence[str]) -> Tolerances:
    """The tolerances a goal runs with (JTC's 0 = default, −1 = erase), or ToleranceError."""
    return Tolerances(path=override(default.path, path_entries, names, "path_tolerance"),
                      goal=override(default.goal, goal_entries, names, "goal_tolerance"),
                      goal_time=goal_time(goal_time_s, default.goal_time))


def violation(tolerance: Array, error_q: Array, error_qd: Array, names: Sequence[str]) -> str | None:
    """The first checked (tolerance > 0) position or velocity error beyond its tolerance, as
    text, or None when all are inside."""
    for row, error in ((0, error_q), (1, error_qd)):
        bad = (tolerance[row] > 0.0) & ~(np.abs(error) <= tolerance[row])
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            return (f"joint '{names[j]}' {COMPONENTS[row]} error {error[j]:+.4g} is beyond "
                    f"its tolerance {tolerance[row, j]:.4g}")
    return None
