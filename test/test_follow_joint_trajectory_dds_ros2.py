"""The standard motion interfaces on the rclpy-free route (issue 24): the stack run without
ROS 2 (``robot-control launch``, Cyclone DDS speaking the ROS 2 action protocol), driven by
ROS 2's own clients — an rclpy ActionClient, ``ros2 action send_goal --feedback``, ``ros2 action
list/info``, ``ros2 topic echo /tf --once`` — through the same checks as the rclpy route
(fjt_checks.py).
"""

from __future__ import annotations

import pytest
from ros2_env import dds_python_missing, ros2_missing

if ros2_missing() or dds_python_missing():
    pytest.skip(ros2_missing() or dds_python_missing(), allow_module_level=True)

from fjt_checks import (  # noqa: E402
    CASES,
    Arm,
    check_a_bad_goal_is_accepted_and_aborted_with_its_code_and_reason,
    check_a_flood_of_goals_each_preempts_the_last,
    check_a_newer_goal_preempts_without_a_jump,
    check_a_three_waypoint_goal_succeeds_within_a_hundredth_with_feedback_at_20_hz,
    check_an_inactive_generator_rejects_goals,
    check_an_infeasible_goal_is_refused_then_run_slower_once_scaling_is_allowed,
    check_cancel_holds_the_arm_where_it_is,
    check_cancel_of_an_unknown_goal_is_refused_by_code,
    check_old_header_path_and_goal_tolerance_codes,
    check_partial_goals_once_allowed_move_the_named_joints_only,
    check_ros2_action_list_and_info_see_the_server,
    check_ros2_action_send_goal_with_feedback,
    check_tf_and_controller_state_are_published,
    ready,
)
from goal_safety_checks import (  # noqa: E402
    check_a_knot_off_the_reference_is_refused,
    check_an_aborted_goal_never_moves_the_arm_later,
    check_oversized_motions_are_refused_and_the_stack_goes_on,
)
from launch_helpers import Observer  # noqa: E402
from ros2_env import ros_env, start_dds_stack  # noqa: E402

pytestmark = pytest.mark.ros2
ENV = ros_env("fjt-dds")


@pytest.fixture(scope="module")
def arm():
    with start_dds_stack(ENV, "rate:=250.0"):
        observer = Observer(int(ENV["ROS_DOMAIN_ID"]), "fjt_dds_test")
        a = Arm(observer)
        try:
            yield ready(a)
        finally:
            a.client.destroy()
            observer.close()


def test_ros2_action_list_and_info_see_the_server(arm):
    check_ros2_action_list_and_info_see_the_server(arm, ENV)


def test_a_three_waypoint_goal_succeeds_within_a_hundredth_with_feedback_at_20_hz(arm):
    check_a_three_waypoint_goal_succeeds_within_a_hundredth_with_feedback_at_20_hz(arm, ENV)


@pytest.mark.parametrize("case, make, code, words", CASES, ids=[c[0] for c in CASES])
def test_a_bad_goal_is_accepted_and_aborted_with_its_code_and_reason(arm, case, make, code, words):
    check_a_bad_goal_is_accepted_and_aborted_with_its_code_and_reason(arm, ENV, make, code, words)


def test_old_header_path_and_goal_tolerance_codes(arm):
    check_old_header_path_and_goal_tolerance_codes(arm, ENV)


def test_an_infeasible_goal_is_refused_then_run_slower_once_scaling_is_allowed(arm):
    check_an_infeasible_goal_is_refused_then_run_slower_once_scaling_is_allowed(arm, ENV)


def test_cancel_holds_the_arm_where_it_is(arm):
    check_cancel_holds_the_arm_where_it_is(arm, ENV)


def test_a_newer_goal_preempts_without_a_jump(arm):
    check_a_newer_goal_preempts_without_a_jump(arm, ENV)


def test_partial_goals_once_allowed_move_the_named_joints_only(arm):
    check_partial_goals_once_allowed_move_the_named_joints_only(arm, ENV)


def test_ros2_action_send_goal_with_feedback(arm):
    check_ros2_action_send_goal_with_feedback(arm, ENV)


def test_tf_and_controller_state_are_published(arm):
    check_tf_and_controller_state_are_published(arm, ENV)


def test_cancel_of_an_unknown_goal_is_refused_by_code(arm):
    check_cancel_of_an_unknown_goal_is_refused_by_code(arm, ENV)


def test_a_flood_of_goals_each_preempts_the_last(arm):
    check_a_flood_of_goals_each_preempts_the_last(arm, ENV)


def test_an_inactive_generator_rejects_goals(arm):
    check_an_inactive_generator_rejects_goals(arm, ENV)


# issue 35: motions nobody asked for (goal_safety_checks.py)
def test_an_aborted_goal_never_moves_the_arm_later(arm):
    check_an_aborted_goal_never_moves_the_arm_later(arm, ENV)


def test_a_knot_off_the_reference_is_refused(arm):
    check_a_knot_off_the_reference_is_refused(arm, ENV)


def test_oversized_motions_are_refused_and_the_stack_goes_on(arm):
    check_oversized_motions_are_refused_and_the_stack_goes_on(arm, ENV)
