"""lifecycle_msgs (Jazzy): the managed-node messages and the four lifecycle services, as Cyclone
DDS structs with rmw_cyclonedds' byte layout.

Services carry rmw_cyclonedds' request header (uint64 guid, int64 seq) before their fields, as
in ``rcl_interfaces``; a request with no fields has the member rosidl generates for an empty
struct, ``uint8 structure_needs_at_least_one_member``.
"""

from dataclasses import dataclass, field

from cyclonedds.idl import IdlStruct
from cyclonedds.idl import types as idl

# --- messages ----------------------------------------------------------------------------------


@dataclass
class State(IdlStruct, typename="lifecycle_msgs::msg::dds_::State_"):
    """lifecycle_msgs/msg/State: uint8 id, string label (ids: robot_control.bus.lifecycle)."""

    id: idl.uint8 = 0
    label: str = ""


@dataclass
class Transition(IdlStruct, typename="lifecycle_msgs::msg::dds_::Transition_"):
    """lifecycle_msgs/msg/Transition: uint8 id, string label."""

    id: idl.uint8 = 0
    label: str = ""


@dataclass
class TransitionDescription(
    IdlStruct, typename="lifecycle_msgs::msg::dds_::TransitionDescription_"
):
    """lifecycle_msgs/msg/TransitionDescription: Transition transition, State start_state,
    State goal_state."""

    transition: Transition = field(default_factory=Transition)
    start_state: State = field(default_factory=State)
    goal_state: State = field(default_factory=State)


@dataclass
class TransitionEvent(IdlStruct, typename="lifecycle_msgs::msg::dds_::TransitionEvent_"):
    """lifecycle_msgs/msg/TransitionEvent: uint64 timestamp, Transition transition, State
    start_state, State goal_state."""

    timestamp: idl.uint64 = 0
    transition: Transition = field(default_factory=Transition)
    start_state: State = field(default_factory=State)
    goal_state: State = field(default_factory=State)


# --- services: request header (uint64 guid, int64 seq) + the .srv fields ----------------------


@dataclass
class ChangeStateRequest(IdlStruct, typename="lifecycle_msgs::srv::dds_::ChangeState_Request_"):
    """lifecycle_msgs/srv/ChangeState request: header, Transition transition."""

    guid: idl.uint64 = 0
    seq: idl.int64 = 0
    transition: Transition = field(default_factory=Transition)


@dataclass
class ChangeStateResponse(
    IdlStruct, typename="lifecycle_msgs::srv::dds_::ChangeState_Response_"
):
    """lifecycle_msgs/srv/ChangeState response: header, bool success."""

    guid: idl.uint64 = 0
    seq: idl.int64 = 0
    success: bool = False


@dataclass
class GetStateRequest(IdlStruct, typename="lifecycle_msgs::srv::dds_::GetState_Request_"):
    """lifecycle_msgs/srv/GetState request: header only (rosidl's placeholder member)."""

    guid: idl.uint64 = 0
    seq: idl.int64 = 0
    structure_needs_at_least_one_member: idl.uint8 = 0


@dataclass
class GetStateResponse(IdlStruct, typename="lifecycle_msgs::srv::dds_::GetState_Response_"):
    """lifecycle_msgs/srv/GetState response: header, State current_state."""

    guid: idl.uint64 = 0
    seq: idl.int64 = 0
    current_state: State = field(default_factory=State)


@dataclass
class GetAvailableStatesRequest(
    IdlStruct, typename="lifecycle_msgs::srv::dds_::GetAvailableStates_Request_"
):
    """lifecycle_msgs/srv/GetAvailableStates request: header only."""

    guid: idl.uint64 = 0
    seq: idl.int64 = 0
    structure_needs_at_least_one_member: idl.uint8 = 0


@dataclass
class GetAvailableStatesResponse(
    IdlStruct, typename="lifecycle_msgs::srv::dds_::GetAvailableStates_Response_"
):
    """lifecycle_msgs/srv/GetAvailableStates response: header, State[] available_states."""

    guid: idl.uint64 = 0
    seq: idl.int64 = 0
    available_states: idl.sequence[State] = field(default_factory=list)


@dataclass
class GetAvailableTransitionsRequest(
    IdlStruct, typename="lifecycle_msgs::srv::dds_::GetAvailableTransitions_Request_"
):
    """lifecycle_msgs/srv/GetAvailableTransitions request (also get_transition_graph): header."""

    guid: idl.uint64 = 0
    seq: idl.int64 = 0
    structure_needs_at_least_one_member: idl.uint8 = 0


@dataclass
class GetAvailableTransitionsResponse(
    IdlStruct, typename="lifecycle_msgs::srv::dds_::GetAvailableTransitions_Response_"
):
    """lifecycle_msgs/srv/GetAvailableTransitions response: header, TransitionDescription[]
    available_transitions."""

    guid: idl.uint64 = 0
    seq: idl.int64 = 0
    available_transitions: idl.sequence[TransitionDescription] = field(default_factory=list)
