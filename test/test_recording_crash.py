"""Recordings survive crashes and full disks. A real recorder process killed
with SIGKILL, or stopped by a file-size limit (RLIMIT_FSIZE) or a full tmpfs; bags read back with
rosbags' own reader after ``robot-control bag reindex``."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from recording_helpers import (
    PAIR,
    cli,
    finish,
    messages,
    popen,
    publisher,
    reaped,  # noqa: F401  (autouse fixture)
    recording_env,
    sequence,
    stop,
    wait_for_line,
)
from ros2_env import dds_python, without_ros

from robot_control.foundation import safe_yaml
from robot_control.recording.recorder import CHECKPOINT_S

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def env():
    return recording_env("recording-crash")


def metadata(bag: Path) -> dict:
    return safe_yaml.load_file(bag / "metadata.yaml")["rosbag2_bagfile_information"]


def counts(bag: Path) -> dict[str, int]:
    return {t["topic_metadata"]["name"]: t["message_count"]
            for t in metadata(bag)["topics_with_message_count"]}


def wait_until(condition, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if condition():
                return
        except (OSError, safe_yaml.YamlError, KeyError):  # not written yet
            pass
        time.sleep(0.05)
    raise AssertionError(f"not within {timeout_s} s: {what}")


def one_line(err: str, words: str) -> str:
    """The one stderr line holding words (and no traceback anywhere)."""
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if words in line]
    assert len(lines) == 1, err
    return lines[0]


def test_a_sigkilled_recorder_keeps_everything_up_to_its_last_checkpoint(env, tmp_path):
    bag, count = tmp_path / "bag", 2000
    recorder = cli(env, "bag", "record", "-o", str(bag), *PAIR)
    # metadata.yaml exists from the start (rosbag2's format), before any topic or message
    wait_until(lambda: metadata(bag)["message_count"] == 0, 60, "metadata.yaml at start")
    pub = publisher(env, count)
    wait_for_line(pub, f"published {count}")
    # ... and is kept current: after the next checkpoint it counts every message
    wait_until(lambda: counts(bag) == dict.fromkeys(PAIR, count), 10 * CHECKPOINT_S,
               f"metadata.yaml counting {count} messages per topic")
    recorder.send_signal(signal.SIGKILL)
    finish(recorder)
    info = cli(env, "bag", "info", str(bag))
    code, err = finish(info)
    assert code == 1 and "bag reindex" in one_line(err, str(bag)), err
    reindex = cli(env, "bag", "reindex", str(bag))
    code, err = finish(reindex)
    assert code == 0, err
    assert f"kept {2 * count} messages" in one_line(err, "reindexed"), err
    recovered = messages(bag)  # rosbags' reader: summary, chunk indexes, metadata all agree
    for topic in PAIR:
        assert sequence(recovered[topic]) == list(range(count))


def test_a_recorder_killed_while_data_flows_loses_at_most_the_last_checkpoint(env, tmp_path):
    bag = tmp_path / "bag"
    recorder = cli(env, "bag", "record", "-o", str(bag), *PAIR)
    pub = publisher(env, 1_000_000)
    try:
        wait_for_line(pub, "publishing")
        wait_until(lambda: min(counts(bag).values()) >= 500, 60, "a checkpoint with data")
        time.sleep(CHECKPOINT_S / 2)  # killed between two checkpoints
        at_kill = counts(bag)
        recorder.send_signal(signal.SIGKILL)
        finish(recorder)
    finally:
        stop(pub, signal.SIGTERM)
    code, err = finish(cli(env, "bag", "reindex", str(bag)))
    assert code == 0, err
    recovered = messages(bag)
    for topic in PAIR:
        seq = sequence(recovered[topic])
        # no gap and nothing older than the last checkpoint missing
        assert seq == list(range(len(seq))) and len(seq) >= at_kill[topic]


def limited(limit_bytes: int):
    """preexec_fn: a file-size limit, with SIGXFSZ ignored so a write past it fails with EFBIG
    (as a full disk fails with ENOSPC) instead of killing the process."""
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    return apply


def test_a_recorder_hitting_a_file_size_limit_stops_in_one_line_with_a_readable_bag(env, tmp_path):
    bag = tmp_path / "bag"
    limit = 600_000  # about 1.5 s of the pair at 1 kHz: one checkpoint fits, the next does not
    pub = publisher(env, 1_000_000)
    recorder = popen([dds_python() or sys.executable, "-m", "robot_control.cli", "bag", "record",
                      "-o", str(bag), *PAIR], without_ros(env), preexec_fn=limited(limit))
    try:
        wait_for_line(pub, "publishing")
        code, err = finish(recorder, timeout_s=60)
    finally:
        stop(pub, signal.SIGTERM)
    line = one_line(err, "recording stopped")
    assert code == 1 and "File too large" in line and "reindexed" in line, err
    assert (bag / "bag.mcap").stat().st_size <= limit
    recovered = messages(bag)  # no reindex needed: closed by the recorder itself
    for topic in PAIR:
        seq = sequence(recovered[topic])
        assert len(seq) > 0 and seq == list(range(len(seq)))


WRITE_UNTIL_FULL = """
import sys
from robot_control.recording.bag import BagError
from robot_control.recording.writer import BagWriter
from robot_control.recording.bag import qos_of_profile
from robot_control.bus.dds import config as dds_config
writer = BagWriter(sys.argv[1])
conn = writer.add_topic("/chatter", "std_msgs/msg/String",
                        [qos_of_profile(dds_config.DEFAULT)])
data = b"\\x00\\x01\\x00\\x00" + (1000).to_bytes(4, "little") + b"x" * 999 + b"\\x00"
try:
    for k in range(100_000):
        writer.write(conn, k * 1_000_000, data)
        if k % 100 == 99:
            writer.checkpoint()
    writer.close()
except BagError as exc:
    print(f"robot-control: {exc}", file=sys.stderr)
    sys.exit(1)
"""


def write_until_full(bag: Path, checkpoint_every: int = 100, **popen
                     ) -> subprocess.CompletedProcess:
    script = WRITE_UNTIL_FULL.replace("k % 100 == 99",
                                      f"k % {checkpoint_every} == {checkpoint_every - 1}")
    return subprocess.run([sys.executable, "-c", script, str(bag)], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(
                              Path(__file__).resolve().parents[1])}, **popen)


def assert_closed_and_readable(done: subprocess.CompletedProcess, bag: Path, words: str) -> None:
    assert done.returncode == 1, done.stderr
    assert done.stderr.count("\n") == 1 and words in done.stderr, done.stderr
    assert "recording stopped" in done.stderr and "Traceback" not in done.stderr
    recovered = messages(bag)["/chatter"]
    assert len(recovered) >= 100 and [t for t, _, _ in recovered] == \
        [k * 1_000_000 for k in range(len(recovered))]


@pytest.mark.timeout(120)
def test_a_writer_past_a_file_size_limit_closes_the_bag_readable(tmp_path):
    done = write_until_full(tmp_path / "bag", preexec_fn=limited(1_000_000))
    assert_closed_and_readable(done, tmp_path / "bag", "File too large")


@pytest.fixture
def small_disk(tmp_path):
    """A 1 MiB tmpfs (needs the right to mount, as root in a container has)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.strip()}")
    yield disk
    subprocess.run(["umount", str(disk)], check=True)


@pytest.mark.timeout(120)
def test_a_writer_on_a_full_disk_closes_the_bag_readable(small_disk):
    done = write_until_full(small_disk / "bag")
    assert_closed_and_readable(done, small_disk / "bag", "No space left on device")


@pytest.mark.timeout(120)
@pytest.mark.parametrize("checkpoint_every", [1, 3])
def test_a_writer_with_a_long_summary_on_a_full_disk_closes_the_bag_readable(small_disk,
                                                                             checkpoint_every):
    """A chunk a message or three: the summary (a chunk index each) is longer than the torn tail
    it replaces (once rosbags' "File end magic is invalid") — and still the bag closes readable,
    ``bag info`` and all."""
    bag = small_disk / "bag"
    done = write_until_full(bag, checkpoint_every)
    assert_closed_and_readable(done, bag, "No space left on device")
    info = cli(os.environ, "bag", "info", str(bag))
    code, err = finish(info)
    assert code == 0 and "Traceback" not in err, err
    assert sorted(p.name for p in bag.iterdir()) == ["bag.mcap", "metadata.yaml"]


def test_reindex_with_no_room_for_the_summary_gives_up_the_last_chunks(tmp_path):
    """No byte more than the torn file may be written (a file-size limit at its size): the last
    chunks are given up until the summary fits where they were; the file ends with the MCAP end
    magic and reads back in order."""
    bag = tmp_path / "bag"
    done = write_until_full(bag, 1, preexec_fn=limited(400_000))
    assert done.returncode == 1, done.stderr
    mcap = bag / "bag.mcap"
    torn = mcap.read_bytes()[:-2000]  # as if the writer had died in the middle of its summary
    mcap.write_bytes(torn)
    script = ("import sys; from robot_control.recording.writer import reindex_bag; "
              "print(reindex_bag(sys.argv[1]).report())")
    fixed = subprocess.run([sys.executable, "-c", script, str(bag)], capture_output=True,
                           text=True, timeout=60, preexec_fn=limited(len(torn)),
                           env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert fixed.returncode == 0, fixed.stderr
    assert "lost" in fixed.stdout and "nothing lost" not in fixed.stdout, fixed.stdout
    data = mcap.read_bytes()
    assert len(data) <= len(torn) and data.endswith(b"\x89MCAP0\r\n")
    recovered = messages(bag)["/chatter"]
    assert len(recovered) > 0 and [t for t, _, _ in recovered] == \
        [k * 1_000_000 for k in range(len(recovered))]


@pytest.mark.timeout(200)
def test_simulate_record_on_a_full_disk_is_one_line_and_a_readable_bag(small_disk):
    from launch_run import robot_control_command

    bag = small_disk / "run"  # 3 s of the DDArm: about 2.3 MB of messages
    done = subprocess.run(robot_control_command("simulate", "huo_3_1_pd", "--record", str(bag),
                                                "--quiet"), capture_output=True, text=True,
                          timeout=180)
    assert done.returncode == 1, done.stderr
    line = one_line(done.stderr, "recording stopped")
    assert "No space left on device" in line and "kept" in line
    recovered = messages(bag)
    states = recovered["/joint_states"]
    assert len(states) > 100 and [t for t, _, _ in states] == \
        [k * 1_000_000 for k in range(len(states))]
