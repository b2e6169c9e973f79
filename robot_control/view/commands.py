"""What the page asks of a stack, through the standard services on the view's node (any bus
backend): parameters (rcl_interfaces: describe, get, set — a refusal comes back with the node's
reason), lifecycle transitions (lifecycle_msgs) and FollowJointTrajectory goals (the action's
``_action/send_goal``, ``get_result`` and ``cancel_goal`` services, as rclpy's ActionClient
calls them). Calls block: the page calls them from its own threads, never from the node's spin
thread; calls on one service are one at a time (a reply read by another call would be lost)."""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass

from robot_control.bus.parameters import (
    BOOL,
    BOOL_ARRAY,
    DOUBLE,
    DOUBLE_ARRAY,
    INTEGER,
    INTEGER_ARRAY,
    STRING,
    STRING_ARRAY,
)
from robot_control.view.watch import topic

VALUE_FIELDS = {BOOL: "bool_value", INTEGER: "integer_value", DOUBLE: "double_value",
                STRING: "string_value", BOOL_ARRAY: "bool_array_value",
                INTEGER_ARRAY: "integer_array_value", DOUBLE_ARRAY: "double_array_value",
                STRING_ARRAY: "string_array_value"}
FJT = "control_msgs/action/FollowJointTrajectory"
TRANSITIONS = {"configure": 1, "cleanup": 2, "activate": 3, "deactivate": 4}
CALL_TIMEOUT_S = 10.0
#: a goal's result comes at its end: its duration, then at most this long (the generator ends
#: every goal within its goal time tolerance after the last point)
RESULT_MARGIN_S = 60.0
#: action_msgs/msg/GoalStatus values of a goal's end
STATUS_NAMES = {4: "succeeded", 5: "canceled", 6: "aborted"}
ACTION = "follow_joint_trajectory/_action/"
#: the services the page calls: their clients are made at once, so they are matched before use
SERVICES = (("rcl_interfaces/srv/GetParameters", "controller", "get_parameters"),
            ("rcl_interfaces/srv/DescribeParameters", "controller", "describe_parameters"),
            ("rcl_interfaces/srv/ListParameters", "controller", "list_parameters"),
            ("rcl_interfaces/srv/SetParameters", "controller", "set_parameters"),
            ("lifecycle_msgs/srv/GetState", "trajectory_generator", "get_state"),
            ("lifecycle_msgs/srv/ChangeState", "trajectory_generator", "change_state"),
            (FJT + "_SendGoal", "trajectory_generator", ACTION + "send_goal"),
            (FJT + "_GetResult", "trajectory_generator", ACTION + "get_result"),
            ("action_msgs/srv/CancelGoal", "trajectory_generator", ACTION + "cancel_goal"))


@dataclass
class GoalEnd:
    """How a FollowJointTrajectory goal ended: its status (succeeded, aborted, canceled, or
    the number of another), and the server's error_code and error_string."""

    status: str
    error_code: int
    error_string: str


@dataclass
class ParameterInfo:
    """A parameter as the page offers it: value, type, choices (``one of: a, b``), range."""

    name: str
    value: object
    type: int
    description: str
    choices: list[str]
    low: float | None = None
    high: float | None = None
    read_only: bool = False


class StackCommands:
    """Service clients of one namespace's controller and trajectory generator."""

    def __init__(self, node, namespace: str) -> None:
        self.node = node
        self.namespace = namespace
        self._clients: dict[tuple[str, str], object] = {}
        self._busy: dict[tuple[str, str], threading.Lock] = {}
        self._lock = threading.Lock()
        for srv_type, owner, service in SERVICES:
            self._client(srv_type, topic(namespace, f"{owner}/{service}"))

    def _client(self, srv_type: str, service: str):
        with self._lock:  # made once, from any of the page's threads
            key = (srv_type, service)
            if key not in self._clients:
                self._clients[key] = self.node.create_client(srv_type, service)
                self._busy[key] = threading.Lock()
            return self._clients[key], self._busy[key]

    def _call(self, srv_type: str, node: str, service: str, timeout_s: float = CALL_TIMEOUT_S,
              **fields):
        client, busy = self._client(srv_type, topic(self.namespace, f"{node}/{service}"))
        with busy:
            return client.call(client.request(**fields), timeout_s)

    # -- parameters
    def parameters(self, node: str, names: list[str]) -> list[ParameterInfo]:
        """The named parameters of ``node`` with their descriptors."""
        got = self._call("rcl_interfaces/srv/GetParameters", node, "get_parameters", names=names)
        described = self._call("rcl_interfaces/srv/DescribeParameters", node,
                               "describe_parameters", names=names)
        out = []
        for name, value, d in zip(names, got.values, described.descriptors, strict=False):
            fp = list(d.floating_point_range)
            constraints = str(d.additional_constraints)
            choices = [c.strip() for c in constraints.removeprefix("one of:").split(",")] \
                if constraints.startswith("one of:") else []
            out.append(ParameterInfo(name, value_of(value), int(d.type), str(d.description),
                                     choices, fp[0].from_value if fp else None,
                                     fp[0].to_value if fp else None, bool(d.read_only)))
        return out

    def names(self, node: str, prefix: str) -> list[str]:
        """The parameter names of ``node`` under ``prefix.``."""
        got = self._call("rcl_interfaces/srv/ListParameters", node, "list_parameters",
                         prefixes=[prefix], depth=0)
        return sorted(str(n) for n in got.result.names)

    def set(self, node: str, name: str, value: object, ptype: int) -> tuple[bool, str]:
        """(accepted, the node's reason) of setting one parameter."""
        Parameter = self.node.msg("rcl_interfaces/msg/Parameter")
        response = self._call("rcl_interfaces/srv/SetParameters", node, "set_parameters",
                              parameters=[Parameter(name=name, value=self.value_msg(value,
                                                                                    ptype))])
        result = response.results[0]
        return bool(result.successful), str(result.reason)

    def value_msg(self, value: object, ptype: int):
        ParameterValue = self.node.msg("rcl_interfaces/msg/ParameterValue")
        msg = ParameterValue(type=ptype)
        setattr(msg, VALUE_FIELDS[ptype], list(value) if isinstance(value, list | tuple)
                else value)
        return msg

    # -- lifecycle
    def state(self, node: str) -> str:
        got = self._call("lifecycle_msgs/srv/GetState", node, "get_state")
        return str(got.current_state.label)

    def transition(self, node: str, label: str) -> bool:
        Transition = self.node.msg("lifecycle_msgs/msg/Transition")
        got = self._call("lifecycle_msgs/srv/ChangeState", node, "change_state",
                         transition=Transition(id=TRANSITIONS[label], label=label))
        return bool(got.success)

    # -- goals
    def send_goal(self, joints: list[str], positions: list[float],
                  duration_s: float) -> tuple[bytes, bool]:
        """Send a one-point FollowJointTrajectory goal to the trajectory generator: (its goal
        id, whether it was accepted)."""
        m = self.node.msg
        sec = int(duration_s)
        point = m("trajectory_msgs/msg/JointTrajectoryPoint")(
            positions=[float(p) for p in positions],
            time_from_start=m("builtin_interfaces/msg/Duration")(
                sec=sec, nanosec=int(round((duration_s - sec) * 1e9))))
        goal = m(FJT + "_Goal")(trajectory=m("trajectory_msgs/msg/JointTrajectory")(
            joint_names=list(joints), points=[point]))
        goal_id = uuid.uuid4().bytes
        got = self._call(FJT + "_SendGoal", "trajectory_generator", ACTION + "send_goal",
                         goal_id=self._uuid(goal_id), goal=goal)
        return goal_id, bool(got.accepted)

    def goal_end(self, goal_id: bytes, duration_s: float) -> GoalEnd:
        """Wait for an accepted goal's end (the action's get_result: answered when it ends)."""
        got = self._call(FJT + "_GetResult", "trajectory_generator", ACTION + "get_result",
                         duration_s + RESULT_MARGIN_S, goal_id=self._uuid(goal_id))
        status = int(got.status)
        return GoalEnd(STATUS_NAMES.get(status, f"status {status}"), int(got.result.error_code),
                       str(got.result.error_string))

    def cancel_goal(self, goal_id: bytes) -> bool:
        """Ask the generator to cancel a goal; True if it is canceling it."""
        info = self.node.msg("action_msgs/msg/GoalInfo")(goal_id=self._uuid(goal_id))
        got = self._call("action_msgs/srv/CancelGoal", "trajectory_generator",
                         ACTION + "cancel_goal", goal_info=info)
        return int(got.return_code) == 0 and len(got.goals_canceling) > 0

    def _uuid(self, goal_id: bytes):
        return self.node.msg("unique_identifier_msgs/msg/UUID")(uuid=list(goal_id))


def value_of(msg) -> object:
    """The Python value of an rcl_interfaces/ParameterValue (None when not set)."""
    field = VALUE_FIELDS.get(int(msg.type))
    if field is None:
        return None
    value = getattr(msg, field)
    return list(value) if not isinstance(value, str | bool | int | float) else value
