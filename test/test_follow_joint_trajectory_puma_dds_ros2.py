"""The PUMA 560 at 1 kHz, composed, on the rclpy-free route (``robot-control launch``) driven
by an rclpy ActionClient: a 3-waypoint FollowJointTrajectory goal ends SUCCESSFUL within 0.01
rad, and /tf carries the six D-H links (the rclpy route: test_follow_joint_trajectory_puma_ros2.py)."""

from __future__ import annotations

import pytest
from ros2_env import dds_python_missing, ros2, ros2_missing, ros_env, start_dds_stack, wait_for

if ros2_missing() or dds_python_missing():
    pytest.skip(ros2_missing() or dds_python_missing(), allow_module_level=True)

from fjt_checks import UP_S, Arm, puma_three_waypoints  # noqa: E402
from launch_helpers import Observer  # noqa: E402

pytestmark = pytest.mark.ros2


def test_the_same_goal_on_the_rclpy_free_route():
    env = ros_env("fjt-puma-dds")
    with start_dds_stack(env, "robot:=puma560", "rate:=1000.0", "composed:=true"):
        observer = Observer(int(env["ROS_DOMAIN_ID"]), "fjt_puma_dds_test")
        arm = Arm(observer)
        try:
            assert wait_for(lambda: arm.client.server_is_ready(), UP_S), "no action server"
            assert wait_for(lambda: observer.logged("lifecycle_manager", "stack active"), UP_S)
            puma_three_waypoints(arm)
            out = ros2(env, "topic", "echo", "/tf", "--once", timeout=30)
            assert "child_frame_id: link6" in out, out
        finally:
            arm.client.destroy()
            observer.close()
