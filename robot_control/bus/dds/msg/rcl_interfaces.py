"""rcl_interfaces (Jazzy): log, parameter messages and the six parameter services, as Cyclone
DDS structs with rmw_cyclonedds' byte layout.

A service sample on the wire is the request (or response) struct preceded by rmw_cyclonedds'
request header ``struct cdds_request_header { uint64_t guid; int64_t seq; }`` (serdata.hpp):
the client fills it, the server echoes it in the reply so the client can match the two.
"""

from dataclasses import dataclass, field

# aliased: GetParameterTypes_Response has a member named ``types``
from cyclonedds.idl import IdlStruct
from cyclonedds.idl import types as idl

from robot_control.bus.dds.msg.standard import Time

# --- messages ----------------------------------------------------------------------------------


@dataclass
class Log(IdlStruct, typename="rcl_interfaces::msg::dds_::Log_"):
    """rcl_interfaces/msg/Log (/rosout): Time stamp, uint8 level, string name, msg, file,
    function, uint32 line."""

    DEBUG = 10
    INFO = 20
    WARN = 30
    ERROR = 40
    FATAL = 50

    stamp: Time = field(default_factory=Time)
    level: idl.uint8 = 0
    name: str = ""
    msg: str = ""
    file: str = ""
    function: str = ""
    line: idl.uint32 = 0


class ParameterType:
    """rcl_interfaces/msg/ParameterType constants (the message itself carries no data)."""

    PARAMETER_NOT_SET = 0
    PARAMETER_BOOL = 1
    PARAMETER_INTEGER = 2
    PARAMETER_DOUBLE = 3
    PARAMETER_STRING = 4
    PARAMETER_BYTE_ARRAY = 5
    PARAMETER_BOOL_ARRAY = 6
    PARAMETER_INTEGER_ARRAY = 7
    PARAMETER_DOUBLE_ARRAY = 8
    PARAMETER_STRING_ARRAY = 9


@dataclass
class ParameterValue(IdlStruct, typename="rcl_interfaces::msg::dds_::ParameterValue_"):
    """rcl_interfaces/msg/ParameterValue: uint8 type, then one member per type; only the one
    named by ``type`` is meaningful."""

    type: idl.uint8 = ParameterType.PARAMETER_NOT_SET
    bool_value: bool = False
    integer_value: idl.int64 = 0
    double_value: idl.float64 = 0.0
    string_value: str = ""
    byte_array_value: idl.sequence[idl.byte] = field(default_factory=list)
    bool_array_value: idl.sequence[bool] = field(default_factory=list)
    integer_array_value: idl.sequence[idl.int64] = field(default_factory=list)
    double_array_value: idl.sequence[idl.float64] = field(default_factory=list)
    string_array_value: idl.sequence[str] = field(default_factory=list)


@dataclass
class Parameter(IdlStruct, typename="rcl_interfaces::msg::dds_::Parameter_"):
    """rcl_interfaces/msg/Parameter: string name, ParameterValue value."""

    name: str = ""
    value: ParameterValue = field(default_factory=ParameterValue)


@dataclass
class ParameterEvent(IdlStruct, typename="rcl_interfaces::msg::dds_::ParameterEvent_"):
    """rcl_interfaces/msg/ParameterEvent: Time stamp, string node, Parameter[] new_parameters,
    changed_parameters, deleted_parameters."""

    stamp: Time = field(default_factory=Time)
    node: str = ""
    new_parameters: idl.sequence[Parameter] = field(default_factory=list)
    changed_parameters: idl.sequence[Parameter] = field(default_factory=list)
    deleted_parameters: idl.sequence[Parameter] = field(default_factory=list)


@dataclass
class FloatingPointRange(IdlStruct, typename="rcl_interfaces::msg::dds_::FloatingPointRange_"):
    """rcl_interfaces/msg/FloatingPointRange: float64 from_value, to_value, step."""

    from_value: idl.float64 = 0.0
    to_value: idl.float64 = 0.0
    step: idl.float64 = 0.0


@dataclass
class IntegerRange(IdlStruct, typename="rcl_interfaces::msg::dds_::IntegerRange_"):
    """rcl_interfaces/msg/IntegerRange: int64 from_value, to_value, uint64 step."""

    from_value: idl.int64 = 0
    to_value: idl.int64 = 0
    step: idl.uint64 = 0


@dataclass
class ParameterDescriptor(IdlStruct, typename="rcl_interfaces::msg::dds_::ParameterDescriptor_"):
    """rcl_interfaces/msg/ParameterDescriptor: string name, uint8 type, string description,
    additional_constraints, bool read_only, dynamic_typing, FloatingPointRange[<=1],
    IntegerRange[<=1]."""

    name: str = ""
    type: idl.uint8 = ParameterType.PARAMETER_NOT_SET
    description: str = ""
    additional_constraints: str = ""
    read_only: bool = False
    dynamic_typing: bool = False
    floating_point_range: idl.sequence[FloatingPointRange, 1] = field(default_factory=list)
    integer_range: idl.sequence[IntegerRange, 1] = field(default_factory=list)


@dataclass
class SetParametersResult(IdlStruct, typename="rcl_interfaces::msg::dds_::SetParametersResult_"):
    """rcl_interfaces/msg/SetParametersResult: bool successful, string reason."""

    successful: bool = False
    reason: str = ""


@dataclass
class ListParametersResult(IdlStruct, typename="rcl_interfaces::msg::dds_::ListParametersResult_"):
    """rcl_interfaces/msg/ListParametersResult: string[] names, string[] prefixes."""

    names: idl.sequence[str] = field(default_factory=list)
    prefixes: idl.sequence[str] = field(default_factory=list)


# --- services: request header (uint64 guid, int64 seq) + the .srv fields ----------------------


@dataclass
class GetParametersRequest(IdlStruct, typename="rcl_interfaces::srv::dds_::GetParameters_Request_"):
    """rcl_interfaces/srv/GetParameters request: header, string[] names."""

    guid: idl.uint64 = 0
    seq: idl.int64 = 0
    names: idl.sequence[str] = field(default_factory=list)


@dataclass
class GetParametersResponse(
    IdlStruct, typename="rcl_interfaces::srv::dds_::GetParameters_Response_"
):
    """rcl_interfaces/srv/GetParameters response: header, ParameterValue[] values."""

    guid: idl.uint64 = 0
    seq: idl.int64 = 0
    values: idl.sequence[ParameterValue] = field(default_factory=list)


@dataclass
class SetParametersRequest(IdlStruct, typename="rcl_interfaces::srv::dds_::SetParameters_Request_"):
    """rcl_interfaces/srv/SetParameters request: header, Parameter[] parameters."""

    guid: idl.uint64 = 0
    seq: idl.int64 = 0
    parameters: idl.sequence[Parameter] = field(default_factory=list)


@dataclass
class SetParametersResponse(
    IdlStruct, typename="rcl_interfaces::srv::dds_::SetParameters_Response_"
):
    """rcl_interfaces/srv/SetParameters response: header, SetParametersResult[] results."""

    guid: idl.uint64 = 0
    seq: idl.int64 = 0
    results: idl.sequence[SetParametersResult] = field(default_factory=list)


@dataclass
class SetParametersAtomicallyRequest(
    IdlStruct, typename="rcl_interfaces::srv::dds_::SetParametersAtomically_Request_"
):
    """rcl_interfaces/srv/SetParametersAtomically request: header, Parameter[] parameters."""

    guid: idl.uint64 = 0
    seq: idl.int64 = 0
    parameters: idl.sequence[Parameter] = field(default_factory=list)


@dataclass
class SetParametersAtomicallyResponse(
    IdlStruct, typename="rcl_interfaces::srv::dds_::SetParametersAtomically_Response_"
):
    """rcl_interfaces/srv/SetParametersAtomically response: header, SetParametersResult result."""

    guid: idl.uint64 = 0
    seq: idl.int64 = 0
    result: SetParametersResult = field(default_factory=SetParametersResult)


@dataclass
class ListParametersRequest(
    IdlStruct, typename="rcl_interfaces::srv::dds_::ListParameters_Request_"
):
    """rcl_interfaces/srv/ListParameters request: header, string[] prefixes, uint64 depth."""

    DEPTH_RECURSIVE = 0

    guid: idl.uint64 = 0
    seq: idl.int64 = 0
    prefixes: idl.sequence[str] = field(default_factory=list)
    depth: idl.uint64 = DEPTH_RECURSIVE


@dataclass
class ListParametersResponse(
    IdlStruct, typename="rcl_interfaces::srv::dds_::ListParameters_Response_"
):
    """rcl_interfaces/srv/ListParameters response: header, ListParametersResult result."""

    guid: idl.uint64 = 0
    seq: idl.int64 = 0
    result: ListParametersResult = field(default_factory=ListParametersResult)


@dataclass
class DescribeParametersRequest(
    IdlStruct, typename="rcl_interfaces::srv::dds_::DescribeParameters_Request_"
):
    """rcl_interfaces/srv/DescribeParameters request: header, string[] names."""

    guid: idl.uint64 = 0
    seq: idl.int64 = 0
    names: idl.sequence[str] = field(default_factory=list)


@dataclass
class DescribeParametersResponse(
    IdlStruct, typename="rcl_interfaces::srv::dds_::DescribeParameters_Response_"
):
    """rcl_interfaces/srv/DescribeParameters response: header, ParameterDescriptor[]
    descriptors."""

    guid: idl.uint64 = 0
    seq: idl.int64 = 0
    descriptors: idl.sequence[ParameterDescriptor] = field(default_factory=list)


@dataclass
class GetParameterTypesRequest(
    IdlStruct, typename="rcl_interfaces::srv::dds_::GetParameterTypes_Request_"
):
    """rcl_interfaces/srv/GetParameterTypes request: header, string[] names."""

    guid: idl.uint64 = 0
    seq: idl.int64 = 0
    names: idl.sequence[str] = field(default_factory=list)


@dataclass
class GetParameterTypesResponse(
    IdlStruct, typename="rcl_interfaces::srv::dds_::GetParameterTypes_Response_"
):
    """rcl_interfaces/srv/GetParameterTypes response: header, uint8[] types."""

    guid: idl.uint64 = 0
    seq: idl.int64 = 0
    types: idl.sequence[idl.uint8] = field(default_factory=list)
