"""A ROS 2 action server over plain Cyclone DDS, as rcl_action lays it out on rmw_cyclonedds.

An action ``/a/act`` is three services and two topics (rcl_action ``names.c``):
``/a/act/_action/send_goal`` (``<Action>_SendGoal``), ``/a/act/_action/cancel_goal``
(action_msgs/srv/CancelGoal), ``/a/act/_action/get_result`` (``<Action>_GetResult``),
``/a/act/_action/feedback`` (``<Action>_FeedbackMessage``, default QoS) and
``/a/act/_action/status`` (action_msgs/msg/GoalStatusArray, reliable, transient local, depth 1:
rcl_action's status profile). Types, DDS type names and hashes come from the definitions
(bus/dds/msg), so ``ros2 action list/info/send_goal`` and rclpy's ActionClient talk to it as
to an rclpy server.

Goal states follow action_msgs/GoalStatus: accepted goals are EXECUTING at once (rclpy's default
``handle_accepted_callback`` executes too); a cancel the handler takes puts a goal in CANCELING
until the handler ends it; a get_result request for a goal still running is answered when it
ends. Ended goals are kept (their results answer late requests) for ``RESULT_TIMEOUT_S``, as
rcl_action's default result timeout.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field

from robot_control.bus.cdr_prefix import GOAL_START, CdrMotion, request_header_bytes
from robot_control.bus.dds import config as dds_config
from robot_control.bus.dds.messages import message_type
from robot_control.bus.node import ActionHandler
from robot_control.bus.qos import QosProfile

#: goal requests waiting for the node's thread are kept, not overwritten, up to this many (a
#: flood of goals is answered, each, rather than silently thinned by a depth-10 history)
GOAL_REQUESTS = QosProfile(depth=1000)
RESULT_TIMEOUT_S = 900.0  # rcl_action_server_options_t's default result_timeout (15 min)
ACCEPTED, EXECUTING, CANCELING, SUCCEEDED, CANCELED, ABORTED = 1, 2, 3, 4, 5, 6
ENDS = {"succeeded": SUCCEEDED, "aborted": ABORTED, "canceled": CANCELED}
# action_msgs/srv/CancelGoal return codes
ERROR_NONE, ERROR_REJECTED, ERROR_UNKNOWN_GOAL_ID, ERROR_GOAL_TERMINATED = 0, 1, 2, 3
NS = 1_000_000_000


@dataclass
class Goal:
    stamp_ns: int
    status: int = EXECUTING
    result: object = None
    ended_at: float = 0.0
    waiting: list = field(default_factory=list)  # get_result requests to answer at the end


class DdsActionServer:
    """One action's server on a DDS node; goal ids are the goals' UUIDs as bytes."""

    def __init__(self, node, action_type: str, name: str, handler: ActionHandler) -> None:
        self.node = node
        self.handler = handler
        self.action_type = action_type
        self.Goal = message_type(action_type + "_Goal")
        self.Result = message_type(action_type + "_Result")
        self.Feedback = message_type(action_type + "_Feedback")
        self._FeedbackMessage = message_type(action_type + "_FeedbackMessage")
        self._Status = message_type("action_msgs/msg/GoalStatus")
        self._StatusArray = message_type("action_msgs/msg/GoalStatusArray")
        self.name = node.resolve(name)
        base = self.name + "/_action/"
        self._goals: dict[bytes, Goal] = {}
        self._servers = [
            node._serve(action_type + "_SendGoal", base + "send_goal", self._on_send_goal,
                        GOAL_REQUESTS),
            node._serve("action_msgs/srv/CancelGoal", base + "cancel_goal", self._on_cancel),
            node._serve(action_type + "_GetResult", base + "get_result", self._on_get_result)]
        self._send, self._cancel, self._get = self._servers
        self._send.set_screen(self._screen_goal)
        self._feedback = node._make_writer(base + "feedback", action_type + "_FeedbackMessage",
                                           dds_config.DEFAULT)
        self._status = node._make_writer(base + "status", "action_msgs/msg/GoalStatusArray",
                                         dds_config.LATCHED)
        self._publish_status()

    # -------------------------------------------------------------- services
    def _screen_goal(self, data: bytes, info) -> bool:
        """Before a goal request is decoded: if the handler refuses its declared sizes
        (``ActionHandler.screen_goal``), accept it undecoded and let the handler end it with the
        reason (``refused``); False then. A goal of 250 000 points costs seconds to decode."""
        reason = self.handler.screen_goal(CdrMotion(data, GOAL_START))
        head = request_header_bytes(data) if reason is not None else None
        if head is None:
            return True
        request = message_type(self.action_type + "_SendGoal_Request")(guid=head[0], seq=head[1])
        request.goal_id.uuid = list(head[2])
        request.sample_info = info
        self._on_send_goal(request, lambda key: self.handler.refused(key, reason))
        return False

    def _on_send_goal(self, request, start=None):
        """Accept or reject a goal request; an accepted one starts with ``start(goal id)``
        (default: the handler's ``accepted``)."""
        key = bytes(request.goal_id.uuid)
        response = message_type(self.action_type + "_SendGoal_Response")()
        if key in self._goals:
            return response  # a goal id is used once (rcl_action refuses it too)
        try:
            reason = self.handler.accept(request.goal)
        except Exception as exc:
            reason = f"accepting a goal raised: {exc!r}"
        if reason is not None:
            self.node.get_logger().warn(f"goal rejected: {reason}")
            return response
        now = int(self.node.now() * NS)
        self._expire()
        self._goals[key] = Goal(now)
        response.accepted = True
        response.stamp.sec, response.stamp.nanosec = divmod(now, NS)
        self._send.respond(request, response)  # accepted before it may end
        self._publish_status()
        try:
            if start is None:
                self.handler.accepted(key, request.goal)
            else:
                start(key)
        except Exception as exc:
            self.node.get_logger().error(f"a goal raised: {exc!r}")
            self.finish(key, "aborted", self.Result())
        return None

    def _on_cancel(self, request):
        response = message_type("action_msgs/srv/CancelGoal_Response")()
        info = request.goal_info
        key = bytes(info.goal_id.uuid)
        stamp = int(info.stamp.sec) * NS + int(info.stamp.nanosec)
        if any(key):  # one goal (and, with a stamp, those accepted before it)
            goal = self._goals.get(key)
            if goal is None:
                response.return_code = ERROR_UNKNOWN_GOAL_ID
                return response
            if goal.status not in (ACCEPTED, EXECUTING, CANCELING):
                response.return_code = ERROR_GOAL_TERMINATED
                return response
            targets = [key]
        else:  # all goals (stamp 0), or those accepted at or before the stamp
            targets = [k for k, g in self._goals.items() if g.status in (ACCEPTED, EXECUTING)
                       and (stamp == 0 or g.stamp_ns <= stamp)]
        for k in targets:
            goal = self._goals[k]
            if goal.status == EXECUTING:
                goal.status = CANCELING  # before the handler: it may end the goal at once
                try:
                    taken = self.handler.cancel(k)
                except Exception as exc:
                    self.node.get_logger().error(f"canceling a goal raised: {exc!r}")
                    taken = False
                if not taken and goal.status == CANCELING:
                    goal.status = EXECUTING
                    continue
            response.goals_canceling.append(self._info(k, goal))
        if targets and not response.goals_canceling:
            response.return_code = ERROR_REJECTED
        self._publish_status()
        return response

    def _on_get_result(self, request):
        key = bytes(request.goal_id.uuid)
        goal = self._goals.get(key)
        Response = message_type(self.action_type + "_GetResult_Response")
        if goal is None:
            return Response(status=0)  # STATUS_UNKNOWN
        if goal.result is None:
            goal.waiting.append(request)
            return None
        return Response(status=goal.status, result=goal.result)

    # ------------------------------------------------------- the node's side
    def publish_feedback(self, goal_id: bytes, feedback) -> None:
        goal = self._goals.get(goal_id)
        if goal is not None and goal.result is None:
            msg = self._FeedbackMessage(feedback=feedback)
            msg.goal_id.uuid = list(goal_id)
            self._feedback.write(msg)

    def finish(self, goal_id: bytes, status: str, result) -> None:
        """End a goal with ``status`` (succeeded, aborted, canceled) and ``result``."""
        if status not in ENDS:
            raise ValueError(f"status must be one of {sorted(ENDS)}, got {status!r}")
        goal = self._goals.get(goal_id)
        if goal is None or goal.result is not None:
            return
        end = ENDS[status]
        if end == CANCELED and goal.status != CANCELING:
            end = ABORTED  # only a goal whose cancel was asked for ends canceled
        goal.status, goal.result, goal.ended_at = end, result, time.monotonic()
        Response = message_type(self.action_type + "_GetResult_Response")
        for request in goal.waiting:
            self._get.respond(request, Response(status=end, result=result))
        goal.waiting.clear()
        self._publish_status()

    # -------------------------------------------------------------- internals
    def _info(self, key: bytes, goal: Goal):
        info = message_type("action_msgs/msg/GoalInfo")()
        info.goal_id.uuid = list(key)
        info.stamp.sec, info.stamp.nanosec = divmod(goal.stamp_ns, NS)
        return info

    def _publish_status(self) -> None:
        self._status.write(self._StatusArray(status_list=[
            self._Status(goal_info=self._info(k, g), status=g.status)
            for k, g in self._goals.items()]))

    def _expire(self) -> None:
        """Forget goals that ended more than RESULT_TIMEOUT_S ago."""
        cutoff = time.monotonic() - RESULT_TIMEOUT_S
        for k in [k for k, g in self._goals.items() if g.result is not None and g.ended_at < cutoff]:
            del self._goals[k]

    def destroy(self) -> None:
        for server in self._servers:
            server.destroy()


def new_goal_id() -> bytes:
    """A random goal UUID (as rclpy's ActionClient makes one)."""
    return uuid.uuid4().bytes
