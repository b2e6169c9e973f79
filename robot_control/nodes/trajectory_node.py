"""The ``trajectory_generator`` node: publishes /joint_reference (q_d, q̇_d, q̈_d) at the control rate.

The motion is a scenario's trajectory, a named example (``huo_intended``), or a looping sweep
through ``waypoints`` starting from wherever the robot is. A goal on /trajectory_generator/goal
(trajectory_msgs/JointTrajectory) replaces the motion, re-anchored at the current reference so
the reference stays continuous; a goal that breaks the joint limits is refused before it runs.
In lockstep the reference for t_k is published when the state for t_k arrives. A joint state
that fails the checks of nodes/validation.py is dropped and counted (it could otherwise anchor
the motion at a NaN); so is a goal with a non-finite or implausible value.

A managed node: configuring checks the motion's parameters; activating starts the motion from
the position measured at the next joint state (the lifecycle_manager activates it once the
loop is closed, so the arm is held there), or the scenario's trajectory from t = 0; only while
active does it publish (and accept goals).
"""

from __future__ import annotations

import sys
import time

import numpy as np

from robot_control.bus import ParameterError
from robot_control.bus.lifecycle import CallbackReturn
from robot_control.nodes.common import (
    LoopTimerHooks,
    configure_failure,
    declare_common,
    run_node,
    warm_up,
)
from robot_control.nodes.convert import Messages, seconds, stamp_ns
from robot_control.nodes.health import OK, NodeHealth
from robot_control.nodes.validation import (
    DropLog,
    JointVectors,
    Rejected,
)
from robot_control.trajectory import Hold, JointTrajectory, named_trajectory


class TrajectoryNode(LoopTimerHooks):
    """Owns the active trajectory and samples it on every tick."""

    def __init__(self, node) -> None:
        self.node = node
        self.log = node.get_logger()
        common = declare_common(node)
        self.scenario = common["scenario_obj"]
        self.model = common["model"]
        self.n = self.model.nq
        self.names = self.model.joint_names
        self.joints = JointVectors(self.model)
        self.drops = DropLog(self.log)
        self.goals = 0
        self.lockstep = bool(common["lockstep"])
        self.motion = node.declare_parameter(
            "default_motion", "sweep", "motion before any goal: 'sweep' through waypoints and "
            "back, a named example trajectory (huo_intended, huo_printed), or 'hold'",
            read_only=True)
        self.waypoints = node.declare_parameter(
            "waypoints", [0.0] * 0, "sweep waypoints, flattened (k × n); empty: ±0.3 rad about "
            "the start", read_only=True)
        self.segment = node.declare_parameter("segment_duration", 1.5, "sweep segment time, s",
                                              floating_point_range=(0.05, 600.0), read_only=True)
        self.loop = node.declare_parameter("loop", True, "repeat the sweep", read_only=True)
        self.m = Messages(node)
        self.pub = node.create_lifecycle_publisher("trajectory_msgs/msg/JointTrajectory",
                                                   "/joint_reference")
        node.create_subscription("sensor_msgs/msg/JointState", "/joint_states", self._on_state)
        node.create_subscription("trajectory_msgs/msg/JointTrajectory",
                                 "/trajectory_generator/goal", self._on_goal)
        self.trajectory = None
        self.t0_wall: float | None = None
        self.last = None  # last (q, qd, qdd) published
        self.looping = False
        if self.scenario is not None:
            if not hasattr(self.scenario.trajectory, "sample") or \
                    type(self.scenario.trajectory).__name__ == "CartesianPath":
                raise ParameterError("the trajectory_generator publishes joint references; "
                                     "this scenario's trajectory is Cartesian")
        self.rate = common["rate"]
        self.timer = None
        self.health = NodeHealth(node, "trajectory_generator", self._status, self.drops)

    def _status(self):
        if not self.node.is_active:
            running = self.node.lifecycle_state.label
        else:
            running = "waiting for a joint state" if self.trajectory is None else "running"
        return OK, running, {"motion": self.motion, "goals_accepted": self.goals}

    # -------------------------------------------------------------- lifecycle
    def on_configure(self, previous) -> CallbackReturn:
        """Check the motion's parameters (a named trajectory for this robot, the waypoints)."""
        try:
            trial = self._default_trajectory(np.clip(np.zeros(self.n), self.model.lower,
                                                     self.model.upper))
        except (ValueError, KeyError) as exc:
            return configure_failure(self.log, f"the motion '{self.motion}'", exc)
        warm_up(self.log, "trajectory_sample", lambda: trial.sample(0.0))
        return CallbackReturn.SUCCESS

    def on_activate(self, previous) -> CallbackReturn:
        """Start the motion: the scenario's from t = 0, else from the next measured position."""
        self.trajectory = self.scenario.trajectory if self.scenario is not None else None
        self.t0_wall, self.last, self.looping = None, None, False
        if not self.lockstep:
            self.timer = self.node.create_timer(1.0 / self.rate, self._tick)
        return CallbackReturn.SUCCESS

    # ---------------------------------------------------------------- motions
    def _default_trajectory(self, q_start: np.ndarray):
        """The motion to run before any goal, starting from the measured position."""
        if self.motion == "hold":
            return Hold(q_start)
        if self.motion != "sweep":
            traj = named_trajectory(self.motion)
            if traj.dof != self.n:
                raise ParameterError(f"trajectory '{self.motion}' has {traj.dof} joints")
            return traj
        if self.waypoints:
            W = np.asarray(self.waypoints, dtype=float)
            if W.size % self.n:
                raise ParameterError(f"waypoints must be a multiple of {self.n} numbers")
            points = [q_start, *W.reshape(-1, self.n)]
        else:
            points = [q_start, q_start + 0.3, q_start - 0.3]
        points = [np.clip(p, self.model.lower, self.model.upper) for p in points]
        if self.loop:
            points = points + points[-2::-1]
        return JointTrajectory.through(points, [self.segment] * (len(points) - 1))

    def _sample(self, t: float):
        if self.looping:  # the demo sweep returns to its start, so it can repeat seamlessly
            t = self.trajectory.start_time + (t - self.trajectory.start_time) % \
                self.trajectory.duration
        return self.trajectory.sample(t)

    # ----------------------------------------------------------------- inputs
    def _on_state(self, msg) -> None:
        if not self.node.is_active or (self.trajectory is not None and not self.lockstep):
            return  # real time: only the first state after activation matters (the anchor)
        try:
            q, _ = self.joints.state(msg)
        except Rejected as exc:
            self.drops.drop("/joint_states", str(exc))
            return
        if self.trajectory is None:
            self.trajectory = self._default_trajectory(q)
            self.looping = self.motion == "sweep" and self.loop
            self.log.info(f"reference starts from the measured position ({self.motion})")
        if self.lockstep:
            ns = stamp_ns(msg.header.stamp)
            self._publish(ns, seconds(ns))

    def _on_goal(self, msg) -> None:
        if not self.node.is_active:
            self.log.error(f"refused goal: {self.node.fqn} is {self.node.lifecycle_state.label}, "
                           "not active")
            self.drops.counts["/trajectory_generator/goal"] += 1
            return
        try:
            traj = self._goal_trajectory(msg)
        except ValueError as exc:
            self.log.error(f"refused goal: {exc}")
            self.drops.counts["/trajectory_generator/goal"] += 1
            return
        self.goals += 1
        self.trajectory = traj
        self.looping = False
        self.log.info(f"new goal: {len(msg.points)} points over {traj.duration:.3f} s")

    def _goal_trajectory(self, msg) -> JointTrajectory:
        order = self.joints.order(msg.joint_names)
        if not msg.points:
            raise ValueError("a goal needs at least one point")
        positions = [self.joints.optional(p.positions, order, "position") for p in msg.points]
        if any(p is None for p in positions):
            raise ValueError("every point needs positions")
        vel = [self.joints.optional(p.velocities, order, "velocity") for p in msg.points]
        acc = [self.joints.optional(p.accelerations, order, "acceleration") for p in msg.points]
        times = [p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec for p in msg.points]
        goal = JointTrajectory.from_points(
            positions, times, None if all(v is None for v in vel) else
            [v if v is not None else np.full(self.n, np.nan) for v in vel],
            None if all(a is None for a in acc) else
            [a if a is not None else np.full(self.n, np.nan) for a in acc])
        q, qd, qdd = self.last if self.last is not None else (positions[0], np.zeros(self.n),
                                                              np.zeros(self.n))
        traj = goal.starting_from(q, qd, qdd, self._now())
        traj.validate(self.model.lower, self.model.upper, self.model.velocity_limit)
        return traj

    # ---------------------------------------------------------------- publish
    def _now(self) -> float:
        if self.lockstep:
            return self.last_t if hasattr(self, "last_t") else 0.0
        if self.t0_wall is None:
            return 0.0
        return time.perf_counter() - self.t0_wall

    def _tick(self) -> None:
        if self.trajectory is None:
            return
        if self.t0_wall is None:
            self.t0_wall = time.perf_counter()
        self._publish(int(self.node.now() * 1e9), self._now())

    def _publish(self, ns: int, t: float) -> None:
        self.last_t = t
        q, qd, qdd = self._sample(t)
        self.last = (q, qd, qdd)
        self.pub.publish(self.m.joint_reference(ns, self.names, q, qd, qdd))


def main(argv: list[str] | None = None) -> int:
    return run_node("trajectory_generator", TrajectoryNode, argv)


if __name__ == "__main__":
    sys.exit(main())
