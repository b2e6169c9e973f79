"""What ``robot-control launch`` reports about a running stack, gathered over the bus.

A :class:`StackMonitor` is a :class:`~robot_control.bus.dds.client.BusClient` in the runner's process
(a tool participant, not a node) watching ``/diagnostics``, where each node measures its own
figures where they happen: the plant its steps, commands applied and rejected, missed deadlines
and state-to-command latency percentiles; the controller its tracking error e = q_d − q per joint
over every tick in which it tracked a trajectory the generator sent (RMS, maximum, last), which a
monitor sampling /controller/state at its monitor rate would only estimate. It also watches
``/controller/state``: the control loop counts as running from its first message, and the
achieved rate is taken over that window; and the trajectory generator's ``transition_event``
topic, for how long the motion ran (``tracking_s``). Every node's status on /diagnostics is its
heartbeat: the monitor keeps the time, level and message of the last one per node, from which
the runner judges liveness and faults.

The summary is standard JSON: a figure that is not a finite number (the RMS error of a run whose
error overflowed) is written as null, and ``non_finite`` says which and what it was.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable

from robot_control.bringup.verdict import saturation_counts
from robot_control.bus.ros_args import resolve_name
from robot_control.nodes.common import ErrorStatistics
from robot_control.nodes.health import status_level

__all__ = ["ErrorStatistics", "StackMonitor", "diagnostic_value", "json_safe"]

PLANT_STATUS_SUFFIX = ": plant"
ERROR_LEVEL = 2
TOPIC_DIAGNOSTICS = "diagnostics"  # relative: the monitor resolves them in the stack's namespace
TOPIC_CONTROLLER_STATE = "controller/state"


def diagnostic_value(text: str) -> object:
    """A DiagnosticStatus value (always a string on the wire) as the number, flag or JSON list
    it prints."""
    if text.startswith("["):
        try:
            return json.loads(text)
        except ValueError:
            return text
    if text in ("True", "False"):
        return text == "True"
    if text == "None":
        return None
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def status_node(status) -> str:
    """The node a status is about: our statuses are named ``<node fqn>: <role>``."""
    return str(status.name).split(":", 1)[0]


def json_safe(value: object, path: str = "", notes: dict[str, str] | None = None):
    """``value`` with every non-finite float replaced by None; ``notes`` gets path -> what it was."""
    if isinstance(value, float) and not math.isfinite(value):
        if notes is not None:
            notes[path or "value"] = str(value)
        return None
    if isinstance(value, dict):
        return {k: json_safe(v, f"{path}.{k}" if path else str(k), notes)
                for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v, f"{path}[{i}]", notes) for i, v in enumerate(value)]
    return value


def plant_status(msg) -> dict[str, object] | None:
    """The key/values of the plant's status in a DiagnosticArray, or None if it holds none."""
    for status in msg.status:
        if str(status.name).endswith(PLANT_STATUS_SUFFIX):
            values = {str(kv.key): diagnostic_value(str(kv.value)) for kv in status.values}
            values["message"] = str(status.message)
            return values
    return None


def figures_line(summary: dict[str, object]) -> str:
    """The run's figures in one line: achieved rate, state→command latency, missed deadlines,
    the largest tracking error, the steps a torque saturated in (if any) and the load the
    machine had."""
    def us(v):
        return "-" if v is None else (f"{v / 1000:.1f} ms" if v >= 1000 else f"{v:.0f} µs")

    rate, requested = summary.get("rate_hz"), summary.get("requested_rate_hz")
    lat = summary.get("latency_us") or {}
    missed, ratio = summary.get("missed_deadlines"), summary.get("missed_deadline_ratio")
    errors = [e for e in summary.get("max_error") or [] if e is not None]
    load = (summary.get("load_average") or {}).get("start") or [None]
    parts = [
        f"achieved {rate:.1f} Hz" if rate is not None else "achieved -",
        f"of {requested:g}" if requested is not None else "",
        f"| state→command p50 {us(lat.get('p50'))}, p99 {us(lat.get('p99'))}, "
        f"max {us(lat.get('max'))}",
        f"| missed deadlines {missed} ({100 * ratio:.2f} %)" if ratio is not None else
        "| missed deadlines -",
        f"| max tracking error {max(errors):.2g} rad" if errors else "| max tracking error -",
        f"| load average {load[0]:.2f}" if load[0] is not None else "",
    ]
    saturated = saturation_counts(summary)
    if saturated:
        parts.insert(-1, "| saturated " + ", ".join(f"{node} {count} steps"
                                                    for node, count in saturated.items()))
    return " ".join(p for p in parts if p)


class StackMonitor:
    """Collects the launch summary from the bus while the stack runs (threads, one per topic)."""

    def __init__(self, client_factory: Callable[[], object] | None = None,
                 tracking_node: str | None = None, controller_node: str | None = None,
                 namespace: str = "/") -> None:
        if client_factory is None:
            from robot_control.bus.dds.client import BusClient

            client_factory = BusClient
        self.client = client_factory()
        self.tracking_since: float | None = None  # the trajectory generator became active
        self.controller = controller_node  # whose status holds the tracking error
        self._stop = threading.Event()
        # the client's graph (node_names, hiding the monitor's readers) is used by one thread
        # at a time
        self._graph_lock = threading.Lock()
        self.running_since: float | None = None  # monotonic time of the first /controller/state
        self.diagnostics: list[tuple[float, dict[str, object]]] = []  # (received, plant status)
        #: node fqn -> (monotonic time, level, message) of its last status on /diagnostics
        self.heartbeats: dict[str, tuple[float, int, str]] = {}
        #: node fqn -> its last status: level, message and key/values
        self.statuses: dict[str, dict[str, object]] = {}
        # the stack's topics in the namespace it was launched in (resolved as its nodes do)
        # (/controller/state runs at the control rate: its first message is all it tells us, so
        # its reader goes then, rather than have the controller send every period to us)
        watched = [(resolve_name(TOPIC_CONTROLLER_STATE, namespace, ""), "sensor_msgs/msg/JointState",
                    self._on_state, True),
                   (resolve_name(TOPIC_DIAGNOSTICS, namespace, ""),
                    "diagnostic_msgs/msg/DiagnosticArray",
                    self._on_diagnostics, False)]
        if tracking_node is not None:
            watched.append((f"{tracking_node}/transition_event",
                            "lifecycle_msgs/msg/TransitionEvent", self._on_tracking_event, False))
        self._threads = [threading.Thread(target=self._watch, args=w, daemon=True,
                                          name=f"monitor {w[0]}") for w in watched]
        for t in self._threads:
            t.start()

    # -- collection (monitor threads) -----------------------------------------------------------
    def _watch(self, topic: str, ros_type: str, handle: Callable[[object], None],
               first_only: bool) -> None:
        """Follow a topic of our stack with one reader, made before its publishers exist so it
        matches them as they appear (no discovery to wait for: the first /controller/state dates
        the closed loop, a transition event is volatile and rare), until the monitor stops (or,
        ``first_only``, until its first message: the reader goes then)."""
        from robot_control.bus.qos import DEFAULT

        with self._graph_lock:  # the reader is hidden from the graph node_names reads
            reader = self.client.typed_reader(topic, ros_type, DEFAULT)
        for msg in self.client.samples(reader, stop=self._stop):
            handle(msg)
            if first_only:
                break

    def _on_tracking_event(self, event) -> None:
        if event.goal_state.label == "active" and self.tracking_since is None:
            self.tracking_since = time.monotonic()

    def _on_state(self, msg) -> None:
        if self.running_since is None:
            self.running_since = time.monotonic()

    def _on_diagnostics(self, msg) -> None:
        now = time.monotonic()
        for s in msg.status:
            node, level = status_node(s), status_level(s)
            self.heartbeats[node] = (now, level, str(s.message))
            self.statuses[node] = {"level": level, "message": str(s.message),
                                   **{str(kv.key): diagnostic_value(str(kv.value))
                                      for kv in s.values}}
        status = plant_status(msg)
        if status is not None:
            self.diagnostics.append((now, status))

    # -- queries (runner thread) ----------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.running_since is not None

    def wait_for_diagnostics(self, after: float, timeout_s: float = 1.5) -> bool:
        """Wait for a plant status (and the controller's) received after monotonic time
        ``after`` (True if they came)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            beat = self.heartbeats.get(self.controller) if self.controller else None
            if self.diagnostics and self.diagnostics[-1][0] > after and \
                    (self.controller is None or (beat is not None and beat[0] > after)):
                return True
            time.sleep(0.02)
        return False

    def node_names(self, wait_s: float = 0.05, settle_s: float = 0.0) -> list[str] | None:
        """Every node on the domain (a name as often as nodes have it), after discovering for at
        least settle_s; None if the graph stayed busy for wait_s."""
        if not self._graph_lock.acquire(timeout=wait_s):
            return None
        try:
            if settle_s:
                self.client.graph.settle(min_s=settle_s, max_s=settle_s + 2.0)
            return self.client.node_list()
        finally:
            self._graph_lock.release()

    @property
    def domain_id(self) -> int:
        return self.client.context.domain_id

    def stop(self) -> None:
        """Stop watching and close the bus client."""
        self._stop.set()
        for t in self._threads:
            t.join(timeout=5.0)
        self.client.close()

    def summary(self, until: float | None = None) -> dict[str, object]:
        """The stable summary keys (README, `robot-control launch --summary`) plus the plant's own
        figures."""
        until = time.monotonic() if until is None else until
        out: dict[str, object] = {
            "duration_s": None if self.running_since is None else until - self.running_since,
            "tracking_s": None if self.tracking_since is None else until - self.tracking_since,
        }
        plant = self.diagnostics[-1][1] if self.diagnostics else {}
        out["rate_hz"] = self._achieved_rate(plant)
        out["latency_us"] = {k: plant.get(f"latency_{k}_us") for k in ("p50", "p99", "max")}
        out["tick_late_us"] = {k: plant.get(f"tick_late_{k}_us") for k in ("p50", "p99", "max")}
        out["missed_deadlines"] = plant.get("missed_deadlines")
        out["commands"] = plant.get("commands_applied")
        out["commands_rejected"] = plant.get("commands_rejected")
        out["steps"] = plant.get("steps")
        out["velocity_stops"] = plant.get("velocity_stops")
        out["commands_foreign"] = plant.get("commands_foreign")
        # of the deadlines that passed while commands flowed (a late tick passes several)
        base, missed = plant.get("commanded_deadlines"), plant.get("missed_deadlines")
        out["missed_deadline_ratio"] = (missed / base if isinstance(base, int) and base
                                        and isinstance(missed, int) else None)
        out.update(self._tracking_errors())
        out["plant"] = plant
        out["node_status"] = {node: dict(status) for node, status in sorted(self.statuses.items())}
        return out

    def _tracking_errors(self) -> dict[str, object]:
        """rms_error, max_error, final_error per joint (and the samples they cover), as the
        controller measured them over every tick; None where it reported none."""
        status = self.statuses.get(self.controller, {}) if self.controller else {}
        keys = ("rms_error", "max_error", "final_error", "joint_names", "tracking_samples",
                "non_finite_error_samples")
        out: dict[str, object] = {k: status.get(k) for k in keys[:5]}
        if status.get(keys[5]):
            out[keys[5]] = status[keys[5]]
        return out

    def _achieved_rate(self, plant: dict[str, object]) -> float | None:
        """Plant steps per wall-clock second over the running window (its own figure otherwise).

        Counting steps between two plant reports is immune to samples this process drops, which
        counting /joint_states arrivals here would not be under load.
        """
        window = [(t, s["steps"]) for t, s in self.diagnostics
                  if isinstance(s.get("steps"), int)
                  and (self.running_since is None or t >= self.running_since)]
        if len(window) >= 2 and window[-1][0] > window[0][0]:
            (t0, k0), (t1, k1) = window[0], window[-1]
            return (k1 - k0) / (t1 - t0)
        rate = plant.get("achieved_rate_hz")
        return float(rate) if isinstance(rate, int | float) and math.isfinite(rate) else None
