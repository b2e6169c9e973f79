"""The real ``ros2`` command line of a sourced ROS 2 against the rclpy-free stack (the DDS backend,
run on a Python without ROS 2 as a user without ROS 2 runs it): node/topic/param/service verbs on
the probe node; the four-node stack found under LOCALHOST and SUBNET whichever starts first;
/rosout with transient-local durability; the stack's nodes, lifecycle states and topics, as four
processes and composed into one, with ``ros2 bag record -s mcap`` read back by ``ros2 bag info``.
"""

from __future__ import annotations

import re
import time

import pytest
from bus_probe import start_probe
from ros2_env import (
    MOTION_ECHO,
    STACK_NODES,
    Watched,
    bag_topics,
    dds_python,
    dds_python_missing,
    echoed_knots,
    node_ready_patterns,
    record_bag,
    ros2,
    ros2_missing,
    ros_env,
    start_dds_stack,
    stop_daemon,
    wait_for,
    without_ros,
)

pytestmark = [pytest.mark.ros2, pytest.mark.skipif(
    bool(ros2_missing() or dds_python_missing()),
    reason=str(ros2_missing() or dds_python_missing()))]

FOUND_WITHIN_S = 5.0  # the bar: ROS 2 tools see the four nodes this soon
STACK_UP_S = 180.0  # node start-up compiles kernels on first use: generous on a loaded machine
# /rosout as rqt_console reads it: a late joiner receives every node's history (depth 1000 each),
# node after node, so a reader of ros2 topic echo's default depth 10 would keep only the last few
ROSOUT_RELIABLE = ("--qos-reliability", "reliable", "--qos-durability", "transient_local",
                   "--qos-depth", "1000")
BAG_TOPICS = {"/joint_states": "sensor_msgs/msg/JointState",
              "/joint_command": "sensor_msgs/msg/JointState",
              "/joint_reference": "trajectory_msgs/msg/JointTrajectory",
              "/controller/state": "sensor_msgs/msg/JointState"}


@pytest.fixture(scope="module")
def probe_env():
    env = ros_env("ros2cli-probe")
    probe = start_probe(without_ros(env), "-p", "gain:=2.5", python=dds_python())
    yield env
    probe.terminate()
    probe.wait(10)


def test_ros2_node_list_and_info_show_our_node(probe_env):
    assert "/probe" in ros2(probe_env, "node", "list", "--no-daemon").split()
    info = ros2(probe_env, "node", "info", "/probe", "--no-daemon")
    assert "/pong: sensor_msgs/msg/JointState" in info
    assert "/probe/set_parameters: rcl_interfaces/srv/SetParameters" in info


def test_ros2_topic_info_names_the_node(probe_env):
    assert "Node name: probe" in ros2(probe_env, "topic", "info", "-v", "/pong", "--no-daemon")


def test_ros2_param_get_set_describe_and_a_refusal(probe_env):
    assert "Double value is: 2.5" in ros2(probe_env, "param", "get", "/probe", "gain", "--no-daemon")
    assert "Set parameter successful" in ros2(probe_env, "param", "set", "/probe", "gain", "3.0",
                                              "--no-daemon")
    refused = ros2(probe_env, "param", "set", "/probe", "mode", "c", "--no-daemon")
    assert "Setting parameter failed" in refused and "mode must be 'a' or 'b'" in refused
    assert "String value is: a" in ros2(probe_env, "param", "get", "/probe", "mode", "--no-daemon")
    described = ros2(probe_env, "param", "describe", "/probe", "gain", "--no-daemon")
    assert "Min value: 0.0" in described and "Max value: 10.0" in described


def test_ros2_service_list_and_call(probe_env):
    assert "/probe/get_parameters" in ros2(probe_env, "service", "list", "--no-daemon").split()
    reply = ros2(probe_env, "service", "call", "/probe/get_parameters",
                 "rcl_interfaces/srv/GetParameters", "{names: [mode]}")
    assert "string_value='a'" in reply


def test_rosout_transient_local_reaches_late_and_early_echoes(probe_env):
    """A reliable transient-local echo started after a line was logged still gets it (rosout's
    10 s lifespan permitting); a plain ``--qos-durability transient_local`` echo is best
    effort (ros2 topic echo's default profile is sensor data), which gets no history from any
    ROS 2 node — measured against an rclpy node too — so it gets the lines logged after it."""
    log_ping = ["topic", "pub", "/ping", "sensor_msgs/msg/JointState",
                "{name: [log], position: [7.5]}"]
    ros2(probe_env, *log_ping, "--once", "--keep-alive", "1", timeout=30)
    late = Watched(["ros2", "topic", "echo", "/rosout", "rcl_interfaces/msg/Log",
                    *ROSOUT_RELIABLE], probe_env)
    with late:
        assert late.wait_for_line(r"msg: logged ping 7\.5", 30), late.output
    plain = Watched(["ros2", "topic", "echo", "--once", "/rosout", "--qos-durability",
                     "transient_local"], probe_env)
    with plain, Watched(["ros2", *log_ping, "-r", "2"], probe_env):
        assert plain.wait_for_line(r"msg: logged ping 7\.5", 40), plain.output


def test_ros2_publisher_reaches_our_subscriber(probe_env):
    with Watched(["ros2", "topic", "echo", "--once", "/pong", "sensor_msgs/msg/JointState"],
                 probe_env) as echo, \
            Watched(["ros2", "topic", "pub", "-r", "2", "/ping", "sensor_msgs/msg/JointState",
                     "{name: [from_ros2], position: [1.5]}"], probe_env):
        assert echo.wait_for_line("from_ros2", 40), echo.output
        assert echo.wait_for_line(r"- 1\.5", 5), echo.output


def nodes_seen(env, *daemon_args: str) -> set[str]:
    return set(ros2(env, "node", "list", *daemon_args).split()) & set(STACK_NODES)


def rosout_readers(env) -> int:
    """How many subscriptions /rosout has on env's domain (``ros2 topic info``)."""
    found = re.search(r"Subscription count: (\d+)", ros2(env, "topic", "info", "/rosout",
                                                          "--no-daemon"))
    return int(found.group(1)) if found else 0


def time_until_all_nodes_seen(env, *daemon_args: str, limit_s: float = 40.0) -> float:
    """Seconds until ``ros2 node list`` (one call after another) shows the four nodes."""
    start = time.monotonic()
    while nodes_seen(env, *daemon_args) != set(STACK_NODES):
        if time.monotonic() - start > limit_s:
            break
    return time.monotonic() - start


@pytest.mark.parametrize("discovery_range", ["LOCALHOST", "SUBNET"])
@pytest.mark.parametrize("order", ["stack_first", "cli_first"])
def test_stack_and_ros2_tools_find_each_other(discovery_range, order):
    """stack_first: ros2 commands started once the stack is up and its first announcements are
    over (the order that failed under LOCALHOST); cli_first: the ros2 daemon and a /rosout echo
    are running before the stack starts."""
    env = ros_env(f"ros2cli-{discovery_range}-{order}", discovery_range)
    daemon_args = ("--no-daemon",) if order == "stack_first" else ()
    echo = None
    try:
        if order == "cli_first":
            ros2(env, "daemon", "start")
            echo = Watched(["ros2", "topic", "echo", "/rosout", "rcl_interfaces/msg/Log",
                            *ROSOUT_RELIABLE], env)
            # the echo's subscription exists before the stack
            assert wait_for(lambda: rosout_readers(env) >= 1, 30), ros2(env, "topic", "info",
                                                                       "/rosout")
        with start_dds_stack(env, "rate:=250.0") as stack:
            assert stack.wait_for_lines(node_ready_patterns(), STACK_UP_S) == [], stack.output
            if order == "stack_first":
                time.sleep(2.0)
            seconds = time_until_all_nodes_seen(env, *daemon_args)
            print(f"[{discovery_range} {order}] ros2 node list showed the four nodes after "
                  f"{seconds:.2f} s")
            assert seconds <= FOUND_WITHIN_S, nodes_seen(env, *daemon_args)
            assert "String value is: computed_torque" in ros2(
                env, "param", "get", "/controller", "controller", *daemon_args)
            if echo is not None:  # the early echo hears the stack's start-up lines
                started = echo.wait_for_line(r"msg: .*controller .*computed_torque.* on ", 30)
                assert started, echo.output
            swapped = ros2(env, "param", "set", "/controller", "controller", "passivity",
                           *daemon_args)
            assert "Set parameter successful" in swapped, swapped
            assert "String value is: passivity" in ros2(
                env, "param", "get", "/controller", "controller", *daemon_args)
            if echo is not None:  # the swap's log line reaches an echo that was already there
                # (a late echo gets it from rosout's transient-local history only within its 10 s
                # lifespan: test_rosout_transient_local_reaches_late_and_early_echoes covers that)
                assert echo.wait_for_line(r"msg: .*controller swapped: computed_torque . passivity",
                                          30), echo.output
    finally:
        if echo is not None:
            echo.stop()
        stop_daemon(env)


@pytest.mark.parametrize("layout", ["processes", "composed"])
def test_ros2_sees_the_stack_and_records_it_in_mcap(layout, tmp_path):
    """``ros2 node list`` and ``ros2 lifecycle get`` show the nodes, ``ros2 topic echo`` and
    ``ros2 bag record -s mcap`` get the topics — of the four node processes, and of the stack
    composed into one process (messages by reference inside it: the container writes them to DDS
    because these readers, in other processes, match)."""
    env = ros_env(f"ros2cli-bag-{layout}")
    layout_args = ("composed:=true",) if layout == "composed" else ()
    try:
        with start_dds_stack(env, *layout_args, "rate:=250.0") as stack:
            assert stack.wait_for_line(r"stack active", STACK_UP_S), stack.output[-3000:]
            nodes = set(ros2(env, "node", "list", "--no-daemon").split())
            assert {*STACK_NODES, "/lifecycle_manager"} <= nodes, nodes
            states = ros2(env, "lifecycle", "get", "--no-daemon", timeout=60)
            assert all(f"{node}: active [3]" in states for node in STACK_NODES), states
            echo = ros2(env, "topic", "echo", "/joint_states", "--once", "--no-daemon",
                        timeout=60)
            assert "name:" in echo and "- joint1" in echo, echo
            info = record_bag(env, tmp_path / "stack_bag", BAG_TOPICS)
            assert stack.proc.poll() is None, stack.output[-3000:]
    finally:
        stop_daemon(env)
    assert re.search(r"Storage id:\s+mcap", info), info
    recorded = bag_topics(info)
    assert {t: recorded.get(t, ("?", 0))[0] for t in BAG_TOPICS} == BAG_TOPICS, info
    assert min(recorded[t][1] for t in BAG_TOPICS) > 100, info  # 3 s at 250 Hz: hundreds each


def test_a_late_ros2_topic_echo_gets_the_motion_as_quintic_knots():
    """The trajectory generator sends the DDArm's sweep once as knots (start, the waypoint, back
    at 1.5 s a segment), reliable and transient local: ``ros2 topic echo`` started after that
    still receives it, decoded with the type hash ROS 2 knows."""
    env = ros_env("ros2cli-knots")
    with start_dds_stack(env, "rate:=250.0") as stack:
        assert stack.wait_for_line("reference starts from the measured position", STACK_UP_S), \
            stack.output
        out = ros2(env, *MOTION_ECHO, "--no-daemon", timeout=60)
    names, times = echoed_knots(out)
    assert names == ["joint1", "joint2", "joint3"], out
    assert times == [0.0, 1.5, 3.0], out
    assert "positions:" in out and "accelerations:" in out, out
    assert "type hash" not in out, out  # no "Failed to parse type hash" warning
