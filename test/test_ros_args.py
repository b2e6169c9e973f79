"""--ros-args parsing and the ros__parameters store shared by both bus backends."""

import pytest

from robot_control.bus.parameters import (
    DOUBLE_ARRAY,
    ParameterError,
    ParameterStore,
    load_params_file,
)
from robot_control.bus.ros_args import RosArgsError, parse_ros_args, resolve_name


def test_parses_params_remaps_name_and_namespace():
    a = parse_ros_args(["prog", "--ros-args", "-p", "rate:=500", "-p", "kp:=[1, 2.5]",
                        "-r", "__node:=ctl", "-r", "__ns:=robot1", "-r", "/joint_states:=/js",
                        "--params-file", "x.yaml", "--log-level", "debug", "--", "extra"])
    assert a.params == {"rate": 500, "kp": [1, 2.5]}
    assert (a.node_name, a.namespace) == ("ctl", "/robot1")
    assert a.remaps == {"/joint_states": "/js"}
    assert a.params_files == ["x.yaml"] and a.log_level == "debug"
    assert a.unparsed == ["prog", "extra"]


def test_node_prefixed_rules_apply_only_to_that_node():
    argv = ["--ros-args", "-p", "plant:rate:=100", "-p", "controller:rate:=200"]
    assert parse_ros_args(argv, node_name="plant").params == {"rate": 100}


@pytest.mark.parametrize("argv", [["--ros-args", "-p"], ["--ros-args", "-p", "novalue"],
                                  ["--ros-args", "--bogus", "x"]])
def test_malformed_ros_args_are_refused(argv):
    with pytest.raises(RosArgsError):
        parse_ros_args(argv)


def test_resolve_name():
    assert resolve_name("joint_states", "/", "plant") == "/joint_states"
    assert resolve_name("~/goal", "/arm", "trajectory_generator") == "/arm/trajectory_generator/goal"
    assert resolve_name("/abs", "/arm", "n") == "/abs"


def test_store_validates_types_ranges_and_is_atomic():
    store = ParameterStore("controller")
    store.declare("rate", 1000.0, floating_point_range=(1.0, 10000.0, 0.0))
    store.declare("kp", [1.0, 2.0])
    store.declare("name", "pd", read_only=True)
    assert store.descriptors["kp"].type == DOUBLE_ARRAY
    store.set({"rate": 500})  # integer accepted for a double, as ROS 2 does
    assert store.get("rate") == 500.0
    with pytest.raises(ParameterError, match="outside"):
        store.set({"rate": 0.5})
    with pytest.raises(ParameterError, match="read-only"):
        store.set({"name": "x"})
    with pytest.raises(ParameterError, match="type"):
        store.set({"kp": "fast"})
    store.validators.append(lambda new: "kp must be positive" if any(
        v < 0 for v in new.get("kp", [])) else None)
    with pytest.raises(ParameterError, match="positive"):
        store.set({"rate": 200.0, "kp": [-1.0, 1.0]})
    assert store.get("rate") == 500.0 and store.get("kp") == [1.0, 2.0]  # nothing changed


def test_an_empty_list_fits_any_array_parameter():
    store = ParameterStore("lifecycle_manager")
    store.overrides = {"names": []}  # -p names:=[]
    assert store.declare("names", ["a", "b"]) == []
    store.set({"names": ["c"]})
    store.set({"names": []})
    assert store.get("names") == []
    with pytest.raises(ParameterError, match="type"):
        store.set({"names": [1.0]})


def test_params_file_matches_node_and_wildcard(tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text("/**:\n  ros__parameters:\n    rate: 250\n"
                 "controller:\n  ros__parameters:\n    computed_torque:\n      kp: [1.0, 2.0]\n"
                 "plant:\n  ros__parameters:\n    rate: 999\n")
    assert load_params_file(str(f), "/controller") == {"rate": 250, "computed_torque.kp": [1.0, 2.0]}
    assert load_params_file(str(f), "/plant") == {"rate": 999}
