"""Serialized (CDR) samples on Cyclone DDS readers and writers, without decoding them.

cyclonedds-python's ``DataReader.take`` deserialises every sample and ``DataWriter.write``
serialises one; a recorder and a player only move bytes. Its C layer (``ddspy_take`` /
``ddspy_write``, what those methods call) hands over the serialized sample itself: the 4-byte
encapsulation header (``00 01 00 00``, CDR little-endian) followed by the payload — exactly the
``serialized_message`` rmw gives rosbag2, so the bytes go to the bag and back unchanged.
"""

from __future__ import annotations

from cyclonedds._clayer import ddspy_take, ddspy_write
from cyclonedds.core import DDSException, InstanceState, SampleState, ViewState

_ANY_STATE = SampleState.Any | ViewState.Any | InstanceState.Any


def take_serialized(reader, max_samples: int) -> list[tuple[bytes, object]]:
    """Up to max_samples (serialized sample, SampleInfo) pairs of valid data taken from a reader
    (disposal notices, which carry no data, are taken and left out)."""
    taken = ddspy_take(reader._ref, _ANY_STATE, max_samples)
    if isinstance(taken, int):
        raise DDSException(taken, f"taking serialized samples from {reader!r}")
    return [(data, info) for data, info in taken if info.valid_data]


def padded(data: bytes | memoryview) -> bytes:
    """A serialized sample padded to a multiple of 4 bytes, as cyclonedds' DataWriter sends it."""
    data = bytes(data)
    return data.ljust((len(data) + 3) & ~3, b"\0")


def write_serialized(writer, data: bytes | memoryview) -> None:
    """Publish one serialized sample (encapsulation header included) on a writer."""
    ret = ddspy_write(writer._ref, padded(data))
    if ret < 0:
        raise DDSException(ret, f"writing a serialized sample on {writer!r}")


def serialize(msg) -> bytes:
    """A Cyclone DDS message struct as the DDS backend puts it on the wire (header, CDR, padding)."""
    return padded(msg.serialize())
