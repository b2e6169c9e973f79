"""Managed nodes of the stack run in the test's own process on the DDS backend (a private domain),
spun by the test: a plant, a controller, or a node of the test's own answering /joint_states.

Real nodes on real DDS, only the process is shared: the tests can read a node's logic directly
(its counters, the simulated state) while it runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from robot_control.bus.backend import create_node
from robot_control.nodes.common import install_hooks
from robot_control.nodes.convert import Messages, stamp_ns


def managed(logic_class, name: str, *params: str, start: bool = True):
    """(node, logic) of a node of this package named ``name`` with ``-p`` params; configured and
    activated when ``start``."""
    args = ["prog", "--ros-args"] + [a for p in params for a in ("-p", p)]
    node = create_node(name, args, managed=True, backend="dds")
    logic = logic_class(node)
    install_hooks(node, logic)
    if start:
        for transition in ("configure", "activate"):
            assert node.trigger_transition(transition).name == "SUCCESS", transition
    return node, logic


class Answerer:
    """A node of the test's (any name) that answers every /joint_states with ``tau(msg)`` on
    /joint_command, stamped with the state's stamp, as a controller does."""

    def __init__(self, name: str, names: list[str], tau: Callable[[object], list[float]]):
        self.node = create_node(name, ["prog"], backend="dds")
        self.m = Messages(self.node)
        self.pub = self.node.create_publisher("sensor_msgs/msg/JointState", "/joint_command")
        self.names, self.tau, self.sent = names, tau, 0
        self.node.create_subscription("sensor_msgs/msg/JointState", "/joint_states", self._answer)

    def _answer(self, msg) -> None:
        self.pub.publish(self.m.joint_state(stamp_ns(msg.header.stamp), self.names,
                                            tau=self.tau(msg)))
        self.sent += 1


def spin(nodes: list, seconds: float, until: Callable[[], bool] | None = None,
         each: Callable[[], None] | None = None) -> bool:
    """Spin the nodes in turn for ``seconds`` (or until ``until()``); True if ``until`` held."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for node in nodes:
            node.spin_once(0.001)
        if each is not None:
            each()
        if until is not None and until():
            return True
    return until is not None and until()


def shut(*nodes) -> None:
    for node in nodes:
        node.shutdown()
