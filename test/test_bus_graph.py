"""The DDS backend as a ROS 2 graph citizen, seen from another process: topics between processes,
ros_discovery_info (node list/info, endpoints coming and going), the standard parameter
services with validation, /parameter_events, /rosout, and a node that survives bad input."""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import pytest
from bus_probe import bus_env, round_trips, start_probe
from cyclonedds.domain import DomainParticipant
from cyclonedds.idl import make_idl_struct, types
from cyclonedds.internal import InvalidSample
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic

from robot_control.bus.backend import create_node
from robot_control.bus.dds import config as dds_config
from robot_control.bus.dds import context as dds_context
from robot_control.bus.dds.client import (
    BusClient,
    BusClientError,
    format_descriptor,
    format_message,
    format_node_info,
)
from robot_control.bus.dds.messages import SERVICE_TYPES, Header, ros_type_name, type_hash
from robot_control.bus.dds.msg import rcl_interfaces as rcl
from robot_control.bus.dds.services import service_topics, user_data_value


@pytest.fixture(scope="module")
def bus():
    """(probe process, a node and a client in this process) on a private domain."""
    assert dds_context._context is None, "a DDS context from another test is still open"
    env = bus_env("graph")
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    probe = start_probe({**os.environ, **env}, "-p", "gain:=2.5")
    node = create_node("tester", ["prog"], backend="dds")
    client = BusClient()
    events, logs = [], []
    node.create_subscription("rcl_interfaces/msg/ParameterEvent", "/parameter_events",
                             events.append, qos=1000)
    node.create_subscription("rcl_interfaces/msg/Log", "/rosout", logs.append,
                             qos=dds_config.ROSOUT)
    yield probe, node, client, events, logs
    client.close()
    node.shutdown()
    if probe.poll() is None:
        probe.kill()
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def spin_until(node, cond, timeout_s: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not cond() and time.monotonic() < deadline:
        node.spin_once(0.02)
    return bool(cond())


def test_joint_states_make_a_round_trip_between_processes(bus):
    probe, node, *_ = bus
    rtt = round_trips(node, 200)
    assert len(rtt) == 200  # every ping answered, in order, by the other process
    print(f"\nJointState round trip over DDS: median {np.median(rtt) * 1e6:.0f} us, "
          f"p99 {np.percentile(rtt, 99) * 1e6:.0f} us")
    assert probe.poll() is None


def test_node_list_and_info_see_the_other_process(bus):
    _, _, client, *_ = bus
    assert {"/probe", "/tester"} <= set(client.node_list())
    info = client.node_info("/probe")
    assert info["subscribers"]["/ping"] == ["sensor_msgs/msg/JointState"]
    assert info["publishers"]["/pong"] == ["sensor_msgs/msg/JointState"]
    assert info["publishers"]["/rosout"] == ["rcl_interfaces/msg/Log"]
    assert info["publishers"]["/parameter_events"] == ["rcl_interfaces/msg/ParameterEvent"]
    assert info["service_servers"]["/probe/set_parameters"] == ["rcl_interfaces/srv/SetParameters"]
    assert len(info["service_servers"]) == 6 and info["service_clients"] == {}
    assert "  Publishers:\n" in format_node_info(info)
    with pytest.raises(BusClientError, match="/nobody"):
        client.node_info("/nobody")


def test_every_endpoint_of_the_node_advertises_its_type_hash(bus):
    _, _, client, *_ = bus
    assert "/probe" in client.node_list()
    node = client.graph.find_node("/probe")
    endpoints = [client.graph.endpoints[g] for g in node.readers + node.writers]
    assert len(endpoints) == len(node.readers + node.writers) >= 16
    for e in endpoints:
        ros_type = ros_type_name(e.dds_type)  # the request/response type for services
        assert user_data_value(e.qos, "typehash") == type_hash(ros_type), e.dds_topic
        if e.ros_kind in ("request", "reply"):
            assert user_data_value(e.qos, "serviceid")  # pairs a server's reader and writer


def test_topics_and_services_are_listed_with_ros_names_and_types(bus):
    _, _, client, *_ = bus
    topics = client.topic_list()
    assert topics["/pong"] == ["sensor_msgs/msg/JointState"]
    assert topics["/rosout"] == ["rcl_interfaces/msg/Log"]
    assert not any(name.startswith(("rt/", "rq/", "/ros_discovery")) for name in topics)
    services = client.service_list()
    for name in ("get_parameters", "set_parameters", "set_parameters_atomically",
                 "list_parameters", "describe_parameters", "get_parameter_types"):
        assert f"/probe/{name}" in services


def test_parameters_through_the_standard_services(bus):
    _, node, client, events, _ = bus
    assert client.param_list("/probe") == ["count", "extra_sub", "gain", "mode", "use_sim_time"]
    assert client.param_get("/probe", "gain") == 2.5  # the -p override
    assert client.param_set("/probe", "gain", "4") == (True, "")
    assert client.param_get("/probe", "gain") == 4.0
    d = client.param_describe("/probe", "gain")
    assert (d.type, d.description, d.floating_point_range) == (3, "a gain", (0.0, 10.0, 0.0))
    assert "Min value: 0.0" in format_descriptor(d)
    assert client.param_describe("/probe", "count").read_only
    assert spin_until(node, lambda: any(
        e.node == "/probe" and [p.name for p in e.changed_parameters] == ["gain"]
        and e.changed_parameters[0].value.double_value == 4.0 for e in events))
    node.declare_parameter("late", 1, "declared while the test subscribes")  # as rclpy: "new"
    assert spin_until(node, lambda: any(
        e.node == "/tester" and [p.name for p in e.new_parameters] == ["late"]
        and e.new_parameters[0].value.integer_value == 1 for e in events))


def test_refused_sets_report_the_reason_and_change_nothing(bus):
    _, _, client, *_ = bus
    ok, reason = client.param_set("/probe", "mode", "c")
    assert not ok and reason == "mode must be 'a' or 'b', not 'c'"
    ok, reason = client.param_set("/probe", "gain", 11.0)
    assert not ok and "outside" in reason
    ok, reason = client.param_set("/probe", "count", 4)
    assert not ok and "read-only" in reason
    assert (client.param_get("/probe", "mode"), client.param_get("/probe", "count")) == ("a", 3)
    request = ("{parameters: [{name: gain, value: {type: 3, double_value: 1.0}},"
               " {name: mode, value: {type: 4, string_value: z}}]}")
    response = client.service_call("/probe/set_parameters_atomically",
                                   "rcl_interfaces/srv/SetParametersAtomically", request)
    assert not response.result.successful and "'z'" in response.result.reason
    assert client.param_get("/probe", "gain") != 1.0  # atomically: gain untouched too
    with pytest.raises(BusClientError, match="not declared"):
        client.param_get("/probe", "nope")


def test_parameter_services_answer_a_client_without_user_data(bus):
    """Bridges and other vendors' tools write no ``clientid=…;``: they must get replies too."""
    _, _, client, *_ = bus
    participant = DomainParticipant(int(os.environ["ROS_DOMAIN_ID"]))
    bare = dds_config.endpoint_qos(dds_config.SERVICES_DEFAULT)  # no ros type: no USER_DATA
    assert user_data_value(bare, "clientid") is None

    def call(service: str, srv_type: str, **fields):
        request_cls, response_cls = SERVICE_TYPES[srv_type]
        rq, rr = service_topics(service)
        reader = DataReader(participant, Topic(participant, rr, response_cls), bare)
        writer = DataWriter(participant, Topic(participant, rq, request_cls), bare)
        deadline = time.monotonic() + 10
        while not (reader.get_matched_publications() and writer.get_matched_subscriptions()):
            assert time.monotonic() < deadline, f"{service} not matched"
            time.sleep(0.02)
        writer.write(request_cls(guid=77, seq=5, **fields))
        while time.monotonic() < deadline:
            for reply in reader.take(N=8):
                if not isinstance(reply, InvalidSample) and (reply.guid, reply.seq) == (77, 5):
                    return reply
            time.sleep(0.02)
        raise AssertionError(f"no reply from {service}")

    try:
        names = call("/probe/list_parameters", "rcl_interfaces/srv/ListParameters").result.names
        assert "gain" in names and "mode" in names
        got = call("/probe/get_parameters", "rcl_interfaces/srv/GetParameters", names=["count"])
        assert got.values[0].integer_value == 3
        refused = call("/probe/set_parameters", "rcl_interfaces/srv/SetParameters", parameters=[
            rcl.Parameter(name="mode", value=rcl.ParameterValue(type=4, string_value="q"))])
        assert refused.results[0].reason == "mode must be 'a' or 'b', not 'q'"
    finally:
        dds_context.delete_entity(participant)


def test_discovery_info_follows_endpoints_that_come_and_go(bus):
    _, _, client, *_ = bus

    def subscribers():
        client.graph.settle(min_s=0.0, quiet_s=0.2, max_s=1.0)
        return client.node_info("/probe")["subscribers"]

    assert client.param_set("/probe", "extra_sub", True) == (True, "")
    assert "/extra" in subscribers()
    assert client.param_set("/probe", "extra_sub", False) == (True, "")
    assert "/extra" not in subscribers()


def test_rosout_carries_the_nodes_log_lines(bus):
    _, node, client, _, logs = bus
    assert spin_until(node, lambda: any(m.name == "probe" and m.msg == "probe ready"
                                        for m in logs))  # transient local: sent before we came
    ready = next(m for m in logs if m.msg == "probe ready")
    assert ready.level == 20 and ready.function == "run_probe" and ready.file.endswith("probe.py")
    JointState = node.msg("sensor_msgs/msg/JointState")
    ping = node.create_publisher("sensor_msgs/msg/JointState", "/ping")
    assert spin_until(node, lambda: ping.get_subscription_count() == 1)
    ping.publish(JointState(name=["log"], position=[7.5]))
    assert spin_until(node, lambda: any(m.msg == "logged ping 7.5" for m in logs))


def test_a_raising_callback_and_undecodable_data_do_not_stop_the_node(bus):
    probe, node, _, _, logs = bus
    JointState = node.msg("sensor_msgs/msg/JointState")
    ping = node.create_publisher("sensor_msgs/msg/JointState", "/ping")
    pongs = []
    node.create_subscription("sensor_msgs/msg/JointState", "/pong", pongs.append)
    assert spin_until(node, lambda: ping.get_subscription_count() == 1)
    ping.publish(JointState(name=["raise"]))
    bad = JointState(header=Header(frame_id="ab"), name=["bad"])
    wire = bad.serialize().replace(b"ab\x00", b"\xff\xfe\x00")  # valid CDR, not UTF-8
    bad.serialize = lambda **_: wire
    ping.writer.write(bad)
    assert spin_until(node, lambda: any(m.level == 40 and "asked the callback to raise" in m.msg
                                        for m in logs))
    assert spin_until(node, lambda: any(m.level == 40 and "undecodable" in m.msg for m in logs))
    ping.publish(JointState(name=["after"]))
    assert spin_until(node, lambda: any(m.name == ["after"] for m in pongs))
    assert [m.name for m in pongs if m.name in (["raise"], ["bad"])] == []
    assert probe.poll() is None


def test_unknown_types_are_listed_but_not_decoded(bus):
    _, node, client, *_ = bus

    Bar = make_idl_struct("Bar", "foo_msgs::msg::dds_::Bar_", {"x": types.int32})
    participant = dds_context.acquire_context()
    try:
        writer = DataWriter(participant.participant, Topic(participant.participant, "rt/strange",
                                                           Bar))
        client.graph.settle(min_s=0.0, quiet_s=0.2, max_s=1.0)
        assert client.topic_list()["/strange"] == ["foo_msgs/msg/Bar"]
        with pytest.raises(BusClientError, match="cannot decode"):
            client.topic_echo("/strange", timeout_s=1.0)
        dds_context.delete_entity(writer)
    finally:
        dds_context.release_context(participant)


def test_echo_and_service_call_from_the_client(bus):
    _, node, client, *_ = bus
    JointState = node.msg("sensor_msgs/msg/JointState")
    ping = node.create_publisher("sensor_msgs/msg/JointState", "/ping")
    sent = []

    def send():
        sent.append(len(sent))
        ping.publish(JointState(name=["e"], position=[float(len(sent))]))

    timer = node.create_timer(0.01, send)
    stop = threading.Event()

    def spin_in_background() -> None:  # the node publishes while the client waits for echoes
        while not stop.is_set():
            node.spin_once(0.02)

    spinner = threading.Thread(target=spin_in_background)
    spinner.start()
    try:
        echoed = client.topic_echo("/pong", count=3, timeout_s=3.0)
    finally:
        stop.set()
        spinner.join()
        timer.cancel()
    assert len(echoed) == 3 and all(m.name == ["e"] for m in echoed)
    assert echoed[1].position[0] == echoed[0].position[0] + 1  # consecutive, none lost
    assert format_message(echoed[0]).splitlines()[-1] == "---"
    response = client.service_call("/probe/get_parameters", "rcl_interfaces/srv/GetParameters",
                                   "{names: [mode, count]}")
    assert response.values[0].string_value == "a" and response.values[1].integer_value == 3


def test_sigterm_ends_the_node_cleanly_and_it_leaves_the_graph(bus):
    probe, _, client, *_ = bus
    probe.send_signal(signal.SIGTERM)
    assert probe.wait(10) == 0
    deadline = time.monotonic() + 5.0
    while "/probe" in client.node_list() and time.monotonic() < deadline:
        client.graph.settle(min_s=0.0, quiet_s=0.1, max_s=0.5)
    assert "/probe" not in client.node_list()
