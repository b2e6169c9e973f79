"""The ``trajectory_generator`` node: sends the motion to the controller as quintic knots.

The motion is a scenario's trajectory, a named example (``huo_intended``), or a looping sweep
through ``waypoints`` starting from wherever the robot is. A goal replaces it, starting from the
current reference so the reference stays continuous: a FollowJointTrajectory goal on
``~/follow_joint_trajectory`` or a trajectory on ``~/joint_trajectory`` (alias
/trajectory_generator/goal), with joint_trajectory_controller's semantics
(nodes/trajectory_actions.py); a goal that breaks the joint limits is refused before it runs.
A joint state that fails the checks of nodes/validation.py is dropped and counted (it could
otherwise anchor the motion at a NaN); so is a goal with a non-finite or implausible value.

Real time: only the control loop crosses processes every tick. When a motion starts (and ahead
of each new cycle of a looping sweep) the node publishes it once on /controller/joint_trajectory
as a trajectory_msgs/JointTrajectory of its quintic knots — positions, velocities, accelerations
and time_from_start, header stamp = the start — which the controller evaluates at each state's
stamp (trajectory/schedule.py), as ros2_control's joint_trajectory_controller samples the
trajectory it receives. That topic is reliable and transient local (depth 1): a controller that
starts or restarts late still gets the motion under way, and the profile matches any reader,
including joint_trajectory_controller's ``~/joint_trajectory`` (SystemDefaultsQoS: volatile). The
sampled reference is published on /joint_reference at ``monitor_rate`` for rqt and bags.
The node listens to /joint_states only until the first state anchors a motion.
Lockstep: the reference for t_k is published on /joint_reference when the state for t_k arrives
(the controller answers t_k only with it), as the offline simulation samples it.

A managed node: configuring checks the motion's parameters; activating starts the motion from
the position measured at the next joint state (the lifecycle_manager activates it once the
loop is closed, so the arm is held there), or the scenario's trajectory from now (lockstep:
t = 0); only while active does it publish (and accept goals). Deactivating sends a hold at the
reference's current position.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from robot_control.bus import ParameterError
from robot_control.bus.lifecycle import CallbackReturn
from robot_control.bus.param_table import declare
from robot_control.nodes.common import (
    LoopTimerHooks,
    configure_failure,
    run_node,
    warm_up,
)
from robot_control.nodes.convert import TRAJECTORY_TOPIC, Messages, seconds, stamp_ns
from robot_control.nodes.health import OK, NodeHealth
from robot_control.nodes.node_parameters import AutostartParams, RobotParams, TimingParams, declare_common
from robot_control.nodes.trajectory_actions import TrajectoryActions
from robot_control.nodes.trajectory_parameters import FeasibilityParams, JtcParams, TrajectoryParams
from robot_control.nodes.validation import (
    DropLog,
    JointVectors,
    Rejected,
)
from robot_control.trajectory import Hold, JointTrajectory, feasibility, named_trajectory
from robot_control.trajectory.jtc_goal import INVALID_GOAL, GoalError
from robot_control.trajectory.schedule import trajectory_knots

#: without a monitor rate, how often the node still looks after a looping motion, s
HOUSEKEEPING_PERIOD_S = 0.1
FRESH_STATE_S = 0.5  # a joint state this recent anchors a re-activated reference at once


class TrajectoryNode(LoopTimerHooks):
    """Owns the active motion: sends it as knots when it starts, samples it for monitoring."""

    #: its parameter tables, in declaration order (docs/parameters.md)
    PARAMETER_TABLES = (RobotParams, TimingParams, TrajectoryParams, JtcParams, FeasibilityParams,
                        AutostartParams)

    def __init__(self, node) -> None:
        self.node = node
        self.log = node.get_logger()
        common = declare_common(node)
        self.scenario = common.scenario
        self.model = common.model
        self.n = self.model.nq
        self.names = self.model.joint_names
        self.joints = JointVectors(self.model)
        self.drops = DropLog(self.log)
        self.lockstep = common.timing.lockstep
        self.settings = declare(node, TrajectoryParams)
        self.m = Messages(node)
        self.pub = node.create_lifecycle_publisher("trajectory_msgs/msg/JointTrajectory",
                                                   "joint_reference")
        self.pub_motion = node.create_lifecycle_publisher(
            "trajectory_msgs/msg/JointTrajectory", TRAJECTORY_TOPIC, qos="transient_local")
        # /joint_states while active (lockstep: always), for the anchor, the lockstep reference
        # and a goal's tolerances: one subscription, so a lockstep plant counting its
        # listeners counts this node once
        self.state_sub = None
        self.measured = None  # (q, monotonic s) of the last valid joint state
        if self.lockstep:
            self._watch_states()
        self.trajectory = None  # the motion, on its own clock (seconds since start_ns)
        self.knots = None  # its knots, as sent
        self.start_ns = 0  # when the motion (its current cycle) started
        self.cycle_ns = 0  # a looping motion's period
        self.sent_ahead = -1  # start of the newest cycle sent
        self.looping = False
        self.last_ns = 0  # stamp of the last reference published (lockstep) or sampled
        if self.scenario is not None:
            if not hasattr(self.scenario.trajectory, "sample") or \
                    type(self.scenario.trajectory).__name__ == "CartesianPath":
                raise ParameterError("the trajectory_generator publishes joint references; "
                                     "this scenario's trajectory is Cartesian")
            if self.scenario.motion_warning:
                self.log.warn(f"scenario '{self.scenario.name}': {self.scenario.motion_warning}; "
                              + ("the plant saturates" if self.lockstep else
                                 "the controller refuses it: the arm holds"))
        self.rate = common.timing.rate
        self.timer = None
        self.actions = TrajectoryActions(node, self.model, self, self._goal_now_ns)
        self.health = NodeHealth(node, "trajectory_generator", self._status, self.drops)

    def _status(self):
        if not self.node.is_active:
            running = self.node.lifecycle_state.label
        else:
            running = "waiting for a joint state" if self.trajectory is None else "running"
        counts = self.actions.follower.counts
        return OK, running, {"motion": self.settings.default_motion,
                             **{f"goals {k}": v for k, v in counts.items()},
                             "trajectories refused": self.actions.refused_topic}

    # -------------------------------------------------------------- lifecycle
    def on_configure(self, previous) -> CallbackReturn:
        """Check the motion's parameters (a named trajectory for this robot, the waypoints)."""
        try:
            trial = self._default_trajectory(np.clip(np.zeros(self.n), self.model.lower,
                                                     self.model.upper))
        except (ValueError, KeyError) as exc:
            return configure_failure(self.log, f"the motion '{self.settings.default_motion}'", exc)
        warm_up(self.log, "trajectory_sample", lambda: trial.sample(0.0))
        warm_up(self.log, "motion_feasibility", lambda: feasibility.warm_up(self.model))
        return CallbackReturn.SUCCESS

    def on_activate(self, previous) -> CallbackReturn:
        """Start the motion: the scenario's from now (lockstep: t = 0), else from the next
        measured position."""
        self.trajectory, self.looping = None, False
        if self.scenario is not None:
            self._start(self.scenario.trajectory, 0 if self.lockstep else self._now_ns())
        elif not self.lockstep and self.measured is not None and \
                time.monotonic() - self.measured[1] <= FRESH_STATE_S:
            self._anchor(self.measured[0], self._now_ns())
        self._watch_states()
        if not self.lockstep:
            self.timer = self.node.create_timer(self._monitor_period(), self._monitor)
        self.actions.activate()
        return CallbackReturn.SUCCESS

    def on_deactivate(self, previous) -> CallbackReturn:
        """Stop: a running goal is aborted, the controller holds the reference's current
        position (sent while active)."""
        self.actions.deactivate()
        if self.trajectory is not None and not self.lockstep:
            now = self._now_ns()
            q, _, _ = self._sample(now)
            self._start(Hold(q), now)
        return super().on_deactivate(previous)

    def on_cleanup(self, previous) -> CallbackReturn:
        self._forget_states()
        return CallbackReturn.SUCCESS

    def on_shutdown(self, previous) -> CallbackReturn:
        self._forget_states()
        return super().on_shutdown(previous)

    def on_error(self, previous) -> CallbackReturn:
        self._forget_states()
        return super().on_error(previous)

    def _forget_states(self) -> None:
        """Leave the joint states (deactivate keeps them: a new subscription would first wait
        for discovery, and a goal sent right after re-activation would find no reference)."""
        if self.state_sub is not None and not self.lockstep:
            self.node.destroy_subscription(self.state_sub)
            self.state_sub = None
        self.measured = None

    # ---------------------------------------------------------------- motions
    def _default_trajectory(self, q_start: np.ndarray):
        """The motion to run before any goal, starting from the measured position."""
        if self.settings.default_motion == "hold":
            return Hold(q_start)
        if self.settings.default_motion != "sweep":
            traj = named_trajectory(self.settings.default_motion)
            if traj.dof != self.n:
                raise ParameterError(f"trajectory '{self.settings.default_motion}' has {traj.dof} joints")
            return traj
        if self.settings.waypoints:
            W = np.asarray(self.settings.waypoints, dtype=float)
            if W.size % self.n:
                raise ParameterError(f"waypoints must be a multiple of {self.n} numbers")
            points = [q_start, *W.reshape(-1, self.n)]
        else:
            points = [q_start, q_start + 0.3, q_start - 0.3]
        if self.settings.loop:
            points = points + points[-2::-1]
        return JointTrajectory.sweep(points, self.settings.segment_duration, self.model.lower,
                                     self.model.upper, self.model.velocity_limit)

    def _start(self, trajectory, start_ns: int, looping: bool = False) -> None:
        """Make ``trajectory`` (on its own clock) the motion from ``start_ns``; real time: send
        its knots (a looping sweep returns to its start at rest, so it repeats seamlessly)."""
        self.trajectory, self.start_ns, self.looping = trajectory, start_ns, looping
        self.cycle_ns = int(round(trajectory.duration * 1e9)) if looping else 0
        self.sent_ahead = start_ns  # the newest cycle the controller has been sent
        if not self.lockstep:
            self.knots = trajectory_knots(trajectory, self.settings.knot_interval)
            self.pub_motion.publish(self.m.joint_trajectory(start_ns, self.names, self.knots))

    def _sample(self, ns: int):
        """(q_d, q̇_d, q̈_d) at stamp ``ns`` (a looping motion moves on to the cycle holding it)."""
        if self.looping and self.cycle_ns > 0 and ns - self.start_ns >= self.cycle_ns:
            self.start_ns += (ns - self.start_ns) // self.cycle_ns * self.cycle_ns
        return self.trajectory.sample(self.trajectory.start_time + seconds(ns - self.start_ns))

    # ----------------------------------------------------------------- inputs
    def _watch_states(self) -> None:
        if self.state_sub is None:
            self.state_sub = self.node.create_subscription(
                "sensor_msgs/msg/JointState", "joint_states", self._on_state)

    def _on_state(self, msg) -> None:
        active = self.node.is_active
        if not active and self.lockstep:
            return
        try:
            q, qd = self.joints.state(msg)
        except Rejected as exc:
            if active:
                self.drops.drop("/joint_states", str(exc))
            return  # a goal's deadline still runs
        ns = stamp_ns(msg.header.stamp)
        self.measured = (q, time.monotonic())
        if not active:
            return
        if self.trajectory is None:  # the first state after activation anchors it
            self._anchor(q, 0 if self.lockstep else ns)
        if self.lockstep:
            self._publish(ns)
        self.actions.on_state(ns, q, qd)

    def _anchor(self, q: np.ndarray, start_ns: int) -> None:
        """Start the default motion from the measured position ``q``."""
        loops = self.settings.default_motion == "sweep" and self.settings.loop
        own = self.actions.follower.motion_check.own_motion(self._default_trajectory(q), q)
        self._start(own, start_ns, loops)
        self.log.info(f"reference starts from the measured position ({self.settings.default_motion})")

    # ------------------------------------------------ the reference, for goals
    def desired(self, ns: int) -> np.ndarray:
        """(3, n) the reference at ``ns`` (what a goal starts from)."""
        if self.trajectory is None:
            raise GoalError(INVALID_GOAL, "no reference yet: the trajectory generator waits for "
                            "the first joint state")
        return np.stack(self._sample(ns))

    def run(self, trajectory, start_ns: int) -> None:
        """Make a goal's ``trajectory`` the motion from ``start_ns``."""
        self._start(trajectory, start_ns)

    def _goal_now_ns(self) -> int:
        return self.last_ns if self.lockstep else self._now_ns()

    # ---------------------------------------------------------------- publish
    def _monitor_period(self) -> float:
        return 1.0 / self.settings.monitor_rate if self.settings.monitor_rate > 0 else HOUSEKEEPING_PERIOD_S

    def _now_ns(self) -> int:
        return int(self.node.now() * 1e9)

    def _monitor(self) -> None:
        """Real time: send the next cycle of a looping motion ahead of its start; publish the
        sampled reference (monitor_rate)."""
        if self.trajectory is None:
            return
        ns = self._now_ns()
        if self.looping and self.cycle_ns > 0:
            self._send_cycles_due(ns)
        if self.settings.monitor_rate > 0:
            self._publish(ns)

    def _send_cycles_due(self, ns: int) -> None:
        """Send a looping motion's cycles that are due and not sent yet, each stamped with its
        own start: the next one within the lookahead, and the current one if this tick came
        after its start (a stalled process): the controller then joins it in phase, as the
        generator's reference has (a cycle never sent left the controller holding the previous
        cycle's end while goals started from the generator's reference: dropped as a jump)."""
        self._sample(ns)  # moves start_ns on to the current cycle
        lookahead = int(2e9 * self._monitor_period()) + 50_000_000
        for start in (self.start_ns, self.start_ns + self.cycle_ns):
            if start > self.sent_ahead and start - ns <= lookahead:
                self.pub_motion.publish(self.m.joint_trajectory(start, self.names, self.knots))
                self.sent_ahead = start

    def _publish(self, ns: int) -> None:
        self.last_ns = ns
        q, qd, qdd = self._sample(ns)
        self.pub.publish(self.m.joint_reference(ns, self.names, q, qd, qdd))


def main(argv: list[str] | None = None) -> int:
    return run_node("trajectory_generator", TrajectoryNode, argv)


if __name__ == "__main__":
    sys.exit(main())
