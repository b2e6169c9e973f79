"""``robot-control topic|node|param|service`` against the running stack (started once for the
module by ``robot-control launch``, on its own domain): what ros2's tools would show and do."""

from __future__ import annotations

import os
import time

import pytest
import yaml
from bus_probe import bus_env
from test_launch_runner import NODES, STACK_RATE, Stack

from robot_control.bus.dds import context as dds_context
from robot_control.bus.dds.client import BusClient
from robot_control.cli import bus_tools as cli_bus


@pytest.fixture(scope="module")
def stack():
    env = bus_env("cli-bus")
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)  # the commands below run in this process, on the stack's domain
    running = Stack(dict(os.environ), f"rate:={STACK_RATE}")
    try:
        assert running.wait_for("[launch] control loop running"), "\n".join(running.lines[-40:])
        # the loop runs with plant and controller; on a busy machine the other two may still be
        # starting: wait (with a deadline) until all four are on the graph
        with BusClient(discovery_s=1.0) as client:
            deadline = time.monotonic() + 60
            while not {f"/{n}" for n in NODES} <= set(client.node_list()) and \
                    time.monotonic() < deadline:
                time.sleep(0.5)
        yield running
    finally:
        running.stop()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.fixture
def rc(stack, capsys):
    """Run ``robot-control ARGS`` here; (exit code, stdout, stderr)."""
    def run(*args: str) -> tuple[int, str, str]:
        code = cli_bus.main(list(args))
        out = capsys.readouterr()
        assert dds_context._context is None  # each command closed its participant
        return code, out.out, out.err

    return run


def test_node_list_shows_the_four_nodes(rc):
    code, out, _ = rc("node", "list")
    assert code == 0
    assert {f"/{n}" for n in NODES} <= set(out.split())


def test_node_info_shows_the_plants_endpoints(rc):
    code, out, _ = rc("node", "info", "/plant")
    assert code == 0
    publishers = out.split("Publishers:")[1].split("Service Servers:")[0]
    subscribers = out.split("Subscribers:")[1].split("Publishers:")[0]
    assert "/joint_states: sensor_msgs/msg/JointState" in publishers
    assert "/joint_command: sensor_msgs/msg/JointState" in subscribers
    assert "/plant/set_parameters: rcl_interfaces/srv/SetParameters" in out


def test_topic_list_and_the_rate_of_joint_states(rc):
    code, out, _ = rc("topic", "list", "-t")
    assert code == 0
    topics = out.splitlines()
    for line in ("/joint_states [sensor_msgs/msg/JointState]",
                 "/joint_command [sensor_msgs/msg/JointState]",
                 "/controller/state [sensor_msgs/msg/JointState]"):
        assert line in topics
    code, out, _ = rc("topic", "hz", "/joint_states", "--duration", "2")
    assert code == 0
    rate = float(out.split("average rate:")[1].split()[0])
    assert 0.0 < rate <= 1.15 * STACK_RATE  # load-dependent below the requested rate


def test_topic_echo_prints_messages_as_yaml(rc):
    code, out, _ = rc("topic", "echo", "/joint_states", "--count", "2")
    assert code == 0
    docs = [d for d in out.split("---\n") if d.strip()]
    assert len(docs) == 2
    msg = yaml.safe_load(docs[0])
    assert msg["name"] == ["joint1", "joint2", "joint3"] and len(msg["position"]) == 3
    code, _, err = rc("topic", "echo", "/no_such_topic", "--once", "--timeout", "0.5")
    assert code == 1 and "no publisher on /no_such_topic" in err


def test_topic_echo_into_a_pipe_that_closes_ends_quietly(stack):
    import subprocess
    import sys

    echo = subprocess.Popen([sys.executable, "-m", "robot_control.cli", "topic", "echo",
                             "/joint_states"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=dict(os.environ))
    head = [echo.stdout.readline() for _ in range(3)]  # what `| head -n 3` reads, then it closes
    echo.stdout.close()
    _, err = echo.communicate(timeout=60)
    assert head[0].startswith(b"header:"), head
    assert echo.returncode == 0 and b"Traceback" not in err and b"BrokenPipe" not in err, err


def test_param_list_get_and_describe(rc):
    code, out, _ = rc("param", "list", "/controller")
    assert code == 0
    names = [line.strip() for line in out.splitlines()[1:]]
    assert out.splitlines()[0] == "/controller:"
    assert {"controller", "computed_torque.kp", "passivity.lambda", "rate"} <= set(names)
    code, out, _ = rc("param", "get", "/plant", "robot")
    assert (code, out.strip()) == (0, "String value is: ddarm")
    code, out, _ = rc("param", "describe", "/controller", "computed_torque.kp")
    assert code == 0 and "Type: double array" in out and "Min value: 0.0" in out


def test_param_dump_is_a_parameter_file(rc):
    code, out, _ = rc("param", "dump", "/plant")
    assert code == 0
    params = yaml.safe_load(out)["/plant"]["ros__parameters"]
    assert params["initial_q"] == [-0.1, 1.5, 1.0]  # from config/stack.ddarm.yaml
    assert params["rate"] == float(STACK_RATE)  # from the launch argument


def test_swapping_the_controller_by_a_parameter(rc):
    code, out, _ = rc("param", "set", "/controller", "controller", "passivity")
    assert (code, out.strip()) == (0, "Set parameter successful")
    code, out, _ = rc("param", "get", "/controller", "controller")
    assert out.strip() == "String value is: passivity"
    code, out, _ = rc("topic", "echo", "/controller/state", "--once")
    assert code == 0  # the swapped-in law is answering states


def test_a_refused_gain_prints_the_reason_and_changes_nothing(rc):
    before = rc("param", "get", "/controller", "passivity.kd")[1]
    code, out, err = rc("param", "set", "/controller", "passivity.kd", "[-1.0, 20.0, 10.0]")
    assert code == 1 and out == ""
    assert err.startswith("Setting parameter failed: ") and "passivity.kd" in err
    # zero passes the declared range [0, ∞) but not the law, which wants K_d > 0
    code, _, err = rc("param", "set", "/controller", "passivity.kd", "[0.0, 20.0, 10.0]")
    assert code == 1 and "passivity: kd" in err and "must be positive" in err
    code, _, err = rc("param", "set", "/controller", "controller", "no_such_law")
    assert code == 1 and "unknown controller 'no_such_law'" in err
    assert rc("param", "get", "/controller", "passivity.kd")[1] == before
    assert before.strip() == "Double values are: [100.0, 20.0, 10.0]"  # config/stack.ddarm.yaml


def test_a_swap_to_a_law_the_stack_cannot_feed_is_refused_with_the_reason(rc):
    before = rc("param", "get", "/controller", "controller")[1]
    code, _, err = rc("param", "set", "/controller", "controller", "hybrid_force")
    assert code == 1 and "hybrid_force needs a force reference" in err, err
    assert rc("param", "get", "/controller", "controller")[1] == before


def test_service_list_and_call(rc):
    code, out, _ = rc("service", "list", "-t")
    assert code == 0
    services = out.splitlines()
    for node in NODES:
        for srv, srv_type in (("get_parameters", "GetParameters"),
                              ("set_parameters", "SetParameters"),
                              ("list_parameters", "ListParameters"),
                              ("describe_parameters", "DescribeParameters")):
            assert f"/{node}/{srv} [rcl_interfaces/srv/{srv_type}]" in services
    code, out, _ = rc("service", "call", "/controller/list_parameters",
                      "rcl_interfaces/srv/ListParameters", "{prefixes: [passivity]}")
    assert code == 0 and out.startswith("response:\n")
    response = yaml.safe_load(out.split("\n", 1)[1])
    assert sorted(response["result"]["names"]) == [
        "passivity.bumpless_time_constant", "passivity.kd", "passivity.lambda"]


def test_one_reader_follows_a_topic_until_told_to_stop(stack):
    """The launch monitor's way of watching a topic: one reader, no timeout, ended by an event
    (within the 0.1 s it polls at), and gone from the graph afterwards."""
    import threading

    with BusClient(discovery_s=1.0) as client:
        reader = client.topic_reader("/joint_states", timeout_s=20.0)
        stop = threading.Event()
        stamps = []
        for msg in client.samples(reader, stop=stop):
            stamps.append(msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec)
            if len(stamps) == 50:
                stop.set()
                ended = time.monotonic()
        assert time.monotonic() - ended < 1.0
        assert len(stamps) >= 50 and stamps == sorted(stamps)
        from cyclonedds.core import DDSException

        with pytest.raises(DDSException, match="BAD_PARAMETER"):  # the reader was deleted
            reader.take(N=1)
