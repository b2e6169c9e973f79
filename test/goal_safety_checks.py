"""What the ROS suite checks of motions a client did not ask for (an aborted goal, a knot off
the reference, an oversized step), on both routes (test_follow_joint_trajectory_ros2.py): the
client side is ROS 2's — an rclpy
ActionClient and publishers, ``ros2 lifecycle set``. The rclpy-free client: test_goal_safety.py."""

from __future__ import annotations

import time

import numpy as np
from action_msgs.msg import GoalStatus
from fjt_checks import HOME, NAMES, R, go_home, goal_of, point
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from ros2_env import ros2, wait_for
from trajectory_msgs.msg import JointTrajectory

LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)


def home(arm) -> None:
    """go_home, once the generator has a reference (a goal sent right after the stack came up
    may find none yet, when these checks run first)."""
    deadline = time.monotonic() + 30
    while True:
        result = arm.result(arm.send(goal_of([point(1.0, HOME)])))
        if "no reference yet" not in result.result.error_string or \
                time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert result.status == GoalStatus.STATUS_SUCCEEDED, result


def farthest(arm, q0: np.ndarray, seconds: float) -> float:
    """The largest |q − q0| of the arm's position sampled over ``seconds``."""
    worst, end = 0.0, time.monotonic() + seconds
    while time.monotonic() < end:
        worst = max(worst, float(np.abs(arm.position() - q0).max()))
        time.sleep(0.01)
    return worst


def check_an_aborted_goal_never_moves_the_arm_later(arm, env):
    """The reported failure, reproduced: the controller deactivated, a 0.2 rad goal is ABORTED; when the
    controller is activated again the arm holds where it is (it went to the target before)."""
    home(arm)
    assert "successful" in ros2(env, "lifecycle", "set", "/controller", "deactivate")
    try:
        handle = arm.send(goal_of([point(1.0, [HOME[0] + 0.2, HOME[1], HOME[2]])]))
        assert handle.accepted
        result = arm.result(handle)
        assert result.status == GoalStatus.STATUS_ABORTED, result
        print(f"aborted: {result.result.error_string}")
        held = arm.position()
    finally:
        assert "successful" in ros2(env, "lifecycle", "set", "/controller", "activate")
    moved = farthest(arm, held, 2.5)
    print(f"largest motion after the controller's re-activation: {moved:.4f} rad")
    assert moved < 0.02
    go_home(arm)  # and the next goal starts from where the arm is, and runs


def check_a_knot_off_the_reference_is_refused(arm, env):
    """/controller/joint_trajectory: two knots whose first is 1.5 rad from the arm at
    time_from_start 0 are refused (the arm swung at 2.3 rad/s before), with the reason logged."""
    home(arm)
    pub = arm.node.create_publisher(JointTrajectory, "/controller/joint_trajectory", LATCHED)
    try:
        far = [HOME[0] + 1.5, HOME[1], HOME[2]]
        msg = JointTrajectory(joint_names=NAMES, points=[point(0.0, far), point(1.0, far)])
        assert wait_for(lambda: pub.get_subscription_count() > 0, 30)
        q0 = arm.position()
        pub.publish(msg)
        assert farthest(arm, q0, 2.0) < 0.02
        assert wait_for(lambda: arm.observer.logged(
            "controller", "point 0 is at time_from_start 0 but joint 'joint1' is 1.5"), 10)
    finally:
        arm.node.destroy_publisher(pub)


def check_oversized_motions_are_refused_and_the_stack_goes_on(arm, env):
    """250 000 points on the topic: refused before decoding; as a goal: refused before it is
    decoded on both routes (on the rclpy route before rclpy converts it to Python:
    bus/ros/goal_screen.py; its answer time printed); 10 000 names: refused with a short
    reason; then a goal runs."""
    home(arm)
    q = arm.position()
    points = [point(1.0, q)] * 250_000
    pub = arm.node.create_publisher(JointTrajectory, "/trajectory_generator/joint_trajectory",
                                    10)
    try:
        assert wait_for(lambda: pub.get_subscription_count() > 0, 30)
        pub.publish(JointTrajectory(joint_names=NAMES, points=points))
        assert wait_for(lambda: arm.observer.logged("trajectory_generator",
                                                    "250000 points exceed"), 30)
    finally:
        arm.node.destroy_publisher(pub)
    sent = time.monotonic()
    handle = arm.send(goal_of(points))
    result = arm.result(handle, 60)
    print(f"250 000-point goal: answered after {arm.answered_after_s * 1e3:.0f} ms, result "
          f"after {(time.monotonic() - sent) * 1e3:.0f} ms (client serialisation included)")
    assert result.status == GoalStatus.STATUS_ABORTED
    assert result.result.error_code == R.INVALID_GOAL
    assert "250000 points exceed" in result.result.error_string
    assert "before decoding" in result.result.error_string, result.result.error_string
    names = [f"joint_{i}" for i in range(10_000)]
    many = arm.send(goal_of([point(1.0, [0.0] * 10_000)], names=names))
    bad = arm.result(many)
    assert bad.status == GoalStatus.STATUS_ABORTED and len(bad.result.error_string) < 1024
    assert "10000 joint names" in bad.result.error_string, bad.result.error_string
    go_home(arm)
