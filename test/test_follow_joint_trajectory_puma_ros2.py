"""The PUMA 560 at 1 kHz commanded as a ros2_control arm, composed (the nodes in one process,
as ``composed:=true`` runs them), on the rclpy route (launch_pytest; the rclpy-free route:
test_follow_joint_trajectory_puma_dds_ros2.py), an rclpy ActionClient: a 3-waypoint FollowJointTrajectory
goal ends SUCCESSFUL with every joint within the goal tolerance of 0.01 rad, and /tf carries the
six D-H links. The rest of the interface: test_follow_joint_trajectory_ros2.py."""

from __future__ import annotations

import pytest
from ros2_env import ros2, ros2_missing

if ros2_missing():
    pytest.skip(ros2_missing(), allow_module_level=True)

import domains  # noqa: E402
import launch_pytest  # noqa: E402
from fjt_checks import Arm, puma_three_waypoints, ready  # noqa: E402
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
    yield ready(a)
    a.client.destroy()
    observer.close()


@pytest.mark.launch(fixture=stack)
def test_a_three_waypoint_goal_ends_successful_within_a_hundredth(puma):
    puma_three_waypoints(puma)


@pytest.mark.launch(fixture=stack)
def test_tf_has_the_six_links(puma):
    out = ros2(cli_env(DOMAIN), "topic", "echo", "/tf", "--once", timeout=30)
    assert all(f"child_frame_id: link{i}" in out for i in range(1, 7)), out
