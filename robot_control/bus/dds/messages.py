"""ROS 2 messages for the Cyclone DDS backend, on the wire exactly as rmw_cyclonedds puts them.

- ``MESSAGE_TYPES`` / ``SERVICE_TYPES``: the Cyclone DDS struct of each ROS 2 interface we use,
  keyed by ROS name (``"sensor_msgs/msg/JointState"``, ``"rcl_interfaces/srv/GetParameters"``).
- ``dds_topic_name`` / ``ros_topic_name``: ROS name <-> DDS topic (``rt/``, ``rq/…Request``,
  ``rr/…Reply``), ``dds_type_name`` / ``ros_type_name``: ``pkg/msg/T`` <-> ``pkg::msg::dds_::T_``.
- ``type_hash``: the REP-2011 hash advertised as ``typehash=…;`` in endpoint USER_DATA.
- Constructors for the messages the nodes exchange most, and time conversions.

Types, DDS type names and hashes are generated from the interface definitions
(robot_control.bus.dds.msg); this module names the ones the bus uses.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from cyclonedds.idl import IdlStruct

from robot_control.bus.dds.msg import dds_type_name as dds_type_name
from robot_control.bus.dds.msg import idl_type
from robot_control.bus.dds.msg import type_hash as definition_hash

# The ROS 2 types the bus uses (generated from their definitions: robot_control.bus.dds.msg).
MESSAGE_TYPES: dict[str, type[IdlStruct]] = {name: idl_type(name) for name in (
    "builtin_interfaces/msg/Time",
    "builtin_interfaces/msg/Duration",
    "std_msgs/msg/Header",
    "std_msgs/msg/String",
    "std_msgs/msg/MultiArrayDimension",
    "std_msgs/msg/MultiArrayLayout",
    "std_msgs/msg/Float64MultiArray",
    "geometry_msgs/msg/Vector3",
    "geometry_msgs/msg/Wrench",
    "geometry_msgs/msg/WrenchStamped",
    "geometry_msgs/msg/Point",
    "geometry_msgs/msg/Quaternion",
    "geometry_msgs/msg/Pose",
    "geometry_msgs/msg/PoseStamped",
    "geometry_msgs/msg/Accel",
    "geometry_msgs/msg/AccelStamped",
    "geometry_msgs/msg/Transform",
    "geometry_msgs/msg/TransformStamped",
    "tf2_msgs/msg/TFMessage",
    "control_msgs/msg/JointTrajectoryControllerState",
    "sensor_msgs/msg/JointState",
    "trajectory_msgs/msg/JointTrajectoryPoint",
    "trajectory_msgs/msg/JointTrajectory",
    "rosgraph_msgs/msg/Clock",
    "diagnostic_msgs/msg/KeyValue",
    "diagnostic_msgs/msg/DiagnosticStatus",
    "diagnostic_msgs/msg/DiagnosticArray",
    "rcl_interfaces/msg/Log",
    "rcl_interfaces/msg/ParameterValue",
    "rcl_interfaces/msg/Parameter",
    "rcl_interfaces/msg/ParameterEvent",
    "rcl_interfaces/msg/FloatingPointRange",
    "rcl_interfaces/msg/IntegerRange",
    "rcl_interfaces/msg/ParameterDescriptor",
    "rcl_interfaces/msg/SetParametersResult",
    "rcl_interfaces/msg/ListParametersResult",
    "lifecycle_msgs/msg/State",
    "lifecycle_msgs/msg/Transition",
    "lifecycle_msgs/msg/TransitionDescription",
    "lifecycle_msgs/msg/TransitionEvent",
    "rmw_dds_common/msg/Gid",
    "rmw_dds_common/msg/NodeEntitiesInfo",
    "rmw_dds_common/msg/ParticipantEntitiesInfo",
    "unique_identifier_msgs/msg/UUID",
    "action_msgs/msg/GoalInfo",
    "action_msgs/msg/GoalStatus",
    "action_msgs/msg/GoalStatusArray",
)}
SERVICES = (
    "rcl_interfaces/srv/GetParameters",
    "rcl_interfaces/srv/SetParameters",
    "rcl_interfaces/srv/SetParametersAtomically",
    "rcl_interfaces/srv/ListParameters",
    "rcl_interfaces/srv/DescribeParameters",
    "rcl_interfaces/srv/GetParameterTypes",
    "lifecycle_msgs/srv/ChangeState",
    "lifecycle_msgs/srv/GetState",
    "lifecycle_msgs/srv/GetAvailableStates",
    "lifecycle_msgs/srv/GetAvailableTransitions",
    "action_msgs/srv/CancelGoal",
)
#: actions: each one's goal, result, feedback, feedback message and its two services
ACTIONS = ("control_msgs/action/FollowJointTrajectory",)
for _action in ACTIONS:
    for _part in ("_Goal", "_Result", "_Feedback", "_FeedbackMessage"):
        MESSAGE_TYPES[_action + _part] = idl_type(_action + _part)
    SERVICES += (_action + "_SendGoal", _action + "_GetResult")
for _service in SERVICES:
    for _part in ("_Request", "_Response"):
        MESSAGE_TYPES[_service + _part] = idl_type(_service + _part)
SERVICE_TYPES: dict[str, tuple[type[IdlStruct], type[IdlStruct]]] = {
    service: (MESSAGE_TYPES[service + "_Request"], MESSAGE_TYPES[service + "_Response"])
    for service in SERVICES
}

# the types the constructors below build, by their ROS names
Time = MESSAGE_TYPES["builtin_interfaces/msg/Time"]
Duration = MESSAGE_TYPES["builtin_interfaces/msg/Duration"]
Header = MESSAGE_TYPES["std_msgs/msg/Header"]
String = MESSAGE_TYPES["std_msgs/msg/String"]
JointState = MESSAGE_TYPES["sensor_msgs/msg/JointState"]
JointTrajectory = MESSAGE_TYPES["trajectory_msgs/msg/JointTrajectory"]
JointTrajectoryPoint = MESSAGE_TYPES["trajectory_msgs/msg/JointTrajectoryPoint"]
Vector3 = MESSAGE_TYPES["geometry_msgs/msg/Vector3"]
Wrench = MESSAGE_TYPES["geometry_msgs/msg/Wrench"]
WrenchStamped = MESSAGE_TYPES["geometry_msgs/msg/WrenchStamped"]
Clock = MESSAGE_TYPES["rosgraph_msgs/msg/Clock"]

ROS_DISCOVERY_TOPIC = "ros_discovery_info"  # DDS topic of ParticipantEntitiesInfo, no rt/ prefix

_TOPIC_PREFIXES = {"topic": ("rt", ""), "request": ("rq", "Request"), "reply": ("rr", "Reply")}


# --- names -------------------------------------------------------------------------------------


def ros_type_name(dds_type: str) -> str:
    """rmw's ``pkg::msg::dds_::Type_`` -> ``pkg/msg/Type``; ValueError for non-ROS types."""
    parts = dds_type.split("::")
    if len(parts) != 4 or parts[2] != "dds_" or not parts[3].endswith("_"):
        raise ValueError(f"{dds_type!r} is not a ROS 2 DDS type name (pkg::msg::dds_::Type_)")
    return f"{parts[0]}/{parts[1]}/{parts[3][:-1]}"


def message_type(ros_type_name: str) -> type[IdlStruct]:
    """The Cyclone DDS struct registered for a ROS type name."""
    try:
        return MESSAGE_TYPES[ros_type_name]
    except KeyError:
        raise KeyError(
            f"no DDS type for {ros_type_name!r}; known: {sorted(MESSAGE_TYPES)}"
        ) from None


def type_hash(ros_type_name: str) -> str:
    """The REP-2011 (RIHS01) hash of a registered type, computed from its definition."""
    message_type(ros_type_name)  # KeyError for a type the bus does not use
    return definition_hash(ros_type_name)


def dds_topic_name(ros_name: str, kind: str = "topic") -> str:
    """Fully qualified ROS name -> DDS topic: ``/a/b`` -> ``rt/a/b`` (kind "topic"),
    ``rq/a/bRequest`` ("request") or ``rr/a/bReply`` ("reply"), as rmw's make_fqtopic."""
    if kind not in _TOPIC_PREFIXES:
        raise ValueError(f"kind must be one of {sorted(_TOPIC_PREFIXES)}, not {kind!r}")
    if not ros_name.startswith("/") or ros_name.endswith("/") or "//" in ros_name:
        raise ValueError(f"{ros_name!r} is not a fully qualified ROS name (/ns/name)")
    prefix, suffix = _TOPIC_PREFIXES[kind]
    return f"{prefix}{ros_name}{suffix}"


def ros_topic_name(dds_topic: str) -> tuple[str, str] | None:
    """DDS topic -> (kind, fully qualified ROS name), or None for a non-ROS topic."""
    for kind, (prefix, suffix) in _TOPIC_PREFIXES.items():
        if dds_topic.startswith(prefix + "/") and dds_topic.endswith(suffix):
            return kind, dds_topic[len(prefix) : len(dds_topic) - len(suffix)]
    return None


# --- time --------------------------------------------------------------------------------------

_NS = 1_000_000_000


def time_from_seconds(seconds: float) -> Time:
    """builtin_interfaces/Time from float seconds (nanosec in [0, 1e9), rounded to 1 ns)."""
    sec, nanosec = _split_seconds(seconds)
    return Time(sec=sec, nanosec=nanosec)


def duration_from_seconds(seconds: float) -> Duration:
    """builtin_interfaces/Duration from float seconds (nanosec in [0, 1e9), rounded to 1 ns)."""
    sec, nanosec = _split_seconds(seconds)
    return Duration(sec=sec, nanosec=nanosec)


def seconds(stamp: Time | Duration) -> float:
    """Float seconds of a Time or Duration."""
    return stamp.sec + stamp.nanosec * 1e-9


def time_from_nanoseconds(nanoseconds: int) -> Time:
    """builtin_interfaces/Time from integer nanoseconds (exact, e.g. ``time.time_ns()``)."""
    sec, nanosec = divmod(int(nanoseconds), _NS)
    _check_int32(sec)
    return Time(sec=sec, nanosec=nanosec)


def nanoseconds(stamp: Time | Duration) -> int:
    """Integer nanoseconds of a Time or Duration (exact)."""
    return stamp.sec * _NS + stamp.nanosec


def _split_seconds(value: float) -> tuple[int, int]:
    # split before scaling: t * 1e9 of an epoch time would lose the nanoseconds in a double
    if not math.isfinite(value):
        raise ValueError(f"time must be finite, got {value}")
    sec = math.floor(value)
    nanosec = round((value - sec) * _NS)
    if nanosec >= _NS:
        sec, nanosec = sec + 1, nanosec - _NS
    _check_int32(sec)
    return sec, nanosec


def _check_int32(sec: int) -> None:
    if not -(2**31) <= sec < 2**31:
        raise ValueError(f"{sec} s does not fit builtin_interfaces' int32 sec")


def _as_time(stamp: float | Time) -> Time:
    return stamp if isinstance(stamp, Time) else time_from_seconds(float(stamp))


def _as_list(values: Sequence[float] | np.ndarray | None) -> list[float]:
    return [] if values is None else np.asarray(values, dtype=float).ravel().tolist()


# --- constructors ------------------------------------------------------------------------------


def joint_state(
    stamp: float | Time,
    names: Sequence[str],
    q: Sequence[float] | np.ndarray | None = None,
    qd: Sequence[float] | np.ndarray | None = None,
    tau: Sequence[float] | np.ndarray | None = None,
    frame_id: str = "",
) -> JointState:
    """sensor_msgs/JointState; a field left None is sent empty, as ROS allows."""
    return JointState(
        header=Header(stamp=_as_time(stamp), frame_id=frame_id),
        name=list(names),
        position=_as_list(q),
        velocity=_as_list(qd),
        effort=_as_list(tau),
    )


def joint_state_arrays(msg: JointState) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(position, velocity, effort) of a JointState as float arrays (empty when not sent)."""
    return (
        np.asarray(msg.position, dtype=float),
        np.asarray(msg.velocity, dtype=float),
        np.asarray(msg.effort, dtype=float),
    )


def joint_reference(
    stamp: float | Time,
    names: Sequence[str],
    q: Sequence[float] | np.ndarray,
    qd: Sequence[float] | np.ndarray | None = None,
    qdd: Sequence[float] | np.ndarray | None = None,
) -> JointTrajectory:
    """trajectory_msgs/JointTrajectory holding one point (q_d, q̇_d, q̈_d) due at ``stamp``."""
    point = JointTrajectoryPoint(
        positions=_as_list(q), velocities=_as_list(qd), accelerations=_as_list(qdd)
    )
    return JointTrajectory(
        header=Header(stamp=_as_time(stamp)), joint_names=list(names), points=[point]
    )


def wrench_stamped(
    stamp: float | Time,
    force: Sequence[float] | np.ndarray,
    torque: Sequence[float] | np.ndarray,
    frame_id: str = "",
) -> WrenchStamped:
    """geometry_msgs/WrenchStamped from a force f and a moment n (ROS order: force first)."""
    fx, fy, fz = _as_list(force)
    nx, ny, nz = _as_list(torque)
    return WrenchStamped(
        header=Header(stamp=_as_time(stamp), frame_id=frame_id),
        wrench=Wrench(force=Vector3(fx, fy, fz), torque=Vector3(nx, ny, nz)),
    )


def clock(stamp: float | Time) -> Clock:
    """rosgraph_msgs/Clock at ``stamp``."""
    return Clock(clock=_as_time(stamp))
