"""bench/rtps_capture.py: RTPS traffic classified by kind, on hand-made messages and on a real
capture between two network namespaces (two Cyclone DDS participants, one writer, one reader)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import domains
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from fleet_hosts import make_hosts, remove_hosts  # noqa: E402
from rtps_capture import classify_rtps, entity_kind  # noqa: E402

HEADER = b"RTPS\x02\x05\x01\x10" + bytes(12)
SPDP_WRITER = b"\x00\x01\x00\xc2"
SEDP_PUB_WRITER = b"\x00\x00\x03\xc2"
SEDP_SUB_READER = b"\x00\x00\x04\xc7"
USER_WRITER = b"\x00\x00\x12\x03"  # a user writer with key (entity kind 0x03)
UNKNOWN = bytes(4)


def submessage(sub_id: int, body: bytes, little: bool = True) -> bytes:
    return bytes([sub_id, 1 if little else 0]) + struct.pack("<H" if little else ">H",
                                                             len(body)) + body


def data(writer: bytes, reader: bytes = UNKNOWN) -> bytes:
    return submessage(0x15, b"\x00\x00\x10\x00" + reader + writer + bytes(8) + b"payload!")


def test_entity_kinds_follow_the_builtin_table():
    assert entity_kind(SPDP_WRITER) == "spdp"
    assert entity_kind(SEDP_PUB_WRITER) == "sedp"
    assert entity_kind(SEDP_SUB_READER) == "sedp"
    assert entity_kind(b"\x00\x02\x00\xc2") == "liveliness"
    assert entity_kind(b"\x00\x03\x00\xc3") == "other_builtin"  # type lookup
    assert entity_kind(USER_WRITER) == "user"


def test_a_message_is_the_kind_of_its_first_endpoint_submessage():
    info_ts = submessage(0x09, bytes(8))
    assert classify_rtps(HEADER + info_ts + data(SPDP_WRITER)) == "spdp"
    assert classify_rtps(HEADER + info_ts + data(USER_WRITER) + data(SPDP_WRITER)) == "user"
    heartbeat = submessage(0x07, UNKNOWN + SEDP_PUB_WRITER + bytes(20), little=False)
    assert classify_rtps(HEADER + heartbeat) == "sedp"
    acknack = submessage(0x06, SEDP_SUB_READER + UNKNOWN + bytes(12))  # writer unknown
    assert classify_rtps(HEADER + acknack) == "sedp"
    assert classify_rtps(HEADER + info_ts) == "other_builtin"
    assert classify_rtps(b"not an RTPS message at all") == "not_rtps"


def _netns_available() -> bool:
    if os.geteuid() != 0 or shutil.which("ip") is None:
        return False
    probe = f"rc_probe_{os.getpid()}"
    ok = subprocess.run(["ip", "netns", "add", probe], capture_output=True).returncode == 0
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return ok


PEER = """
import sys, time
from cyclonedds.core import Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from cyclonedds.idl import IdlStruct
from dataclasses import dataclass
@dataclass
class Chatter(IdlStruct, typename="Chatter"):
    text: str
dp = DomainParticipant(int(sys.argv[1]))
topic = Topic(dp, "rt/chatter", Chatter)
qos = Qos(Policy.Reliability.Reliable(1_000_000_000), Policy.History.KeepAll)
if sys.argv[2] == "write":
    w = DataWriter(dp, topic, qos=qos)
    end = time.monotonic() + 20
    while not w.get_publication_matched_status().current_count and time.monotonic() < end:
        time.sleep(0.05)
    for i in range(int(sys.argv[3])):
        w.write(Chatter(text=f"hello {i}"))
        time.sleep(0.01)
    time.sleep(2.0)  # time for the reliable protocol to repair a loss before the writer goes
else:
    r = DataReader(dp, topic, qos=qos)
    end, got = time.monotonic() + 20, 0
    while got < int(sys.argv[3]) and time.monotonic() < end:
        got += len(r.take(N=100))
        time.sleep(0.01)
    print(got)
"""


@pytest.mark.slow  # processes on two network namespaces
@pytest.mark.timeout(120)
@pytest.mark.skipif(not _netns_available(), reason="needs root and `ip netns` for two hosts")
def test_a_real_capture_between_two_hosts_counts_discovery_and_user_data(tmp_path):
    hosts, links = (f"rc_cap_a{os.getpid()}", f"rc_cap_b{os.getpid()}"), \
        (f"rcca{os.getpid()}"[:15], f"rccb{os.getpid()}"[:15])
    domain = domains.claim("rtps-capture")
    env = {**os.environ, "ROS_DOMAIN_ID": str(domain)}
    try:
        make_hosts(hosts, links, ("10.232.0.1/24", "10.232.0.2/24"))
        tally = tmp_path / "tally.json"
        capture = subprocess.Popen(["ip", "netns", "exec", hosts[0], sys.executable,
                                    str(ROOT / "bench" / "rtps_capture.py"), links[0], "--out",
                                    str(tally)], stdout=subprocess.PIPE, text=True)
        assert capture.stdout.readline().strip() == "capturing"
        reader = subprocess.Popen(["ip", "netns", "exec", hosts[0], sys.executable, "-c", PEER,
                                   str(domain), "read", "30"], env=env, stdout=subprocess.PIPE,
                                  text=True)
        time.sleep(0.5)
        writer = subprocess.run(["ip", "netns", "exec", hosts[1], sys.executable, "-c", PEER,
                                 str(domain), "write", "30"], env=env, timeout=60)
        assert writer.returncode == 0
        assert reader.communicate(timeout=60)[0].strip() == "30"
        capture.send_signal(signal.SIGINT)
        capture.wait(30)
        counts = json.loads(tally.read_text())
    finally:
        remove_hosts(hosts)
    assert counts["spdp"]["packets"] >= 2  # each participant announced itself across the link
    assert counts["sedp"]["packets"] >= 2  # the writer's and the reader's endpoint records
    assert counts["user"]["packets"] >= 30  # every sample crossed (one DATA each, at least)
    assert counts["user"]["bytes"] > 30 * len("hello 0")
