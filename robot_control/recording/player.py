"""``robot-control bag play``: a rosbag2 directory replayed onto the bus, as ``ros2 bag play``.

The player is a node (``/rosbag2_player`` by default) with one writer per recorded topic whose
type the DDS backend knows, publishing with the QoS the recorded publishers offered. Messages
go out serialized, exactly as recorded (headers are not restamped, as ros2 bag play), at the
recorded spacing divided by ``rate``; the schedule is absolute, so a late message does not
delay the ones after it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from robot_control.bus.dds.messages import MESSAGE_TYPES
from robot_control.bus.dds.node import DdsNode
from robot_control.recording import bag
from robot_control.recording.lifecycle import spinning, stop_on_signals
from robot_control.recording.serialized import write_serialized

ACK_TIMEOUT_S = 5.0  # longest wait for subscribers to acknowledge the last messages


@dataclass
class PlayStats:
    published: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    wall_s: float = 0.0
    max_late_s: float = 0.0

    @property
    def messages(self) -> int:
        return sum(self.published.values())

    def report(self) -> str:
        lines = [f"played {self.messages} messages in {self.wall_s:.3f} s "
                 f"(latest {self.max_late_s * 1e3:.1f} ms behind schedule)"]
        lines += [f"  {t}: {n} messages" for t, n in sorted(self.published.items())]
        lines += [f"  not played: {t}: {why}" for t, why in sorted(self.skipped.items())]
        return "\n".join(lines)


class Player:
    """Publishes a bag's messages on the bus (see the module docstring)."""

    def __init__(self, path: str | Path, rate: float = 1.0, topics: Sequence[str] | None = None,
                 node_name: str = "rosbag2_player", ros_args: Sequence[str] = ()):
        if not rate > 0:
            raise ValueError(f"rate must be positive, got {rate}")
        self.path = Path(path)
        self.rate = rate
        self.stats = PlayStats()
        self.topics = None if topics is None else [t if t.startswith("/") else "/" + t
                                                   for t in topics]
        connections = bag.bag_connections(self.path)  # BagError for a directory that is no bag
        self.node = DdsNode(node_name, list(ros_args))
        self._writers: dict[int, object] = {}
        for c in connections:
            if self.topics is not None and c.topic not in self.topics:
                continue
            if c.msgtype not in MESSAGE_TYPES:
                self.stats.skipped[c.topic] = f"type {c.msgtype} is not one robot-control publishes"
                continue
            profile = bag.writer_profile(c.ext.offered_qos_profiles)
            self._writers[c.id] = self.node.create_serialized_writer(c.msgtype, c.topic, profile)
            self.stats.published.setdefault(c.topic, 0)

    def play(self, delay_s: float = 0.0, stop: threading.Event | None = None) -> PlayStats:
        """Publish every message on schedule (after delay_s, e.g. to let subscribers match)."""
        stop = stop or threading.Event()
        with stop_on_signals(stop), spinning(self.node):
            if not stop.wait(delay_s):
                self._play(stop)
                self._wait_for_acks(ACK_TIMEOUT_S)
        return self.stats

    def _wait_for_acks(self, timeout_s: float) -> None:
        """Let reliable subscribers acknowledge the last messages before the writers go (a
        player that leaves right after its last write can lose the tail)."""
        deadline = time.monotonic() + timeout_s
        for writer in self._writers.values():
            writer.wait_for_acks(max(0, int((deadline - time.monotonic()) * 1e9)))

    def _play(self, stop: threading.Event) -> None:
        started = time.monotonic()
        first_ns = None
        for msg in bag.read_messages(self.path, self.topics):
            writer = self._writers.get(msg.connection.id)
            if writer is None:
                continue
            if first_ns is None:  # the schedule starts when the first message goes out
                first_ns, started = msg.timestamp_ns, time.monotonic()
            due = started + (msg.timestamp_ns - first_ns) * 1e-9 / self.rate
            late = time.monotonic() - due
            if (late < 0 and stop.wait(-late)) or stop.is_set():
                break
            self.stats.max_late_s = max(self.stats.max_late_s, late)
            write_serialized(writer, msg.data)
            self.stats.published[msg.topic] += 1
        self.stats.wall_s = time.monotonic() - started
