"""An action server of the bus interface on rclpy.action.ActionServer.

The node's handler decides (``accept``, ``accepted``, ``cancel``) and ends goals whenever it
likes (``finish``) — from a timer, a subscription or inside ``accepted`` itself. rclpy wants the
end as the return of an execute callback: each goal's callback awaits a future that ``finish``
completes, then moves the goal to its terminal state and returns the result.

A handler that screens goals (``ActionHandler.screen_goal``) sees each goal's sizes before rclpy
converts it to Python (bus/ros/goal_screen.py): a goal they refuse is accepted unconverted and
ended by the handler with the reason (``refused``), as on the rclpy-free route. On rmw_cyclonedds
the sizes are read from the serialised request before the rmw decodes it, and a refused request
is taken away undecoded (bus/ros/raw_request.py); its acceptance is then rclpy's
``_execute_goal_request`` with the response sent through rcl by this module (rclpy's binding
cannot make a request id).
"""

from __future__ import annotations

import traceback

from action_msgs.msg import GoalInfo
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.action.server import ServerGoalHandle
from rclpy.executors import await_or_execute
from rclpy.qos import QoSProfile
from rclpy.task import Future

from robot_control.bus.node import ActionHandler
from robot_control.bus.ros.goal_screen import GoalScreen, c_message, goal_screen
from robot_control.bus.ros.raw_request import RawGoalRequests, RequestId, raw_goal_requests

STATUSES = ("succeeded", "aborted", "canceled")
#: goal requests waiting for the executor are kept, not overwritten (services' default depth 10
#: would silently thin a flood of goals)
GOAL_REQUESTS = QoSProfile(depth=1000)


class ScreeningActionServer(ActionServer):
    """rclpy's ActionServer taking goal requests through a GoalScreen, and on rmw_cyclonedds
    refusing them by their serialised sizes before the rmw decodes them (:attr:`raw`)."""

    #: the parts of rclpy's ActionServer (Jazzy) its take_data uses (``_is_goal_request_ready``
    #: too, which is_ready sets), and those of its goal acceptance, repeated for a raw request
    RCLPY_PARTS = ("_handle", "_lock", "is_ready", "take_data", "_execute_goal_request",
                   "_goal_handles", "_result_futures", "add_future", "_node", "_action_type",
                   "_handle_accepted_callback")

    def __init__(self, *args, screen: GoalScreen, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.screen: GoalScreen | None = screen
        self.raw: RawGoalRequests | None = None
        if not all(hasattr(self, part) for part in self.RCLPY_PARTS):
            self.screen = None  # another rclpy: its own take, goals converted first
            self._node.get_logger().warn("goals are converted before their sizes are checked: "
                                         "this rclpy's ActionServer is not the one expected")
        else:
            self.raw = raw_goal_requests(self._handle.pointer, self._node.resolve_service_name)

    def take_data(self):
        if self.screen is None or not getattr(self, "_is_goal_request_ready", False):
            return super().take_data()
        refused = self._take_refused_raw() if self.raw is not None else None
        self._is_goal_request_ready = False  # rclpy takes the rest
        data = super().take_data()
        if refused is not None:
            data["goal"] = refused
            return data
        with self._lock:
            taken = self._handle.take_goal_request(self.screen.take_type)
        interrupted, self.screen.interrupted = self.screen.interrupted, None
        if interrupted is not None:
            raise interrupted
        if all(taken):
            data["goal"] = taken
        return data

    def _take_refused_raw(self) -> tuple[RequestId, object] | None:
        """(request id, unconverted request) of the first waiting goal request when its
        serialised sizes refuse it, taken away undecoded; else None (it stays waiting)."""
        with self._lock:
            request = self.raw.peek()
            if request is None:
                return None
            try:
                request_id = request.request_id()
                refused = None if request_id is None else \
                    self.screen.refused_request(request, request.goal_id)
            except Exception:  # the C message's screen says why, once taken
                refused = None
            if refused is None:
                self.raw.release(request)
                return None
            if not self.raw.take(request):
                self.screen.reason(refused.goal, forget=True)
                return None
        return request_id, refused

    async def _execute_goal_request(self, request_header_and_message):
        header, request = request_header_and_message
        if not isinstance(header, RequestId):
            return await super()._execute_goal_request(request_header_and_message)
        # rclpy's acceptance of a goal (the goal callback accepts a refused one) with the
        # response sent here: rclpy's send_goal_response wants the request id its take made
        goal_info = GoalInfo(goal_id=request.goal_id)
        goal_handle = None
        with self._lock:
            exists = self._handle.goal_exists(goal_info)
        if not exists:
            goal_info.stamp = self._node.get_clock().now().to_msg()
            key = bytes(request.goal_id.uuid)
            try:
                with self._lock:
                    goal_handle = ServerGoalHandle(self, goal_info, request.goal)
            except RuntimeError as exc:
                self._node.get_logger().error(f"Failed to accept new goal: {exc}")
            else:
                self._goal_handles[key] = goal_handle
                self._result_futures[key] = Future()
                self.add_future(self._result_futures[key])
        if goal_handle is None:
            self.screen.reason(request.goal, forget=True)
        response = self._action_type.Impl.SendGoalService.Response(
            accepted=goal_handle is not None, stamp=goal_info.stamp)
        with self._handle, c_message(response) as address:
            sent = self.raw.respond(self._handle.pointer, header, address)
        if not sent:
            self._node.get_logger().warn(
                "Failed to send goal response (the client may have gone away)")
        elif goal_handle is not None:
            await await_or_execute(self._handle_accepted_callback, goal_handle)


class RclpyActionServer:
    """``~/name``-style action server; goal ids are the goals' UUIDs as bytes."""

    def __init__(self, rcl_node, action_class, name: str, handler: ActionHandler) -> None:
        self.Feedback = action_class.Feedback
        self.Result = action_class.Result
        self._handler = handler
        self._log = rcl_node.get_logger()
        self._handles: dict[bytes, object] = {}
        self._ends: dict[bytes, Future] = {}
        callbacks = {"execute_callback": self._execute, "goal_callback": self._goal,
                     "handle_accepted_callback": self._accepted,
                     "cancel_callback": self._cancel, "goal_service_qos_profile": GOAL_REQUESTS}
        self.screen = None
        if type(handler).screen_goal is not ActionHandler.screen_goal:
            self.screen = goal_screen(action_class, handler.screen_goal, self._log)
        if self.screen is None:
            self._server = ActionServer(rcl_node, action_class, name, **callbacks)
        else:
            self._server = ScreeningActionServer(rcl_node, action_class, name, **callbacks,
                                                 screen=self.screen)
            self.screen = self._server.screen

    def _failed(self, what: str, exc: Exception) -> str:
        """Log a handler's exception (rclpy would let it end spin(): the node would die)."""
        text = f"{what} raised: {exc!r}"
        self._log.error(f"{text}\n{traceback.format_exc()}")
        return text

    def _goal(self, goal) -> GoalResponse:
        if self.screen is not None and self.screen.reason(goal) is not None:
            return GoalResponse.ACCEPT  # ended with the reason once accepted
        try:
            reason = self._handler.accept(goal)
        except Exception as exc:
            reason = self._failed("accepting a goal", exc)
        if reason is None:
            return GoalResponse.ACCEPT
        self._log.warn(f"goal rejected: {reason}")
        return GoalResponse.REJECT

    def _accepted(self, handle) -> None:
        key = bytes(handle.goal_id.uuid)
        self._handles[key] = handle
        self._ends[key] = Future()
        handle.execute()  # EXECUTING before the handler may end it
        refused = None if self.screen is None else self.screen.reason(handle.request, forget=True)
        try:
            if refused is not None:
                self._handler.refused(key, refused)
            else:
                self._handler.accepted(key, handle.request)
        except Exception as exc:
            self.finish(key, "aborted", self.Result(**self._error(self._failed("a goal", exc))))

    def _cancel(self, handle) -> CancelResponse:
        try:
            ok = self._handler.cancel(bytes(handle.goal_id.uuid))
        except Exception as exc:
            self._failed("canceling a goal", exc)
            ok = False
        return CancelResponse.ACCEPT if ok else CancelResponse.REJECT

    async def _execute(self, handle):
        key = bytes(handle.goal_id.uuid)
        status, result = await self._ends[key]
        del self._ends[key], self._handles[key]
        if status == "succeeded":
            handle.succeed()
        elif status == "canceled" and handle.is_cancel_requested:
            handle.canceled()
        else:
            handle.abort()
        return result

    def _error(self, text: str) -> dict:
        """Result fields saying what went wrong, where the action's result has them."""
        fields = self.Result.get_fields_and_field_types()
        return {"error_string": text} if "error_string" in fields else {}

    def publish_feedback(self, goal_id: bytes, feedback) -> None:
        handle = self._handles.get(goal_id)
        if handle is not None:
            handle.publish_feedback(feedback)

    def finish(self, goal_id: bytes, status: str, result) -> None:
        """End a goal with ``status`` (succeeded, aborted, canceled) and ``result``."""
        if status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {status!r}")
        end = self._ends.get(goal_id)
        if end is not None and not end.done():
            end.set_result((status, result))

    def destroy(self) -> None:
        self._server.destroy()
