"""Standard ROS 2 messages (builtin_interfaces, std_msgs, geometry_msgs, sensor_msgs,
trajectory_msgs, rosgraph_msgs, diagnostic_msgs) as Cyclone DDS structs.

Fields, their order and their IDL types follow the Jazzy ``.msg`` files exactly: CDR has no
field names or tags, so the byte layout *is* the order and width of the members. The DDS type
name is the one rmw_cyclonedds registers, ``<pkg>::msg::dds_::<Type>_``.
Sequences take Python lists (not numpy arrays): Cyclone's serialiser tests them for truth.
"""

from dataclasses import dataclass, field

from cyclonedds.idl import IdlStruct, types

# --- builtin_interfaces ----------------------------------------------------------------------


@dataclass
class Time(IdlStruct, typename="builtin_interfaces::msg::dds_::Time_"):
    """builtin_interfaces/msg/Time: int32 sec, uint32 nanosec (nanosec in [0, 1e9))."""

    sec: types.int32 = 0
    nanosec: types.uint32 = 0


@dataclass
class Duration(IdlStruct, typename="builtin_interfaces::msg::dds_::Duration_"):
    """builtin_interfaces/msg/Duration: int32 sec, uint32 nanosec (nanosec in [0, 1e9))."""

    sec: types.int32 = 0
    nanosec: types.uint32 = 0


# --- std_msgs ----------------------------------------------------------------------------------


@dataclass
class Header(IdlStruct, typename="std_msgs::msg::dds_::Header_"):
    """std_msgs/msg/Header: builtin_interfaces/Time stamp, string frame_id."""

    stamp: Time = field(default_factory=Time)
    frame_id: str = ""


@dataclass
class String(IdlStruct, typename="std_msgs::msg::dds_::String_"):
    """std_msgs/msg/String: string data."""

    data: str = ""


@dataclass
class MultiArrayDimension(IdlStruct, typename="std_msgs::msg::dds_::MultiArrayDimension_"):
    """std_msgs/msg/MultiArrayDimension: string label, uint32 size, uint32 stride."""

    label: str = ""
    size: types.uint32 = 0
    stride: types.uint32 = 0


@dataclass
class MultiArrayLayout(IdlStruct, typename="std_msgs::msg::dds_::MultiArrayLayout_"):
    """std_msgs/msg/MultiArrayLayout: MultiArrayDimension[] dim, uint32 data_offset."""

    dim: types.sequence[MultiArrayDimension] = field(default_factory=list)
    data_offset: types.uint32 = 0


@dataclass
class Float64MultiArray(IdlStruct, typename="std_msgs::msg::dds_::Float64MultiArray_"):
    """std_msgs/msg/Float64MultiArray: MultiArrayLayout layout, float64[] data."""

    layout: MultiArrayLayout = field(default_factory=MultiArrayLayout)
    data: types.sequence[types.float64] = field(default_factory=list)


# --- geometry_msgs -----------------------------------------------------------------------------


@dataclass
class Vector3(IdlStruct, typename="geometry_msgs::msg::dds_::Vector3_"):
    """geometry_msgs/msg/Vector3: float64 x, y, z."""

    x: types.float64 = 0.0
    y: types.float64 = 0.0
    z: types.float64 = 0.0


@dataclass
class Wrench(IdlStruct, typename="geometry_msgs::msg::dds_::Wrench_"):
    """geometry_msgs/msg/Wrench: Vector3 force, Vector3 torque (force first, unlike (n, f))."""

    force: Vector3 = field(default_factory=Vector3)
    torque: Vector3 = field(default_factory=Vector3)


@dataclass
class WrenchStamped(IdlStruct, typename="geometry_msgs::msg::dds_::WrenchStamped_"):
    """geometry_msgs/msg/WrenchStamped: std_msgs/Header header, Wrench wrench."""

    header: Header = field(default_factory=Header)
    wrench: Wrench = field(default_factory=Wrench)


@dataclass
class Point(IdlStruct, typename="geometry_msgs::msg::dds_::Point_"):
    """geometry_msgs/msg/Point: float64 x, y, z."""

    x: types.float64 = 0.0
    y: types.float64 = 0.0
    z: types.float64 = 0.0


@dataclass
class Quaternion(IdlStruct, typename="geometry_msgs::msg::dds_::Quaternion_"):
    """geometry_msgs/msg/Quaternion: float64 x, y, z, w (the identity by default, as in ROS)."""

    x: types.float64 = 0.0
    y: types.float64 = 0.0
    z: types.float64 = 0.0
    w: types.float64 = 1.0


@dataclass
class Pose(IdlStruct, typename="geometry_msgs::msg::dds_::Pose_"):
    """geometry_msgs/msg/Pose: Point position, Quaternion orientation."""

    position: Point = field(default_factory=Point)
    orientation: Quaternion = field(default_factory=Quaternion)


@dataclass
class PoseStamped(IdlStruct, typename="geometry_msgs::msg::dds_::PoseStamped_"):
    """geometry_msgs/msg/PoseStamped: std_msgs/Header header, Pose pose."""

    header: Header = field(default_factory=Header)
    pose: Pose = field(default_factory=Pose)


@dataclass
class Accel(IdlStruct, typename="geometry_msgs::msg::dds_::Accel_"):
    """geometry_msgs/msg/Accel: Vector3 linear, Vector3 angular (linear first, unlike (α, a))."""

    linear: Vector3 = field(default_factory=Vector3)
    angular: Vector3 = field(default_factory=Vector3)


@dataclass
class AccelStamped(IdlStruct, typename="geometry_msgs::msg::dds_::AccelStamped_"):
    """geometry_msgs/msg/AccelStamped: std_msgs/Header header, Accel accel."""

    header: Header = field(default_factory=Header)
    accel: Accel = field(default_factory=Accel)


# --- sensor_msgs -------------------------------------------------------------------------------


@dataclass
class JointState(IdlStruct, typename="sensor_msgs::msg::dds_::JointState_"):
    """sensor_msgs/msg/JointState: Header header, string[] name, float64[] position, velocity,
    effort."""

    header: Header = field(default_factory=Header)
    name: types.sequence[str] = field(default_factory=list)
    position: types.sequence[types.float64] = field(default_factory=list)
    velocity: types.sequence[types.float64] = field(default_factory=list)
    effort: types.sequence[types.float64] = field(default_factory=list)


# --- trajectory_msgs ---------------------------------------------------------------------------


@dataclass
class JointTrajectoryPoint(IdlStruct, typename="trajectory_msgs::msg::dds_::JointTrajectoryPoint_"):
    """trajectory_msgs/msg/JointTrajectoryPoint: float64[] positions, velocities, accelerations,
    effort, builtin_interfaces/Duration time_from_start."""

    positions: types.sequence[types.float64] = field(default_factory=list)
    velocities: types.sequence[types.float64] = field(default_factory=list)
    accelerations: types.sequence[types.float64] = field(default_factory=list)
    effort: types.sequence[types.float64] = field(default_factory=list)
    time_from_start: Duration = field(default_factory=Duration)


@dataclass
class JointTrajectory(IdlStruct, typename="trajectory_msgs::msg::dds_::JointTrajectory_"):
    """trajectory_msgs/msg/JointTrajectory: Header header, string[] joint_names,
    JointTrajectoryPoint[] points."""

    header: Header = field(default_factory=Header)
    joint_names: types.sequence[str] = field(default_factory=list)
    points: types.sequence[JointTrajectoryPoint] = field(default_factory=list)


# --- rosgraph_msgs -----------------------------------------------------------------------------


@dataclass
class Clock(IdlStruct, typename="rosgraph_msgs::msg::dds_::Clock_"):
    """rosgraph_msgs/msg/Clock: builtin_interfaces/Time clock."""

    clock: Time = field(default_factory=Time)


# --- diagnostic_msgs ---------------------------------------------------------------------------


@dataclass
class KeyValue(IdlStruct, typename="diagnostic_msgs::msg::dds_::KeyValue_"):
    """diagnostic_msgs/msg/KeyValue: string key, string value."""

    key: str = ""
    value: str = ""


@dataclass
class DiagnosticStatus(IdlStruct, typename="diagnostic_msgs::msg::dds_::DiagnosticStatus_"):
    """diagnostic_msgs/msg/DiagnosticStatus: byte level, string name, message, hardware_id,
    KeyValue[] values."""

    # level constants (byte in the .msg)
    OK = 0
    WARN = 1
    ERROR = 2
    STALE = 3

    level: types.byte = 0
    name: str = ""
    message: str = ""
    hardware_id: str = ""
    values: types.sequence[KeyValue] = field(default_factory=list)


@dataclass
class DiagnosticArray(IdlStruct, typename="diagnostic_msgs::msg::dds_::DiagnosticArray_"):
    """diagnostic_msgs/msg/DiagnosticArray: Header header, DiagnosticStatus[] status."""

    header: Header = field(default_factory=Header)
    status: types.sequence[DiagnosticStatus] = field(default_factory=list)
