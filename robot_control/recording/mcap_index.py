"""Reindexing an MCAP file that did not end properly (a killed recorder, a full disk), in place.

An MCAP file is a header, a data section of records and, written when the writer closes, a
summary (schemas, channels, one index per chunk, statistics) and a footer pointing at it
(https://mcap.dev/spec). Our writer (rosbags') puts everything of the data section into chunks,
each a self-contained record carrying its schemas, channels and messages, followed by one
message-index record per channel. A writer that dies leaves the complete chunks and a torn last
record, and no summary — which rosbags refuses ("File end magic is invalid").

``reindex`` reads the data section record by record and keeps the longest readable prefix: it
stops at a torn record (a truncated file), at a chunk that does not decompress, parse or match
its checksum (a corrupted file), or at the data-end record of a file that was closed. It then
cuts the file there, writes the missing message indexes of the last chunk kept, and appends a
new summary and footer, as ``ros2 bag reindex`` restores a bag's index: what was readable is
kept, the rest is reported (``Scan.lost``), never guessed.
"""

from __future__ import annotations

import mmap
import os
import struct
import zlib
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

MAGIC = b"\x89MCAP0\r\n"
OP_HEADER, OP_FOOTER, OP_SCHEMA, OP_CHANNEL, OP_MESSAGE = 0x01, 0x02, 0x03, 0x04, 0x05
OP_CHUNK, OP_MESSAGE_INDEX, OP_CHUNK_INDEX, OP_STATISTICS = 0x06, 0x07, 0x08, 0x0B
OP_SUMMARY_OFFSET, OP_DATA_END = 0x0E, 0x0F


class McapError(ValueError):
    """A file that is not an MCAP file at all (no magic, no header)."""


@dataclass
class Chunk:
    """One complete chunk record of the data section and what it holds."""

    start: int  # file offset of the chunk record
    length: int  # of the whole record (opcode and length included)
    compression: str
    compressed_size: int
    uncompressed_size: int
    messages: dict[int, list[tuple[int, int]]] = field(default_factory=lambda: defaultdict(list))
    index_offsets: dict[int, int] = field(default_factory=dict)  # channel -> its message index
    index_end: int = 0  # end of the last message-index record after the chunk

    @property
    def end(self) -> int:
        return self.start + self.length

    @property
    def times(self) -> tuple[int, int]:
        stamps = [t for msgs in self.messages.values() for t, _ in msgs]
        return (min(stamps), max(stamps)) if stamps else (0, 0)

    def indexed(self) -> bool:
        """Whether every channel with messages in it has its message index, right after it."""
        return set(self.index_offsets) == set(self.messages)


@dataclass
class Scan:
    """The readable part of an MCAP file's data section."""

    size: int  # of the file
    keep: int = 0  # offset where the readable prefix ends
    closed: bool = False  # the data-end record was found: the writer closed the file
    problem: str = ""  # why the scan stopped before the end ("" when it did not)
    schemas: dict[int, bytes] = field(default_factory=dict)  # id -> the schema record's body
    channels: dict[int, bytes] = field(default_factory=dict)  # id -> the channel record's body
    topics: dict[int, tuple[str, str, str, bytes]] = field(default_factory=dict)
    chunks: list[Chunk] = field(default_factory=list)

    @property
    def lost(self) -> int:
        """Bytes of the data section after the readable prefix (a closed file's summary is not
        data and is not counted)."""
        return 0 if self.closed else self.size - self.keep

    @property
    def counts(self) -> dict[int, int]:
        out: dict[int, int] = defaultdict(int)
        for chunk in self.chunks:
            for cid, msgs in chunk.messages.items():
                out[cid] += len(msgs)
        return dict(out)


def _string(body: bytes, at: int) -> tuple[str, int]:
    (n,) = struct.unpack_from("<I", body, at)
    if at + 4 + n > len(body):
        raise ValueError("string runs past its record")
    return body[at + 4:at + 4 + n].decode(), at + 4 + n


def _bytes(body: bytes, at: int) -> tuple[bytes, int]:
    (n,) = struct.unpack_from("<I", body, at)
    if at + 4 + n > len(body):
        raise ValueError("byte array runs past its record")
    return body[at + 4:at + 4 + n], at + 4 + n


def _records(data: bytes):
    """(opcode, body) of each record in a byte string of records (a chunk's content)."""
    at = 0
    while at < len(data):
        op, n = struct.unpack_from("<BQ", data, at)
        if at + 9 + n > len(data):
            raise ValueError(f"a record of {n} bytes runs past the chunk's end")
        yield op, data[at + 9:at + 9 + n], at
        at += 9 + n


def _decompress(data: bytes, compression: str, size: int) -> bytes:
    if compression == "":
        return data
    if compression == "zstd":
        import zstandard

        return zstandard.ZstdDecompressor().decompress(data, max_output_size=size)
    if compression == "lz4":
        import lz4.frame

        return lz4.frame.decompress(data)
    raise ValueError(f"unknown chunk compression '{compression}'")


def _read_chunk(scan: Scan, start: int, body: bytes) -> Chunk:
    """A chunk's messages, schemas and channels (ValueError/struct.error if it is damaged)."""
    _, _, usize, crc = struct.unpack_from("<QQQI", body, 0)
    compression, at = _string(body, 28)
    (csize,) = struct.unpack_from("<Q", body, at)
    if at + 8 + csize > len(body):
        raise ValueError("compressed data runs past the chunk record")
    content = _decompress(body[at + 8:at + 8 + csize], compression, usize)
    if len(content) != usize:
        raise ValueError(f"chunk holds {len(content)} bytes, its header says {usize}")
    if crc and zlib.crc32(content) != crc:
        raise ValueError("chunk checksum mismatch")
    chunk = Chunk(start, 9 + len(body), compression, csize, usize)
    chunk.index_end = chunk.end
    for op, rec, offset in _records(content):
        if op == OP_MESSAGE:
            cid, _, log_time = struct.unpack_from("<HIQ", rec, 0)
            if cid not in scan.channels:
                raise ValueError(f"a message on channel {cid}, which no record defined")
            chunk.messages[cid].append((log_time, offset))
        else:
            _definition(scan, op, rec)
    return chunk


def _definition(scan: Scan, op: int, rec: bytes) -> None:
    """Remember a schema or channel record (others carry nothing the summary needs)."""
    if op == OP_SCHEMA:
        (sid,) = struct.unpack_from("<H", rec, 0)
        scan.schemas[sid] = rec
    elif op == OP_CHANNEL:
        cid, sid = struct.unpack_from("<HH", rec, 0)
        topic, at = _string(rec, 4)
        encoding, at = _string(rec, at)
        metadata, _ = _bytes(rec, at)
        schema = _string(scan.schemas[sid], 2)[0] if sid in scan.schemas else ""
        scan.channels[cid] = rec
        scan.topics[cid] = (topic, schema, encoding, metadata)


def scan(path: str | Path) -> Scan:
    """The readable prefix of an MCAP file's data section (see the module docstring)."""
    with open(path, "rb") as fh:
        if os.fstat(fh.fileno()).st_size == 0:
            raise McapError(f"{path} is empty (its writer died before writing anything)")
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return _scan(path, data)


def _scan(path: str | Path, data) -> Scan:
    result = Scan(size=len(data))
    if data[:8] != MAGIC or len(data) < 17 or data[8] != OP_HEADER:
        raise McapError(f"{path} is not an MCAP file (no MCAP magic and header)")
    at = 17 + struct.unpack_from("<Q", data, 9)[0]
    result.keep = min(at, len(data))
    last: Chunk | None = None
    while at < len(data):
        if at + 9 > len(data):
            result.problem = "the file ends inside a record"
            break
        op, n = struct.unpack_from("<BQ", data, at)
        if at + 9 + n > len(data):
            result.problem = "the file ends inside a record"
            break
        if op in (OP_DATA_END, OP_FOOTER):
            result.closed = True
            break
        body = data[at + 9:at + 9 + n]
        try:
            if op == OP_MESSAGE_INDEX and last is not None:
                (cid,) = struct.unpack_from("<H", body, 0)
                last.index_offsets[cid] = at
                last.index_end = at + 9 + n
            elif op == OP_CHUNK:
                if last is not None and not last.indexed():
                    result.problem = "a chunk lacks message indexes"
                    break
                last = _read_chunk(result, at, body)
                result.chunks.append(last)
            else:
                _definition(result, op, body)
        except (ValueError, struct.error, KeyError) as exc:
            result.problem = f"unreadable record at byte {at} ({exc})"
            break
        at += 9 + n
        result.keep = at
    if last is not None and not last.indexed():  # its indexes get rewritten after it
        last.index_offsets.clear()
        result.keep = last.end
    return result


# --- writing the summary -----------------------------------------------------------------------


def _record(op: int, body: bytes) -> bytes:
    return struct.pack("<BQ", op, len(body)) + body


def _message_index(cid: int, msgs: list[tuple[int, int]]) -> bytes:
    entries = b"".join(struct.pack("<QQ", t, off) for t, off in sorted(msgs))
    return _record(OP_MESSAGE_INDEX, struct.pack("<HI", cid, len(entries)) + entries)


def _chunk_index(chunk: Chunk) -> bytes:
    first, last = chunk.times
    offsets = b"".join(struct.pack("<HQ", cid, off) for cid, off in sorted(chunk.index_offsets.items()))
    compression = chunk.compression.encode()
    body = (struct.pack("<QQQQI", first, last, chunk.start, chunk.length, len(offsets)) + offsets
            + struct.pack("<QI", chunk.index_end - chunk.end, len(compression)) + compression
            + struct.pack("<QQ", chunk.compressed_size, chunk.uncompressed_size))
    return _record(OP_CHUNK_INDEX, body)


def _statistics(result: Scan) -> bytes:
    counts = result.counts
    times = [c.times for c in result.chunks if c.messages]
    first = min((t[0] for t in times), default=0)
    last = max((t[1] for t in times), default=0)
    per_channel = b"".join(struct.pack("<HQ", cid, n) for cid, n in sorted(counts.items()))
    body = struct.pack("<QHIIIIQQI", sum(counts.values()), len(result.schemas),
                       len(result.channels), 0, 0, len(result.chunks), first, last,
                       len(per_channel)) + per_channel
    return _record(OP_STATISTICS, body)


def reindex(path: str | Path) -> Scan:
    """Cut an MCAP file to its readable prefix and give it a new summary and footer, in place
    (the module docstring); what was kept and lost is in the returned Scan.

    On a full disk (or past a file-size limit) the new tail may not fit where the torn one was:
    then the last chunk is given up too, and the next, until it fits — the file always ends with
    a valid summary and footer (at worst only its header, schemas and channels), and ``lost``
    counts what was given up."""
    result = scan(path)
    with open(path, "r+b", buffering=0) as fh:
        while True:
            fh.truncate(result.keep)
            fh.seek(result.keep)
            try:
                _write_all(fh, _tail(result))
                return result
            except OSError:
                if not result.chunks:
                    raise
                _give_up_last_chunk(result)


def _write_all(fh, data: bytes) -> None:
    """All of ``data`` through an unbuffered file (a full disk may take part of a write)."""
    view = memoryview(data)
    while view:
        view = view[fh.write(view):]


def _give_up_last_chunk(result: Scan) -> None:
    """Drop the last chunk kept (and its message indexes): the file is cut where it began."""
    last = result.chunks.pop()
    result.keep = last.start
    result.closed = False  # what was cut is lost data now
    result.problem = result.problem or "no space for the summary: the last chunk(s) given up"


def _tail(result: Scan) -> bytes:
    """What follows the readable prefix: the last chunk's missing message indexes, the data-end
    record, the summary (schemas, channels, chunk indexes, statistics), its offsets and the
    footer."""
    out = bytearray()
    last = result.chunks[-1] if result.chunks else None
    if last is not None and not last.index_offsets:  # rewrite the torn message indexes
        for cid, msgs in sorted(last.messages.items()):
            last.index_offsets[cid] = result.keep + len(out)
            out += _message_index(cid, msgs)
        last.index_end = result.keep + len(out)
    out += _record(OP_DATA_END, struct.pack("<I", 0))
    summary_start = result.keep + len(out)
    groups = []
    for op, records in ((OP_SCHEMA, [_record(OP_SCHEMA, b) for _, b in sorted(result.schemas.items())]),
                        (OP_CHANNEL, [_record(OP_CHANNEL, b)
                                      for _, b in sorted(result.channels.items())]),
                        (OP_CHUNK_INDEX, [_chunk_index(c) for c in result.chunks]),
                        (OP_STATISTICS, [_statistics(result)])):
        group = b"".join(records)
        if group:
            groups.append((op, result.keep + len(out), len(group)))
            out += group
    offsets_start = result.keep + len(out)
    for op, start, length in groups:
        out += _record(OP_SUMMARY_OFFSET, struct.pack("<BQQ", op, start, length))
    out += _record(OP_FOOTER, struct.pack("<QQI", summary_start, offsets_start, 0)) + MAGIC
    return bytes(out)
