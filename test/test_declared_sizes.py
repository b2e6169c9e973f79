"""The caps read before decoding (bus/cdr_prefix.py, nodes/validation.refuse_sizes): the sizes a
serialised JointTrajectory — alone (a topic) or as a FollowJointTrajectory goal request —
declares, and the refusals they give, without decoding it. The rclpy route reads the same
sizes from rcl's C message: test_ros2_goal_screen.py."""

from __future__ import annotations

from robot_control.bus.cdr_prefix import GOAL_START, CdrMotion
from robot_control.bus.dds.messages import MESSAGE_TYPES
from robot_control.nodes.validation import motion_bytes_cap, refuse_sizes

TYPE = "control_msgs/action/FollowJointTrajectory"


def trajectory(names: list[str], points: int, values: int = 3):
    point = MESSAGE_TYPES["trajectory_msgs/msg/JointTrajectoryPoint"](
        positions=[0.1] * values,
        time_from_start=MESSAGE_TYPES["builtin_interfaces/msg/Duration"](sec=1))
    return MESSAGE_TYPES["trajectory_msgs/msg/JointTrajectory"](joint_names=names,
                                                                points=[point] * points)


def topic(names: list[str], points: int, values: int = 3) -> CdrMotion:
    return CdrMotion(trajectory(names, points, values).serialize())


def goal(names: list[str], points: int) -> CdrMotion:
    request = MESSAGE_TYPES[TYPE + "_SendGoal_Request"]()
    request.goal.trajectory = trajectory(names, points)
    return CdrMotion(request.serialize(), GOAL_START)


NAMES = ["joint1", "joint2", "joint3"]


def test_the_declared_sizes_are_read_from_a_topic_message_and_a_goal_request():
    for motion in (topic(NAMES, 20), goal(NAMES, 20)):
        sizes = motion.trajectory_sizes(3)
        assert (sizes.names, sizes.longest_name, sizes.points) == (3, 7, 20)
    many = topic([f"j{i}" for i in range(50)], 2).trajectory_sizes(3)
    assert (many.names, many.points) == (50, None)  # names beyond the cap are not walked


def test_refusals_name_the_count_not_the_elements():
    assert refuse_sizes(topic(NAMES, 20), 3, 100) is None
    assert refuse_sizes(goal(NAMES, 20), 3, 100) is None
    assert refuse_sizes(goal(NAMES, 101), 3, 100) == "101 points exceed the cap of 100"
    assert refuse_sizes(topic([f"j{i}" for i in range(10_000)], 1), 3, 100) == \
        "10000 joint names for an arm of 3 joints"
    assert refuse_sizes(topic(["x" * 300, "b", "c"], 1), 3, 100) == \
        "a joint name of 301 bytes (at most 256)"
    fat = topic(NAMES, 10, values=20_000)  # few points, each far more values than joints
    assert fat.nbytes > motion_bytes_cap(3, 100)
    assert refuse_sizes(fat, 3, 100).startswith(f"{fat.nbytes} bytes: a motion of at most 100")
