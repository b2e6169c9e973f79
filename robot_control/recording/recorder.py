"""``robot-control bag record``: live topics of the bus into a rosbag2 directory, as
``ros2 bag record -s mcap`` writes it, with no ROS 2 installed.

The recorder is a node of the graph (``/rosbag2_recorder`` by default, on the Cyclone DDS
backend: parameter services, /rosout, listed by ``ros2 node info``). Every 100 ms (rosbag2's
topic polling interval) it looks for new topics to record; for each it opens a reader with the
QoS the publishers offer (reliable / transient local only if all of them offer it) and a deep
history, so a recorder that stalls for a while catches up instead of losing samples. Samples
are taken serialized — the CDR bytes as they came off the wire — and go to the bag unchanged,
stamped with the time they were sent (see :func:`log_time`). SIGINT or SIGTERM stop it
cleanly: what was received is written, then the MCAP summary and metadata.yaml, so the bag is
always complete. Every CHECKPOINT_S the chunk so far and metadata.yaml go to the kernel
(writer.py), so a recorder killed with SIGKILL loses at most the last second
(``robot-control bag reindex`` restores the index), and a full disk stops the recording with one
line and the bag closed and readable.

Losses are counted, not guessed: ``lost`` is DDS's SAMPLE_LOST count (gaps in a publisher's
sequence the reader could not recover), and ``full_takes`` counts takes that found the reader's
history full (older samples may then have been overwritten); both are zero when nothing was
dropped on the recorder's side.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cyclonedds.core import GuardCondition, Listener, ReadCondition, WaitSet

from robot_control.bus.dds.context import acquire_context, release_context
from robot_control.bus.dds.graph import GraphView
from robot_control.bus.dds.messages import MESSAGE_TYPES
from robot_control.bus.dds.node import DdsNode
from robot_control.recording import bag
from robot_control.recording.lifecycle import spinning, stop_on_signals
from robot_control.recording.serialized import _ANY_STATE, take_serialized
from robot_control.recording.writer import BagWriter

HISTORY_DEPTH = 10_000  # per reader: 10 s of a 1 kHz topic before a stalled recorder loses data
POLL_S = 0.1  # rosbag2's default --polling-interval for new topics
CLOCK_AGREEMENT_NS = 1_000_000_000  # see log_time
WAIT_S = 0.05  # longest wait for data, so stop requests and deadlines are seen promptly
CHECKPOINT_S = 1.0  # chunk and metadata.yaml handed to the kernel: what a SIGKILL can lose


@dataclass
class TopicStats:
    """What was recorded on one topic, and what may have been lost on the way."""

    topic: str
    ros_type: str
    messages: int = 0
    lost: int = 0
    full_takes: int = 0
    largest_take: int = 0

    @property
    def dropped(self) -> int:
        return self.lost + self.full_takes


@dataclass
class RecordStats:
    path: str
    topics: dict[str, TopicStats] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)  # topic -> why it was not recorded
    first_ns: int | None = None
    last_ns: int | None = None

    @property
    def messages(self) -> int:
        return sum(s.messages for s in self.topics.values())

    @property
    def dropped(self) -> int:
        return sum(s.dropped for s in self.topics.values())

    @property
    def duration_s(self) -> float:
        return 0.0 if self.first_ns is None else (self.last_ns - self.first_ns) * 1e-9

    def report(self) -> str:
        """A short text summary (what ``ros2 bag record`` logs, plus the loss counts)."""
        lines = [f"recorded {self.path}: {self.messages} messages in {self.duration_s:.3f} s, "
                 f"dropped {self.dropped}"]
        span = max(self.duration_s, 1e-9)
        for s in sorted(self.topics.values(), key=lambda s: s.topic):
            rate = (s.messages - 1) / span if s.messages > 1 else 0.0
            lines.append(f"  {s.topic} [{s.ros_type}]: {s.messages} messages (~{rate:.1f} Hz), "
                         f"lost {s.lost}, full-history takes {s.full_takes}, "
                         f"largest take {s.largest_take}")
        lines += [f"  not recorded: {topic}: {why}" for topic, why in sorted(self.skipped.items())]
        return "\n".join(lines)


@dataclass
class _Recording:
    stats: TopicStats
    connection: object
    reader: object
    condition: ReadCondition


class Recorder:
    """Records topics of the bus into a new rosbag2 directory (see the module docstring)."""

    def __init__(self, path: str | Path, topics: Sequence[str] = (), all_topics: bool = False,
                 node_name: str = "rosbag2_recorder", ros_args: Sequence[str] = (),
                 depth: int = HISTORY_DEPTH):
        if not topics and not all_topics:
            raise ValueError("name the topics to record, or record all of them")
        self.wanted = {t if t.startswith("/") else "/" + t for t in topics}
        self.all_topics = all_topics
        self.depth = depth
        self.stats = RecordStats(str(path))
        self._writer = BagWriter(path)
        self._recordings: dict[str, _Recording] = {}
        self._lock = threading.Lock()
        self._closed = False
        try:
            self.node = DdsNode(node_name, list(ros_args))
        except BaseException:  # e.g. Ctrl-C while joining the graph: still leave a valid bag
            self._writer.close()
            raise
        self._context = acquire_context()
        self._graph = GraphView(self._context)
        self._waitset = WaitSet(self._context.participant)
        # a waitset with nothing attached returns at once: this keeps it waiting before any topic
        self._idle = GuardCondition(self._context.participant)
        self._waitset.attach(self._idle)

    # -- topics
    def _candidates(self) -> dict[str, list]:
        """Topic -> its publishers, for the topics to record that have publishers now."""
        out: dict[str, list] = {}
        for e in self._graph.visible_endpoints():
            if e.is_writer and e.ros_kind == "topic" and (self.all_topics
                                                         or e.ros_name in self.wanted):
                out.setdefault(e.ros_name, []).append(e)
        return out

    def discover(self) -> None:
        """Subscribe to every wanted topic that has appeared since the last look."""
        self._graph.update()
        for topic, pubs in self._candidates().items():
            if topic in self._recordings or topic in self.stats.skipped:
                continue
            types = sorted({p.ros_type for p in pubs})
            if len(types) != 1:
                self._skip(topic, f"publishers of several types {types}")
            elif types[0] not in MESSAGE_TYPES or types[0] not in bag.typestore().types:
                self._skip(topic, f"type {types[0]} is not one robot-control can subscribe to")
            else:
                self._subscribe(topic, types[0], [bag.qos_of_endpoint(p.qos) for p in pubs])

    def _skip(self, topic: str, why: str) -> None:
        self.stats.skipped[topic] = why
        self.node.get_logger().warn(f"not recording {topic}: {why}")

    def _subscribe(self, topic: str, ros_type: str, offers: list) -> None:
        stats = TopicStats(topic, ros_type)
        profile = bag.reader_profile(offers, self.depth)
        reader = self.node.create_serialized_reader(ros_type, topic, profile)
        reader.set_listener(Listener(on_sample_lost=lambda _r, s: _set_lost(stats, s)))
        condition = ReadCondition(reader, _ANY_STATE)
        self._waitset.attach(condition)
        with self._lock:
            connection = self._writer.add_topic(topic, ros_type, offers)
            self._recordings[topic] = _Recording(stats, connection, reader, condition)
            self.stats.topics[topic] = stats
        self.node.get_logger().info(f"Subscribed to topic '{topic}'")

    # -- data
    def drain(self) -> int:
        """Take everything the readers hold and write it to the bag; the number of messages."""
        written = 0
        with self._lock:
            for rec in self._recordings.values():
                samples = take_serialized(rec.reader, self.depth)
                if not samples:
                    continue
                now = time.time_ns()
                rec.stats.largest_take = max(rec.stats.largest_take, len(samples))
                if len(samples) >= self.depth:
                    rec.stats.full_takes += 1
                for data, info in samples:
                    self._writer.write(rec.connection, log_time(info.source_timestamp, now), data)
                rec.stats.messages += len(samples)
                written += len(samples)
                if self.stats.first_ns is None:
                    self.stats.first_ns = now
                self.stats.last_ns = now
        return written

    def record(self, duration_s: float | None = None, stop: threading.Event | None = None
               ) -> RecordStats:
        """Record until ``stop`` is set, SIGINT/SIGTERM, or ``duration_s`` after the first message;
        then close the bag. Returns what was recorded."""
        stop = stop or threading.Event()
        with stop_on_signals(stop), spinning(self.node):
            try:
                self._loop(duration_s, stop)
            finally:
                self.close()
        return self.stats

    def _loop(self, duration_s: float | None, stop: threading.Event) -> None:
        next_poll = 0.0
        next_checkpoint = time.monotonic() + CHECKPOINT_S
        first_at = None
        while not stop.is_set():
            now = time.monotonic()
            if now >= next_poll:
                self.discover()
                next_poll = now + POLL_S
            if now >= next_checkpoint:
                with self._lock:
                    self._writer.checkpoint()
                next_checkpoint = now + CHECKPOINT_S
            self._waitset.wait(int(WAIT_S * 1e9))
            if self.drain() and first_at is None:
                first_at = time.monotonic()
            if duration_s is not None and first_at is not None \
                    and time.monotonic() - first_at >= duration_s:
                return

    def close(self) -> None:
        """Write what is still pending, close the bag (MCAP summary, metadata.yaml), leave."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._writer.failed is None:  # after a failed write (disk full) the bag is closed
                self.drain()
        finally:
            with self._lock:
                self._writer.close()
            for rec in self._recordings.values():
                rec.reader.set_listener(None)
                self._waitset.detach(rec.condition)
            self._waitset.detach(self._idle)
            self.node.shutdown()
            release_context(self._context)


def log_time(source_ns: int, taken_ns: int) -> int:
    """A sample's bag timestamp: when it was sent (its DDS source timestamp) if that is within the
    last second of our clock — a publisher on this host or one kept in sync — else when it was
    taken. Samples taken in one batch thus keep their real spacing, and a skewed remote clock does
    not move them."""
    return source_ns if taken_ns - CLOCK_AGREEMENT_NS <= source_ns <= taken_ns else taken_ns


def _set_lost(stats: TopicStats, status) -> None:
    stats.lost = int(status.total_count)

