"""FollowJointTrajectory goals, executed as joint_trajectory_controller does — any transport.

:class:`TrajectoryFollower` is the action's logic without the action: the bus routes (rclpy's
ActionServer, the DDS action protocol) hand it goals, cancels and joint states and turn what it
reports — feedback, and each goal's end (status, error_code, error_string) — into messages.

Semantics (ros2_controllers' joint_trajectory_controller): one goal runs at a
time; a newer goal preempts it (ABORTED, INVALID_GOAL, "preempted by a newer goal") and starts
from the current reference, so q, q̇ and q̈ stay continuous across the switch; a trajectory on
the topic interface preempts a goal the same way. Every goal is accepted and a bad one aborted at
once with its code and reason (trajectory/jtc_goal.py); only a node that cannot take goals
(inactive) rejects. While it runs, every joint state is checked against the path tolerance
(violation: ABORTED, PATH_TOLERANCE_VIOLATED, and the arm holds); after the last point the goal
succeeds once every joint is inside its goal tolerance *and* moving slower than its goal velocity
tolerance (stopped_velocity_tolerance by default — a slow joint still moving is not "reached",
unlike JTC, ros2_controllers#1088), else it aborts with GOAL_TOLERANCE_VIOLATED when the goal
time is over (always finite here). Cancel: CANCELED, and the reference comes to rest from where
it is within ``stop_time`` (a quintic from its q, q̇, q̈: no jump; 0 = hold the position at
once, as JTC does); a path violation stops it the same way. Feedback (desired, actual, error
at the last state's stamp) goes out whenever
:meth:`feedback_due` says so, at ``action_monitor_rate``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from robot_control.foundation.log_text import bounded
from robot_control.trajectory.joint_trajectory import Hold
from robot_control.trajectory.jtc_goal import (
    GOAL_TOLERANCE_VIOLATED,
    INVALID_GOAL,
    INVALID_JOINTS,
    PATH_TOLERANCE_VIOLATED,
    SUCCESSFUL,
    GoalError,
    GoalRules,
    Plan,
    plan_goal,
    stop_trajectory,
)
from robot_control.trajectory.tolerances import ToleranceError, Tolerances, resolve, violation

Array = NDArray[np.float64]
NS = 1_000_000_000
SUCCEEDED, ABORTED, CANCELED = "succeeded", "aborted", "canceled"
PREEMPTED = "preempted by a newer goal"


@dataclass(frozen=True)
class Feedback:
    """One feedback: names, the reference (3, n) and the measured (q, q̇) at ``stamp_ns``."""

    stamp_ns: int
    joint_names: list[str]
    desired: Array
    actual: Array | None  # (2, n) q, q̇; None before any joint state
    error: Array | None  # (2, n) desired − actual


class Reference(Protocol):
    """The node that owns the reference the controller tracks."""

    def desired(self, ns: int) -> Array:
        """(3, n) (q, q̇, q̈) of the current reference at ``ns``."""

    def run(self, trajectory, start_ns: int) -> None:
        """Make ``trajectory`` (on its own clock) the reference from ``start_ns`` on."""


Finish = Callable[[object, str, int, str], None]  # (goal id, status, error_code, error_string)


@dataclass
class ActiveGoal:
    goal_id: object
    plan: Plan
    tolerances: Tolerances
    silent_ticks: int = 0  # ticks past the goal time with no joint state after the end
    note: str = ""  # how the motion was changed to run (time-scaled), for the result
    saturation: str = ""  # the controller's last saturation report while it ran


class TrajectoryFollower:
    """The running FollowJointTrajectory goal and its checks (see the module docstring)."""

    def __init__(self, rules: GoalRules, defaults: Tolerances, reference: Reference,
                 finish: Finish, log, feedback_rate: float = 20.0) -> None:
        self.rules = rules
        self.defaults = defaults
        self.reference = reference
        self.finish = finish
        self.log = log
        self.names = list(rules.joint_names)
        self.period_ns = int(NS / feedback_rate)
        self.active: ActiveGoal | None = None
        self.state: tuple[int, Array, Array] | None = None  # last (stamp, q, q̇)
        self._next_feedback = 0
        self.counts = {SUCCEEDED: 0, ABORTED: 0, CANCELED: 0}
        # plan -> (plan to run, note) or GoalError: the torque-feasibility check
        # (nodes/motion_feasibility.py); None: positions and velocities only
        self.motion_check: Callable[[Plan], tuple[Plan, str]] | None = None
        self._note = ""

    # ----------------------------------------------------------------- inputs
    def submit(self, goal_id: object, goal, now_ns: int) -> bool:
        """Run an accepted FollowJointTrajectory goal; False if it ended at once (bad goal)."""
        try:
            if len(goal.multi_dof_trajectory.joint_names) or len(goal.component_path_tolerance) \
                    or len(goal.component_goal_tolerance):
                raise GoalError(INVALID_JOINTS, "multi-DOF joints are not supported: this arm "
                                "has only single-DOF joints (leave multi_dof_trajectory and the "
                                "component tolerances empty)")
            tolerances = resolve(self.defaults, goal.path_tolerance, goal.goal_tolerance,
                                 _seconds(goal.goal_time_tolerance), self.names)
            plan = self._plan(goal.trajectory, now_ns)
        except ToleranceError as exc:
            code = INVALID_JOINTS if exc.unknown_joint else INVALID_GOAL
            return self.refuse(goal_id, code, str(exc))
        except GoalError as exc:
            return self.refuse(goal_id, exc.code, exc.text)
        self._end_active(ABORTED, INVALID_GOAL, PREEMPTED)
        self.active = ActiveGoal(goal_id, plan, tolerances, note=self._note)
        self._next_feedback = now_ns
        self.log.info(f"goal {_short(goal_id)}: {len(goal.trajectory.points)} points over "
                      f"{(plan.end_ns - now_ns) / NS:.3f} s")
        return True

    def command(self, trajectory, now_ns: int) -> str | None:
        """A trajectory on the topic interface: run it (preempting a goal), or the reason not."""
        try:
            self._plan(trajectory, now_ns)
        except GoalError as exc:
            return exc.text
        self._end_active(ABORTED, INVALID_GOAL, "preempted by a trajectory on the topic")
        return None

    def cancel(self, goal_id: object, now_ns: int) -> bool:
        """Cancel a running goal: hold the current reference position; False if it is not the
        running goal (unknown or already ended)."""
        if self.active is None or self.active.goal_id != goal_id:
            return False
        self._hold(now_ns)
        self._end_active(CANCELED, SUCCESSFUL, "canceled")
        return True

    def stop(self, reason: str) -> None:
        """The node stops taking goals (deactivation): the running goal is aborted."""
        self._end_active(ABORTED, INVALID_GOAL, reason)

    def upset(self, now_ns: int, what: str) -> None:
        """The controller or the plant faulted, or the controller stopped commanding: the running
        goal cannot succeed — ABORTED (PATH_TOLERANCE_VIOLATED: its execution failed) with
        ``what``, and the reference holds the measured position (the arm did not follow the
        reference: its target must not be resumed later)."""
        if self.active is None:
            return
        q = self.reference.desired(now_ns)[0] if self.state is None else self.state[1]
        self.reference.run(Hold(q.copy()), now_ns)
        self._end_active(ABORTED, PATH_TOLERANCE_VIOLATED, f"{what}; holding the measured "
                         "position")

    def saturating(self, note: str) -> None:
        """The controller saturates its commands: a tolerance the goal then breaks says so."""
        if self.active is not None:
            self.active.saturation = note

    def on_state(self, stamp_ns: int, q: Array, qd: Array) -> None:
        """A measured joint state: check the running goal's tolerances at its stamp."""
        self.state = (stamp_ns, q, qd)
        goal = self.active
        if goal is None or stamp_ns < goal.plan.start_ns:
            return
        d = self.reference.desired(stamp_ns)
        if stamp_ns <= goal.plan.end_ns:
            problem = violation(goal.tolerances.path, d[0] - q, d[1] - qd, self.names)
            if problem is not None:
                self._hold(stamp_ns)
                self._end_active(ABORTED, PATH_TOLERANCE_VIOLATED,
                                 f"path tolerance violated at t = "
                                 f"{(stamp_ns - goal.plan.start_ns) / NS:.3f} s: {problem}"
                                 f"{_saturated(goal)}; holding")
            return
        problem = violation(goal.tolerances.goal, d[0] - q, -qd, self.names)
        if problem is None:
            self._end_active(SUCCEEDED, SUCCESSFUL,
                             "goal reached" + (f"; {goal.note}" if goal.note else ""))
        else:
            self._check_deadline(stamp_ns, problem)

    def tick(self, now_ns: int) -> None:
        """Periodic: a goal whose joint states stopped still ends at its goal time — at the
        second tick past it, so that states queued while this node was busy (an executor runs a
        due timer before the messages that arrived meanwhile) are read first."""
        goal = self.active
        if goal is None or (self.state is not None and self.state[0] >= goal.plan.end_ns):
            return
        if self._late(goal, now_ns) <= 0.0:
            return
        goal.silent_ticks += 1
        if goal.silent_ticks > 1:
            last = "none yet" if self.state is None else (
                f"the last one is stamped {(goal.plan.end_ns - self.state[0]) / NS:.3f} s "
                "before it")
            self._check_deadline(now_ns, f"no joint state after the trajectory's end ({last})")

    def feedback_due(self, now_ns: int) -> Feedback | None:
        """The feedback to send now, or None (no goal running, or sent within the period)."""
        if self.active is None or now_ns < self._next_feedback:
            return None
        self._next_feedback = max(self._next_feedback + self.period_ns, now_ns)
        if self.state is None:
            return Feedback(now_ns, self.names, self.reference.desired(now_ns), None, None)
        stamp, q, qd = self.state
        d = self.reference.desired(stamp)
        actual = np.stack([q, qd])
        return Feedback(stamp, self.names, d, actual, d[:2] - actual)

    # --------------------------------------------------------------- internals
    def _plan(self, trajectory, now_ns: int) -> Plan:
        plan = plan_goal(trajectory, self.rules, now_ns, self._start_state(now_ns))
        plan, self._note = self.motion_check(plan) if self.motion_check else (plan, "")
        self.reference.run(plan.trajectory, plan.start_ns)
        return plan

    def _start_state(self, now_ns: int) -> Array:
        """(3, n) what a new motion starts from: the current reference — unless it is at rest
        and the arm is not there (the controller was inactive while an aborted or cancelled
        goal's reference moved on): then the measured position at rest, which is what the
        controller holds (nodes/controller_node.py), so no stale target is carried on."""
        current = self.reference.desired(now_ns)
        if self.state is None or current[1:].any():
            return current
        q = self.state[1]
        if np.abs(q - current[0]).max() <= self.rules.start_tolerance:
            return current
        return np.stack([q, np.zeros_like(q), np.zeros_like(q)])

    def refuse(self, goal_id: object, code: int, text: str) -> bool:
        self.log.error(f"goal {_short(goal_id)} aborted: {bounded(text)}")
        self.counts[ABORTED] += 1
        self.finish(goal_id, ABORTED, code, text)
        return False

    def _hold(self, now_ns: int) -> None:
        """Stop the reference where it is: to rest within ``stop_time`` (0: at once)."""
        r = self.rules
        self.reference.run(stop_trajectory(self.reference.desired(now_ns), r.stop_time, r.lower,
                                           r.upper), now_ns)

    @staticmethod
    def _late(goal: ActiveGoal, now_ns: int) -> float:
        """Seconds past the goal's end plus its goal time (> 0: the goal time is over)."""
        return (now_ns - goal.plan.end_ns) / NS - goal.tolerances.goal_time

    def _check_deadline(self, now_ns: int, problem: str) -> None:
        goal = self.active
        if self._late(goal, now_ns) > 0.0:
            self._end_active(ABORTED, GOAL_TOLERANCE_VIOLATED,
                             f"goal not reached {goal.tolerances.goal_time:g} s after the "
                             f"trajectory's end (goal_time): {problem}{_saturated(goal)}")

    def _end_active(self, status: str, code: int, text: str) -> None:
        goal, self.active = self.active, None
        if goal is None:
            return
        line = f"goal {_short(goal.goal_id)} {status}: {bounded(text)}"
        if status == SUCCEEDED:  # (rclpy refuses two severities from one line of code)
            self.log.info(line)
        else:
            self.log.warn(line)
        self.counts[status] += 1
        self.finish(goal.goal_id, status, code, text)


def _saturated(goal: ActiveGoal) -> str:
    """What a tolerance violation adds when the controller saturated during the goal."""
    return f" (the controller saturated: {goal.saturation})" if goal.saturation else ""


def _seconds(duration) -> float:
    return (int(duration.sec) * NS + int(duration.nanosec)) / NS


def _short(goal_id: object) -> str:
    """A goal id as logs show it (the first bytes of a UUID)."""
    if isinstance(goal_id, bytes | bytearray):
        return goal_id[:4].hex()
    if hasattr(goal_id, "__len__") and not isinstance(goal_id, str):
        return bytes(int(b) for b in list(goal_id)[:4]).hex()
    return str(goal_id)
