"""The sizes a serialised trajectory declares, read from its first bytes before any decoding.

Decoding a message costs time in proportion to what it holds (a 250 000-point goal: seconds of
Python objects), so a node that caps a message's size must read the caps before it decodes. A
CDR (XCDR1) sample starts with a 4-byte encapsulation header (00 01: little endian, 00 00: big);
its fields follow, each aligned to its size counted from after that header. A
trajectory_msgs/JointTrajectory is header (stamp: int32 sec, uint32 nanosec; frame_id: string),
joint_names (uint32 count, then strings), points (uint32 count, …); a string is a uint32 length
(with its NUL) and the bytes. Both routes carry this format: Cyclone's samples and rclpy's raw
messages. The rclpy route's action server cannot take a goal serialised: it reads the same
sizes from the C message rcl took, before rclpy converts it to Python (bus/ros/goal_screen.py);
both hand the node a :class:`DeclaredMotion`.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Protocol

#: encapsulation identifiers of plain CDR
CDR_BE, CDR_LE = b"\x00\x00", b"\x00\x01"
HEADER = 4


@dataclass(frozen=True)
class TrajectorySizes:
    """What a serialised JointTrajectory declares: joint names, the longest name's bytes
    (only the first ``max_names`` are read), points."""

    names: int
    longest_name: int
    points: int | None  # None: not read (too many names to skip over)


class DeclaredMotion(Protocol):
    """What a motion message declares before it is decoded: its size and its trajectory's."""

    nbytes: int  # its serialised size (on the rclpy route: counted from the declared sizes)

    def trajectory_sizes(self, max_names: int) -> TrajectorySizes | None:
        """The sizes its JointTrajectory declares (at most ``max_names`` names read), or None
        when they cannot be read (then it is decoded, and refused, the ordinary way)."""


@dataclass(frozen=True)
class CdrMotion:
    """A serialised motion: its JointTrajectory from byte ``start`` of ``data``."""

    data: bytes
    start: int = HEADER

    @property
    def nbytes(self) -> int:
        return len(self.data)

    def trajectory_sizes(self, max_names: int) -> TrajectorySizes | None:
        return trajectory_sizes(self.data, self.start, max_names)


class _Reader:
    def __init__(self, data: bytes, pos: int) -> None:
        self.data = data
        self.pos = pos
        self.order = "<" if data[:2] == CDR_LE else ">"

    def u32(self) -> int:
        self.pos += (-(self.pos - HEADER)) % 4
        value = struct.unpack_from(self.order + "I", self.data, self.pos)[0]
        self.pos += 4
        return value

    def skip_string(self) -> int:
        """Skip a string; its length in bytes (with the NUL)."""
        length = self.u32()
        self.pos += length
        if self.pos > len(self.data):
            raise struct.error("a string runs past the end")
        return length


def trajectory_sizes(data: bytes, start: int = HEADER, max_names: int = 64
                     ) -> TrajectorySizes | None:
    """The sizes of the JointTrajectory serialised at byte ``start`` of ``data`` (after its
    encapsulation header), reading at most ``max_names`` names; None if ``data`` is not plain
    CDR or ends too soon (then it is decoded, and refused, the ordinary way)."""
    if len(data) < start + 12 or data[:2] not in (CDR_LE, CDR_BE):
        return None
    try:
        r = _Reader(data, start + 8)  # after the stamp
        r.skip_string()  # frame_id
        names = r.u32()
        if names > max_names:
            return TrajectorySizes(names, 0, None)
        longest = max((r.skip_string() for _ in range(names)), default=0)
        return TrajectorySizes(names, longest, r.u32())
    except struct.error:
        return None


def request_header_bytes(data: bytes) -> tuple[int, int, bytes] | None:
    """(writer guid, sequence number, goal UUID) of a serialised action SendGoal request — the
    rmw request header (uint64 writer guid, int64 sequence number) and the goal id (16 bytes)
    that open it — or None."""
    if len(data) < HEADER + 32 or data[:2] not in (CDR_LE, CDR_BE):
        return None
    order = "<" if data[:2] == CDR_LE else ">"
    guid, seq = struct.unpack_from(order + "Qq", data, HEADER)
    return guid, seq, bytes(data[HEADER + 16:HEADER + 32])


#: where a SendGoal request's goal (for FollowJointTrajectory: its trajectory) starts
GOAL_START = HEADER + 32
