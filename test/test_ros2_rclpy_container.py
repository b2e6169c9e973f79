"""The rclpy container (composed nodes on one rclpy executor): a message one node sends another
is handed on right after the sending callback (SameProcessChain), exactly once and in order,
while a node in another context still receives the topic over DDS."""

from __future__ import annotations

import contextlib
import os
import threading

import pytest
from ros2_env import private_rclpy_domain, ros2_missing, wait_for

if ros2_missing():
    pytest.skip(ros2_missing(), allow_module_level=True)

from launch_helpers import Observer  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from robot_control.bus.backend import create_container  # noqa: E402

pytestmark = pytest.mark.ros2
PINGS = 200


private_domain = private_rclpy_domain("rclpy-container")


def ping_echo(prefix: str, qos: int, record_echo: bool):
    """A rclpy container whose node ``{prefix}echo`` sends every /{prefix}ping back on
    /{prefix}pong and whose node ``{prefix}pinger`` records ("pong", k) (the echo ("echo", k) too
    if ``record_echo``): (container, pinger, its /{prefix}ping publisher, the events)."""
    container = create_container(["prog"], backend="rclpy")
    pinger, echo = container.create_node(f"{prefix}pinger"), container.create_node(f"{prefix}echo")
    ping = pinger.create_publisher("sensor_msgs/msg/JointState", f"/{prefix}ping", qos=qos)
    pong = echo.create_publisher("sensor_msgs/msg/JointState", f"/{prefix}pong", qos=qos)
    events: list[tuple[str, int]] = []

    def on_ping(msg) -> None:
        if record_echo:
            events.append(("echo", int(msg.position[0])))
        pong.publish(msg)

    echo.create_subscription("sensor_msgs/msg/JointState", f"/{prefix}ping", on_ping, qos=qos)
    pinger.create_subscription("sensor_msgs/msg/JointState", f"/{prefix}pong",
                               lambda m: events.append(("pong", int(m.position[0]))), qos=qos)
    return container, pinger, ping, events


@contextlib.contextmanager
def spinning(container):
    """The container spinning on a thread until the block ends, then shut down."""
    thread = threading.Thread(target=container.spin, daemon=True)
    thread.start()
    try:
        yield thread
    finally:
        container.shutdown()
        thread.join(10)


def test_same_process_replies_come_once_in_order_within_the_senders_round():
    outside = Observer(int(os.environ["ROS_DOMAIN_ID"]), "outside")
    heard_outside: list[int] = []
    outside.node.create_subscription(JointState, "/ping",
                                     lambda m: heard_outside.append(int(m.position[0])), 1000)
    container, pinger, ping, events = ping_echo("", 1000, record_echo=True)
    sent = [0]

    def tick() -> None:
        if sent[0] < PINGS and ping.get_subscription_count() >= 2:  # echo and outside matched
            sent[0] += 1
            events.append(("ping", sent[0]))
            ping.publish(JointState(position=[float(sent[0])]))

    pinger.create_timer(0.0001, tick)  # always due: a round later would be after the next ping
    try:
        with spinning(container) as thread:
            assert wait_for(lambda: events.count(("pong", PINGS)) >= 1, 30.0), events[-10:]
            assert wait_for(lambda: len(heard_outside) >= PINGS, 10.0), len(heard_outside)
    finally:
        outside.close()
    assert not thread.is_alive(), "the container's spin did not end after shutdown()"
    # each ping was echoed once and its echo came back once, before the next ping went out: the
    # chain ran inside the round of the timer that sent it, not a timer period later
    expected = [(kind, k) for k in range(1, PINGS + 1) for kind in ("ping", "echo", "pong")]
    assert events == expected, next((i, e, x) for i, (e, x) in
                                    enumerate(zip(events, expected)) if e != x)
    assert heard_outside == list(range(1, PINGS + 1))


def test_idle_work_runs_after_the_chain_its_callback_started():
    """Node.when_idle in the rclpy container: the work a callback leaves runs once the messages
    it sent have been handed on (after the echo came back), before the next timer round."""
    container, pinger, ping, events = ping_echo("idle_", 100, record_echo=False)
    sent = [0]

    def tick() -> None:
        if sent[0] < 20 and ping.get_subscription_count() >= 1:
            sent[0] += 1
            k = sent[0]
            events.append(("ping", k))
            ping.publish(JointState(position=[float(k)]))
            pinger.when_idle(lambda: events.append(("idle", k)))

    pinger.create_timer(0.001, tick)
    with spinning(container):
        assert wait_for(lambda: ("idle", 20) in events, 30.0), events[-10:]
    assert events == [(kind, k) for k in range(1, 21) for kind in ("ping", "pong", "idle")]
