"""A node's health on /diagnostics: its heartbeat, its warnings and its one way into the error state.

Every node publishes a DiagnosticStatus named ``<fqn>: <role>`` twice a second (the heartbeat the
launch runner watches for liveness) with the node's own figures and what it dropped.
``fault(reason)`` is the single entry point into the error state: the reason is logged once as
an error, every later heartbeat reports level ERROR with it, and the node stops doing its job
(each node checks ``faulted``). A managed node is then taken to ErrorProcessing (``node.fail``:
active → deactivating → errorprocessing, whose on_error leaves it unconfigured); configuring it
again clears the fault. The heartbeat runs in every lifecycle state and says which one.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from robot_control.nodes.convert import Messages
from robot_control.nodes.validation import DropLog

OK, WARN, ERROR = 0, 1, 2
HEARTBEAT_S = 0.5

#: (level, message, key/values) of a node's own status
Status = tuple[int, str, dict]


class NodeHealth:
    """Publishes a node's status on /diagnostics and holds its fault, if any."""

    def __init__(self, node, role: str, status: Callable[[], Status],
                 drops: DropLog | None = None, period_s: float = HEARTBEAT_S) -> None:
        self.node = node
        self.role = role
        self.status = status
        self.drops = drops if drops is not None else DropLog(node.get_logger())
        self.fault_reason: str | None = None
        self.m = Messages(node)
        self.pub = node.create_publisher("diagnostic_msgs/msg/DiagnosticArray", "diagnostics")
        self.period_s = period_s
        self.last = -math.inf  # monotonic time of the last status
        node.create_timer(period_s, self.publish_if_due)

    @property
    def faulted(self) -> bool:
        return self.fault_reason is not None

    def fault(self, reason: str) -> None:
        """Enter the error state (once; the first reason stays) and report it at once."""
        if self.fault_reason is not None:
            return
        self.fault_reason = reason
        self.node.get_logger().error(f"fault: {reason}; {self.role} stopped until configured "
                                     "again")
        self.publish()
        if self.node.managed:
            self.node.fail(reason)

    def clear(self) -> None:
        """Leave the error state (a fresh configuration)."""
        self.fault_reason = None

    def publish_if_due(self) -> None:
        """The heartbeat, if a period went by since the last status. A node with a control loop
        also calls this right after its tick's work went out, where the loop has slack, so
        its heartbeat (a few hundred µs of Python) lands there rather than where its own timer
        happens to fall — maybe just before a deadline."""
        if time.monotonic() - self.last >= 0.9 * self.period_s:
            self.publish()

    def publish(self) -> None:
        self.last = time.monotonic()
        level, message, values = self.status()
        values = {**values, **self.drops.diagnostics()}
        if self.node.managed:
            values["lifecycle_state"] = self.node.lifecycle_state.label
        if self.fault_reason is not None:
            level, message = ERROR, f"fault: {self.fault_reason}"
        self.pub.publish(self.m.diagnostics(
            int(self.node.now() * 1e9), [(level, f"{self.node.fqn}: {self.role}", message,
                                          values)]))


def status_level(status) -> int:
    """A DiagnosticStatus level as an int (rclpy gives a byte, our DDS struct an int)."""
    level = status.level
    return level[0] if isinstance(level, bytes | bytearray) else int(level)
