"""``robot-control bag record|play`` on a live bus: real node processes on a private ROS domain,
the bags read back with rosbags' own reader."""

from __future__ import annotations

import re
import signal

import numpy as np
import pytest
import yaml
from bag_publisher import expected_command, expected_state
from recording_helpers import (
    PAIR,
    cli,
    finish,
    messages,
    publisher,
    reaped,  # noqa: F401  (autouse fixture)
    recording_env,
    sequence,
    stop,
    wait_for_line,
)
from rosbags.interfaces import QosDurability, QosReliability
from rosbags.rosbag2 import Reader

from robot_control.recording.offline import write_run
from robot_control.sim.scenario import load_scenario, resolve_scenario_path
from robot_control.sim.simulate import run

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def env():
    return recording_env("recording-live")


def test_every_message_of_a_1khz_pair_is_recorded_and_sigint_closes_the_bag(env, tmp_path):
    count = 2000
    recorder = cli(env, "bag", "record", "-o", str(tmp_path / "bag"), *PAIR)
    pub = publisher(env, count)  # starts publishing once the recorder has subscribed
    wait_for_line(pub, f"published {count}")
    code, err = stop(recorder)
    assert code == 0, err
    assert "dropped 0" in err
    bag = messages(tmp_path / "bag")
    assert sorted(bag) == sorted(PAIR)
    assert sequence(bag["/joint_states"]) == list(range(count))
    assert sequence(bag["/joint_command"]) == list(range(count))
    for k, (_, _, msg) in enumerate(bag["/joint_states"]):
        q, qd, tau = expected_state(k)
        assert list(msg.name) == ["joint1", "joint2", "joint3"]
        np.testing.assert_array_equal(msg.position, q)
        np.testing.assert_array_equal(msg.velocity, qd)
        np.testing.assert_array_equal(msg.effort, tau)
        assert msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec == k * 1_000_000
    for k, (_, _, msg) in enumerate(bag["/joint_command"]):
        np.testing.assert_array_equal(msg.effort, expected_command(k))
    stamps = [t for t, _, _ in bag["/joint_states"]]
    assert stamps == sorted(stamps)
    with Reader(tmp_path / "bag") as reader:
        for conn in reader.connections:
            assert conn.msgtype == "sensor_msgs/msg/JointState"
            (offered,) = conn.ext.offered_qos_profiles  # one publisher, the rmw default profile
            assert offered.reliability == QosReliability.RELIABLE
            assert offered.durability == QosDurability.VOLATILE and offered.depth == 10


def test_sigint_while_data_flows_leaves_a_complete_bag_and_the_recorder_is_a_node(env, tmp_path):
    recorder = cli(env, "bag", "record", "-o", str(tmp_path / "bag"), *PAIR,
                   "--node-name", "bag_test_recorder")
    pub = publisher(env, 1_000_000)
    try:
        wait_for_line(pub, "publishing")
        info = cli(env, "node", "info", "/bag_test_recorder")
        code, err = finish(info)
        assert code == 0, err
        out = "".join(info.out)
        assert "/joint_states: sensor_msgs/msg/JointState" in out.split("Publishers:")[0]
        assert "/bag_test_recorder/get_parameters" in out
        code, err = stop(recorder)
        assert code == 0, err
    finally:
        stop(pub, signal.SIGTERM)
    bag = messages(tmp_path / "bag")
    for topic in PAIR:
        seq = sequence(bag[topic])
        assert len(seq) > 100
        assert seq == list(range(seq[0], seq[0] + len(seq)))  # no gap: nothing dropped


def test_duration_stops_the_recording_by_itself(env, tmp_path):
    pub = publisher(env, 1_000_000, rate=200.0)
    try:
        recorder = cli(env, "bag", "record", "-o", str(tmp_path / "bag"), *PAIR,
                       "--duration", "0.5")
        code, err = finish(recorder, timeout_s=120)
        assert code == 0, err
    finally:
        stop(pub, signal.SIGTERM)
    seq = sequence(messages(tmp_path / "bag")["/joint_states"])
    assert seq == list(range(seq[0], seq[0] + len(seq))) and len(seq) >= 10


def test_an_existing_directory_is_refused_and_left_alone(env, tmp_path):
    (tmp_path / "bag").mkdir()
    (tmp_path / "bag" / "keep.txt").write_text("mine")
    proc = cli(env, "bag", "record", "-o", str(tmp_path / "bag"), "/joint_states")
    code, err = finish(proc)
    assert code == 1 and "exists" in err and "Traceback" not in err
    assert [p.name for p in (tmp_path / "bag").iterdir()] == ["keep.txt"]


def test_play_publishes_a_bag_byte_for_byte_at_the_requested_rate(env, tmp_path):
    doc = {**yaml.safe_load(resolve_scenario_path("huo_3_1_pd").read_text()), "duration": 1.0}
    scenario = load_scenario(doc)
    write_run(run(scenario), scenario, tmp_path / "offline")
    played = ("/joint_states", "/controller/state")
    recorder = cli(env, "bag", "record", "-o", str(tmp_path / "again"), *played)
    player = cli(env, "bag", "play", str(tmp_path / "offline"), "--rate", "2",
                 "--topics", *played, "--delay", "3")
    code, player_err = finish(player, timeout_s=120)
    assert code == 0, player_err
    code, err = stop(recorder)
    assert code == 0, err
    original, again = messages(tmp_path / "offline"), messages(tmp_path / "again")
    for topic in played:
        assert [d for _, d, _ in again[topic]] == [d for _, d, _ in original[topic]]
    stamps = [t for t, _, _ in again["/joint_states"]]
    span = (stamps[-1] - stamps[0]) * 1e-9
    # 1 s of simulated time at twice the speed: never ahead of that schedule (a late start or
    # a stall only makes the span longer)
    assert span >= 0.5 - 0.005
    # and at that speed: each message's bag timestamp (its DDS source stamp, when the player
    # wrote it) less its schedule time (original stamp / 2) varies by no more than the player
    # says it fell behind (a loaded machine starves it; it catches up, the schedule being
    # absolute) plus 150 ms for the write itself. At rate 1 it would vary by 0.5 s, unpaced by
    # 0.5 s the other way, while the player said it was on time.
    offsets = np.concatenate([lateness(again[t], original[t], rate=2.0) for t in played])
    spread, reported = offsets.max() - offsets.min(), behind_schedule_s(player_err)
    assert spread <= reported + 0.15, f"{spread:.3f} s spread, the player says {reported:.3f} s late"


def lateness(again: list, original: list, rate: float) -> np.ndarray:
    """Per message: its bag timestamp in the new bag less its original one divided by rate [s]
    (a constant for a player exactly on schedule)."""
    return (np.array([t for t, _, _ in again], dtype=np.int64)
            - np.array([t for t, _, _ in original], dtype=np.int64) / rate) * 1e-9


def behind_schedule_s(player_err: str) -> float:
    """The lateness the player reports: "played N messages in S s (latest X ms behind schedule)"."""
    match = re.search(r"latest (\d+(?:\.\d+)?) ms behind schedule", player_err)
    assert match, player_err
    return float(match.group(1)) * 1e-3
