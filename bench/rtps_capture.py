"""Count the DDS traffic on one network interface by kind: SPDP, SEDP, other built-in, user data.

    ip netns exec HOST python bench/rtps_capture.py IFACE --out FILE

runs until SIGINT/SIGTERM, then writes ``{kind: {"packets": n, "bytes": b}}`` to FILE (bytes are
whole Ethernet frames, both directions). A packet is classified by the first RTPS submessage that
names a writer or reader (DDSI-RTPS 2.5 §8.3.7, §9.3.1.2): the built-in endpoints have
entity kinds 0xc2/0xc3/0xc4/0xc7 (§9.3.1.2, Table 9.1) and fixed keys —
participant discovery (SPDP, 0x000100), publications and subscriptions (SEDP, 0x000003 and
0x000004), topics (0x000002, also SEDP), participant messages (liveliness, 0x000200) and the
rest of the built-ins (type lookup, …); any other entity is user data (ROS topics, services,
``ros_discovery_info``). Needs a raw packet socket (root / CAP_NET_RAW).
"""

from __future__ import annotations

import json
import signal
import socket
import struct
import sys
from collections import Counter
from pathlib import Path

ETH_P_ALL = 0x0003
ETH_P_IP = 0x0800
IPPROTO_UDP = 17
RTPS_HEADER = 20  # "RTPS", version, vendor, GUID prefix
#: submessage ids whose body starts with extraFlags + octetsToInlineQos, then readerId, writerId
DATA_LIKE = {0x15, 0x16}  # DATA, DATA_FRAG
#: submessage ids whose body starts with readerId, writerId
ENDPOINT_PAIR = {0x06, 0x07, 0x08, 0x12, 0x13}  # ACKNACK, HEARTBEAT, GAP, NACK_FRAG, HB_FRAG
BUILTIN_KEYS = {b"\x00\x01\x00": "spdp", b"\x00\x00\x03": "sedp", b"\x00\x00\x04": "sedp",
                b"\x00\x00\x02": "sedp", b"\x00\x02\x00": "liveliness"}
KINDS = ("spdp", "sedp", "liveliness", "other_builtin", "user", "not_rtps")


def entity_kind(entity_id: bytes) -> str:
    """The traffic kind an RTPS entity id (key ‖ kind octet) belongs to."""
    if entity_id[3] & 0xC0 != 0xC0:  # not a built-in entity (§9.3.1.2)
        return "user"
    return BUILTIN_KEYS.get(entity_id[:3], "other_builtin")


def classify_rtps(payload: bytes) -> str:
    """The kind of one RTPS message: that of its first submessage naming an endpoint."""
    if len(payload) < RTPS_HEADER or payload[:4] != b"RTPS":
        return "not_rtps"
    at = RTPS_HEADER
    while at + 4 <= len(payload):
        sub_id, flags = payload[at], payload[at + 1]
        length = struct.unpack_from("<H" if flags & 1 else ">H", payload, at + 2)[0]
        body = at + 4
        ids = body + 4 if sub_id in DATA_LIKE else body if sub_id in ENDPOINT_PAIR else None
        if ids is not None and ids + 8 <= len(payload):
            reader, writer = payload[ids:ids + 4], payload[ids + 4:ids + 8]
            # the writer names a DATA's kind; an ACKNACK's reader/writer pair is the same kind
            return entity_kind(writer if any(writer) else reader)
        if length == 0:  # "to the end of the message" (§9.4.5.1.3)
            break
        at = body + length
    return "other_builtin"  # INFO_* only: protocol housekeeping


def udp_payload(frame: bytes) -> bytes | None:
    """The UDP payload of an Ethernet/IPv4 frame (None for anything else)."""
    if len(frame) < 14 + 20 or struct.unpack_from(">H", frame, 12)[0] != ETH_P_IP:
        return None
    ihl = (frame[14] & 0x0F) * 4
    if frame[14 + 9] != IPPROTO_UDP:
        return None
    return frame[14 + ihl + 8:]


class Tally:
    """Packets and bytes per traffic kind."""

    def __init__(self) -> None:
        self.packets: Counter[str] = Counter()
        self.bytes: Counter[str] = Counter()

    def add(self, frame: bytes) -> None:
        payload = udp_payload(frame)
        if payload is None:
            return
        kind = classify_rtps(payload)
        self.packets[kind] += 1
        self.bytes[kind] += len(frame)

    def as_dict(self) -> dict[str, dict[str, int]]:
        return {k: {"packets": self.packets[k], "bytes": self.bytes[k]} for k in KINDS}


def capture(interface: str, out: Path) -> None:
    """Tally every frame on ``interface`` until SIGINT/SIGTERM, then write the tally."""
    tally = Tally()
    stop = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.append(1))
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    sock.bind((interface, 0))
    sock.settimeout(0.2)
    print("capturing", flush=True)
    while not stop:
        try:
            frame = sock.recv(65535)
        except (TimeoutError, InterruptedError):
            continue
        tally.add(frame)
    out.write_text(json.dumps(tally.as_dict()))


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[2] != "--out":
        sys.exit(__doc__.split("\n\n")[1])
    capture(sys.argv[1], Path(sys.argv[3]))
