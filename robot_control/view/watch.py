"""One stack (namespace) as the page sees it: its subscriptions on the view's node, the traces
they fill (the joints' signals; the contact force when its plant has a contact environment), its
robot_description, its health from /diagnostics, and whether it is connected."""

from __future__ import annotations

import threading
import time

import numpy as np

from robot_control.view.traces import Traces

#: the contact force arrives with every plant state (up to 1 kHz): room for the window at 2 kHz
FORCE_SAMPLES_PER_S = 2000
#: no message from the stack for this long (its heartbeat is 2 Hz): "disconnected"
SILENCE_S = 2.0
VIEW_ROLE = ": view"  # the DiagnosticStatus name of a view (app.py's heartbeat)


def topic(namespace: str, name: str) -> str:
    """``name`` under a namespace ('' or '/' for none): ``/arm1/joint_states``."""
    return f"{namespace.rstrip('/')}/{name}" if namespace.strip("/") else f"/{name}"


class StackWatch:
    """Subscribes to one namespace's topics on ``node`` (callbacks run in its spin thread)."""

    def __init__(self, node, namespace: str, window_s: float = 10.0, tf=None) -> None:
        self.node = node
        self.tf = tf  # the view's TfTree (view/frames.py), shared by every watched namespace
        self.namespace = "/" + namespace.strip("/") if namespace.strip("/") else ""
        self.window_s = window_s
        self.traces: Traces | None = None  # made at the first controller state (its joints)
        self.force: Traces | None = None  # made at the first contact wrench (the plant's)
        self.description: str | None = None
        self.description_changed = threading.Event()
        self.measured: tuple[list[str], np.ndarray, np.ndarray] | None = None  # names, q, τ
        self.reference: np.ndarray | None = None
        self.health: dict[str, tuple[int, str, dict[str, str]]] = {}  # status name → status
        self.last_heard = -np.inf  # monotonic time of the last message
        self.state_count = 0  # /joint_states received (the page shows their rate)
        self.t0: float | None = None  # stamp of the first sample: traces start at 0 s
        ns = self.namespace
        node.create_subscription("sensor_msgs/msg/JointState", topic(ns, "joint_states"),
                                 self._on_joint_state, qos="sensor")
        node.create_subscription("control_msgs/msg/JointTrajectoryControllerState",
                                 topic(ns, "controller/controller_state"), self._on_controller)
        node.create_subscription("geometry_msgs/msg/WrenchStamped", topic(ns, "wrench"),
                                 self._on_wrench, qos="sensor")
        node.create_subscription("std_msgs/msg/String", topic(ns, "robot_description"),
                                 self._on_description, qos="transient_local")
        node.create_subscription("diagnostic_msgs/msg/DiagnosticArray", topic(ns, "diagnostics"),
                                 self._on_diagnostics)

    @property
    def label(self) -> str:
        return self.namespace or "/"

    @property
    def connected(self) -> bool:
        return time.monotonic() - self.last_heard < SILENCE_S

    def _heard(self) -> None:
        self.last_heard = time.monotonic()

    def _on_joint_state(self, msg) -> None:
        self._heard()
        self.state_count += 1
        self.measured = (list(msg.name), np.asarray(msg.position, float),
                         np.asarray(msg.effort, float))

    def _on_controller(self, msg) -> None:
        self._heard()
        names = list(msg.joint_names)
        if self.traces is None or self.traces.joints != names:
            self.traces = Traces(names, self.window_s)
        t = self._time(msg.header.stamp)
        applied = None
        if self.measured is not None and self.measured[0] == names \
                and len(self.measured[2]) == len(names):
            applied = self.measured[2]
        self.reference = np.asarray(msg.reference.positions, float)
        self.traces.add(t, {
            "q": msg.feedback.positions, "q_d": msg.reference.positions,
            "error": msg.error.positions, "tau_cmd": msg.output.effort,
            "tau_applied": applied})

    def _time(self, stamp) -> float:
        """Seconds of a message's stamp since the stack's first one (the traces' time base)."""
        seconds = stamp.sec + 1e-9 * stamp.nanosec
        if self.t0 is None or seconds < self.t0:  # (a restarted stack's clock may start over)
            self.t0 = seconds
        return seconds - self.t0

    def _on_wrench(self, msg) -> None:
        """The plant's contact wrench (world frame): its force, a sample of the force traces."""
        self._heard()
        f = msg.wrench.force
        if self.force is None:
            self.force = Traces(["x", "y", "z"], self.window_s,
                                max(20000, int(FORCE_SAMPLES_PER_S * self.window_s)), ("force",))
        self.force.add(self._time(msg.header.stamp), {"force": np.array([f.x, f.y, f.z])})

    def _on_description(self, msg) -> None:
        self._heard()
        if msg.data != self.description:
            self.description = str(msg.data)
            self.description_changed.set()

    def _on_diagnostics(self, msg) -> None:
        for status in msg.status:
            if str(status.name).endswith(VIEW_ROLE):  # a view's own heartbeat is not the stack
                continue
            self._heard()
            self.health[str(status.name)] = (int.from_bytes(status.level, "little")
                                             if isinstance(status.level, bytes)
                                             else int(status.level), str(status.message),
                                             {str(kv.key): str(kv.value) for kv in status.values})

    def status_of(self, role: str) -> tuple[int, str, dict[str, str]] | None:
        """The last status of this namespace's node ``role`` (``controller``, ``plant`` …)."""
        return self.health.get(f"{topic(self.namespace, role)}: {role}")
