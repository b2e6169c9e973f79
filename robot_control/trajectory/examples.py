"""Huo's example reference (Ex. 3-2 … 3-7, DDArm) by name, for the example scenarios.

The book prints q_d(t) = q_f (10τ³ − 15τ⁴ + 6τ⁵), τ = t/1.5: a quintic from 0 (not from the
robot's initial q₀) to q_f. Its text intends q₀ → q_f. Both are provided (huo.md, "Trajectory");
both are quintics at rest at their ends and hold q_f after 1.5 s.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from robot_control.trajectory.joint_trajectory import JointTrajectory

HUO_Q0 = (-0.1, 1.5, 1.0)      # initial joint angles of every Huo chapter-3 example
HUO_QF = (0.6, 1.0, -0.5)      # goal (Ex. 3-1 set point, Ex. 3-2 … 3-7 trajectory end)
HUO_DURATION = 1.5             # s


def huo_printed() -> JointTrajectory:
    """Huo's trajectory as printed: q_f(10τ³ − 15τ⁴ + 6τ⁵), τ = t/1.5, starting from q = 0."""
    return JointTrajectory.through([np.zeros(3), HUO_QF], [HUO_DURATION])


def huo_intended() -> JointTrajectory:
    """Huo's trajectory as the text means it: rest-to-rest quintic q₀ → q_f in 1.5 s."""
    return JointTrajectory.through([HUO_Q0, HUO_QF], [HUO_DURATION])


NAMED_TRAJECTORIES: dict[str, Callable[[], JointTrajectory]] = {
    "huo_printed": huo_printed,
    "huo_intended": huo_intended,
}


def named_trajectory(name: str) -> JointTrajectory:
    """The example trajectory called ``name``; ValueError naming the known ones otherwise."""
    try:
        return NAMED_TRAJECTORIES[name]()
    except KeyError:
        known = ", ".join(sorted(NAMED_TRAJECTORIES))
        raise ValueError(f"unknown trajectory {name!r}; known: {known}") from None
