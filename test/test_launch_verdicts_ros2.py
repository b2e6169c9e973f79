"""A run's verdict on the rclpy route (issue 35, items 3 and 8).

``ros2 launch`` judges nothing: launch_ros starts the node processes and reports how each ended
(no summary, no ok/degraded/FAILED line; what it does say when the lifecycle manager stops the
stack for a node is in test_reliability_ros2.py). ``robot-control launch`` with ROS 2 sourced
runs the same nodes on rclpy (``ROBOT_CONTROL_BUS=rclpy``, the default there) and watches them
with an rclpy participant (bus/ros/monitor_client.py); its verdict is bringup/verdict.py's, as on
the rclpy-free route (test_launch_verdicts.py): a run that dropped part of its motion — a
trajectory the controller dropped (its first knot 1.5 rad off the arm), one the generator
refused on its topic (more names than joints) — while it tracked the rest is "degraded" with the
counts, never "ok". The messages come from an rclpy node of the test's own.
"""

from __future__ import annotations

import pytest
from ros2_env import ros2_missing, ros_env, wait_for

if ros2_missing():
    pytest.skip(ros2_missing(), allow_module_level=True)

from builtin_interfaces.msg import Duration  # noqa: E402
from launch_helpers import Observer  # noqa: E402
from launch_run import Stack  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

pytestmark = pytest.mark.ros2
RATE = "250.0"
NAMES = ["joint1", "joint2", "joint3"]
UP_S = 180.0  # a fresh install compiles its kernels on the first start
#: the controller's knots topic: reliable, transient local (trajectory/schedule.py)
LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                     reliability=ReliabilityPolicy.RELIABLE)


def far_knots() -> JointTrajectory:
    """Two knots 1.5 rad from the arm's start on every joint, from time 0."""
    return JointTrajectory(joint_names=NAMES, points=[
        JointTrajectoryPoint(positions=[1.5] * 3, velocities=[0.0] * 3,
                             accelerations=[0.0] * 3, time_from_start=Duration(sec=t))
        for t in (0, 1)])


def test_a_run_that_dropped_part_of_its_motion_is_degraded_on_the_rclpy_route():
    env = {**ros_env("verdict-partial-ros2"), "ROBOT_CONTROL_BUS": "rclpy"}
    stack = Stack(env, f"rate:={RATE}", "--duration", "5", "--startup-timeout", str(UP_S))
    observer = None
    try:
        assert stack.wait_for("stack active", UP_S), "\n".join(stack.lines[-40:])
        observer = Observer(int(env["ROS_DOMAIN_ID"]), "verdict_probe")
        knots = observer.node.create_publisher(JointTrajectory, "/controller/joint_trajectory",
                                               LATCHED)
        topic = observer.node.create_publisher(JointTrajectory,
                                               "/trajectory_generator/joint_trajectory", 10)
        assert wait_for(lambda: knots.get_subscription_count() > 0
                        and topic.get_subscription_count() > 0, 30), "never matched"
        knots.publish(far_knots())
        topic.publish(JointTrajectory(joint_names=[f"joint{i}" for i in range(10)]))
        code = stack.finish(timeout_s=240)
    finally:
        if observer is not None:
            observer.close()
        stack.stop()
    output = "\n".join(stack.lines[-40:])
    summary = stack.summary()
    assert summary["tracking_samples"] > 0, output  # it tracked the sweep meanwhile
    assert code == 0 and summary["outcome"] == "degraded", output
    assert stack.final_line.startswith("robot-control launch: degraded: "), stack.final_line
    assert "the controller dropped 1 trajectory message(s) on /controller/joint_trajectory " \
           "(last: " in stack.final_line, stack.final_line
    assert "/trajectory_generator refused 1 trajectory message(s)" in stack.final_line
