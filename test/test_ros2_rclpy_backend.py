"""The rclpy backend of the bus on the real rclpy of a sourced ROS 2: every call of the Node
interface — identity, remaps and overrides, parameters with ranges, read-only and validator
refusals (called in-process and through ROS 2's parameter services from another node), QoS
profiles, timers, time, logging to /rosout, a callback that raises, and shutdown (from a
callback, another thread, SIGINT)."""

from __future__ import annotations

import os
import sys
import threading
import time
from contextlib import contextmanager

import pytest
from ros2_env import exit_after_ctrl_c, private_rclpy_domain, ros2_missing, wait_for

if ros2_missing():
    pytest.skip(ros2_missing(), allow_module_level=True)

from launch_helpers import Observer  # noqa: E402
from rcl_interfaces.msg import ParameterType  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.parameter_client import AsyncParameterClient  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402

from robot_control.bus.backend import create_node
from robot_control.bus.node import ParameterError  # noqa: E402
from robot_control.bus.parameters import STRING_ARRAY  # noqa: E402

pytestmark = pytest.mark.ros2
CALL_TIMEOUT_S = 15.0


private_domain = private_rclpy_domain("rclpy-backend")


@pytest.fixture
def make_node():
    nodes = []

    def make(name: str = "n", *ros_args: str):
        argv = ["prog", "--ros-args", *ros_args] if ros_args else ["prog"]
        node = create_node(name, argv, backend="rclpy")
        nodes.append(node)
        return node

    yield make
    for node in nodes:
        node.shutdown()


@pytest.fixture
def peer():
    """Another rclpy node in its own context, spun by a thread: the outside world."""
    other = Observer(int(os.environ["ROS_DOMAIN_ID"]), "peer")
    yield other.node
    other.close()


@contextmanager
def spinning(node):
    """node.spin() in a thread (as a node's main loop), shut down on exit."""
    thread = threading.Thread(target=node.spin, daemon=True)
    thread.start()
    try:
        yield
    finally:
        node.shutdown()
        thread.join(10)
        assert not thread.is_alive(), "spin() did not return after shutdown()"


def spin_until(node, cond, timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not cond() and time.monotonic() < deadline:
        node.spin_once(0.02)
    return bool(cond())


def result(future, timeout_s: float = CALL_TIMEOUT_S):
    assert wait_for(future.done, timeout_s), "no reply within the deadline"
    return future.result()


def param_client(peer, target: str) -> AsyncParameterClient:
    client = AsyncParameterClient(peer, target)
    assert client.wait_for_services(timeout_sec=CALL_TIMEOUT_S), f"{target}'s services not found"
    return client


def test_identity_remaps_overrides_and_messages(make_node, tmp_path):
    params = tmp_path / "p.yaml"
    params.write_text("/robot1/renamed:\n  ros__parameters:\n    kp: [50, 60]\n")
    node = make_node("n", "-r", "__node:=renamed", "-r", "__ns:=/robot1", "-p", "gain:=3",
                     "-r", "chatter:=remapped", "--params-file", str(params))
    assert (node.backend, node.name, node.namespace, node.fqn) == (
        "rclpy", "renamed", "/robot1", "/robot1/renamed")
    asked = []
    node.add_parameter_validator(lambda ch: asked.append(ch) or "never at declaration")
    # an integer override of a double parameter is coerced, as the DDS backend does
    assert node.declare_parameter("gain", 1.0, floating_point_range=(0, 5)) == 3.0
    assert node.declare_parameter("kp", [1.0, 1.0]) == [50.0, 60.0]
    assert node.declare_parameter("empty", []) == []
    pub = node.create_publisher("std_msgs/msg/String", "chatter")
    assert pub.topic_name == "/robot1/remapped"
    from sensor_msgs.msg import JointState

    assert node.msg("sensor_msgs/msg/JointState") is JointState
    assert node.get_parameters() == {"use_sim_time": False, "gain": 3.0, "kp": [50.0, 60.0],
                                     "empty": []}
    assert asked == []  # declaring (with overrides) is not a change the validators decide


def test_in_process_sets_are_checked_validated_and_heard(make_node):
    node = make_node()
    node.declare_parameter("gain", 1.0, "a gain", floating_point_range=(0.0, 10.0))
    node.declare_parameter("mode", "a")
    node.declare_parameter("count", 3, read_only=True, integer_range=(0, 5))
    node.declare_parameter("law.kp", [1.0, 2.0])
    node.add_parameter_validator(lambda ch: "mode must be a or b"
                                 if ch.get("mode", "a") not in ("a", "b") else None)
    heard = []
    node.add_parameter_listener(lambda new, old: heard.append((new, old)))
    for changes, reason in (({"mode": "c"}, "mode must be a or b"),
                            ({"gain": 11.0}, "11.0"), ({"count": 4}, "read-only"),
                            ({"nope": 1}, "not declared"), ({"gain": "x"}, "cannot set"),
                            ({"gain": 2.0, "mode": "z"}, "a or b")):
        with pytest.raises(ParameterError, match=reason):
            node.set_parameters(changes)
    assert (node.get_parameter("gain"), node.get_parameter("mode"), heard) == (1.0, "a", [])
    node.set_parameters({"gain": 4, "mode": "b"})  # an integer for a double is coerced
    assert heard == [({"gain": 4.0, "mode": "b"}, {"gain": 1.0, "mode": "a"})]
    assert node.get_parameters("law") == {"kp": [1.0, 2.0]}
    d = node.describe_parameter("count")
    assert d.read_only and d.integer_range == (0, 5, 0)


def test_ros2_parameter_services_pass_the_store_and_return_reasons(make_node, peer):
    node = make_node("target", "-p", "gain:=2")
    node.declare_parameter("gain", 1.0, "a gain", floating_point_range=(0.0, 10.0))
    node.declare_parameter("mode", "a", additional_constraints="a | b")
    node.declare_parameter("count", 3, read_only=True)
    node.declare_parameter("empty", [])
    node.declare_parameter("fixed_empty", [], read_only=True, ptype=STRING_ARRAY)
    node.add_parameter_validator(lambda ch: f"mode must be 'a' or 'b', not '{ch['mode']}'"
                                 if ch.get("mode", "a") not in ("a", "b") else None)
    heard = []
    node.add_parameter_listener(lambda new, old: heard.append(new))
    with spinning(node):
        client = param_client(peer, "/target")
        values = result(client.get_parameters(["gain", "mode", "empty"])).values
        assert (values[0].double_value, values[1].string_value) == (2.0, "a")
        assert values[2].type == ParameterType.PARAMETER_DOUBLE_ARRAY
        refused = result(client.set_parameters([Parameter("mode", value="c"),
                                                Parameter("gain", value=11.0),
                                                Parameter("count", value=4)])).results
        assert [r.successful for r in refused] == [False, False, False]
        assert refused[0].reason == "mode must be 'a' or 'b', not 'c'"
        assert "11.0" in refused[1].reason and "read-only" in refused[2].reason.lower()
        assert result(client.set_parameters([Parameter("gain", value=5.5)])).results[0].successful
        assert wait_for(lambda: heard == [{"gain": 5.5}], 5.0), heard
        atomic = result(client.set_parameters_atomically([Parameter("gain", value=1.0),
                                                          Parameter("mode", value="z")])).result
        assert not atomic.successful and "'z'" in atomic.reason
        assert (node.get_parameter("gain"), node.get_parameter("mode")) == (5.5, "a")
        described = result(client.describe_parameters(["gain", "mode"])).descriptors
        assert described[0].floating_point_range[0].to_value == 10.0
        assert described[1].additional_constraints == "a | b"
        names = result(client.list_parameters([], 0)).result.names
        assert {"gain", "mode", "count", "empty", "fixed_empty", "use_sim_time"} <= set(names)
        # rqt_reconfigure asks for every listed name at once: one unset name empties the answer
        values = result(client.get_parameters(names)).values
        assert len(values) == len(names), names
        fixed = values[names.index("fixed_empty")]
        assert (fixed.type, list(fixed.string_array_value)) == (
            ParameterType.PARAMETER_STRING_ARRAY, [])
        assert not result(client.set_parameters([Parameter(
            "fixed_empty", Parameter.Type.STRING_ARRAY, ["x"])])).results[0].successful


def test_qos_profiles_and_a_latched_late_joiner(make_node, peer):
    node = make_node("qos")
    default = node.create_publisher("std_msgs/msg/String", "/plain")
    sensor = node.create_publisher("std_msgs/msg/String", "/fast", qos="sensor")
    deep = node.create_publisher("std_msgs/msg/String", "/deep", qos=50)
    latched = node.create_publisher("std_msgs/msg/String", "/latched", qos="transient_local")
    assert (default.qos_profile.reliability, default.qos_profile.depth) == (
        ReliabilityPolicy.RELIABLE, 10)
    assert sensor.qos_profile.reliability == ReliabilityPolicy.BEST_EFFORT
    assert deep.qos_profile.depth == 50
    assert latched.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL
    with pytest.raises(ValueError, match="unknown qos"):
        node.create_publisher("std_msgs/msg/String", "/x", qos="fastest")
    String = node.msg("std_msgs/msg/String")
    latched.publish(String(data="sent before anyone listened"))
    got = []
    qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
    peer.create_subscription(String, "/latched", lambda m: got.append(m.data), qos)
    assert spin_until(node, lambda: got == ["sent before anyone listened"])
    assert latched.get_subscription_count() == 1


def test_pub_sub_and_a_raising_callback_does_not_stop_spinning(make_node, capfd):
    node = make_node("pubsub")
    JointState = node.msg("sensor_msgs/msg/JointState")
    pub = node.create_publisher("sensor_msgs/msg/JointState", "/ping")
    got = []

    def on_ping(msg) -> None:
        if list(msg.name) == ["raise"]:
            raise RuntimeError("asked to raise")
        got.append(list(msg.position))

    node.create_subscription("sensor_msgs/msg/JointState", "/ping", on_ping)
    assert spin_until(node, lambda: pub.get_subscription_count() == 1)
    pub.publish(JointState(name=["raise"]))
    pub.publish(JointState(name=["a"], position=[1.5]))
    assert spin_until(node, lambda: got == [[1.5]])
    assert "asked to raise" in capfd.readouterr().err
    assert node.ok


def test_endpoints_add_no_qos_event_handlers_to_the_wait_set(make_node):
    # each would be a waitable the executor walks at every spin (bus/ros/node.py)
    from rclpy.event_handler import EventHandler

    node = make_node("events")

    def handlers() -> int:  # rclpy's own endpoints (/parameter_events) keep theirs
        return sum(isinstance(w, EventHandler) for w in node._node.waitables)

    before = handlers()
    node.create_publisher("sensor_msgs/msg/JointState", "/a")
    node.create_subscription("sensor_msgs/msg/JointState", "/a", lambda msg: None)
    node.create_sender_subscription("sensor_msgs/msg/JointState", "/b", lambda msg, gid: None)
    assert handlers() == before


def test_timer_period_and_cancel(make_node):
    node = make_node("timer")
    ticks = []
    timer = node.create_timer(0.02, lambda: ticks.append(time.monotonic()))
    assert spin_until(node, lambda: len(ticks) >= 10, timeout_s=10.0)
    timer.cancel()
    n = len(ticks)
    spin_until(node, lambda: False, timeout_s=0.2)
    assert len(ticks) == n
    gaps = [b - a for a, b in zip(ticks, ticks[1:])]
    assert sorted(gaps)[len(gaps) // 2] == pytest.approx(0.02, abs=0.01)  # the median period


def test_now_is_wall_time_or_clock_time_with_use_sim_time(make_node, peer):
    wall = make_node("wall")
    assert abs(wall.now() - time.time()) < 1.0
    wall.shutdown()
    node = make_node("sim", "-p", "use_sim_time:=true")
    assert node.get_parameter("use_sim_time") is True
    from rosgraph_msgs.msg import Clock

    clock = peer.create_publisher(Clock, "/clock", 10)
    msg = Clock()
    msg.clock.sec, msg.clock.nanosec = 12, 500_000_000

    def tick() -> bool:
        clock.publish(msg)
        return node.now() == 12.5

    assert spin_until(node, tick)


def test_logger_lines_reach_rosout(make_node, peer):
    from rcl_interfaces.msg import Log

    node = make_node("talker")
    lines = []
    peer.create_subscription(Log, "/rosout", lambda m: lines.append((m.name, m.msg)), 100)

    def logged() -> bool:
        node.get_logger().info("hello from the rclpy backend")
        return ("talker", "hello from the rclpy backend") in lines

    assert spin_until(node, logged)


def test_shutdown_from_a_callback_or_another_thread_ends_spin(make_node):
    node = make_node("stopper")
    node.create_timer(0.05, node.shutdown)
    thread = threading.Thread(target=node.spin)
    thread.start()
    thread.join(10)
    assert not thread.is_alive() and not node.ok
    again = make_node("again")  # rclpy comes back for the next node of the process
    with spinning(again):
        assert again.ok
    assert not again.ok


@pytest.mark.parametrize("signals", [1, 2], ids=["sigint", "sigint-twice"])
def test_ctrl_c_ends_a_node_process_cleanly(signals):
    """Ctrl-C under ros2 launch reaches a node twice (from the terminal and from launch)."""
    code, output = exit_after_ctrl_c(
        [sys.executable, "-m", "robot_control.nodes.plant_node", "--ros-args", "-p", "rate:=100.0",
         "-p", "autostart:=true"],
        {**os.environ, "ROBOT_CONTROL_BUS": "rclpy"}, r"\[plant\]: plant '", signals)
    assert code == 0 and "Traceback" not in output, output


RCLPY_BUFFERS = r"""
import os, re, subprocess, sys
from robot_control.bus.backend import create_node
node = create_node("buffers", ["prog"], backend="rclpy")
out = subprocess.run(["ss", "-uamp"], capture_output=True, text=True, timeout=20).stdout
print(" ".join(re.findall(r"pid=%d,[^\n]*\n\s*skmem:\([^)]*rb(\d+)" % os.getpid(), out)))
print(os.environ["CYCLONEDDS_URI"])
node.shutdown()
"""


def test_an_rclpy_node_asks_cyclone_for_the_larger_receive_buffer_and_keeps_the_users_config():
    """rmw_cyclonedds reads CYCLONEDDS_URI: an rclpy node of the package puts its receive-buffer
    request first (bus/transport.py) and the user's own part after it, which Cyclone applies
    last; its sockets get 4 MB where the kernel allows it (Linux reports twice the size)."""
    import shutil
    import subprocess

    if shutil.which("ss") is None:
        pytest.skip("needs ss (iproute2) to read socket buffers")
    mine = ("<CycloneDDS><Domain><General><AllowMulticast>false</AllowMulticast></General>"
            "</Domain></CycloneDDS>")
    run = subprocess.run([sys.executable, "-c", RCLPY_BUFFERS], capture_output=True, text=True,
                         timeout=120, env={**os.environ, "RMW_IMPLEMENTATION": "rmw_cyclonedds_cpp",
                                           "CYCLONEDDS_URI": mine})
    assert run.returncode == 0, run.stderr
    sizes, uri = run.stdout.splitlines()[:2]
    allowed = int(open("/proc/sys/net/core/rmem_max").read())
    assert sizes and min(int(b) for b in sizes.split()) >= 2 * min(4 * 2**20, allowed)
    assert uri.endswith("," + mine) and 'SocketReceiveBufferSize max="4MB"' in uri
