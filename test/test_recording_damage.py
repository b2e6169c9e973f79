"""Damaged bags — truncated, corrupted, or holding NaN — give one line naming the
topic and time in ``bag info``, ``plot`` and ``identify`` (no ReaderError, OverflowError or LAPACK
traceback), and ``bag reindex`` keeps what is readable and says what was lost."""

from __future__ import annotations

import math
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from launch_run import robot_control_command
from recording_helpers import messages

from robot_control.recording import bag
from robot_control.recording.offline import write_run
from robot_control.recording.writer import BagWriter
from robot_control.sim.scenario import load_scenario, resolve_scenario_path
from robot_control.sim.simulate import run

BAD_AT = 50  # the /joint_states message damaged: stamped 50 ms into the run


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> Path:
    """A 1 s offline run of the DDArm at 1 kHz as a bag (about 0.8 MB, one chunk)."""
    doc = {**yaml.safe_load(resolve_scenario_path("huo_3_1_pd").read_text()), "duration": 1.0}
    scenario = load_scenario(doc)
    path = tmp_path_factory.mktemp("damage") / "clean"
    write_run(run(scenario), scenario, path)
    return path


def rewritten(clean: Path, path: Path, replace) -> Path:
    """A copy of the clean bag with the BAD_AT-th /joint_states payload replaced by
    replace(message)."""
    writer = BagWriter(path)
    conns = {c.topic: writer.add_topic(c.topic, c.msgtype, c.ext.offered_qos_profiles)
             for c in bag.bag_connections(clean)}
    k = 0
    for msg in bag.read_messages(clean):
        data = msg.data
        if msg.topic == "/joint_states":
            data = replace(msg) if k == BAD_AT else data
            k += 1
        writer.write(conns[msg.topic], msg.timestamp_ns, data)
    writer.close()
    return path


def copied_in_chunks(clean: Path, path: Path, chunk_ends_after) -> Path:
    """A copy of the clean bag, a chunk closed (a checkpoint) after each k-th message for which
    chunk_ends_after(k) holds."""
    writer = BagWriter(path)
    conns = {c.topic: writer.add_topic(c.topic, c.msgtype, c.ext.offered_qos_profiles)
             for c in bag.bag_connections(clean)}
    for k, msg in enumerate(bag.read_messages(clean)):
        writer.write(conns[msg.topic], msg.timestamp_ns, msg.data)
        if chunk_ends_after(k):
            writer.checkpoint()
    writer.close()
    return path


def with_nan(msg: bag.RecordedMessage) -> bytes:
    decoded = bag.decode(msg)
    decoded.position = decoded.position.copy()
    decoded.position[1] = math.nan
    return bytes(bag.typestore().serialize_cdr(decoded, msg.ros_type))


def garbled(msg: bag.RecordedMessage) -> bytes:
    """The header intact, then a frame_id claiming 4 GB (what made rosbags raise OverflowError)."""
    return msg.data[:12] + b"\xf0\xff\xff\xff" + msg.data[16:]


def command(*args: str) -> tuple[int, str, str]:
    done = subprocess.run(robot_control_command(*args), capture_output=True, text=True,
                          timeout=120)
    return done.returncode, done.stdout, done.stderr


def one_line(err: str, *words: str) -> str:
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if all(w in line for w in words)]
    assert len(lines) == 1, err
    return lines[0]


def test_nan_in_a_bag_is_named_by_plot_and_refused_by_identify(clean, tmp_path):
    path = rewritten(clean, tmp_path / "nan", with_nan)
    code, _, err = command("plot", str(path), "-o", str(tmp_path / "nan.png"))
    assert code == 0 and (tmp_path / "nan.png").is_file(), err
    one_line(err, "/joint_states position", "NaN", "1 of 1001", "t = 0.050000000 s")
    code, out, err = command("identify", str(path), "--robot", "ddarm")
    assert code == 2 and out == "", err
    one_line(err, "/joint_states position is NaN or infinite at t = 0.050000000 s")


def test_a_garbled_message_is_one_line_naming_its_topic_and_time(clean, tmp_path):
    path = rewritten(clean, tmp_path / "garbled", garbled)
    code, out, _ = command("bag", "info", str(path))  # the index is intact: info reads it
    assert code == 0 and "Messages:          4005" in out
    code, _, err = command("plot", str(path), "-o", str(tmp_path / "g.png"))
    assert code == 1
    one_line(err, "/joint_states at t = 0.050000000 s: not a valid sensor_msgs/msg/JointState")
    code, _, err = command("identify", str(path), "--robot", "ddarm")
    assert code == 2
    one_line(err, "/joint_states at t = 0.050000000 s (bag time): not a valid sensor_msgs/msg/JointState")


def truncated(clean: Path, path: Path, keep: float) -> Path:
    shutil.copytree(clean, path)
    mcap = path / "clean.mcap"
    with open(mcap, "r+b") as fh:
        fh.truncate(int(mcap.stat().st_size * keep))
    return path


@pytest.mark.parametrize("verb", [("bag", "info"), ("plot",), ("bag", "play")])
def test_a_truncated_bag_is_one_line_pointing_at_reindex(clean, tmp_path, verb):
    path = truncated(clean, tmp_path / "cut", 0.6)
    code, _, err = command(*verb, str(path))
    assert code == 1
    one_line(err, str(path), f"robot-control bag reindex {path}")


def test_reindex_keeps_the_readable_chunks_and_says_what_was_lost(clean, tmp_path):
    # two chunks: the first one survives a cut in the second one
    path = copied_in_chunks(clean, tmp_path / "two", lambda k: k == 2000)
    mcap = path / "two.mcap"
    with open(mcap, "r+b") as fh:
        fh.truncate(mcap.stat().st_size - 200_000)
    (path / "metadata.yaml").unlink()  # as a recorder killed before its first checkpoint
    code, _, err = command("bag", "info", str(path))
    assert code == 1 and "has no metadata.yaml" in one_line(err, "bag reindex")
    code, _, err = command("bag", "reindex", str(path))
    assert code == 0
    line = one_line(err, "reindexed")
    assert "kept 2001 messages" in line and "lost" in line and "ends inside a record" in line
    recovered = messages(path)  # rosbags reads it; counts in metadata and MCAP agree
    assert sum(len(v) for v in recovered.values()) == 2001
    original = list(bag.read_messages(clean))[:2001]
    again = sorted((m for topic in recovered.values() for m in topic), key=lambda m: m[0])
    assert [m[1] for m in again] == [m.data for m in sorted(original,
                                                            key=lambda m: m.timestamp_ns)]
    code, out, err = command("bag", "info", str(path))
    assert code == 0 and "Messages:          2001" in out, err
    # a second reindex of the repaired bag changes nothing
    code, _, err = command("bag", "reindex", str(path))
    assert code == 0 and "kept 2001 messages" in err and "nothing lost" in err


def test_a_chunk_corrupted_in_the_middle_is_one_line_and_reindex_keeps_the_chunks_before(
        clean, tmp_path):
    from robot_control.recording import mcap_index

    path = copied_in_chunks(clean, tmp_path / "mid", lambda k: k % 1000 == 999)
    mcap = path / "mid.mcap"
    third = mcap_index.scan(mcap).chunks[2]
    with open(mcap, "r+b") as fh:  # the length of the third chunk's first record made absurd
        fh.seek(third.start + 9 + 40 + 1)  # chunk record header, chunk header, message opcode
        fh.write(b"\xff" * 8)
    code, _, err = command("plot", str(path), "-o", str(tmp_path / "mid.png"))
    assert code == 1
    one_line(err, str(path), "unreadable after", "bag reindex")
    code, _, err = command("bag", "reindex", str(path))
    assert code == 0
    line = one_line(err, "reindexed")
    assert "kept 2000 messages" in line and "unreadable record at byte" in line
    assert sum(len(v) for v in messages(path).values()) == 2000


def test_reindex_refuses_a_bag_being_written(tmp_path):
    writer = BagWriter(tmp_path / "live")
    try:
        code, _, err = command("bag", "reindex", str(tmp_path / "live"))
        assert code == 1 and "is being written" in one_line(err, "stop it first")
    finally:
        writer.close()
    code, _, err = command("bag", "reindex", str(tmp_path / "live"))
    assert code == 0 and "kept 0 messages" in err, err
