"""What a node does with a motion the arm cannot execute: parameter ``infeasible_motion``.

Every planned goal (a FollowJointTrajectory goal, a topic goal) is checked against the effort,
velocity and acceleration limits along its interpolated reference (trajectory/feasibility.py)
in the goal's acceptance path — never in the control loop. ``refuse`` (the default): the goal
ends ABORTED with INVALID_GOAL and a reason naming the joint, the time and the torque needed
against the limit. ``scale``: the motion is slowed down uniformly to the fastest feasible
timing of its shape, logged with its new duration, and the duration goes into the result's
error_string (FollowJointTrajectory's feedback has no field for it: its desired points follow
the slower timing). Acceleration limits come from ``acceleration_limits`` (the model and URDF
give none); effort and velocity limits from the model. The generator's own motion (the demo
sweep, a named example) is checked when it starts from the measured position: refused, the arm
holds there (an error line says why); scaled, it runs slower.

The controller checks each motion it receives on /controller/joint_trajectory too, and only
refuses (``check_feasible``: dropped and counted with the reason, the arm keeps its reference):
that topic carries knots, not a goal, so there is no result to report a new timing in, and a
motion the generator time-scaled arrives feasible. It allows ``TOLERANCE`` (0.5 %) over the
limits, the check's own resolution, so a motion scaled to exactly its limit is never refused
for the rounding of its re-anchoring.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from robot_control.nodes.trajectory_parameters import FeasibilityParams
from robot_control.nodes.validation import Rejected
from robot_control.trajectory.feasibility import (
    TOLERANCE,
    Limits,
    check_motion_feasible,
    scaled_to_limits,
)
from robot_control.trajectory.joint_trajectory import Hold, JointTrajectory
from robot_control.trajectory.jtc_goal import INVALID_GOAL, GoalError, Plan

NS = 1_000_000_000


class MotionCheck:
    """Checks a planned goal and refuses or time-scales it, as ``infeasible_motion`` says."""

    def __init__(self, settings: FeasibilityParams, model, log) -> None:
        self.settings = settings  # the node replaces it when a parameter changes
        self.model = model
        self.log = log

    def __call__(self, plan: Plan) -> tuple[Plan, str]:
        """(the plan to run, a note for the result) or GoalError(INVALID_GOAL, the reason)."""
        policy = self.settings.infeasible_motion
        limits = Limits.of(self.model, list(self.settings.acceleration_limits))
        if policy != "scale":
            verdict = check_motion_feasible(self.model, plan.trajectory, limits)
            if not verdict.feasible:
                raise GoalError(INVALID_GOAL, f"the arm cannot execute this motion: "
                                f"{verdict.violation} (infeasible_motion: refuse; "
                                f"{_slower(verdict.slowdown)})")
            return plan, ""
        try:
            motion, k, verdict = scaled_to_limits(self.model, plan.trajectory, limits)
        except ValueError as exc:
            raise GoalError(INVALID_GOAL, f"the arm cannot execute this motion: {exc}") from None
        if verdict.feasible:
            return plan, ""
        problems = motion.check_limits(self.model.lower, self.model.upper)
        if problems:  # a moving start carried on for longer may leave the limits
            raise GoalError(INVALID_GOAL, f"the arm cannot execute this motion ({verdict.violation})"
                            f" and slowed down ×{k:.3g} it leaves the limits: {problems[0]}")
        note = (f"time-scaled ×{k:.4g} to {motion.duration:.4g} s (as sent "
                f"{plan.trajectory.duration:.4g} s: {verdict.violation})")
        self.log.warn(f"infeasible_motion: scale: {note}")
        return replace(plan, trajectory=motion,
                       end_ns=plan.start_ns + int(round(motion.duration * NS))), note

    def own_motion(self, motion, q: np.ndarray):
        """The generator's own motion (the sweep, a named example) started from the measured
        ``q``: as it is when feasible; else, as ``infeasible_motion`` says, time-scaled, or
        refused for a hold at ``q`` — with an error line naming the joint and the torque."""
        if not isinstance(motion, JointTrajectory):
            return motion
        policy = self.settings.infeasible_motion
        limits = Limits.of(self.model, list(self.settings.acceleration_limits))
        try:
            scaled, k, verdict = scaled_to_limits(self.model, motion, limits)
        except ValueError as exc:
            self.log.error(f"the default motion cannot be executed: {exc}; holding")
            return Hold(q)
        if verdict.feasible:
            return motion
        if policy != "scale":
            self.log.error(f"the default motion cannot be executed: {verdict.violation} "
                           f"(infeasible_motion: refuse; ×{k:.3g} slower would fit); holding")
            return Hold(q)
        self.log.warn(f"the default motion time-scaled ×{k:.4g} to {scaled.duration:.4g} s: "
                      f"{verdict.violation} (infeasible_motion: scale)")
        return scaled


def _slower(k: float) -> str:
    """What slowing down would do, for a refusal's reason."""
    if not np.isfinite(k):
        return "no slower timing helps: gravity alone exceeds the limit"
    return f"about ×{k:.3g} slower would fit; or set infeasible_motion: scale"


def check_feasible(motion, model):
    """The controller's refuse-only check of a motion it received: Rejected naming the joint,
    the time and the torque needed against the limit (0.5 % allowed, see the module doc)."""
    limits = Limits.of(model)
    lenient = replace(limits, effort=limits.effort * (1.0 + TOLERANCE),
                      velocity=limits.velocity * (1.0 + TOLERANCE))
    verdict = check_motion_feasible(model, motion, lenient)
    if not verdict.feasible:
        raise Rejected(f"the arm cannot execute it: {verdict.violation} (with the 0.5 % "
                       "allowance)")
    return motion
