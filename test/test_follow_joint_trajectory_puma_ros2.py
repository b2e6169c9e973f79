"""The PUMA 560 at 1 kHz commanded as a ros2_control arm, composed (the nodes in one process, as
``composed:=true`` runs them), on both routes (ROUTES: ``ros2 launch`` on rclpy, ``robot-control
launch`` on Cyclone DDS), by an rclpy ActionClient: a 3-waypoint FollowJointTrajectory goal ends
SUCCESSFUL with every joint within the goal tolerance of 0.01 rad, and /tf carries the six D-H
links. The rest of the interface: test_follow_joint_trajectory_ros2.py."""

from __future__ import annotations

import pytest
from ros2_env import ros2, ros2_missing

if ros2_missing():
    pytest.skip(ros2_missing(), allow_module_level=True)

from fjt_checks import ROUTES, arm_on, puma_three_waypoints  # noqa: E402

pytestmark = pytest.mark.ros2


@pytest.fixture(scope="module", params=ROUTES)
def puma(request):
    """(the ready Arm, the ros2 CLI's environment) of the composed PUMA stack on one route."""
    with arm_on(request.param, "fjt-puma", "robot:=puma560", "rate:=1000.0",
                "composed:=true") as pair:
        yield pair


def test_a_three_waypoint_goal_ends_successful_within_a_hundredth(puma):
    puma_three_waypoints(puma[0])


def test_tf_has_the_six_links(puma):
    out = ros2(puma[1], "topic", "echo", "/tf", "--once", timeout=30)
    assert all(f"child_frame_id: link{i}" in out for i in range(1, 7)), out
