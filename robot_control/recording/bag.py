"""rosbag2 directories (metadata.yaml + one MCAP file) read with the ``rosbags`` library (written by
writer.py).

rosbags writes what ``ros2 bag record -s mcap`` writes: metadata.yaml version 9 (topics with
their types, CDR serialization, offered QoS profiles, REP-2011 type hashes and message counts)
and an MCAP file with ``ros2msg`` schemas, channels carrying ``offered_qos_profiles`` and a
summary section — so ``ros2 bag info|play``, Foxglove and PlotJuggler open it. Message
definitions and hashes come from rosbags' typestore of ROS 2 Jazzy; this module only maps QoS
between DDS and rosbag2 and keeps the typestore in one place.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from rosbags.interfaces import (
    Connection,
    Qos,
    QosDurability,
    QosHistory,
    QosLiveliness,
    QosReliability,
    QosTime,
)
from rosbags.rosbag2 import Reader, ReaderError
from rosbags.serde import SerdeError
from rosbags.typesys import Stores, get_typestore

from robot_control.bus.qos import QosProfile
from robot_control.foundation.safe_yaml import load_file

__all__ = ["BagError", "Connection", "Qos", "RecordedMessage", "decode", "qos_of_endpoint",
           "qos_of_profile", "read_messages", "reader_profile", "stamp_text", "typestore"]

# rmw's "infinite" duration as rosbag2 prints it (RMW_DURATION_INFINITE = INT64_MAX ns)
INFINITE_NS = 2**63 - 1


class BagError(RuntimeError):
    """A bag that cannot be written or read (exists already, missing, unknown type)."""


@cache
def typestore():
    """rosbags' typestore of ROS 2 Jazzy: message definitions, hashes and CDR (de)serialisers."""
    return get_typestore(Stores.ROS2_JAZZY)


# --- QoS ---------------------------------------------------------------------------------------


def _qos_time(ns: int | None) -> QosTime:
    ns = INFINITE_NS if ns is None or ns >= INFINITE_NS else int(ns)
    return QosTime(ns // 1_000_000_000, ns % 1_000_000_000)


def qos_of_profile(profile: QosProfile) -> Qos:
    """The offered QoS rosbag2 stores for a publisher with one of rmw's profiles."""
    lifespan = None if profile.lifespan_s is None else round(profile.lifespan_s * 1e9)
    return Qos(
        history=QosHistory.KEEP_LAST,
        depth=profile.depth,
        reliability=QosReliability.RELIABLE if profile.reliable else QosReliability.BEST_EFFORT,
        durability=QosDurability.TRANSIENT_LOCAL if profile.transient_local
        else QosDurability.VOLATILE,
        deadline=_qos_time(None),
        lifespan=_qos_time(lifespan),
        liveliness=QosLiveliness.AUTOMATIC,
        liveliness_lease_duration=_qos_time(None),
        avoid_ros_namespace_conventions=False,
    )


def qos_of_endpoint(qos) -> Qos:
    """The offered QoS of a discovered DDS writer (cyclonedds ``Qos`` of a DCPSPublication), as
    rmw_cyclonedds' dds_qos_to_rmw_qos reads it."""
    from cyclonedds.qos import Policy

    def get(policy, default=None):
        try:
            return qos[policy]
        except (KeyError, TypeError):
            return default

    history = get(Policy.History)
    keep_all = history == Policy.History.KeepAll
    depth = 0 if keep_all or history is None else history.depth
    reliable = isinstance(get(Policy.Reliability), Policy.Reliability.Reliable)
    durability = get(Policy.Durability)
    liveliness = get(Policy.Liveliness)
    manual = isinstance(liveliness, Policy.Liveliness.ManualByTopic)
    return Qos(
        history=QosHistory.KEEP_ALL if keep_all else QosHistory.KEEP_LAST,
        depth=depth,
        reliability=QosReliability.RELIABLE if reliable else QosReliability.BEST_EFFORT,
        durability=QosDurability.TRANSIENT_LOCAL if durability == Policy.Durability.TransientLocal
        else QosDurability.VOLATILE,
        deadline=_qos_time(getattr(get(Policy.Deadline), "deadline", None)),
        lifespan=_qos_time(getattr(get(Policy.Lifespan), "lifespan", None)),
        liveliness=QosLiveliness.MANUAL_BY_TOPIC if manual else QosLiveliness.AUTOMATIC,
        liveliness_lease_duration=_qos_time(getattr(liveliness, "lease_duration", None)),
        avoid_ros_namespace_conventions=False,
    )


def reader_profile(offers: Sequence[Qos], depth: int) -> QosProfile:
    """A profile every one of these publishers can serve (rosbag2's adaptation to offers):
    reliable only if all offer it, transient local only if all offer it."""
    reliable = bool(offers) and all(o.reliability == QosReliability.RELIABLE for o in offers)
    latched = bool(offers) and all(o.durability == QosDurability.TRANSIENT_LOCAL for o in offers)
    return QosProfile(depth=depth, reliable=reliable, transient_local=latched)


def writer_profile(offers: Sequence[Qos]) -> QosProfile:
    """The profile a player publishes a recorded topic with: what its recorded publishers offered
    (reliable or transient local only if all of them were; the largest depth)."""
    depth = max((o.depth for o in offers if o.history == QosHistory.KEEP_LAST), default=10)
    return reader_profile(offers, max(depth, 1))


# --- reading -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class RecordedMessage:
    topic: str
    ros_type: str
    timestamp_ns: int
    data: bytes
    connection: Connection


# what a damaged bag raises from inside rosbags' reading and CDR decoding
DAMAGE = (ReaderError, SerdeError, struct.error, ValueError, TypeError, IndexError, KeyError, OverflowError,
          EOFError)


def stamp_text(ns: int) -> str:
    """A bag time for messages: seconds.nanoseconds (since the epoch, or since an offline run's
    start)."""
    return f"t = {ns // 1_000_000_000}.{ns % 1_000_000_000:09d} s"


def _reader(path: str | Path) -> Reader:
    """An open rosbags Reader, or one BagError line saying what is wrong and how to recover."""
    path = Path(path)
    recover = f"`robot-control bag reindex {path}` recovers what is readable"
    if not (path / "metadata.yaml").is_file():
        if path.is_dir() and any(path.glob("*.mcap")):
            raise BagError(f"{path} has no metadata.yaml (its recorder was killed?): {recover}")
        raise BagError(f"{path} is not a rosbag2 directory (no metadata.yaml)")
    load_file(path / "metadata.yaml", BagError)  # bounded before rosbags parses it
    try:
        reader = Reader(path)
        reader.open()
    except DAMAGE as exc:
        raise BagError(f"{path}: cannot be read ({exc}): {recover}") from None
    return reader


def read_messages(path: str | Path, topics: Sequence[str] | None = None
                  ) -> Iterator[RecordedMessage]:
    """The serialized messages of a bag in time order (of the given topics, or all); a damaged
    part ends it with one BagError line naming the last message read."""
    reader = _reader(path)
    last = "before the first message"
    try:
        connections = [c for c in reader.connections if topics is None or c.topic in topics]
        if not connections:
            return  # (rosbags reads every connection when given none)
        for connection, timestamp, data in reader.messages(connections=connections):
            last = f"after {connection.topic} at {stamp_text(timestamp)}"
            yield RecordedMessage(connection.topic, connection.msgtype, timestamp, bytes(data),
                                  connection)
    except DAMAGE as exc:
        raise BagError(f"{path}: unreadable {last} ({exc or type(exc).__name__}): "
                       f"`robot-control bag reindex {path}` keeps what is readable") from None
    finally:
        reader.close()


def bag_connections(path: str | Path) -> list[Connection]:
    """The topics of a bag (name, type, count in ``msgcount``, offered QoS in ``ext``)."""
    reader = _reader(path)
    try:
        return list(reader.connections)
    finally:
        reader.close()


def decode(message: RecordedMessage):
    """A recorded message as rosbags' message object (fields as in the .msg; arrays as numpy);
    one BagError line naming its topic and time if its bytes are not that message."""
    try:
        return typestore().deserialize_cdr(message.data, message.ros_type)
    except DAMAGE as exc:
        raise BagError(f"{message.topic} at {stamp_text(message.timestamp_ns)}: not a valid "
                       f"{message.ros_type} ({exc or type(exc).__name__})") from None


def bag_info(path: str | Path) -> dict:
    """What ``ros2 bag info`` shows: files, size, storage, start, duration, counts per topic."""
    path = Path(path)
    reader = _reader(path)
    try:
        meta = load_file(path / "metadata.yaml", BagError)["rosbag2_bagfile_information"]
        files = [Path(f).name for f in meta["relative_file_paths"]]
        return {
            "files": files,
            "size_bytes": sum((path / f).stat().st_size for f in files),
            "storage": meta["storage_identifier"],
            "start_ns": reader.start_time if reader.message_count else 0,
            "duration_ns": reader.end_time - 1 - reader.start_time if reader.message_count else 0,
            "messages": reader.message_count,
            "topics": [{"name": c.topic, "type": c.msgtype, "count": c.msgcount,
                        "serialization_format": c.ext.serialization_format}
                       for c in reader.connections],
        }
    finally:
        reader.close()
