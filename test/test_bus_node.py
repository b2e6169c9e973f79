"""The bus Node interface on the DDS backend, inside one process: names, remaps, parameter
overrides and validation, timers, time, logging, and an executor that survives bad callbacks,
disposals and undecodable samples."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time

import numpy as np
import pytest
from bus_probe import bus_env, isolated_bus_env
from ros2_env import exit_after_ctrl_c

from robot_control.bus.backend import choose_backend, create_node
from robot_control.bus.dds import context as dds_context
from robot_control.bus.dds.messages import Header, JointTrajectory, JointTrajectoryPoint
from robot_control.bus.dds.node import as_wire_lists, qos_profile
from robot_control.bus.node import Logger, ParameterError, resolve_topic


@pytest.fixture(scope="module", autouse=True)
def isolated_bus():
    with isolated_bus_env("node"):
        yield


@pytest.fixture
def make_node():
    nodes = []

    def make(name: str = "n", *args: str):
        node = create_node(name, ["prog", "--ros-args", *args] if args else ["prog"],
                           backend="dds")
        nodes.append(node)
        return node

    yield make
    for node in nodes:
        node.shutdown()
    assert dds_context._context is None  # the last node closed the participant


def spin_until(node, cond, timeout_s: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not cond() and time.monotonic() < deadline:
        node.spin_once(0.02)
    return cond()


# --- backend-neutral pieces --------------------------------------------------------------------


def test_importing_the_bus_loads_neither_rclpy_nor_cyclonedds():
    code = ("import sys, robot_control.bus; "
            "print('rclpy' in sys.modules, 'cyclonedds' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_backend_choice_follows_argument_then_environment(monkeypatch):
    monkeypatch.setenv("ROBOT_CONTROL_BUS", "rclpy")
    assert choose_backend() == "rclpy"
    assert choose_backend("dds") == "dds"
    monkeypatch.setenv("ROBOT_CONTROL_BUS", "zmq")
    with pytest.raises(ValueError, match="zmq"):
        choose_backend()
    monkeypatch.delenv("ROBOT_CONTROL_BUS")
    assert choose_backend() == ("rclpy" if importlib.util.find_spec("rclpy") else "dds")


@pytest.mark.skipif(importlib.util.find_spec("rclpy") is not None, reason="rclpy is installed")
def test_forcing_rclpy_without_ros2_fails_clearly():
    with pytest.raises(ModuleNotFoundError, match="rclpy"):
        create_node("n", [], backend="rclpy")


def test_topic_names_resolve_with_namespace_private_names_and_remaps():
    remaps = {"joint_states": "/robot/js", "/cmd": "cmd2"}
    assert resolve_topic("joint_states", "/", "plant", remaps) == "/robot/js"
    assert resolve_topic("/joint_states", "/ns", "plant", {}) == "/joint_states"
    assert resolve_topic("joint_states", "/ns", "plant", {}) == "/ns/joint_states"
    assert resolve_topic("~/state", "/ns", "plant", {}) == "/ns/plant/state"
    assert resolve_topic("cmd", "/", "c", remaps) == "/cmd2"


def test_logger_formats_like_rcutils_filters_levels_and_throttles(capsys):
    seen = []
    log = Logger("ns.plant", "warn", sink=lambda *a: seen.append(a))
    assert not log.info("hidden")
    assert log.warn("careful")
    for _ in range(3):
        log.error("often", throttle_duration_sec=10.0)
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2
    assert err[0].startswith("[WARN] [") and err[0].endswith("] [ns.plant]: careful")
    stamp = err[0].split("] [")[1]
    assert abs(float(stamp) - time.time()) < 60 and len(stamp.split(".")[1]) == 9
    level, message, file, function, line = seen[0]
    assert (level, message) == (30, "careful")
    assert function == "test_logger_formats_like_rcutils_filters_levels_and_throttles"
    assert file == __file__ and line > 0
    with pytest.raises(ValueError):
        log.set_level("loud")


def test_qos_specs_map_to_ros_profiles():
    assert qos_profile("default").depth == 10 and qos_profile("default").reliable
    assert not qos_profile("sensor").reliable
    assert qos_profile("transient_local").transient_local
    assert qos_profile(3).depth == 3
    for bad in ("fast", 0, True):
        with pytest.raises(ValueError):
            qos_profile(bad)


def test_numpy_arrays_in_nested_messages_become_lists_for_the_wire():
    msg = JointTrajectory(joint_names=["a", "b"], points=[JointTrajectoryPoint(
        positions=np.array([1.0, 2.0]), velocities=np.zeros(2))])
    as_wire_lists(msg)
    assert msg.points[0].positions == [1.0, 2.0] and msg.points[0].velocities == [0.0, 0.0]
    assert JointTrajectory.deserialize(msg.serialize()) == msg


# --- a DDS node in this process ----------------------------------------------------------------


def test_name_namespace_and_parameter_overrides(make_node, tmp_path):
    params = tmp_path / "p.yaml"
    params.write_text("/**:\n  ros__parameters:\n    gain: 3\n    mode: a\n"
                      "other:\n  ros__parameters:\n    gain: 9.0\n")
    node = make_node("n", "-r", "__node:=renamed", "-r", "__ns:=/robot1", "--params-file",
                     str(params), "-p", "mode:=b", "-r", "out:=/elsewhere")
    assert (node.name, node.namespace, node.fqn) == ("renamed", "/robot1", "/robot1/renamed")
    assert node.declare_parameter("gain", 1.0, "a gain", floating_point_range=(0, 5)) == 3.0
    assert isinstance(node.get_parameter("gain"), float)  # integer 3 coerced to the double type
    assert node.declare_parameter("mode", "a") == "b"  # -p wins over the file
    assert node.declare_parameter("untouched", [1.0, 2.0]) == [1.0, 2.0]
    assert node.get_parameter("use_sim_time") is False
    assert node.create_publisher("std_msgs/msg/String", "out").topic_name == "/elsewhere"
    assert node.create_publisher("std_msgs/msg/String", "state").topic_name == "/robot1/state"


def test_refused_changes_raise_the_reason_and_change_nothing(make_node):
    node = make_node()
    node.declare_parameter("gain", 1.0, floating_point_range=(0.0, 10.0))
    node.declare_parameter("kp", [1.0, 2.0])
    node.declare_parameter("fixed", 3, read_only=True)
    node.add_parameter_validator(
        lambda ch: "kp must be positive" if any(k <= 0 for k in ch.get("kp", [1])) else None)
    changes = []
    node.add_parameter_listener(lambda new, old: changes.append((new, old)))
    for bad, reason in (({"gain": 11.0}, "outside"), ({"kp": [1.0, -1.0]}, "positive"),
                        ({"fixed": 4}, "read-only"), ({"gain": "x"}, "type"),
                        ({"nope": 1}, "not declared"), ({"gain": 2.0, "kp": [0.0, 1.0]}, "kp")):
        with pytest.raises(ParameterError, match=reason):
            node.set_parameters(bad)
    assert (node.get_parameter("gain"), node.get_parameter("kp")) == (1.0, [1.0, 2.0])
    assert changes == []
    node.set_parameters({"gain": 2, "kp": [3.0, 4.0]})
    assert node.get_parameter("gain") == 2.0
    assert changes == [({"gain": 2.0, "kp": [3.0, 4.0]}, {"gain": 1.0, "kp": [1.0, 2.0]})]


def test_timer_keeps_its_period(make_node):
    node = make_node()
    stamps = []
    timer = node.create_timer(0.005, lambda: stamps.append(time.perf_counter()))
    origin = timer.next_call - 0.005  # the timer's grid: origin + k * period, k = 1, 2, ...
    spin_until(node, lambda: len(stamps) >= 60, timeout_s=10.0)
    assert len(stamps) >= 60
    assert np.median(np.diff(stamps)) == pytest.approx(0.005, rel=0.1)
    # never early, and on the grid: a late call does not shift the later ones, and a missed
    # call is skipped rather than made up by two calls in one period
    slots = np.floor((np.array(stamps) - origin) / 0.005)
    assert slots[0] >= 1 and np.all(np.diff(slots) >= 1)
    lateness = np.array(stamps) - origin - slots * 0.005
    assert np.median(lateness) < 1e-3


def test_pub_sub_and_a_raising_callback_does_not_stop_the_node(make_node, capsys):
    node = make_node("talker")
    JointState = node.msg("sensor_msgs/msg/JointState")
    pub = node.create_publisher("sensor_msgs/msg/JointState", "js")
    got = []

    def callback(msg):
        if msg.name == ["bad"]:
            raise ValueError("boom")
        got.append(msg)

    node.create_subscription("sensor_msgs/msg/JointState", "js", callback)
    assert spin_until(node, lambda: pub.get_subscription_count() == 1)
    pub.publish(JointState(name=["bad"]))
    pub.publish(JointState(name=["a", "b"], position=np.array([1.0, 2.0])))
    assert spin_until(node, lambda: len(got) == 1)
    assert got[0].position == [1.0, 2.0]
    assert node.executor_stats.callback_errors == 1
    assert "callback for subscription /js raised: ValueError: boom" in capsys.readouterr().err


def test_disposals_and_undecodable_samples_are_skipped(make_node):
    node = make_node()
    got = []
    node.create_subscription("sensor_msgs/msg/JointState", "/js2", got.append)
    other = make_node("other")
    pub = other.create_publisher("sensor_msgs/msg/JointState", "/js2")
    JointState = node.msg("sensor_msgs/msg/JointState")
    assert spin_until(node, lambda: pub.get_subscription_count() == 1)
    sample = JointState(name=["x"])
    pub.writer.dispose(sample)  # an invalid sample (no data) for the reader
    garbage = JointState(header=Header(frame_id="ab"))
    # valid CDR (Cyclone checks that much before sending) but not UTF-8: undecodable in Python
    wire = garbage.serialize().replace(b"ab\x00", b"\xff\xfe\x00")
    garbage.serialize = lambda **_: wire
    pub.writer.write(garbage)
    pub.publish(JointState(name=["ok"]))
    assert spin_until(node, lambda: got and got[-1].name == ["ok"])
    assert [m.name for m in got] == [["ok"]]
    stats = node.executor_stats
    assert stats.invalid_samples + stats.take_errors >= 1
    with pytest.raises(KeyError, match="foo_msgs"):
        node.create_subscription("foo_msgs/msg/Bar", "/bar", got.append)


def test_sim_time_follows_clock(make_node):
    node = make_node("sim", "-p", "use_sim_time:=true")
    clock = make_node("clock").create_publisher("rosgraph_msgs/msg/Clock", "/clock")
    Clock = node.msg("rosgraph_msgs/msg/Clock")
    Time = node.msg("builtin_interfaces/msg/Time")
    assert node.now() == 0.0
    assert spin_until(node, lambda: clock.get_subscription_count() == 1)
    clock.publish(Clock(clock=Time(sec=12, nanosec=500_000_000)))
    assert spin_until(node, lambda: node.now() == 12.5)
    node.set_parameters({"use_sim_time": False})
    assert abs(node.now() - time.time()) < 1.0


def test_spin_returns_after_shutdown_from_a_callback(make_node):
    node = make_node()
    ticks = []

    def tick():
        ticks.append(1)
        if len(ticks) == 3:
            node.shutdown()

    node.create_timer(0.002, tick)
    node.spin()
    assert len(ticks) == 3 and not node.ok
    node.spin_once(0.0)  # a destroyed node does nothing
    assert len(ticks) == 3


@pytest.mark.parametrize("signals", [1, 2], ids=["sigint", "sigint-twice"])
def test_ctrl_c_ends_a_node_process_cleanly(signals):
    """Ctrl-C under a launcher reaches a node twice (from the terminal and from the launcher)."""
    code, output = exit_after_ctrl_c(
        [sys.executable, "-m", "robot_control.nodes.plant_node", "--ros-args", "-p", "rate:=100.0",
         "-p", "autostart:=true"],
        {**os.environ, **bus_env("node-ctrl-c")}, r"\[plant\]: plant '", signals)
    assert code == 0 and "Traceback" not in output, output
