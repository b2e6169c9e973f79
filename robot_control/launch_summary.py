"""What ``robot-control launch`` reports about a running stack, gathered over the bus.

A :class:`StackMonitor` is a :class:`~robot_control.bus.client.BusClient` in the runner's process
(a tool participant, not a node) watching two topics of the bus contract: the plant's
``/diagnostics`` (steps, commands applied and rejected, missed deadlines, state-to-command latency
percentiles — the plant measures these where they happen) and ``/controller/state`` (position =
e = q_d − q), from which it accumulates the tracking error per joint — only while the trajectory
generator is active (its ``transition_event`` topic says when), not while the controller merely
holds the arm during bring-up. The control loop counts as running from the first
``/controller/state`` message; the achieved rate is taken over that window. Every node's status
on /diagnostics is its heartbeat: the monitor keeps the time, level and message of the last one
per node, from which the runner judges liveness and faults.

The summary is standard JSON: a figure that is not a finite number (the RMS error of a run whose
error overflowed) is written as null, and ``non_finite`` says which and what it was.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

PLANT_STATUS_SUFFIX = ": plant"
ERROR_LEVEL = 2
TOPIC_DIAGNOSTICS = "/diagnostics"
TOPIC_CONTROLLER_STATE = "/controller/state"


def diagnostic_value(text: str) -> object:
    """A DiagnosticStatus value (always a string on the wire) as the number or flag it prints."""
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


def status_level(status) -> int:
    """A DiagnosticStatus level as an int (rclpy gives a byte, our DDS struct an int)."""
    level = status.level
    return level[0] if isinstance(level, bytes | bytearray) else int(level)


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


@dataclass
class ErrorStatistics:
    """Running RMS, maximum and last value of the tracking error e, per joint."""

    names: list[str] = field(default_factory=list)
    count: int = 0
    non_finite: int = 0  # samples with a NaN or infinite error, left out of the figures
    sum_sq: np.ndarray | None = None
    max_abs: np.ndarray | None = None
    last: np.ndarray | None = None

    def add(self, names: list[str], e: np.ndarray) -> None:
        if not np.all(np.isfinite(e)):
            self.non_finite += 1
            return
        if self.sum_sq is None or e.shape != self.sum_sq.shape:
            # first sample, or the law changed the state size: restart rather than mix
            self.names, self.count = list(names), 0
            self.sum_sq, self.max_abs = np.zeros(e.shape), np.zeros(e.shape)
        self.count += 1
        with np.errstate(over="ignore"):  # an overflow is reported as such by summary()
            self.sum_sq += e * e
        np.maximum(self.max_abs, np.abs(e), out=self.max_abs)
        self.last = e

    def summary(self) -> dict[str, object]:
        out: dict[str, object] = {"rms_error": None, "max_error": None, "final_error": None}
        if self.count:
            with np.errstate(over="ignore"):  # an overflowed sum is reported, not raised
                out = {"rms_error": np.sqrt(self.sum_sq / self.count).tolist(),
                       "max_error": self.max_abs.tolist(), "final_error": self.last.tolist()}
        if self.non_finite:
            out["non_finite_error_samples"] = self.non_finite
        return out


class StackMonitor:
    """Collects the launch summary from the bus while the stack runs (threads, one per topic)."""

    def __init__(self, client_factory: Callable[[], object] | None = None,
                 tracking_node: str | None = None) -> None:
        if client_factory is None:
            from robot_control.bus.client import BusClient

            client_factory = BusClient
        self.client = client_factory()
        # errors count while this managed node (the trajectory generator) is active; with none
        # to watch, from the first sample on
        self.tracking = tracking_node is None
        self.tracking_since: float | None = None
        self._stop = threading.Event()
        # discovery (the client's graph) is used by one thread at a time; reading samples is not
        self._graph_lock = threading.Lock()
        self.errors = ErrorStatistics()
        self.running_since: float | None = None  # monotonic time of the first /controller/state
        self.diagnostics: list[tuple[float, dict[str, object]]] = []  # (received, plant status)
        #: node fqn -> (monotonic time, level, message) of its last status on /diagnostics
        self.heartbeats: dict[str, tuple[float, int, str]] = {}
        #: node fqn -> its last status: level, message and key/values
        self.statuses: dict[str, dict[str, object]] = {}
        self._threads = [
            threading.Thread(target=self._watch, args=(TOPIC_CONTROLLER_STATE, self._on_state),
                             daemon=True, name="monitor-controller-state"),
            threading.Thread(target=self._watch, args=(TOPIC_DIAGNOSTICS, self._on_diagnostics),
                             daemon=True, name="monitor-diagnostics"),
        ]
        if tracking_node is not None:
            self._threads.append(threading.Thread(
                target=self._watch_events, args=(f"{tracking_node}/transition_event",),
                daemon=True, name="monitor-tracking"))
        for t in self._threads:
            t.start()

    # -- collection (monitor threads) -----------------------------------------------------------
    def _watch(self, topic: str, handle: Callable[[object], None]) -> None:
        from robot_control.bus.client import BusClientError

        while not self._stop.is_set():
            with self._graph_lock:
                samples = self.client.iter_topic(topic, timeout_s=1.0, discovery_s=0.5)
                try:
                    first = next(samples)
                except StopIteration:
                    continue  # found a publisher but it said nothing for a second: look again
                except BusClientError:
                    samples = None  # nobody publishes it yet
            if samples is None:
                self._stop.wait(0.2)
                continue
            try:
                handle(first)
                for msg in samples:
                    if self._stop.is_set():
                        break
                    handle(msg)
            finally:
                samples.close()

    def _watch_events(self, topic: str) -> None:
        """Follow a managed node's lifecycle_msgs/TransitionEvent topic: one reader for the whole
        run (the events are volatile and rare: a reader made again could miss one)."""
        from cyclonedds.internal import InvalidSample

        from robot_control.bus import dds_config
        from robot_control.bus.dds_context import delete_entity
        from robot_control.bus.messages import dds_topic_name

        reader = self.client.context.reader(dds_topic_name(topic),
                                            "lifecycle_msgs/msg/TransitionEvent", dds_config.DEFAULT)
        self.client.graph.hide(reader)
        try:
            while not self._stop.wait(0.01):
                for event in reader.take(N=64):
                    if not isinstance(event, InvalidSample):
                        self._on_tracking_event(event)
        finally:
            delete_entity(reader)

    def _on_tracking_event(self, event) -> None:
        self.tracking = event.goal_state.label == "active"
        if self.tracking and self.tracking_since is None:
            self.tracking_since = time.monotonic()

    def _on_state(self, msg) -> None:
        if self.running_since is None:
            self.running_since = time.monotonic()
        if self.tracking:
            self.errors.add(list(msg.name), np.asarray(msg.position, dtype=float))

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
        """Wait for a plant status received after monotonic time ``after`` (True if one came)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.diagnostics and self.diagnostics[-1][0] > after:
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
        """The stable summary keys (design.md) plus the plant's own figures."""
        until = time.monotonic() if until is None else until
        out: dict[str, object] = {
            "duration_s": None if self.running_since is None else until - self.running_since,
            "tracking_s": None if self.tracking_since is None else until - self.tracking_since,
        }
        plant = self.diagnostics[-1][1] if self.diagnostics else {}
        out["rate_hz"] = self._achieved_rate(plant)
        out["latency_us"] = {k: plant.get(f"latency_{k}_us") for k in ("p50", "p99", "max")}
        out["missed_deadlines"] = plant.get("missed_deadlines")
        out["commands"] = plant.get("commands_applied")
        out["commands_rejected"] = plant.get("commands_rejected")
        out["steps"] = plant.get("steps")
        out["velocity_stops"] = plant.get("velocity_stops")
        out["commands_foreign"] = plant.get("commands_foreign")
        steps, missed = plant.get("steps"), plant.get("missed_deadlines")
        out["missed_deadline_ratio"] = (missed / steps if isinstance(steps, int) and steps
                                        and isinstance(missed, int) else None)
        out.update(self.errors.summary())
        out["joint_names"] = self.errors.names
        out["controller_state_samples"] = self.errors.count
        out["plant"] = plant
        out["node_status"] = {node: dict(status) for node, status in sorted(self.statuses.items())}
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
