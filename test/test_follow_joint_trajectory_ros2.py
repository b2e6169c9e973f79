"""The standard motion interfaces on the rclpy route (issue 24): the installed package's
``control.launch.yaml`` (the DD arm at 250 Hz, as the other launch tests run it on a shared
machine; the PUMA 560 at 1 kHz: test_follow_joint_trajectory_puma_ros2.py), driven as a
ros2_control arm — an rclpy ActionClient and ``ros2 action send_goal --feedback`` on
``/trajectory_generator/follow_joint_trajectory``, ``ros2 action list/info``,
``/controller/controller_state`` and ``ros2 topic echo /tf --once``: success with feedback at
20 Hz, every error code with its reason, rejection while inactive, cancel-and-hold, preemption
without a jump, partial goals (fjt_checks.py). The rclpy-free route passes the same checks:
test_follow_joint_trajectory_dds_ros2.py.
"""

from __future__ import annotations

import pytest
from ros2_env import ros2_missing

if ros2_missing():
    pytest.skip(ros2_missing(), allow_module_level=True)

import domains  # noqa: E402
import launch_pytest  # noqa: E402
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
from launch_helpers import Observer, cli_env, stack_launch  # noqa: E402

import launch  # noqa: E402

pytestmark = pytest.mark.ros2
DOMAIN = domains.claim("launch-fjt")
ENV = cli_env(DOMAIN)


@launch_pytest.fixture(scope="module")
def stack():
    return launch.LaunchDescription([*stack_launch(DOMAIN, rate="250.0"),
                                     launch_pytest.actions.ReadyToTest()])


@pytest.fixture(scope="module")
def arm():
    observer = Observer(DOMAIN, "fjt_test")
    a = Arm(observer)
    yield ready(a)
    a.client.destroy()
    observer.close()


@pytest.mark.launch(fixture=stack)
def test_ros2_action_list_and_info_see_the_server(arm):
    check_ros2_action_list_and_info_see_the_server(arm, ENV)


@pytest.mark.launch(fixture=stack)
def test_a_three_waypoint_goal_succeeds_within_a_hundredth_with_feedback_at_20_hz(arm):
    check_a_three_waypoint_goal_succeeds_within_a_hundredth_with_feedback_at_20_hz(arm, ENV)


@pytest.mark.launch(fixture=stack)
@pytest.mark.parametrize("case, make, code, words", CASES, ids=[c[0] for c in CASES])
def test_a_bad_goal_is_accepted_and_aborted_with_its_code_and_reason(arm, case, make, code, words):
    check_a_bad_goal_is_accepted_and_aborted_with_its_code_and_reason(arm, ENV, make, code, words)


@pytest.mark.launch(fixture=stack)
def test_old_header_path_and_goal_tolerance_codes(arm):
    check_old_header_path_and_goal_tolerance_codes(arm, ENV)


@pytest.mark.launch(fixture=stack)
def test_an_infeasible_goal_is_refused_then_run_slower_once_scaling_is_allowed(arm):
    check_an_infeasible_goal_is_refused_then_run_slower_once_scaling_is_allowed(arm, ENV)


@pytest.mark.launch(fixture=stack)
def test_cancel_holds_the_arm_where_it_is(arm):
    check_cancel_holds_the_arm_where_it_is(arm, ENV)


@pytest.mark.launch(fixture=stack)
def test_a_newer_goal_preempts_without_a_jump(arm):
    check_a_newer_goal_preempts_without_a_jump(arm, ENV)


@pytest.mark.launch(fixture=stack)
def test_partial_goals_once_allowed_move_the_named_joints_only(arm):
    check_partial_goals_once_allowed_move_the_named_joints_only(arm, ENV)


@pytest.mark.launch(fixture=stack)
def test_ros2_action_send_goal_with_feedback(arm):
    check_ros2_action_send_goal_with_feedback(arm, ENV)


@pytest.mark.launch(fixture=stack)
def test_tf_and_controller_state_are_published(arm):
    check_tf_and_controller_state_are_published(arm, ENV)


@pytest.mark.launch(fixture=stack)
def test_cancel_of_an_unknown_goal_is_refused_by_code(arm):
    check_cancel_of_an_unknown_goal_is_refused_by_code(arm, ENV)


@pytest.mark.launch(fixture=stack)
def test_a_flood_of_goals_each_preempts_the_last(arm):
    check_a_flood_of_goals_each_preempts_the_last(arm, ENV)


@pytest.mark.launch(fixture=stack)
def test_an_inactive_generator_rejects_goals(arm):
    check_an_inactive_generator_rejects_goals(arm, ENV)


# issue 35: motions nobody asked for (goal_safety_checks.py)
@pytest.mark.launch(fixture=stack)
def test_an_aborted_goal_never_moves_the_arm_later(arm):
    check_an_aborted_goal_never_moves_the_arm_later(arm, ENV)


@pytest.mark.launch(fixture=stack)
def test_a_knot_off_the_reference_is_refused(arm):
    check_a_knot_off_the_reference_is_refused(arm, ENV)


@pytest.mark.launch(fixture=stack)
def test_oversized_motions_are_refused_and_the_stack_goes_on(arm):
    check_oversized_motions_are_refused_and_the_stack_goes_on(arm, ENV)
