"""Writing rosbag2 directories that survive their writer: a killed process, a full disk.

rosbags' Writer keeps the current MCAP chunk in memory and writes metadata.yaml only when it
closes, so a recorder killed with SIGKILL left a 0-byte MCAP or one without metadata.yaml, and a
full disk left three chained OSErrors and an unreadable file. ``BagWriter`` wraps it:

- metadata.yaml (rosbag2's version 9, what ``ros2 bag info`` and rosbags read) is written when
  the bag is opened, again for each new topic, and at every ``checkpoint``;
- ``checkpoint`` closes the current chunk and hands it to the kernel, so a process killed
  afterwards loses only what came after it (the recorder checkpoints every second);
- a write that fails (ENOSPC, EFBIG past a file-size limit, EDQUOT, EIO) stops the bag: the
  space the writer reserved in the bag directory is given back, the torn tail is cut, the MCAP
  gets its summary back (``mcap_index.reindex``: if even then there is no room for it, the last
  chunks are given up until there is, so the file always ends with a valid summary and end
  magic), metadata.yaml is rewritten, and one BagError line says what happened and what the bag
  holds.

``reindex_bag`` does the same to a bag found in that state (``robot-control bag reindex``), as
``ros2 bag reindex`` does. Checkpoints go to the page cache, not to the disk (no fsync): they
survive the process, not a power cut.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from rosbags.interfaces import Connection, Qos
from rosbags.rosbag2 import StoragePlugin, Writer, WriterError
from rosbags.rosbag2.metadata import dump_qos_v9
from rosbags.rosbag2.storage_mcap import get_qos

from robot_control.foundation.file_locks import try_lock
from robot_control.foundation.safe_yaml import load_file
from robot_control.recording import mcap_index
from robot_control.recording.bag import BagError, stamp_text, typestore

NO_MESSAGES = 2**63 - 1  # rosbags' start time of a bag without messages
#: space a writer holds in its bag directory while it records, given back when a write fails, so
#: that on a full disk the MCAP summary and metadata.yaml have room (a longer summary than this
#: costs the last chunks instead: mcap_index.reindex)
RESERVE_BYTES = 128 * 1024
RESERVE_NAME = ".space_reserve"


@dataclass
class TopicRecord:
    """One topic as metadata.yaml lists it."""

    name: str
    ros_type: str
    qos: list[Qos]
    count: int
    type_hash: str
    serialization_format: str = "cdr"


@dataclass
class Reindexed:
    """What ``reindex_bag`` kept and lost."""

    path: Path
    files: list[str]
    messages: int
    lost_bytes: int
    problems: list[str] = field(default_factory=list)
    last_ns: int | None = None

    def report(self) -> str:
        kept = f"kept {self.messages} messages" + (
            f" (up to {stamp_text(self.last_ns)})" if self.last_ns is not None else "")
        lost = (f"; lost {self.lost_bytes} unreadable bytes at the end ({'; '.join(self.problems)})"
                if self.lost_bytes else "; nothing lost")
        return f"reindexed {self.path}: {kept}{lost}"


def write_metadata(path: Path, files: Sequence[str], topics: Sequence[TopicRecord], start_ns: int,
                   end_ns: int) -> None:
    """metadata.yaml as rosbags (and ``ros2 bag record -s mcap``) writes it, replaced atomically."""
    count = sum(t.count for t in topics)
    start = start_ns if count else NO_MESSAGES
    span = {"duration": {"nanoseconds": max(0, end_ns - start_ns) if count else 0},
            "starting_time": {"nanoseconds_since_epoch": start}}
    info = {
        "version": 9,
        "storage_identifier": "mcap",
        "relative_file_paths": list(files),
        **span,
        "message_count": count,
        "topics_with_message_count": [
            {"topic_metadata": {"name": t.name, "type": t.ros_type,
                                "serialization_format": t.serialization_format,
                                "offered_qos_profiles": dump_qos_v9(t.qos),
                                "type_description_hash": t.type_hash},
             "message_count": t.count} for t in topics],
        "compression_format": "",
        "compression_mode": "",
        "files": [{"path": f, **span, "message_count": count} for f in files],
        "custom_data": None,
        "ros_distro": "rosbags",
    }
    tmp = path / "metadata.yaml.tmp"
    tmp.write_text(yaml.safe_dump({"rosbag2_bagfile_information": info}, sort_keys=False))
    os.replace(tmp, path / "metadata.yaml")


class BagWriter:
    """A rosbag2 directory (MCAP) being written; see the module docstring."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.failed: BagError | None = None
        try:
            self._writer = Writer(self.path, version=Writer.VERSION_LATEST,
                                  storage_plugin=StoragePlugin.MCAP)
            self._writer.open()
        except WriterError as exc:
            raise BagError(str(exc)) from exc
        except OSError as exc:
            raise BagError(f"{self.path}: cannot create the bag ({exc.strerror})") from exc
        self._mcap = self._writer.storage.path
        # held while writing, so a `bag reindex` of a live recording is refused, not done
        self._lock = _locked(self._mcap)
        self._reserve = _reserve(self.path / RESERVE_NAME)
        self._guarded(self._write_metadata)

    # -- writing
    def add_topic(self, topic: str, ros_type: str, offers: Sequence[Qos]) -> Connection:
        """Register a topic (CDR, its type's definition and hash, the publishers' offered QoS)."""
        if ros_type not in typestore().types:
            raise BagError(f"{topic}: no message definition for {ros_type} in rosbags' Jazzy "
                           "typestore")
        connection = self._writer.add_connection(topic, ros_type, typestore=typestore(),
                                                 serialization_format="cdr",
                                                 offered_qos_profiles=list(offers))
        self._guarded(self._write_metadata)
        return connection

    def write(self, connection: Connection, timestamp_ns: int, data: bytes) -> None:
        self._guarded(self._writer.write, connection, timestamp_ns, data)

    def checkpoint(self) -> None:
        """Close the current chunk, hand it to the kernel, bring metadata.yaml up to date."""
        self._guarded(self._checkpoint)

    def close(self) -> None:
        """Write the MCAP summary and the final metadata.yaml (nothing more after a failure)."""
        _give_back(self._reserve)  # first: the summary may need the room
        if self.failed is None:
            self._guarded(self._writer.close)
        self._unlock()

    # -- inside
    def _checkpoint(self) -> None:
        storage = self._writer.storage
        if storage.chunk.bio.tell():
            storage.close_chunk()
        storage.bio.flush()
        self._write_metadata()

    def _write_metadata(self) -> None:
        w = self._writer
        topics = [TopicRecord(c.topic, c.msgtype, list(c.ext.offered_qos_profiles),
                              w.counts[c.id], c.digest, c.ext.serialization_format)
                  for c in w.connections]
        write_metadata(self.path, [self._mcap.name], topics, w.min_timestamp, w.max_timestamp)

    def _unlock(self) -> None:
        if self._lock >= 0:
            os.close(self._lock)
            self._lock = -1

    def _guarded(self, action, *args) -> None:
        if self.failed is not None:
            raise self.failed
        try:
            action(*args)
        except OSError as exc:
            self._fail(exc)

    def _fail(self, exc: OSError) -> None:
        """Stop the bag after a failed write: cut the torn tail, close it readable, one line."""
        storage, self._writer.storage = self._writer.storage, None
        if storage is not None:
            with suppress(OSError):  # flushing the rest fails again: the tail is cut below
                storage.bio.close()
        self._unlock()
        _give_back(self._reserve)
        try:
            closed = reindex_bag(self.path).report()
        except (OSError, BagError) as again:
            closed = (f"could not close it ({again}); `robot-control bag reindex {self.path}` "
                      "recovers it once there is space")
        self.failed = BagError(f"{self.path}: {exc.strerror or exc} writing {self._mcap.name}: "
                               f"recording stopped; {closed}")
        raise self.failed


def _reserve(path: Path) -> Path | None:
    """Hold RESERVE_BYTES of disk in a file at ``path`` (None if there is no room even for it)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    except OSError:
        return None
    try:
        os.posix_fallocate(fd, 0, RESERVE_BYTES)
        return path
    except OSError:
        path.unlink(missing_ok=True)
        return None
    finally:
        os.close(fd)


def _give_back(reserve: Path | None) -> None:
    """Free the disk space a reserve held."""
    if reserve is not None:
        with suppress(OSError):
            reserve.unlink(missing_ok=True)


def _old_hashes(path: Path) -> dict[str, str]:
    """Topic -> type hash from a bag's metadata.yaml, if it has a readable one."""
    try:
        info = load_file(path / "metadata.yaml", BagError)["rosbag2_bagfile_information"]
        return {t["topic_metadata"]["name"]: t["topic_metadata"].get("type_description_hash", "")
                for t in info["topics_with_message_count"]}
    except (BagError, KeyError, TypeError):
        return {}


def reindex_bag(path: str | Path) -> Reindexed:
    """Give a bag whose writer died (no metadata.yaml, an MCAP without summary, a torn or
    corrupted tail) a readable MCAP and a new metadata.yaml, keeping every readable message."""
    path = Path(path)
    files = sorted(path.glob("*.mcap"))
    if not files:
        raise BagError(f"{path}: no MCAP file to reindex")
    _give_back(path / RESERVE_NAME)  # a killed writer's
    hashes = _old_hashes(path)
    topics: dict[str, TopicRecord] = {}
    result = Reindexed(path, [f.name for f in files], 0, 0)
    first = NO_MESSAGES
    for file in files:
        lock = _locked(file)
        try:
            scan = mcap_index.reindex(file)
        except mcap_index.McapError as exc:
            raise BagError(str(exc)) from exc
        finally:
            os.close(lock)
        result.lost_bytes += scan.lost
        if scan.problem and scan.lost:
            result.problems.append(f"{file.name}: {scan.problem}")
        counts = scan.counts
        for cid, (name, ros_type, encoding, metadata) in scan.topics.items():
            topic = topics.setdefault(name, TopicRecord(
                name, ros_type, get_qos(metadata), 0, hashes.get(name) or _type_hash(ros_type),
                encoding))
            topic.count += counts.get(cid, 0)
        for chunk in scan.chunks:
            if chunk.messages:
                t0, t1 = chunk.times
                first = min(first, t0)
                result.last_ns = max(result.last_ns or 0, t1)
    result.messages = sum(t.count for t in topics.values())
    write_metadata(path, result.files, list(topics.values()), first, result.last_ns or 0)
    return result


def _locked(mcap: Path) -> int:
    """A descriptor holding an exclusive lock on an MCAP file (released with it, or when its
    process dies); BagError if a writer holds it."""
    fd = os.open(mcap, os.O_RDONLY)
    if not try_lock(fd):
        os.close(fd)
        raise BagError(f"{mcap} is being written (a recorder is running): stop it first") from None
    return fd


def _type_hash(ros_type: str) -> str:
    return typestore().hash_rihs01(ros_type) if ros_type in typestore().types else ""
