"""The rclpy-free route's types generated from their definitions (robot_control.bus.dds.msg).

- The wire: CDR of sample messages equals what the hand-written structs they replaced put on
  the wire (test/data/cdr_golden.yaml, recorded from those structs of 6e8ed2e), DDS type names
  included; service samples start with the request header.
- The hashes: RIHS01 computed from the definitions equals the hashes read from ROS 2 Jazzy
  (test/data/ros2_type_hashes.yaml; test_ros2_interfaces.py checks every hash of every shipped
  definition against a ROS 2 installation).
- The generator: defaults and constants of the definitions, actions' protocol types, and clear
  errors for definitions it cannot read.
"""

from pathlib import Path

import pytest
import yaml

from robot_control.bus.dds import msg
from robot_control.bus.interfaces import definitions

DATA = Path(__file__).resolve().parent / "data"
GOLDEN = yaml.safe_load((DATA / "cdr_golden.yaml").read_text(encoding="utf-8"))
HASHES = yaml.safe_load((DATA / "ros2_type_hashes.yaml").read_text(encoding="utf-8"))
NOT_SHIPPED = {"diagnostic_msgs/srv/AddDiagnostics", "diagnostic_msgs/srv/SelfTest"}


def build(name: str, data: dict):
    """An instance of the generated type from plain values (nested types as dicts)."""
    values = dict(data)
    for f in definitions.struct(name).fields:
        if f.type.nested:
            inner = values[f.name]
            values[f.name] = ([build(f.type.base, x) for x in inner] if f.type.array
                              else build(f.type.base, inner))
    return msg.idl_type(name)(**values)


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_generated_types_put_the_same_bytes_on_the_wire_as_the_hand_written_ones(name):
    expected = GOLDEN[name]
    sample = build(name, expected["sample"])
    assert msg.idl_type(name).__idl_typename__ == expected["dds_type"]
    assert sample.serialize().hex() == expected["cdr"]
    assert type(sample).deserialize(bytes.fromhex(expected["cdr"])).serialize() == sample.serialize()


def test_every_registered_type_has_a_recorded_wire_sample():
    from robot_control.bus.dds.messages import MESSAGE_TYPES

    assert set(MESSAGE_TYPES) == set(GOLDEN)


def test_hashes_equal_those_read_from_ros2_jazzy():
    checked = 0
    for name, value in HASHES.items():
        if name in NOT_SHIPPED:
            with pytest.raises(definitions.DefinitionError, match="missing"):
                msg.type_hash(name)
            continue
        assert msg.type_hash(name) == value, name
        checked += 1
    assert checked >= 40


def test_defaults_and_constants_come_from_the_definitions():
    quaternion = msg.idl_type("geometry_msgs/msg/Quaternion")()
    assert (quaternion.x, quaternion.w) == (0.0, 1.0)  # float64 w 1
    status = msg.idl_type("diagnostic_msgs/msg/DiagnosticStatus")
    assert (status.OK, status.ERROR) == (0, 2)
    assert msg.idl_type("rcl_interfaces/srv/ListParameters_Request").DEPTH_RECURSIVE == 0
    assert msg.idl_type("rmw_dds_common/msg/Gid")().data == [0] * 16  # char[16]
    result = msg.idl_type("control_msgs/action/FollowJointTrajectory_Result")
    assert (result.SUCCESSFUL, result.GOAL_TOLERANCE_VIOLATED) == (0, -5)


def test_packages_read_as_namespaces():
    from robot_control.bus.dds.msg import lifecycle_msgs as lc

    assert lc.GetStateRequest is msg.idl_type("lifecycle_msgs/srv/GetState_Request")
    assert lc.GetStateRequest().structure_needs_at_least_one_member == 0  # an empty request
    with pytest.raises(ImportError):
        from robot_control.bus.dds.msg import no_such_msgs  # noqa: F401


def test_an_action_gives_its_parts_and_the_protocol_types_with_rmw_names():
    name = "control_msgs/action/FollowJointTrajectory"
    send_goal = msg.idl_type(name + "_SendGoal_Request")
    assert send_goal.__idl_typename__ == (
        "control_msgs::action::dds_::FollowJointTrajectory_SendGoal_Request_")
    assert list(send_goal.__annotations__) == ["guid", "seq", "goal_id", "goal"]
    assert list(msg.idl_type(name + "_SendGoal_Response").__annotations__) == [
        "guid", "seq", "accepted", "stamp"]
    assert list(msg.idl_type(name + "_GetResult_Request").__annotations__) == [
        "guid", "seq", "goal_id"]
    assert list(msg.idl_type(name + "_GetResult_Response").__annotations__) == [
        "guid", "seq", "status", "result"]
    assert list(msg.idl_type(name + "_FeedbackMessage").__annotations__) == [
        "goal_id", "feedback"]
    goal = msg.idl_type(name + "_Goal")(trajectory=build("trajectory_msgs/msg/JointTrajectory", {
        "header": {"stamp": {"sec": 1, "nanosec": 2}, "frame_id": ""}, "joint_names": ["j1"],
        "points": []}))
    request = send_goal(guid=7, seq=1, goal_id=msg.idl_type("unique_identifier_msgs/msg/UUID")(
        uuid=list(range(16))), goal=goal)
    back = send_goal.deserialize(request.serialize())  # a uint8[16] comes back as bytes
    assert (bytes(back.goal_id.uuid), back.goal.trajectory.joint_names) == (bytes(range(16)), ["j1"])
    assert msg.idl_type("control_msgs/action/FollowJointTrajectory_Goal").__idl_typename__ == (
        "control_msgs::action::dds_::FollowJointTrajectory_Goal_")


def test_composite_types_enter_hashes_only():
    with pytest.raises(definitions.DefinitionError, match="hash"):
        msg.idl_type("lifecycle_msgs/srv/GetState_Event")
    with pytest.raises(definitions.DefinitionError, match="hash"):
        msg.idl_type("control_msgs/action/FollowJointTrajectory")


@pytest.mark.parametrize("text, error", [
    ("float64 x\nfloat64[<=] y\n", "bound missing"),
    ("float64 x\nint32 y 1.5\n", "not an integer"),
    ("float64 x\nBad Name\n", "bad member name"),
    ("float64 x\nfloat64<=3 y\n", "only strings"),
    ("geometry_msgs/Vector3 v 1\n", "nested type takes no default"),
    ("float64 x\n---\nfloat64 y\n", "1 section"),
])
def test_a_definition_that_does_not_parse_is_named_with_its_line(tmp_path, monkeypatch, text, error):
    (tmp_path / "bad_msgs" / "msg").mkdir(parents=True)
    (tmp_path / "bad_msgs" / "msg" / "Bad.msg").write_text(text)
    monkeypatch.setattr(definitions, "DEFINITIONS", tmp_path)
    definitions._file_structs.cache_clear()
    definitions.struct.cache_clear()
    try:
        with pytest.raises(definitions.DefinitionError, match=error):
            definitions.struct("bad_msgs/msg/Bad")
    finally:
        definitions._file_structs.cache_clear()
        definitions.struct.cache_clear()


def test_type_names_are_checked():
    for bad in ("sensor_msgs/JointState", "sensor_msgs/foo/JointState", "a//b"):
        with pytest.raises(definitions.DefinitionError):
            msg.idl_type(bad)
