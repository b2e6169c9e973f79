"""Wire layer of the DDS backend.

Every registered type is serialised by Cyclone DDS and by rosbags' CDR serialiser (the layout
rmw_cyclonedds puts on the wire) and the bytes must be identical; type hashes are recomputed
with rosbags' REP-2011 code; and a JointState crosses two DomainParticipants (in this process,
and from another process over LOCALHOST discovery) with the typehash in the discovered
endpoint's USER_DATA.
"""

import math
import random
import re
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from rosbags.interfaces import Nodetype
from rosbags.typesys import Stores, get_types_from_msg, get_typestore

from robot_control.bus.dds import messages as m
from robot_control.bus.dds.msg import idl_type

HASH_FILE = Path(__file__).resolve().parent / "data" / "ros2_type_hashes.yaml"

# The services as the Jazzy .srv files define them: (request, response). An empty request is
# the struct rosidl generates for it (one uint8 placeholder member, on the wire and in the hash).
EMPTY = "uint8 structure_needs_at_least_one_member"
SRV_DEFINITIONS = {
    "rcl_interfaces/srv/GetParameters": ("string[] names",
                                         "rcl_interfaces/ParameterValue[] values"),
    "rcl_interfaces/srv/SetParameters": (
        "rcl_interfaces/Parameter[] parameters",
        "rcl_interfaces/SetParametersResult[] results",
    ),
    "rcl_interfaces/srv/SetParametersAtomically": (
        "rcl_interfaces/Parameter[] parameters",
        "rcl_interfaces/SetParametersResult result",
    ),
    "rcl_interfaces/srv/ListParameters": (
        "uint64 DEPTH_RECURSIVE=0\nstring[] prefixes\nuint64 depth",
        "rcl_interfaces/ListParametersResult result",
    ),
    "rcl_interfaces/srv/DescribeParameters": ("string[] names",
                                              "rcl_interfaces/ParameterDescriptor[] descriptors"),
    "rcl_interfaces/srv/GetParameterTypes": ("string[] names", "uint8[] types"),
    "lifecycle_msgs/srv/ChangeState": ("lifecycle_msgs/Transition transition", "bool success"),
    "lifecycle_msgs/srv/GetState": (EMPTY, "lifecycle_msgs/State current_state"),
    "lifecycle_msgs/srv/GetAvailableStates": (EMPTY, "lifecycle_msgs/State[] available_states"),
    "lifecycle_msgs/srv/GetAvailableTransitions": (
        EMPTY, "lifecycle_msgs/TransitionDescription[] available_transitions"),
    "action_msgs/srv/CancelGoal": (
        "action_msgs/GoalInfo goal_info",
        "int8 return_code\naction_msgs/GoalInfo[] goals_canceling"),
    "control_msgs/action/FollowJointTrajectory_SendGoal": (
        "unique_identifier_msgs/UUID goal_id\ncontrol_msgs/action/FollowJointTrajectory_Goal goal",
        "bool accepted\nbuiltin_interfaces/Time stamp"),
    "control_msgs/action/FollowJointTrajectory_GetResult": (
        "unique_identifier_msgs/UUID goal_id",
        "int8 status\ncontrol_msgs/action/FollowJointTrajectory_Result result"),
}
#: the action's own parts, rosbags reads them from the .action text (its store lacks control_msgs)
ACTION = "control_msgs/action/FollowJointTrajectory"
CONTROL_MSGS = ("JointTolerance", "JointComponentTolerance", "JointTrajectoryControllerState")
REQUEST_HEADER = "uint64 guid\nint64 seq\n"  # rmw_cyclonedds' cdds_request_header_t
# rmw_dds_common as rosidl sees it: `char` in a .msg becomes IDL uint8 (rosbags keeps `char`,
# which changes nothing on the wire but changes the REP-2011 hash).
RMW_DDS_COMMON = {
    "rmw_dds_common/msg/Gid": "uint8[16] data",
    "rmw_dds_common/msg/NodeEntitiesInfo": "string<=256 node_namespace\nstring<=256 node_name\n"
    "rmw_dds_common/Gid[] reader_gid_seq\nrmw_dds_common/Gid[] writer_gid_seq",
    "rmw_dds_common/msg/ParticipantEntitiesInfo": "rmw_dds_common/Gid gid\n"
    "rmw_dds_common/NodeEntitiesInfo[] node_entities_info_seq",
}
REQUIRED_TYPES = [
    "builtin_interfaces/msg/Time",
    "builtin_interfaces/msg/Duration",
    "std_msgs/msg/Header",
    "std_msgs/msg/String",
    "std_msgs/msg/Float64MultiArray",
    "std_msgs/msg/MultiArrayLayout",
    "std_msgs/msg/MultiArrayDimension",
    "sensor_msgs/msg/JointState",
    "trajectory_msgs/msg/JointTrajectory",
    "trajectory_msgs/msg/JointTrajectoryPoint",
    "geometry_msgs/msg/Vector3",
    "geometry_msgs/msg/Wrench",
    "geometry_msgs/msg/Point",
    "geometry_msgs/msg/Quaternion",
    "geometry_msgs/msg/Pose",
    "geometry_msgs/msg/PoseStamped",
    "geometry_msgs/msg/Accel",
    "geometry_msgs/msg/AccelStamped",
    "geometry_msgs/msg/WrenchStamped",
    "rosgraph_msgs/msg/Clock",
    "diagnostic_msgs/msg/DiagnosticArray",
    "diagnostic_msgs/msg/DiagnosticStatus",
    "diagnostic_msgs/msg/KeyValue",
    "rcl_interfaces/msg/Log",
    "rcl_interfaces/msg/ParameterEvent",
    "rcl_interfaces/msg/Parameter",
    "rcl_interfaces/msg/ParameterValue",
    "rcl_interfaces/msg/ParameterDescriptor",
    "rcl_interfaces/msg/FloatingPointRange",
    "rcl_interfaces/msg/IntegerRange",
    "rcl_interfaces/msg/SetParametersResult",
    "rcl_interfaces/msg/ListParametersResult",
    "rmw_dds_common/msg/Gid",
    "rmw_dds_common/msg/NodeEntitiesInfo",
    "rmw_dds_common/msg/ParticipantEntitiesInfo",
    "lifecycle_msgs/msg/State",
    "lifecycle_msgs/msg/Transition",
    "lifecycle_msgs/msg/TransitionDescription",
    "lifecycle_msgs/msg/TransitionEvent",
    "geometry_msgs/msg/Transform",
    "geometry_msgs/msg/TransformStamped",
    "tf2_msgs/msg/TFMessage",
    "control_msgs/msg/JointTrajectoryControllerState",
    "unique_identifier_msgs/msg/UUID",
    "action_msgs/msg/GoalInfo",
    "action_msgs/msg/GoalStatus",
    "action_msgs/msg/GoalStatusArray",
] + [f"{ACTION}_{part}" for part in ("Goal", "Result", "Feedback", "FeedbackMessage")] + [
    f"{srv}_{part}"
    for srv in SRV_DEFINITIONS
    for part in ("Request", "Response")
]
# Types that appear as a topic or service endpoint, hence need a hash for USER_DATA.
ENDPOINT_TYPES = [
    "sensor_msgs/msg/JointState",
    "trajectory_msgs/msg/JointTrajectory",
    "std_msgs/msg/Float64MultiArray",
    "std_msgs/msg/String",
    "geometry_msgs/msg/WrenchStamped",
    "geometry_msgs/msg/PoseStamped",
    "geometry_msgs/msg/AccelStamped",
    "rosgraph_msgs/msg/Clock",
    "diagnostic_msgs/msg/DiagnosticArray",
    "rcl_interfaces/msg/Log",
    "rcl_interfaces/msg/ParameterEvent",
    "rmw_dds_common/msg/ParticipantEntitiesInfo",
    "lifecycle_msgs/msg/TransitionEvent",
] + [
    f"{srv}_{part}"
    for srv in SRV_DEFINITIONS
    for part in ("Request", "Response")
]

INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1),
    "uint8": (0, 2**8 - 1),
    "byte": (0, 255),
    "char": (0, 255),
    "int16": (-(2**15), 2**15 - 1),
    "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint64": (0, 2**64 - 1),
}
DTYPES = {
    "bool": np.bool_,
    "byte": np.uint8,
    "char": np.uint8,
    "int8": np.int8,
    "uint8": np.uint8,
    "int16": np.int16,
    "uint16": np.uint16,
    "int32": np.int32,
    "uint32": np.uint32,
    "int64": np.int64,
    "uint64": np.uint64,
    "float32": np.float32,
    "float64": np.float64,
}
WORDS = ["", "a", "joint_1", "computed_torque.kp", "ümlaut", "/controller", "x" * 13]


def _register(store, text: str, typename: str) -> None:
    # rosbags files a "pkg/srv/T" definition under "pkg/srv/msg/T": register it by its own name
    (definition,) = get_types_from_msg(text, typename).values()
    store.register({typename: definition})


def _register_control_msgs(store) -> None:
    """control_msgs' messages and FollowJointTrajectory's parts, from the shipped text."""
    from robot_control.bus.interfaces.definitions import DEFINITIONS

    for name in CONTROL_MSGS:
        _register(store, (DEFINITIONS / "control_msgs/msg" / f"{name}.msg").read_text(),
                  f"control_msgs/msg/{name}")
    text = (DEFINITIONS / "control_msgs/action/FollowJointTrajectory.action").read_text()
    # bare names inside the .action are control_msgs/msg types (rosbags would look in action/)
    text = re.sub(r"^(JointTolerance|JointComponentTolerance)\[", r"control_msgs/\1[", text,
                  flags=re.MULTILINE)
    for part, section in zip(("Goal", "Result", "Feedback"), text.split("\n---\n"), strict=True):
        _register(store, section, f"{ACTION}_{part}")
    _register(store, f"unique_identifier_msgs/UUID goal_id\n{ACTION}_Feedback feedback",
              f"{ACTION}_FeedbackMessage")


def _wire_store():
    """Jazzy typestore plus the service types as rmw_cyclonedds sends them (header first)."""
    store = get_typestore(Stores.ROS2_JAZZY)
    _register_control_msgs(store)
    for srv, (request, response) in SRV_DEFINITIONS.items():
        for part, text in (("Request", request), ("Response", response)):
            _register(store, REQUEST_HEADER + text, f"{srv}_{part}")
    return store


def _hash_stores():
    """Typestores in which the REP-2011 hash of each interface is as rosidl computes it."""
    store = get_typestore(Stores.ROS2_JAZZY)
    _register_control_msgs(store)
    for srv, (request, response) in SRV_DEFINITIONS.items():
        for part, text in (("Request", request), ("Response", response)):
            _register(store, text, f"{srv}_{part}")
    rmw = get_typestore(Stores.EMPTY)
    for name, text in RMW_DDS_COMMON.items():
        _register(rmw, text, name)
    return store, rmw


WIRE = _wire_store()


# --- populated samples, built from rosbags' field definitions ----------------------------------


def _base_value(base: str, bound: int, rng: random.Random):
    if base == "bool":
        return rng.random() < 0.5
    if base in INT_RANGES:
        return rng.randint(*INT_RANGES[base])
    if base == "float64":
        return rng.uniform(-1e3, 1e3)
    if base == "float32":
        return rng.randint(-4000, 4000) / 4  # exact in binary32
    if base == "string":
        word = rng.choice(WORDS)
        return word[:bound] if bound else word
    raise AssertionError(f"no generator for {base}")


def _plain(typename: str, rng: random.Random) -> dict:
    """A nested dict of random field values for a ROS type."""
    values = {}
    for name, (node, detail) in WIRE.fielddefs[typename][1]:
        if node in (Nodetype.ARRAY, Nodetype.SEQUENCE):
            (inner_node, inner), size = detail
            count = size if node == Nodetype.ARRAY else rng.randint(0, size or 3)
            if inner_node == Nodetype.NAME:
                values[name] = [_plain(inner, rng) for _ in range(count)]
            else:
                values[name] = [_base_value(*inner, rng) for _ in range(count)]
        elif node == Nodetype.NAME:
            values[name] = _plain(detail, rng)
        else:
            values[name] = _base_value(*detail, rng)
    return values


def _cyclone(typename: str, plain: dict):
    kwargs = {}
    for name, (node, detail) in WIRE.fielddefs[typename][1]:
        value = plain[name]
        if node == Nodetype.NAME:
            value = _cyclone(detail, value)
        elif node in (Nodetype.ARRAY, Nodetype.SEQUENCE):
            (inner_node, inner), _ = detail
            if inner_node == Nodetype.NAME:
                value = [_cyclone(inner, item) for item in value]
            elif node == Nodetype.ARRAY and inner[0] in ("uint8", "char", "byte"):
                value = bytes(value)  # Cyclone returns fixed octet arrays as bytes
        kwargs[name] = value
    # a type nested only inside another (Twist in MultiDOFJointTrajectoryPoint) is the generator's
    return (m.MESSAGE_TYPES.get(typename) or idl_type(typename))(**kwargs)


def _rosbags(typename: str, plain: dict):
    kwargs = {}
    for name, (node, detail) in WIRE.fielddefs[typename][1]:
        value = plain[name]
        if node == Nodetype.NAME:
            value = _rosbags(detail, value)
        elif node in (Nodetype.ARRAY, Nodetype.SEQUENCE):
            (inner_node, inner), _ = detail
            if inner_node == Nodetype.NAME:
                value = [_rosbags(inner, item) for item in value]
            elif inner[0] != "string":
                value = np.array(value, dtype=DTYPES[inner[0]])
        elif detail[0] == "byte" and value > 127:
            value -= 256  # rosbags holds a scalar ROS byte (IDL octet) as a signed int8
        kwargs[name] = value
    return WIRE.types[typename](**kwargs)


def test_registry_holds_every_interface_the_bus_uses():
    assert sorted(REQUIRED_TYPES) == sorted(m.MESSAGE_TYPES)
    for service, (request, response) in m.SERVICE_TYPES.items():
        assert m.MESSAGE_TYPES[service + "_Request"] is request
        assert m.MESSAGE_TYPES[service + "_Response"] is response
    assert len(m.SERVICE_TYPES) == len(SRV_DEFINITIONS)


@pytest.mark.parametrize("typename", sorted(m.MESSAGE_TYPES))
def test_fields_and_dds_type_name_match_ros(typename):
    cls = m.MESSAGE_TYPES[typename]
    assert cls.__idl_typename__ == m.dds_type_name(typename)
    assert list(cls.__annotations__) == [name for name, _ in WIRE.fielddefs[typename][1]]


@pytest.mark.parametrize("typename", sorted(m.MESSAGE_TYPES))
def test_cdr_bytes_equal_rosbags_and_round_trip(typename):
    for seed in range(4):
        plain = _plain(typename, random.Random(f"{typename}/{seed}"))
        sample = _cyclone(typename, plain)
        wire = sample.serialize()
        assert wire[:4] == b"\x00\x01\x00\x00"  # CDR little endian, as rmw_cyclonedds writes
        assert wire == bytes(WIRE.serialize_cdr(_rosbags(typename, plain), typename))
        assert type(sample).deserialize(wire) == sample


def test_empty_sequences_read_back_from_rosbags_bytes():
    for typename, cls in m.MESSAGE_TYPES.items():
        plain = _plain(typename, random.Random(typename))
        for name, (node, _) in WIRE.fielddefs[typename][1]:
            if node == Nodetype.SEQUENCE:
                plain[name] = []
        sample = _cyclone(typename, plain)
        assert (
            cls.deserialize(bytes(WIRE.serialize_cdr(_rosbags(typename, plain), typename)))
            == sample
        )


def test_service_samples_begin_with_request_header():
    request = m.MESSAGE_TYPES["rcl_interfaces/srv/GetParameters_Request"](
        guid=0x0102030405060708, seq=-2, names=["kp"]
    )
    wire = request.serialize()
    assert wire[4:12] == (0x0102030405060708).to_bytes(8, "little")
    assert wire[12:20] == (-2).to_bytes(8, "little", signed=True)
    # then string[] names: sequence length 1, string length 3 (with NUL), "kp"
    assert wire[20:] == (1).to_bytes(4, "little") + (3).to_bytes(4, "little") + b"kp\x00"


# --- type hashes -------------------------------------------------------------------------------


def test_every_packaged_hash_is_the_rep2011_hash_of_its_definition():
    store, rmw = _hash_stores()
    with HASH_FILE.open(encoding="utf-8") as stream:
        hashes = yaml.safe_load(stream)
    for typename, value in hashes.items():
        computing = rmw if typename.startswith("rmw_dds_common/") else store
        if typename in computing.fielddefs:  # rosbags holds messages, not services themselves
            assert computing.hash_rihs01(typename) == value, typename
        if typename in m.MESSAGE_TYPES:
            assert m.type_hash(typename) == value


def test_every_endpoint_type_has_a_hash():
    for typename in ENDPOINT_TYPES:
        assert m.type_hash(typename).startswith("RIHS01_")
    with pytest.raises(KeyError):
        m.type_hash("sensor_msgs/msg/Imu")


# --- names -------------------------------------------------------------------------------------


def test_dds_topic_names_follow_rmw():
    assert m.dds_topic_name("/joint_states") == "rt/joint_states"
    assert m.dds_topic_name("/trajectory_generator/goal") == "rt/trajectory_generator/goal"
    assert (
        m.dds_topic_name("/controller/get_parameters", "request")
        == "rq/controller/get_parametersRequest"
    )
    assert (
        m.dds_topic_name("/controller/get_parameters", "reply")
        == "rr/controller/get_parametersReply"
    )
    for bad in ("joint_states", "/a//b", "/a/"):
        with pytest.raises(ValueError):
            m.dds_topic_name(bad)
    with pytest.raises(ValueError):
        m.dds_topic_name("/a", "action")


def test_ros_topic_name_inverts_dds_topic_name():
    for kind in ("topic", "request", "reply"):
        assert m.ros_topic_name(m.dds_topic_name("/plant/set_parameters", kind)) == (
            kind,
            "/plant/set_parameters",
        )
    assert m.ros_topic_name("ros_discovery_info") is None
    assert m.ros_topic_name("DCPSPublication") is None


def test_type_names_round_trip():
    for typename in m.MESSAGE_TYPES:
        assert m.ros_type_name(m.dds_type_name(typename)) == typename
    assert m.dds_type_name("rcl_interfaces/srv/SetParameters_Request") == (
        "rcl_interfaces::srv::dds_::SetParameters_Request_"
    )
    with pytest.raises(ValueError):
        m.ros_type_name("JointState")
    with pytest.raises(ValueError):
        m.dds_type_name("sensor_msgs/JointState")
    with pytest.raises(KeyError):
        m.message_type("sensor_msgs/msg/Imu")


# --- time and constructors ---------------------------------------------------------------------


def test_time_from_seconds_splits_into_sec_and_nanosec():
    assert m.time_from_seconds(1.5) == m.Time(sec=1, nanosec=500_000_000)
    assert m.time_from_seconds(-0.25) == m.Time(sec=-1, nanosec=750_000_000)
    assert m.time_from_seconds(2.9999999999) == m.Time(sec=3, nanosec=0)
    epoch = m.time_from_seconds(1_700_000_000.123456)
    assert epoch.sec == 1_700_000_000 and abs(epoch.nanosec - 123_456_000) < 1000
    assert m.duration_from_seconds(0.001) == m.Duration(sec=0, nanosec=1_000_000)
    for bad in (math.nan, math.inf, 2.0**31):
        with pytest.raises(ValueError):
            m.time_from_seconds(bad)


@given(st.floats(min_value=-1e9, max_value=1e9, allow_nan=False))
def test_seconds_round_trip_to_the_nanosecond(t):
    stamp = m.time_from_seconds(t)
    assert 0 <= stamp.nanosec < 1_000_000_000
    assert abs(m.seconds(stamp) - t) <= 5e-10 + 4 * math.ulp(t)


@given(st.integers(min_value=-(2**31) * 10**9, max_value=2**31 * 10**9 - 1))
def test_nanoseconds_round_trip_exactly(ns):
    assert m.nanoseconds(m.time_from_nanoseconds(ns)) == ns


def test_joint_state_constructor_matches_rosbags_message():
    q, qd, tau = np.array([0.1, -0.2, 0.3]), np.array([1.0, 2.0, 3.0]), np.array([[4.0, 5.0, 6.0]])
    msg = m.joint_state(12.25, ["j1", "j2", "j3"], q, qd, tau)
    Stamped = WIRE.types["sensor_msgs/msg/JointState"]
    expected = Stamped(
        header=WIRE.types["std_msgs/msg/Header"](
            stamp=WIRE.types["builtin_interfaces/msg/Time"](sec=12, nanosec=250_000_000),
            frame_id="",
        ),
        name=["j1", "j2", "j3"],
        position=q,
        velocity=qd,
        effort=tau.ravel(),
    )
    assert msg.serialize() == bytes(WIRE.serialize_cdr(expected, "sensor_msgs/msg/JointState"))
    back = m.joint_state_arrays(m.JointState.deserialize(msg.serialize()))
    for got, want in zip(back, (q, qd, tau.ravel()), strict=True):
        np.testing.assert_array_equal(got, want)
    command = m.joint_state(m.Time(sec=3, nanosec=7), ["j1"], tau=[0.5])
    assert command.header.stamp == m.Time(sec=3, nanosec=7)
    assert command.position == [] and command.velocity == [] and command.effort == [0.5]


def test_joint_reference_wrench_and_clock_constructors():
    ref = m.joint_reference(0.5, ["a", "b"], [1, 2], [3, 4], [5, 6])
    assert ref.joint_names == ["a", "b"] and len(ref.points) == 1
    point = ref.points[0]
    assert (point.positions, point.velocities, point.accelerations) == ([1, 2], [3, 4], [5, 6])
    assert point.time_from_start == m.Duration() and ref.header.stamp == m.Time(0, 500_000_000)
    wrench = m.wrench_stamped(1.0, force=[1, 2, 3], torque=[4, 5, 6], frame_id="tool0")
    assert wrench.wrench.force == m.Vector3(1, 2, 3) and wrench.wrench.torque == m.Vector3(4, 5, 6)
    assert wrench.header.frame_id == "tool0"
    assert m.clock(7.5).clock == m.Time(sec=7, nanosec=500_000_000)
