"""Composed mode: the nodes in one process, rclpy-free.

In-process: a container's nodes hand each other messages by reference, in publish order, each
exactly once, and write to DDS only while a reader of another process listens. With real
processes: ``robot-control launch composed:=true`` closes the loop with one node process, and
tools outside it (``robot-control node list``, ``lifecycle get``, ``param get``, ``topic echo``)
see five separate nodes and the topics; lockstep in a container reproduces the offline
simulation to the last bit.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import yaml
from launch_run import Stack, check_deadlines_and_outcome, robot_control_command, stack_env
from stack_helpers import LOCKSTEP_SCENARIO as SCENARIO
from stack_helpers import (
    lockstep_states,
    messages_within,
    node_is_active,
    private_domain,
    states_on_the_period_grid,
    wait_until,
)

COMPOSED = ("/controller", "/dynamics_server", "/lifecycle_manager", "/plant",
            "/trajectory_generator")
MANAGED = ("/controller", "/dynamics_server", "/plant", "/trajectory_generator")
RATE = 250  # Hz: the machine is shared; the bench measures what composed mode holds


def wait_for(predicate, timeout_s: float, every_s: float = 0.05):
    deadline = time.monotonic() + timeout_s
    while not (value := predicate()) and time.monotonic() < deadline:
        time.sleep(every_s)
    return value


class CountingWriter:
    """A DDS writer that counts the samples written through it (the real writer writes them)."""

    def __init__(self, writer) -> None:
        self.writer = writer
        self.written = 0

    def write(self, sample) -> None:
        self.written += 1
        self.writer.write(sample)

    def __getattr__(self, name: str):
        return getattr(self.writer, name)


@pytest.fixture
def container(monkeypatch):
    """A DDS container in this process on a private domain, spinning in a thread."""
    for key, value in private_domain(41).items():
        if key.startswith("ROS") or key == "ROBOT_CONTROL_BUS":
            monkeypatch.setenv(key, value)
    from robot_control.bus import create_container

    box = create_container(["test"], backend="dds")
    thread = threading.Thread(target=box.spin, daemon=True)  # started once the nodes exist
    yield box, thread
    box.shutdown()
    if thread.ident is not None:
        thread.join(10)
        assert not thread.is_alive()


def test_same_process_messages_go_by_reference_in_order_once_and_to_dds_only_for_remote_readers(
        container):
    box, thread = container
    talker, listener = box.create_node("talker"), box.create_node("listener")
    String = talker.msg("std_msgs/msg/String")
    chatter = talker.create_publisher("std_msgs/msg/String", "/chatter")
    other = talker.create_publisher("std_msgs/msg/String", "other")
    chatter.writer = CountingWriter(chatter.writer)
    received: list[tuple[str, object]] = []
    listener.create_subscription("std_msgs/msg/String", "/chatter",
                                 lambda m: received.append(("chatter", m)), qos=100)
    listener.create_subscription("std_msgs/msg/String", "/other",
                                 lambda m: received.append(("other", m)), qos=100)
    thread.start()
    assert chatter.get_subscription_count() == 1  # the listener, in this process

    sent = []
    for i in range(20):  # from this thread: the executor is woken for each
        pub, topic = (chatter, "chatter") if i % 2 == 0 else (other, "other")
        sent.append((topic, String(data=f"{topic} {i}")))
        pub.publish(sent[-1][1])
    assert wait_for(lambda: len(received) >= 20, 10), received
    assert [t for t, _ in received] == [t for t, _ in sent]
    assert all(got is msg for (_, got), (_, msg) in zip(received, sent))  # the very objects
    assert chatter.writer.written == 0  # nobody outside: never serialised

    # a reader in another process: DDS carries the topic to it, and the listener still gets
    # each message once (the writer ignores this process's readers)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    echo = subprocess.Popen(robot_control_command("topic", "echo", "/chatter", "--once"),
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert wait_for(lambda: chatter.get_subscription_count() == 2, 60), "echo never matched"
        before = len(received)
        published = 0
        while echo.poll() is None and published < 600:
            chatter.publish(String(data="seen outside"))
            published += 1
            time.sleep(0.05)
        out = echo.communicate(timeout=30)[0]
    finally:
        echo.kill()
    assert echo.returncode == 0 and "data: seen outside" in out, out
    assert wait_for(lambda: len(received) == before + published, 10)
    time.sleep(0.3)
    assert len(received) == before + published  # no duplicate through DDS
    assert 0 < chatter.writer.written <= published


def test_idle_work_waits_for_the_chain_it_follows_and_never_starves(container):
    """Node.when_idle: a callback's bookkeeping runs once what it sent has been handled — after
    the chain's next link, before the link after it — so a chain without pause (ping → pong →
    ping …, as lockstep runs) still gets each piece done one round later."""
    box, thread = container
    a, b = box.create_node("pinger"), box.create_node("ponger")
    String = a.msg("std_msgs/msg/String")
    ping = b.create_publisher("std_msgs/msg/String", "/ping")
    pong = a.create_publisher("std_msgs/msg/String", "/pong")
    events: list[str] = []

    def on_ping(msg) -> None:
        n = int(msg.data)
        events.append(f"ping {n}")
        pong.publish(String(data=str(n)))
        a.when_idle(lambda: events.append(f"idle {n}"))

    def on_pong(msg) -> None:
        events.append(f"pong {msg.data}")
        if int(msg.data) < 3:
            ping.publish(String(data=str(int(msg.data) + 1)))

    a.create_subscription("std_msgs/msg/String", "/ping", on_ping, qos=10)
    b.create_subscription("std_msgs/msg/String", "/pong", on_pong, qos=10)
    thread.start()
    ping.publish(String(data="1"))
    assert wait_for(lambda: len(events) >= 9, 10), events
    assert events == ["ping 1", "pong 1", "idle 1", "ping 2", "pong 2", "idle 2",
                      "ping 3", "pong 3", "idle 3"]


@pytest.mark.parametrize("urgent", [True, False])
def test_an_urgent_subscription_gets_its_message_right_after_the_callback_that_sent_it(
        container, urgent):
    """A plant's command (urgent) is taken as soon as the controller's callback returns, before
    the other nodes' callbacks of the state it answers; without urgent it waits for them."""
    box, thread = container
    plant, controller, other = (box.create_node(n) for n in ("plant", "controller", "other"))
    String = plant.msg("std_msgs/msg/String")
    tick = plant.create_publisher("std_msgs/msg/String", "/tick")
    state = plant.create_publisher("std_msgs/msg/String", "/state")
    command = controller.create_publisher("std_msgs/msg/String", "/command")
    events: list[str] = []
    # the state goes out from the executor's thread, as a plant's tick sends it: both readers
    # are posted at once (from the test's thread, the controller could run before the other
    # reader is posted)
    plant.create_subscription("std_msgs/msg/String", "/tick",
                              lambda m: state.publish(String(data=m.data)), qos=10)

    def on_state(msg) -> None:
        events.append(f"controller {msg.data}")
        command.publish(String(data=msg.data))

    controller.create_subscription("std_msgs/msg/String", "/state", on_state, qos=10)
    other.create_subscription("std_msgs/msg/String", "/state",
                              lambda m: events.append(f"other {m.data}"), qos=10)
    plant.create_subscription("std_msgs/msg/String", "/command",
                              lambda m: events.append(f"plant {m.data}"), qos=10, urgent=urgent)
    thread.start()
    for i in range(3):
        tick.publish(String(data=str(i)))
        assert wait_for(lambda n=3 * (i + 1): len(events) == n, 10), events
    order = ("controller", "plant", "other") if urgent else ("controller", "other", "plant")
    assert events == [f"{who} {i}" for i in range(3) for who in order]


def test_nodes_of_a_container_keep_their_own_names_parameters_and_lifecycle(container):
    box, thread = container
    from robot_control.bus.lifecycle import CallbackReturn

    a = box.create_node("first", managed=True)
    b = box.create_node("second", managed=True)
    a.declare_parameter("gain", 1.0)
    b.declare_parameter("gain", 2.0)
    thread.start()
    assert (a.fqn, b.fqn) == ("/first", "/second")
    assert (a.get_parameter("gain"), b.get_parameter("gain")) == (1.0, 2.0)
    assert a.trigger_transition("configure") == CallbackReturn.SUCCESS
    assert (a.lifecycle_state.label, b.lifecycle_state.label) == ("inactive", "unconfigured")
    a.shutdown()  # a node shutting down ends its container (one process, one context)
    thread.join(10)
    assert not box.ok and not b.ok


# --- real processes ------------------------------------------------------------------------------


def cli(env: dict[str, str], *args: str, timeout_s: float = 60.0) -> str:
    out = subprocess.run(robot_control_command(*args), env=env, capture_output=True, text=True,
                         timeout=timeout_s)
    return out.stdout + out.stderr


@pytest.fixture(scope="module")
def composed_run(tmp_path_factory):
    """``robot-control launch composed:=true``, what tools in other processes saw while its loop
    ran, and its summary once stopped with Ctrl-C."""
    summary_file = tmp_path_factory.mktemp("composed") / "summary.json"
    env = stack_env("composed-launch")
    stack = Stack(env, "composed:=true", f"rate:={RATE}", "--summary", str(summary_file))
    seen: dict[str, str] = {}
    try:
        assert stack.wait_for("[launch] control loop running", 150), "\n".join(stack.lines[-40:])
        seen["nodes"] = cli(env, "node", "list")
        seen["lifecycle"] = cli(env, "lifecycle", "get")
        seen["param"] = cli(env, "param", "get", "/controller", "controller")
        seen["echo"] = cli(env, "topic", "echo", "/joint_states", "--once")
        seen["info"] = cli(env, "node", "info", "/plant")
    finally:
        code = stack.stop()
    return code, stack, json.loads(summary_file.read_text()), seen


def test_a_composed_stack_is_one_process_and_closes_the_loop(composed_run):
    code, stack, summary, _ = composed_run
    assert code == 0, "\n".join(stack.lines[-40:])
    assert summary["arguments"]["composed"] == "true"
    assert {n: s["exit"] for n, s in summary["nodes"].items()} == {"robot_control_container": 0}
    assert summary["stopped_by"] == "interrupted"
    assert 0.0 < summary["rate_hz"] <= 1.1 * RATE
    latency = summary["latency_us"]
    assert 0 < latency["p50"] <= latency["p99"] <= latency["max"]
    assert 0 < summary["commands"] <= summary["steps"] and summary["commands_rejected"] == 0
    check_deadlines_and_outcome(summary, stack.final_line)
    # it tracks; the max error is left to the bench: this run lasts as long as the tools take,
    # and a stall of the machine (a late tick integrates the periods it missed) shows in the max
    errors = {k: summary[k] for k in ("rms_error", "max_error", "final_error")}
    assert all(0 <= r <= m for r, m in zip(summary["rms_error"], summary["max_error"])), errors
    assert max(summary["rms_error"]) < 0.05, (errors, summary["plant"])
    assert all(math.isfinite(e) for e in summary["max_error"] + summary["final_error"])
    # every composed node's heartbeat reached the runner, from one process
    assert set(COMPOSED) <= set(summary["node_status"]), summary["node_status"]
    assert summary["stalls"] == []


def test_tools_in_other_processes_see_the_separate_nodes_and_the_topics(composed_run):
    _, _, _, seen = composed_run
    assert set(COMPOSED) <= set(seen["nodes"].split()), seen["nodes"]
    assert all(f"{node}: active [3]" in seen["lifecycle"] for node in MANAGED), seen["lifecycle"]
    assert "String value is: computed_torque" in seen["param"], seen["param"]
    assert "name:" in seen["echo"] and "joint1" in seen["echo"], seen["echo"]
    assert "/joint_states: sensor_msgs/msg/JointState" in seen["info"], seen["info"]
    assert "/plant/change_state: lifecycle_msgs/srv/ChangeState" in seen["info"], seen["info"]


@pytest.mark.slow  # a lockstep stack launch
def test_lockstep_in_a_container_equals_the_offline_simulation(tmp_path):
    """The container (controller, plant, trajectory generator, dynamics server, lifecycle
    manager, as composed:=true runs them) in lockstep; this test's reader is in another
    process, so the plant waits for it too: two same-process subscribers of /joint_states
    and this one. Before it subscribes the active plant must stay silent (the trajectory
    generator once held two subscriptions, so the plant started without this reader, which then
    missed the first states)."""
    from robot_control.bus.dds.client import BusClient
    from robot_control.sim.simulate import run

    path = tmp_path / "lockstep.yaml"
    path.write_text(yaml.safe_dump(SCENARIO))
    offline = run(str(path))
    steps = offline.summary["steps"]
    env = private_domain(43)
    os.environ.update({k: env[k] for k in ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE")})
    sim_time = [a for n in ("controller", "trajectory_generator", "dynamics_server")
                for a in ("-p", f"{n}:use_sim_time:=true")]
    argv = [sys.executable, "-m", "robot_control.nodes.container", "--ros-args",
            "-p", f"scenario:={path}", "-p", "lockstep:=true", *sim_time,
            "-p", "plant:lockstep_start_subscribers:=3"]
    with BusClient(discovery_s=1.0) as client:
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)
        try:
            wait_until(lambda: node_is_active(client, "/plant"), 120, every_s=0.2)
            assert not list(messages_within(client, "/clock", 2.0, discovery_s=5.0))
            received = lockstep_states(client, steps, timeout_s=120, discovery_s=90)
        finally:
            proc.send_signal(signal.SIGINT)
            log = proc.communicate(timeout=30)[0]
    assert proc.returncode == 0, log
    assert len(received) > steps, f"only {len(received)} states; log:\n{log}"
    bus = states_on_the_period_grid(received, steps, SCENARIO["rate"])
    assert np.array_equal(bus, offline.q), np.abs(bus - offline.q).max()

