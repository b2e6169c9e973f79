"""The standard motion interfaces on both routes (ROUTES): the package's ``control.launch.yaml``
under ``ros2 launch`` (the rclpy route) and under ``robot-control launch`` without ROS 2 (the
rclpy-free route: Cyclone DDS speaking the ROS 2 action protocol), the DD arm at 250 Hz (as the
other launch tests run it on a shared machine; the PUMA 560 at 1 kHz:
test_follow_joint_trajectory_puma_ros2.py), driven as a ros2_control arm by ROS 2's own
clients — an rclpy ActionClient and ``ros2 action send_goal --feedback`` on
``/trajectory_generator/follow_joint_trajectory``, ``ros2 action list/info``,
``/controller/controller_state`` and ``ros2 topic echo /tf --once``: success with feedback at
20 Hz, every error code with its reason, rejection while inactive, cancel-and-hold, preemption
without a jump, partial goals (fjt_checks.py), and no motion nobody asked for
(goal_safety_checks.py).
"""

from __future__ import annotations

import pytest
from ros2_env import ros2_missing

if ros2_missing():
    pytest.skip(ros2_missing(), allow_module_level=True)

import fjt_checks  # noqa: E402
import goal_safety_checks  # noqa: E402
from fjt_checks import CASES, ROUTES, arm_on  # noqa: E402

pytestmark = pytest.mark.ros2


@pytest.fixture(scope="module", params=ROUTES)
def arm(request):
    """(the ready Arm, the ros2 CLI's environment) of the DD arm's stack on one route."""
    with arm_on(request.param, "fjt", "rate:=250.0") as pair:
        yield pair


def test_ros2_action_list_and_info_see_the_server(arm):
    fjt_checks.check_ros2_action_list_and_info_see_the_server(*arm)


def test_a_three_waypoint_goal_succeeds_within_a_hundredth_with_feedback_at_20_hz(arm):
    fjt_checks.check_a_three_waypoint_goal_succeeds_within_a_hundredth_with_feedback_at_20_hz(*arm)


@pytest.mark.parametrize("case, make, code, words", CASES, ids=[c[0] for c in CASES])
def test_a_bad_goal_is_accepted_and_aborted_with_its_code_and_reason(arm, case, make, code, words):
    fjt_checks.check_a_bad_goal_is_accepted_and_aborted_with_its_code_and_reason(*arm, make, code,
                                                                                 words)


def test_old_header_path_and_goal_tolerance_codes(arm):
    fjt_checks.check_old_header_path_and_goal_tolerance_codes(*arm)


def test_an_infeasible_goal_is_refused_then_run_slower_once_scaling_is_allowed(arm):
    fjt_checks.check_an_infeasible_goal_is_refused_then_run_slower_once_scaling_is_allowed(*arm)


def test_cancel_holds_the_arm_where_it_is(arm):
    fjt_checks.check_cancel_holds_the_arm_where_it_is(*arm)


def test_a_newer_goal_preempts_without_a_jump(arm):
    fjt_checks.check_a_newer_goal_preempts_without_a_jump(*arm)


def test_partial_goals_once_allowed_move_the_named_joints_only(arm):
    fjt_checks.check_partial_goals_once_allowed_move_the_named_joints_only(*arm)


def test_ros2_action_send_goal_with_feedback(arm):
    fjt_checks.check_ros2_action_send_goal_with_feedback(*arm)


def test_tf_and_controller_state_are_published(arm):
    fjt_checks.check_tf_and_controller_state_are_published(*arm)


def test_cancel_of_an_unknown_goal_is_refused_by_code(arm):
    fjt_checks.check_cancel_of_an_unknown_goal_is_refused_by_code(*arm)


def test_a_flood_of_goals_each_preempts_the_last(arm):
    fjt_checks.check_a_flood_of_goals_each_preempts_the_last(*arm)


def test_an_inactive_generator_rejects_goals(arm):
    fjt_checks.check_an_inactive_generator_rejects_goals(*arm)


# motions nobody asked for (goal_safety_checks.py)
def test_an_aborted_goal_never_moves_the_arm_later(arm):
    goal_safety_checks.check_an_aborted_goal_never_moves_the_arm_later(*arm)


def test_a_knot_off_the_reference_is_refused(arm):
    goal_safety_checks.check_a_knot_off_the_reference_is_refused(*arm)


def test_oversized_motions_are_refused_and_the_stack_goes_on(arm):
    goal_safety_checks.check_oversized_motions_are_refused_and_the_stack_goes_on(*arm)
