"""The trajectory generator's motion interfaces of a ros2_control arm: the
``~/follow_joint_trajectory`` action (control_msgs/action/FollowJointTrajectory) and the
``~/joint_trajectory`` topic (trajectory_msgs/JointTrajectory), both through one
TrajectoryFollower (nodes/follow_joint_trajectory.py), with joint_trajectory_controller's
parameters (``constraints.<joint>.trajectory`` / ``.goal``, ``constraints.stopped_velocity_tolerance``,
``constraints.goal_time``, ``action_monitor_rate``, ``allow_partial_joints_goal``,
``allow_nonzero_velocity_at_trajectory_end``) and this package's caps
(``max_trajectory_points``, ``max_trajectory_duration``). ``/trajectory_generator/goal`` is kept
as an alias of the topic. A goal the arm cannot execute (torque, velocity or acceleration
beyond the limits along its reference) is refused or time-scaled, as ``infeasible_motion``
says (nodes/motion_feasibility.py).

While active the node hands each /joint_states sample to ``on_state``: a running goal's
tolerances are checked at every state, and feedback goes out at ``action_monitor_rate``. A goal
that arrives while the node is not active is accepted and aborted at once (INVALID_GOAL) with
the reason, which a bare rejection could not carry to the client.
"""

from __future__ import annotations

import numpy as np

from robot_control.bus.cdr_prefix import CdrMotion, DeclaredMotion
from robot_control.bus.node import ActionHandler
from robot_control.bus.param_table import declare
from robot_control.foundation.log_text import bounded
from robot_control.nodes.follow_joint_trajectory import Feedback, TrajectoryFollower
from robot_control.nodes.health import ERROR, WARN, status_level
from robot_control.nodes.motion_feasibility import MotionCheck
from robot_control.nodes.trajectory_parameters import FeasibilityParams, JtcParams
from robot_control.nodes.validation import refuse_sizes
from robot_control.trajectory.jtc_goal import INVALID_GOAL, GoalRules
from robot_control.trajectory.tolerances import Tolerances

ACTION = "control_msgs/action/FollowJointTrajectory"
#: the roles whose statuses on /diagnostics a goal's success depends on
WATCHED = ("controller", "plant")
#: a plant status that says it stopped the arm itself (nodes/plant_node.py) — not a stall of
#: the loop (the plant holds for a moment; the controller resumes and the tolerances judge)
PLANT_STOPS = ("safety stop",)
TOPIC_ALIAS = "~/goal"  # /trajectory_generator/goal, in the node's namespace


def jtc_settings(jtc: JtcParams, model) -> tuple[GoalRules, Tolerances]:
    """The goal rules and default tolerances the node's JTC parameters say."""
    path = np.zeros((3, model.nq))
    goal = np.zeros((3, model.nq))
    goal[1] = jtc.stopped_velocity_tolerance
    path[0] = jtc.trajectory
    goal[0] = jtc.goal
    rules = GoalRules(model.joint_names, model.lower, model.upper, model.velocity_limit,
                      allow_partial_joints_goal=jtc.allow_partial_joints_goal,
                      allow_nonzero_velocity_at_trajectory_end=(
                          jtc.allow_nonzero_velocity_at_trajectory_end),
                      max_points=jtc.max_trajectory_points,
                      max_duration=jtc.max_trajectory_duration, blend=jtc.corner_blend,
                      stop_time=jtc.stop_time)
    return rules, Tolerances(path, goal, jtc.goal_time)


class TrajectoryActions(ActionHandler):
    """Wires a TrajectoryFollower to the node: action server, topic, joint states, timer."""

    def __init__(self, node, model, reference, now_ns) -> None:
        self.node = node
        self.log = node.get_logger()
        self.now_ns = now_ns
        self.model = model
        self.namespace = node.fqn.rsplit("/", 1)[0]
        jtc = declare(node, JtcParams, joints=model.joint_names, on_change=self._changed)
        self.rate = jtc.action_monitor_rate
        rules, defaults = jtc_settings(jtc, model)
        self.follower = TrajectoryFollower(rules, defaults, reference, self._finish, self.log,
                                           self.rate)
        self.follower.motion_check = MotionCheck(
            declare(node, FeasibilityParams, joints=model.joint_names,
                    on_change=self._feasibility_changed), model, self.log)
        self.refused_topic = 0
        self.server = None
        try:
            self.server = node.create_action_server(ACTION, "~/follow_joint_trajectory", self)
        except NotImplementedError as exc:
            self.log.warn(f"no ~/follow_joint_trajectory action: {exc}")
        for topic in ("~/joint_trajectory", TOPIC_ALIAS):
            node.create_subscription("trajectory_msgs/msg/JointTrajectory", topic, self._on_topic,
                                     screen=self._screen_topic)
        node.create_subscription("diagnostic_msgs/msg/DiagnosticArray", "diagnostics",
                                 self._on_diagnostics)
        self.timer = None

    def _changed(self, jtc: JtcParams) -> None:
        """A JTC parameter changed (``ros2 param set``): the next goal runs with it."""
        self.follower.rules, self.follower.defaults = jtc_settings(jtc, self.model)

    def _feasibility_changed(self, settings: FeasibilityParams) -> None:
        """``infeasible_motion`` or ``acceleration_limits`` changed: the next goal's check."""
        self.follower.motion_check.settings = settings

    # -------------------------------------------------------------- lifecycle
    def activate(self) -> None:
        """Feedback timer (the node's /joint_states arrive through ``on_state``)."""
        self.timer = self.node.create_timer(1.0 / self.rate, self._monitor)

    def deactivate(self) -> None:
        self.follower.stop("the trajectory generator was deactivated")
        if self.timer is not None:
            self.timer.cancel()
        self.timer = None

    # ----------------------------------------------------------------- action
    def accept(self, goal) -> str | None:
        """Accept every goal: one that cannot run now is aborted at once with the reason
        (``accepted``), which a client sees; a bare rejection carries none."""
        return None

    def inactive_reason(self) -> str | None:
        """Why a motion cannot run now (the node is not active), or None."""
        if self.node.is_active:
            return None
        return (f"{self.node.fqn} is {self.node.lifecycle_state.label}, not active: the stack is "
                "starting (its lifecycle manager activates the generator once the control loop "
                "is closed) or the generator was deactivated; send the goal once it is active")

    def accepted(self, goal_id: bytes, goal) -> None:
        reason = self.inactive_reason()
        if reason is not None:
            self.follower.refuse(goal_id, INVALID_GOAL, reason)
            return
        self.follower.submit(goal_id, goal, self.now_ns())

    def cancel(self, goal_id: bytes) -> bool:
        return self.follower.cancel(goal_id, self.now_ns())

    def screen_goal(self, declared: DeclaredMotion) -> str | None:
        """A goal refused by the sizes it declares, before it is decoded (validation.py)."""
        return refuse_sizes(declared, self.model.nq, self.follower.rules.max_points)

    def refused(self, goal_id: bytes, reason: str) -> None:
        self.follower.refuse(goal_id, INVALID_GOAL, reason + " (refused before decoding)")

    def _screen_topic(self, data: bytes) -> bool:
        """A trajectory on the topic refused by its declared sizes is not decoded."""
        reason = refuse_sizes(CdrMotion(data), self.model.nq, self.follower.rules.max_points)
        if reason is None:
            return True
        self.refused_topic += 1
        self.log.error(f"refused trajectory: {reason} (before decoding)",
                       throttle_duration_sec=1.0)
        return False

    def _finish(self, goal_id, status: str, code: int, text: str) -> None:
        if self.server is not None and isinstance(goal_id, bytes):
            self.server.finish(goal_id, status,
                               self.server.Result(error_code=code, error_string=text))

    # ------------------------------------------------------------------ inputs
    def _on_topic(self, msg) -> None:
        reason = self.inactive_reason()
        if reason is None:
            reason = self.follower.command(msg, self.now_ns())
        if reason is not None:
            self.refused_topic += 1
            self.log.error(f"refused trajectory: {bounded(reason)}", throttle_duration_sec=1.0)

    def _on_diagnostics(self, msg) -> None:
        """The controller's and the plant's statuses (of this namespace): a running goal does not
        succeed past an error of either, nor while the controller is not running or the plant
        has stopped the arm (safety stop); the controller's saturation goes into the reason of a
        tolerance it makes the goal break."""
        if self.follower.active is None:
            return
        for status in msg.status:
            node, _, role = str(status.name).rpartition(": ")
            if role not in WATCHED or node.rsplit("/", 1)[0] != self.namespace:
                continue
            level, message = status_level(status), str(status.message)
            if level >= ERROR:
                self.follower.upset(self.now_ns(), f"the {role} reported an error: {message}")
            elif role == "controller" and not message.startswith("running"):
                self.follower.upset(self.now_ns(), f"the controller is {message}: nothing "
                                    "executes the motion")
            elif role == "plant" and message.startswith(PLANT_STOPS):
                self.follower.upset(self.now_ns(), f"the plant stopped the arm: {message}")
            elif role == "controller" and level == WARN and "saturating" in message:
                self.follower.saturating(message.split("(", 1)[-1].rstrip(")"))

    def on_state(self, ns: int, q: np.ndarray, qd: np.ndarray) -> None:
        """A measured state (stamp ``ns``): a running goal's tolerances are checked against it."""
        self.follower.on_state(ns, q, qd)

    def _monitor(self) -> None:
        now = self.now_ns()
        self.follower.tick(now)
        feedback = self.follower.feedback_due(now)
        active = self.follower.active
        if feedback is not None and active is not None and self.server is not None \
                and isinstance(active.goal_id, bytes):
            self.server.publish_feedback(active.goal_id, self._feedback_msg(feedback))

    def _feedback_msg(self, fb: Feedback):
        msg = self.server.Feedback()
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(fb.stamp_ns, 1_000_000_000)
        msg.joint_names = list(fb.joint_names)
        _point(msg.desired, fb.desired)
        if fb.actual is not None:
            _point(msg.actual, fb.actual)
            _point(msg.error, fb.error)
        return msg


def _point(point, rows) -> None:
    """Fill a JointTrajectoryPoint's positions, velocities (and accelerations) from rows."""
    point.positions = [float(x) for x in rows[0]]
    point.velocities = [float(x) for x in rows[1]]
    if len(rows) > 2:
        point.accelerations = [float(x) for x in rows[2]]
