"""The PUMA 560 at 1 kHz commanded as a ros2_control arm, composed (the nodes in one process,
as ``composed:=true`` runs them), on both routes — rclpy (launch_pytest) and rclpy-free
(``robot-control launch``), an rclpy ActionClient either way: a 3-waypoint FollowJointTrajectory
goal ends SUCCESSFUL with every joint within the goal tolerance of 0.01 rad, and /tf carries the
six D-H links. The rest of the interface: test_follow_joint_trajectory_ros2.py."""

from __future__ import annotations

import time

import numpy as np
import pytest
from ros2_env import dds_python_missing, ros2, ros2_missing, ros_env, start_dds_stack, wait_for

if ros2_missing():
    pytest.skip(ros2_missing(), allow_module_level=True)

import domains  # noqa: E402
import launch_pytest  # noqa: E402
from action_msgs.msg import GoalStatus  # noqa: E402
from fjt_checks import UP_S, Arm, goal_of, point, tolerance  # noqa: E402
from launch_helpers import Observer, cli_env, stack_launch  # noqa: E402

import launch  # noqa: E402

pytestmark = pytest.mark.ros2
NAMES = [f"joint{i}" for i in range(1, 7)]
DOMAIN = domains.claim("launch-fjt-puma")


@launch_pytest.fixture(scope="module")
def stack():
    return launch.LaunchDescription([
        *stack_launch(DOMAIN, robot="puma560", rate="1000.0", composed="true"),
        launch_pytest.actions.ReadyToTest()])


@pytest.fixture(scope="module")
def puma():
    observer = Observer(DOMAIN, "fjt_puma_test")
    a = Arm(observer)
    assert wait_for(lambda: a.client.server_is_ready(), UP_S), "no action server"
    assert wait_for(lambda: a.q is not None, UP_S)
    yield a
    a.client.destroy()
    observer.close()


def three_waypoints(arm: Arm) -> None:
    target = [0.3, 0.6, -0.1, 0.4, 0.5, -0.3]
    waypoints = [point(1.0, [0.1, 0.2, 0.1, 0.2, 0.3, -0.1]),
                 point(2.0, [0.2, 0.4, 0.0, 0.3, 0.4, -0.2]), point(3.0, target)]
    feedback = []
    handle = arm.send(goal_of(waypoints, names=NAMES, goal_tolerance=tolerance(0.01, NAMES)),
                      feedback)
    assert handle.accepted
    result = arm.result(handle)
    assert result.status == GoalStatus.STATUS_SUCCEEDED, result
    time.sleep(0.1)
    print(f"final error {np.abs(arm.position() - target).max():.2e} rad; feedback "
          f"{len(feedback)} messages")
    assert np.abs(arm.position() - target).max() < 0.01


@pytest.mark.launch(fixture=stack)
def test_a_three_waypoint_goal_ends_successful_within_a_hundredth(puma):
    three_waypoints(puma)


@pytest.mark.skipif(bool(dds_python_missing()), reason=str(dds_python_missing()))
def test_the_same_goal_on_the_rclpy_free_route():
    env = ros_env("fjt-puma-dds")
    with start_dds_stack(env, "robot:=puma560", "rate:=1000.0", "composed:=true"):
        observer = Observer(int(env["ROS_DOMAIN_ID"]), "fjt_puma_dds_test")
        arm = Arm(observer)
        try:
            assert wait_for(lambda: arm.client.server_is_ready(), UP_S), "no action server"
            assert wait_for(lambda: observer.logged("lifecycle_manager", "stack active"), UP_S)
            three_waypoints(arm)
            out = ros2(env, "topic", "echo", "/tf", "--once", timeout=30)
            assert "child_frame_id: link6" in out, out
        finally:
            arm.client.destroy()
            observer.close()


@pytest.mark.launch(fixture=stack)
def test_tf_has_the_six_links(puma):
    out = ros2(cli_env(DOMAIN), "topic", "echo", "/tf", "--once", timeout=30)
    assert all(f"child_frame_id: link{i}" in out for i in range(1, 7)), out
