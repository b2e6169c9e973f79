"""What the ROS suite checks of ``~/follow_joint_trajectory`` and its neighbours, on whichever
route serves them (ROUTES: the rclpy route under ``ros2 launch``, the rclpy-free one under
``robot-control launch``; test_follow_joint_trajectory_ros2.py and
test_follow_joint_trajectory_puma_ros2.py run every check on both). The client side is always
ROS 2's: an rclpy ActionClient and the ``ros2`` CLI."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest
from action_msgs.msg import GoalStatus
from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTolerance, JointTrajectoryControllerState
from launch_helpers import Observer
from rclpy.action import ActionClient
from ros2_env import dds_python_missing, ros2, start_stack, wait_for
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectoryPoint

ACTION = "/trajectory_generator/follow_joint_trajectory"
NAMES = ["joint1", "joint2", "joint3"]
HOME = [-0.1, 1.5, 1.0]
UP_S = 180.0
R = FollowJointTrajectory.Result
#: the stack's two routes; the rclpy-free one needs a Python with the cyclonedds package
ROUTES = [pytest.param("rclpy", id="rclpy"),
          pytest.param("dds", id="dds", marks=pytest.mark.skipif(
              dds_python_missing() is not None, reason=str(dds_python_missing())))]


class Arm:
    """The test's rclpy side: an ActionClient, the last joint state, controller states."""

    def __init__(self, observer) -> None:
        self.observer = observer
        self.node = observer.node
        self.client = ActionClient(self.node, FollowJointTrajectory, ACTION)
        self.lock = threading.Lock()
        self.q = None
        self.controller: list[JointTrajectoryControllerState] = []
        self.node.create_subscription(JointState, "/joint_states", self._on_state, 10)
        self.node.create_subscription(JointTrajectoryControllerState,
                                      "/controller/controller_state", self._on_ctl, 100)

    def _on_state(self, msg) -> None:
        with self.lock:
            self.q = np.array(msg.position)

    def _on_ctl(self, msg) -> None:
        with self.lock:
            self.controller.append(msg)

    def position(self) -> np.ndarray:
        with self.lock:
            return self.q.copy()

    def send_async(self, goal, feedback_callback=None):
        """Send a goal from the node's spin thread: rclpy's ActionClient files a request's
        future after sending it, so a response handled meanwhile by the spinning thread would
        be dropped ("Ignoring unexpected goal response") if this thread sent it."""
        return self.observer.in_spin_thread(self.client.send_goal_async, goal,
                                            feedback_callback=feedback_callback)

    def send(self, goal, feedback: list | None = None):
        """Send a goal; its goal handle once the server answered (accepted or not)."""
        cb = (lambda fb: feedback.append((time.monotonic(), fb.feedback))) \
            if feedback is not None else None
        sent = time.perf_counter()
        future = self.send_async(goal, cb)
        future.add_done_callback(lambda _f: setattr(self, "answered_after_s",
                                                    time.perf_counter() - sent))
        assert wait_for(future.done, 30, every=0.005), "no answer to the goal request"
        return future.result()

    def result(self, handle, timeout: float = 30.0):
        future = self.observer.in_spin_thread(handle.get_result_async)
        assert wait_for(future.done, timeout), "no result"
        return future.result()

    def cancel(self, handle):
        """The cancel request's future (sent from the spin thread, as goals are)."""
        return self.observer.in_spin_thread(handle.cancel_goal_async)


def point(t: float, q, qd=None) -> JointTrajectoryPoint:
    sec = int(t)
    return JointTrajectoryPoint(positions=[float(x) for x in q],
                                velocities=[] if qd is None else [float(x) for x in qd],
                                time_from_start=Duration(sec=sec, nanosec=int(round((t - sec) * 1e9))))


def goal_of(points, names=NAMES, **fields) -> FollowJointTrajectory.Goal:
    goal = FollowJointTrajectory.Goal(**fields)
    goal.trajectory.joint_names = list(names)
    goal.trajectory.points = list(points)
    return goal


def tolerance(position: float, names=NAMES) -> list[JointTolerance]:
    return [JointTolerance(name=n, position=position) for n in names]


def ready(arm: Arm, env: dict[str, str]) -> Arm:
    """The arm once its action server, joint states and the whole stack are there: the lifecycle
    manager said "stack active", or — the line went out before this observer's /rosout reader
    matched — the trajectory generator, which it activates last, is active."""
    assert wait_for(lambda: arm.client.server_is_ready(), UP_S), "no action server"
    assert wait_for(lambda: arm.q is not None, UP_S)
    assert wait_for(lambda: arm.observer.logged("lifecycle_manager", "stack active") or "active [3]"
                    in ros2(env, "lifecycle", "get", "/trajectory_generator", "--no-daemon"), UP_S)
    return arm


@contextmanager
def arm_on(route: str, tag: str, *launch_args: str) -> Iterator[tuple[Arm, dict[str, str]]]:
    """(the ready Arm, the environment for ``ros2`` commands) of the stack started on ``route``
    with ``launch_args`` on a domain of its own; the stack ends with the block."""
    stack, env = start_stack(route, f"{tag}-{route}", *launch_args)
    with stack:
        observer = Observer(int(env["ROS_DOMAIN_ID"]), f"{tag.replace('-', '_')}_{route}_test")
        arm = Arm(observer)
        try:
            yield ready(arm, env), env
        finally:
            arm.client.destroy()
            observer.close()


def away_from(arm: Arm, q) -> float:
    """The largest |q_arm − q| now."""
    return float(np.abs(arm.position() - q).max())


def at_rest(arm: Arm, window_s: float = 0.1, still: float = 1e-4) -> bool:
    """Whether the arm moved less than ``still`` rad over the next ``window_s``."""
    before = arm.position()
    time.sleep(window_s)
    return away_from(arm, before) < still


def go_home(arm: Arm) -> None:
    handle = arm.send(goal_of([point(1.0, HOME)]))
    assert handle.accepted
    assert arm.result(handle).status == GoalStatus.STATUS_SUCCEEDED


def check_ros2_action_list_and_info_see_the_server(arm, env):
    listed = ros2(env, "action", "list", "-t")
    assert f"{ACTION} [control_msgs/action/FollowJointTrajectory]" in listed, listed
    info = ros2(env, "action", "info", ACTION)
    assert "Action servers: 1" in info and "/trajectory_generator" in info, info


def check_a_three_waypoint_goal_succeeds_within_a_hundredth_with_feedback_at_20_hz(arm, env):
    go_home(arm)
    target = [0.2, 1.2, 0.7]
    waypoints = [point(1.0, [0.0, 1.4, 0.9]), point(2.0, [0.1, 1.3, 0.8]), point(3.0, target)]
    feedback = []
    handle = arm.send(goal_of(waypoints, goal_tolerance=tolerance(0.01)), feedback)
    print(f"goal accepted {1e3 * arm.answered_after_s:.1f} ms after sending (rclpy client)")
    assert handle.accepted
    result = arm.result(handle)
    assert result.status == GoalStatus.STATUS_SUCCEEDED, result
    assert result.result.error_code == R.SUCCESSFUL, result.result.error_string
    assert np.abs(arm.position() - target).max() < 0.01
    times = [t for t, _ in feedback]
    rate = (len(times) - 1) / (times[-1] - times[0])
    print(f"feedback: {len(times)} messages at {rate:.1f} Hz (action_monitor_rate 20)")
    assert 15.0 < rate < 25.0, rate
    last = feedback[-1][1]
    assert list(last.joint_names) == NAMES and len(last.actual.positions) == 3
    assert np.allclose(np.subtract(last.desired.positions, last.actual.positions),
                       last.error.positions, atol=1e-12)


CASES = [
    ("unknown joint", lambda: goal_of([point(1.0, HOME)], names=[*NAMES[:2], "wrist_x"]),
     R.INVALID_JOINTS, "unknown joints wrist_x"),
    ("partial", lambda: goal_of([point(1.0, HOME[:2])], names=NAMES[:2]),
     R.INVALID_JOINTS, "allow_partial_joints_goal"),
    ("beyond a limit", lambda: goal_of([point(0.5, HOME, [0.0, 9.0, 0.0]), point(1.0, HOME)]),
     R.INVALID_GOAL, "joint 'joint2' velocity 9 is outside"),
    ("too fast", lambda: goal_of([point(0.01, [1.0, 1.5, 1.0])]), R.INVALID_GOAL,
     "leaves the limits"),
    ("NaN", lambda: goal_of([point(1.0, [float("nan")] * 3)]), R.INVALID_GOAL, "is nan"),
    ("moving at the end", lambda: goal_of([point(1.0, HOME, [0.1] * 3)]),
     R.INVALID_GOAL, "the last point still moves"),
    ("times", lambda: goal_of([point(1.0, HOME), point(0.5, HOME)]), R.INVALID_GOAL,
     "must increase strictly"),
]


def check_a_bad_goal_is_accepted_and_aborted_with_its_code_and_reason(arm, env, make, code, words):
    handle = arm.send(make())
    assert handle.accepted
    result = arm.result(handle)
    assert result.status == GoalStatus.STATUS_ABORTED
    assert result.result.error_code == code and words in result.result.error_string, result


def check_an_infeasible_goal_is_refused_then_run_slower_once_scaling_is_allowed(arm, env):
    """5 mrad in 4 ms from where the arm is: inside the position and velocity limits, but its
    torque is ~40× joint 1's effort limit. Refused with INVALID_GOAL naming joint, time and
    torque; with ``infeasible_motion: scale`` the same goal runs slowed down and succeeds."""
    go_home(arm)

    def jolt():
        q = arm.position()
        return goal_of([point(0.004, [q[0] + 0.005, q[1], q[2]])])

    result = arm.result(arm.send(jolt()))
    assert result.status == GoalStatus.STATUS_ABORTED, result
    text = result.result.error_string
    assert result.result.error_code == R.INVALID_GOAL and "cannot execute" in text, text
    assert "joint 'joint1' needs torque" in text and "effort limit 500 N·m" in text, text
    out = ros2(env, "param", "set", "/trajectory_generator", "infeasible_motion", "scale")
    assert "Set parameter successful" in out, out
    try:
        result = arm.result(arm.send(jolt()))
        assert result.status == GoalStatus.STATUS_SUCCEEDED, result
        assert result.result.error_string.startswith("goal reached; time-scaled ×"), result
    finally:
        ros2(env, "param", "set", "/trajectory_generator", "infeasible_motion", "refuse")


def check_old_header_path_and_goal_tolerance_codes(arm, env):
    go_home(arm)
    old = goal_of([point(1.0, HOME)])
    old.trajectory.header.stamp = arm.node.get_clock().now().to_msg()
    old.trajectory.header.stamp.sec -= 10
    result = arm.result(arm.send(old))
    assert result.result.error_code == R.OLD_HEADER_TIMESTAMP, result
    tight = [JointTolerance(name="joint1", position=1e-9, velocity=1e-9)]
    move = [point(1.0, [0.2, 1.5, 1.0])]
    result = arm.result(arm.send(goal_of(move, path_tolerance=tight)))
    assert result.status == GoalStatus.STATUS_ABORTED
    assert result.result.error_code == R.PATH_TOLERANCE_VIOLATED, result
    assert "joint 'joint1'" in result.result.error_string
    back = goal_of([point(1.0, HOME)], goal_tolerance=tolerance(1e-12),
                   goal_time_tolerance=Duration(sec=0, nanosec=50_000_000))
    result = arm.result(arm.send(back))
    assert result.result.error_code == R.GOAL_TOLERANCE_VIOLATED, result
    assert "0.05 s after the trajectory's end" in result.result.error_string


def check_cancel_holds_the_arm_where_it_is(arm, env):
    go_home(arm)
    handle = arm.send(goal_of([point(4.0, [0.7, 0.9, 0.3])]))
    assert wait_for(lambda: away_from(arm, HOME) > 0.15, 10), "the arm did not set out"
    cancel = arm.cancel(handle)
    assert wait_for(cancel.done, 10) and len(cancel.result().goals_canceling) == 1
    assert arm.result(handle).status == GoalStatus.STATUS_CANCELED
    # the reference comes to rest (stop_time 0.25 s), the arm settles on it
    assert wait_for(lambda: at_rest(arm), 10), "the arm did not come to rest"
    before = arm.position()
    time.sleep(1.0)
    drift = np.abs(arm.position() - before).max()
    print(f"drift over 1 s after the cancel: {drift:.2e} rad")
    assert drift <= 1e-3
    assert np.abs(before - HOME).max() > 0.1  # it stopped on the way, not at either end


def check_a_newer_goal_preempts_without_a_jump(arm, env):
    go_home(arm)
    first = arm.send(goal_of([point(3.0, [0.8, 0.8, 0.2])]))
    assert wait_for(lambda: away_from(arm, HOME) > 0.25, 10), "the arm did not set out"
    with arm.lock:
        arm.controller.clear()
    second = arm.send(goal_of([point(2.0, HOME)]))
    old = arm.result(first)
    assert old.status == GoalStatus.STATUS_ABORTED
    assert old.result.error_code == R.INVALID_GOAL
    assert old.result.error_string == "preempted by a newer goal"
    assert arm.result(second).status == GoalStatus.STATUS_SUCCEEDED
    with arm.lock:
        states = list(arm.controller)
    stamps = np.array([s.header.stamp.sec + 1e-9 * s.header.stamp.nanosec for s in states])
    ref = np.array([[s.reference.positions, s.reference.velocities, s.reference.accelerations]
                    for s in states])
    dt = np.diff(stamps)[:, None]
    # between the controller's samples (100 Hz) the commanded motion changes as a smooth one
    # does: no step in q̇ (which a restart from rest would be) nor in q̈
    assert np.abs(np.diff(ref[:, 1], axis=0)).max() < 0.05 + 5.0 * dt.max()
    assert np.abs(np.diff(ref[:, 2], axis=0) / dt).max() < 60.0  # jerk, rad/s³


def check_partial_goals_once_allowed_move_the_named_joints_only(arm, env):
    go_home(arm)
    out = ros2(env, "param", "set", "/trajectory_generator", "allow_partial_joints_goal", "true")
    assert "Set parameter successful" in out, out
    try:
        start = arm.position()
        result = arm.result(arm.send(goal_of([point(1.0, [0.2, 0.1])],
                                             names=["joint3", "joint1"])))
        assert result.status == GoalStatus.STATUS_SUCCEEDED, result
        q = arm.position()
        assert abs(q[2] - 0.2) < 0.01 and abs(q[0] - 0.1) < 0.01
        assert abs(q[1] - start[1]) < 0.01
    finally:
        ros2(env, "param", "set", "/trajectory_generator", "allow_partial_joints_goal", "false")


def check_ros2_action_send_goal_with_feedback(arm, env):
    goal = ("{trajectory: {joint_names: [joint1, joint2, joint3], "
            "points: [{positions: [0.1, 1.3, 0.8], "
            "time_from_start: {sec: 1, nanosec: 0}}]}}")
    out = ros2(env, "action", "send_goal", "--feedback", ACTION,
               "control_msgs/action/FollowJointTrajectory", goal, timeout=60)
    assert "Goal accepted" in out and "Feedback:" in out, out
    assert "error_code: 0" in out and "Goal finished with status: SUCCEEDED" in out, out


def check_tf_and_controller_state_are_published(arm, env):
    out = ros2(env, "topic", "echo", "/tf", "--once", timeout=30)
    assert "frame_id: base" in out and "child_frame_id: link3" in out, out
    assert wait_for(lambda: len(arm.controller) > 5, 10)
    state = arm.controller[-1]
    assert list(state.joint_names) == NAMES and len(state.output.effort) == 3
    assert np.allclose(np.subtract(state.reference.positions, state.feedback.positions),
                       state.error.positions, atol=1e-12)


def check_an_inactive_generator_rejects_goals(arm, env):
    """Accepted, then aborted at once with the reason (a bare rejection would carry none)."""
    assert "successful" in ros2(env, "lifecycle", "set", "/trajectory_generator", "deactivate")
    try:
        handle = arm.send(goal_of([point(1.0, HOME)]))
        assert handle.accepted
        result = arm.result(handle, 10.0)
        assert result.status == 6, result  # ABORTED
        assert result.result.error_code == -1 and "not active" in result.result.error_string
    finally:
        assert "successful" in ros2(env, "lifecycle", "set", "/trajectory_generator",
                                    "activate")


def check_cancel_of_an_unknown_goal_is_refused_by_code(arm, env):
    out = ros2(env, "service", "call", ACTION + "/_action/cancel_goal",
               "action_msgs/srv/CancelGoal",
               "{goal_info: {goal_id: {uuid: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, "
               "16]}}}", timeout=30)
    assert "return_code=2" in out, out  # ERROR_UNKNOWN_GOAL_ID


def check_a_flood_of_goals_each_preempts_the_last(arm, env):
    """100 goals at about 100/s: every one accepted, each ended by the next but the last,
    which succeeds; the generator stays up."""
    go_home(arm)
    handles = []
    for i in range(100):
        q = [HOME[0] + 0.002 * (i % 10), HOME[1], HOME[2]]
        future = arm.send_async(goal_of([point(0.5, q)]))
        handles.append(future)
        time.sleep(0.01)
    assert wait_for(lambda: all(f.done() for f in handles), 60)
    goals = [f.result() for f in handles]
    assert all(g.accepted for g in goals)
    results = [arm.result(g) for g in goals]
    assert [r.result.error_string for r in results[:-1]] == ["preempted by a newer goal"] * 99
    assert results[-1].status == GoalStatus.STATUS_SUCCEEDED, results[-1]


PUMA_NAMES = [f"joint{i}" for i in range(1, 7)]


def puma_three_waypoints(arm: Arm) -> None:
    """The PUMA 560's 3-waypoint goal ends SUCCESSFUL within 0.01 rad of its end."""
    target = [0.3, 0.6, -0.1, 0.4, 0.5, -0.3]
    waypoints = [point(1.0, [0.1, 0.2, 0.1, 0.2, 0.3, -0.1]),
                 point(2.0, [0.2, 0.4, 0.0, 0.3, 0.4, -0.2]), point(3.0, target)]
    feedback = []
    handle = arm.send(goal_of(waypoints, names=PUMA_NAMES, goal_tolerance=tolerance(0.01, PUMA_NAMES)),
                      feedback)
    assert handle.accepted
    result = arm.result(handle)
    assert result.status == GoalStatus.STATUS_SUCCEEDED, result
    time.sleep(0.1)
    print(f"final error {np.abs(arm.position() - target).max():.2e} rad; feedback "
          f"{len(feedback)} messages")
    assert np.abs(arm.position() - target).max() < 0.01
