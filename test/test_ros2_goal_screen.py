"""Goals screened before rclpy converts them (bus/ros/goal_screen.py, issue 35 item 5), on the
real rclpy of a sourced ROS 2: the C layouts match this rclpy's messages, the sizes read from a
C message are the goal's, and an action server whose handler screens goals ends an oversized
one with the reason without ever converting it, while a goal within the caps arrives whole."""

from __future__ import annotations

import os
import time

import pytest
from ros2_env import private_rclpy_domain, ros2_missing, wait_for

if ros2_missing():
    pytest.skip(ros2_missing(), allow_module_level=True)

import ctypes  # noqa: E402

from builtin_interfaces.msg import Duration  # noqa: E402
from control_msgs.action import FollowJointTrajectory  # noqa: E402
from control_msgs.msg import JointTolerance  # noqa: E402
from launch_helpers import Observer  # noqa: E402
from rclpy.action import ActionClient  # noqa: E402
from rclpy.serialization import serialize_message  # noqa: E402
from rclpy.utilities import get_rmw_implementation_identifier  # noqa: E402
from trajectory_msgs.msg import JointTrajectoryPoint  # noqa: E402

from robot_control.bus.backend import create_node  # noqa: E402
from robot_control.bus.cdr_prefix import TrajectorySizes  # noqa: E402
from robot_control.bus.node import ActionHandler  # noqa: E402
from robot_control.bus.ros.goal_screen import CGoal, _c_function, goal_screen  # noqa: E402
from robot_control.nodes.validation import refuse_sizes  # noqa: E402

pytestmark = pytest.mark.ros2
private_domain = private_rclpy_domain("goal-screen")
ACTION = "control_msgs/action/FollowJointTrajectory"
Request = FollowJointTrajectory.Impl.SendGoalService.Request
CAP = 1000


class Log:
    def __init__(self) -> None:
        self.warnings: list[str] = []

    def warn(self, text: str) -> None:
        self.warnings.append(text)


def request_of(points: int, joints: int = 3, tolerances: int = 0):
    request = Request()
    request.goal_id.uuid = list(range(16))
    request.goal.trajectory.joint_names = [f"joint{i + 1}" for i in range(joints)]
    request.goal.trajectory.points = [JointTrajectoryPoint(
        positions=[0.1] * joints, velocities=[0.0] * joints,
        time_from_start=Duration(sec=1))] * points
    request.goal.path_tolerance = [JointTolerance(name="joint1")] * tolerances
    return request


def in_c(request, read):
    """``read(CGoal)`` of ``request`` written into its C message by rosidl's converter."""
    log = Log()
    screen = goal_screen(FollowJointTrajectory, lambda declared: None, log)
    assert screen is not None, log.warnings
    meta = type(Request)
    address = _c_function(meta._CREATE_ROS_MESSAGE, ctypes.c_void_p)()
    try:
        assert _c_function(meta._CONVERT_FROM_PY, ctypes.c_bool, ctypes.py_object,
                           ctypes.c_void_p)(request, address)
        return read(CGoal(screen._layout, address))
    finally:
        _c_function(meta._DESTROY_ROS_MESSAGE, None, ctypes.c_void_p)(address)


def test_the_sizes_read_from_the_c_message_are_the_goals():
    request = request_of(500, tolerances=40)
    sizes, nbytes = in_c(request, lambda g: (g.trajectory_sizes(3), g.nbytes))
    assert (sizes.names, sizes.longest_name, sizes.points) == (3, 7, 500)
    serialised = len(serialize_message(request))  # no rmw request header (16 bytes) in it
    # a lower bound (alignment padding not counted), close to the size
    assert 0.8 * serialised <= nbytes - 16 <= serialised, (nbytes, serialised)
    many = in_c(request_of(2, joints=40), lambda g: g.trajectory_sizes(3))
    assert (many.names, many.points) == (40, None)  # names beyond the cap are not read
    reason = in_c(request_of(CAP + 1), lambda g: refuse_sizes(g, 3, CAP))
    assert reason == f"{CAP + 1} points exceed the cap of {CAP}"


class Recorder(ActionHandler):
    """Ends every goal at once; screens by the package's caps with CAP points."""

    def __init__(self) -> None:
        self.server = None
        self.seen: list[int] = []  # points of the goals that arrived converted
        self.screened: list[tuple[str, int]] = []  # (read from, points) of each screening

    def accept(self, goal) -> str | None:
        return None

    def accepted(self, goal_id: bytes, goal) -> None:
        self.seen.append(len(goal.trajectory.points))
        self.server.finish(goal_id, "succeeded", self.server.Result())

    def cancel(self, goal_id: bytes) -> bool:
        return False

    def screen_goal(self, declared) -> str | None:
        sizes = declared.trajectory_sizes(3)
        self.screened.append((type(declared).__name__, sizes.points if sizes else -1))
        return refuse_sizes(declared, 3, CAP)

    def refused(self, goal_id: bytes, reason: str) -> None:
        self.server.finish(goal_id, "aborted",
                           self.server.Result(error_code=-1, error_string=reason))


def test_an_oversized_goal_is_ended_with_the_reason_unconverted_and_a_fitting_one_arrives_whole():
    node = create_node("screening_server", ["prog"], backend="rclpy")
    peer = Observer(int(os.environ["ROS_DOMAIN_ID"]), "goal_screen_client")
    try:
        handler = Recorder()
        handler.server = node.create_action_server(ACTION, "~/follow", handler)
        assert handler.server.screen is not None
        client = ActionClient(peer.node, FollowJointTrajectory, "/screening_server/follow")
        assert wait_for(lambda: (node.spin_once(0.02), client.server_is_ready())[1], 30)
        outcomes = []
        for points in (20 * CAP, 5):
            goal = request_of(points).goal
            future = peer.in_spin_thread(client.send_goal_async, goal)
            assert wait_for(lambda f=future: (node.spin_once(0.02), f.done())[1], 30)
            result = peer.in_spin_thread(future.result().get_result_async)
            deadline = time.monotonic() + 30
            while not result.done() and time.monotonic() < deadline:
                node.spin_once(0.02)
            outcomes.append(result.result())
        big, small = outcomes
        assert big.status == 6 and big.result.error_code == -1  # ABORTED, INVALID_GOAL
        assert big.result.error_string == f"{20 * CAP} points exceed the cap of {CAP}"
        assert small.status == 4  # SUCCEEDED
        assert handler.seen == [5]  # the oversized goal never reached accepted()
        # on rmw_cyclonedds the oversized one is refused from its serialised bytes, never
        # taken by the rmw (decoded into the C message); the fitting one is read so, then
        # taken and screened from the C message as before
        raw = handler.server._server.raw is not None
        assert raw == (get_rmw_implementation_identifier() == "rmw_cyclonedds_cpp")
        if raw:
            assert handler.screened == [("RawRequest", 20 * CAP), ("RawRequest", 5),
                                        ("CGoal", 5)]
    finally:
        node.shutdown()
        peer.close()


def test_a_handler_that_does_not_screen_gets_rclpys_own_server():
    class Plain(Recorder):
        screen_goal = ActionHandler.screen_goal

    node = create_node("plain_server", ["prog"], backend="rclpy")
    try:
        server = node.create_action_server(ACTION, "~/follow", Plain())
        assert server.screen is None
    finally:
        node.shutdown()


@pytest.mark.skipif(get_rmw_implementation_identifier() != "rmw_cyclonedds_cpp",
                    reason="requests are read serialised on rmw_cyclonedds only")
def test_a_waiting_request_is_read_serialised_and_left_for_the_rmw_or_taken_away():
    """What raw_request reads of a waiting goal request is the request: its sizes, and the
    sequence number rmw_cyclonedds gives it; a read leaves it for the rmw's take, a take
    removes it (the rmw then finds nothing)."""
    node = create_node("raw_server", ["prog"], backend="rclpy")
    peer = Observer(int(os.environ["ROS_DOMAIN_ID"]), "raw_client")
    try:
        handler = Recorder()
        handler.server = node.create_action_server(ACTION, "~/follow", handler)
        server = handler.server._server
        raw = server.raw
        assert raw is not None
        client = ActionClient(peer.node, FollowJointTrajectory, "/raw_server/follow")
        assert wait_for(lambda: (node.spin_once(0.02), client.server_is_ready())[1], 30)
        for points in (7, 9):
            peer.in_spin_thread(client.send_goal_async, request_of(points).goal)
        waiting = []
        assert wait_for(lambda: waiting.append(raw.peek()) or waiting[-1] is not None, 30)
        first = waiting[-1]
        assert first.trajectory_sizes(3) == TrajectorySizes(3, 7, 7)
        assert first.nbytes > 7 * 56
        raw.release(first)
        header, request = server._handle.take_goal_request(Request)  # the rmw's own take
        assert header.sequence_number == first.request_id().sequence_number
        assert first.goal_id == bytes(request.goal_id.uuid)  # the client's, random
        assert len(request.goal.trajectory.points) == 7
        assert wait_for(lambda: waiting.append(raw.peek()) or waiting[-1] is not None, 30)
        second = waiting[-1]
        assert second.trajectory_sizes(3).points == 9
        assert raw.take(second)
        assert server._handle.take_goal_request(Request) == (None, None)
        assert raw.peek() is None
        peer.in_spin_thread(client.destroy)
    finally:
        node.shutdown()
        peer.close()
