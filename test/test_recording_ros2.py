"""Our bags against the real rosbag2 of a ROS 2 Jazzy: ``ros2 bag info`` reads what we record
(offline and live), ``ros2 bag play`` replays it byte for byte, and we read what
``ros2 bag record -s mcap`` writes. Runs when ``ros2`` is on PATH or /opt/ros/jazzy is installed
(it is sourced for the ros2 commands only)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from bag_publisher import expected_state
from recording_helpers import (
    PAIR,
    cli,
    finish,
    messages,
    popen,
    publisher,
    reaped,  # noqa: F401  (autouse fixture)
    ros2_available,
    ros2_command,
    ros2_env,
    sequence,
    stop,
    wait_for_line,
)

from robot_control.recording.bag import bag_info
from robot_control.sim.scenario import resolve_scenario_path

pytestmark = [
    pytest.mark.ros2,
    pytest.mark.slow,
    pytest.mark.skipif(not ros2_available(),
                       reason="needs ROS 2: the ros2 CLI on PATH or /opt/ros/jazzy"),
]


@pytest.fixture(scope="module")
def env():
    return ros2_env("recording-ros2")


def ros2(env, *args: str, timeout: float = 120.0) -> str:
    proc = subprocess.run(ros2_command(*args), env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def ros2_bag_info(env, path: Path) -> dict:
    """Total and per-topic (type, count) as ``ros2 bag info`` prints them."""
    out = ros2(env, "bag", "info", str(path))
    total = int(re.search(r"Messages:\s+(\d+)", out).group(1))
    topics = {m[0]: (m[1], int(m[2])) for m in
              re.findall(r"Topic: (\S+) \| Type: (\S+) \| Count: (\d+) \| Serialization Format: "
                         r"cdr", out)}
    return {"messages": total, "topics": topics}


@pytest.fixture(scope="module")
def offline_bag(env, tmp_path_factory):
    """huo_3_1_pd for 0.5 s, recorded by ``simulate --record`` on the rclpy-free side."""
    doc = {**yaml.safe_load(resolve_scenario_path("huo_3_1_pd").read_text()), "duration": 0.5}
    folder = tmp_path_factory.mktemp("ros2")
    (folder / "short.yaml").write_text(yaml.safe_dump(doc))
    path = folder / "offline"
    code, err = finish(cli(env, "simulate", str(folder / "short.yaml"), "--record", str(path),
                           "--quiet"), timeout_s=120)
    assert code == 0, err
    return path


def test_ros2_bag_info_reads_an_offline_bag(env, offline_bag):
    info = ros2_bag_info(env, offline_bag)
    assert info["messages"] == 1 + 4 * 501
    assert info["topics"] == {
        "/robot_description": ("std_msgs/msg/String", 1),
        "/joint_states": ("sensor_msgs/msg/JointState", 501),
        "/joint_reference": ("trajectory_msgs/msg/JointTrajectory", 501),
        "/joint_command": ("sensor_msgs/msg/JointState", 501),
        "/controller/state": ("sensor_msgs/msg/JointState", 501),
    }


def test_ros2_bag_info_reads_a_live_recording(env, tmp_path):
    count = 1000
    recorder = cli(env, "bag", "record", "-o", str(tmp_path / "bag"), *PAIR)
    pub = publisher(env, count)
    wait_for_line(pub, f"published {count}")
    code, err = stop(recorder)
    assert code == 0, err
    info = ros2_bag_info(env, tmp_path / "bag")
    assert info["messages"] == 2 * count
    assert info["topics"] == {t: ("sensor_msgs/msg/JointState", count) for t in PAIR}


def test_ros2_bag_play_replays_our_bag_byte_for_byte(env, offline_bag, tmp_path):
    # ROS 2 first, our recorder second: the start order that finds each other under LOCALHOST
    player = popen(ros2_command("bag", "play", str(offline_bag), "--topics", "/joint_states",
                                "/controller/state", "--delay", "4",
                                "--wait-for-all-acked", "5000"), env)
    wait_for_line(player, "Playback until timestamp")  # its node is up (and waiting)
    recorder = cli(env, "bag", "record", "-o", str(tmp_path / "again"), "/joint_states",
                   "/controller/state")
    code, err = finish(player, timeout_s=120)
    assert code == 0, err
    code, err = stop(recorder)
    assert code == 0, err
    original, again = messages(offline_bag), messages(tmp_path / "again")
    for topic in ("/joint_states", "/controller/state"):
        assert [d for _, d, _ in again[topic]] == [d for _, d, _ in original[topic]]


def test_we_read_what_ros2_bag_record_writes(env, tmp_path):
    path = tmp_path / "by_ros2"
    recorder = popen(ros2_command("bag", "record", "-s", "mcap", "-o", str(path), *PAIR), env,
                     start_new_session=True)
    count = 300
    try:
        # ROS 2 first, our publisher second: the start order that finds each other (LOCALHOST)
        wait_for_line(recorder, "Listening for topics")
        pub = publisher(env, count, rate=100.0)
        wait_for_line(pub, f"published {count}", timeout_s=120)
    finally:
        os.killpg(recorder.pid, signal.SIGINT)  # the whole session: bash and ros2
        finish(recorder)
    # what rosbag2 kept (its depth-10 readers may drop samples on a loaded machine: that is
    # rosbag2's business here), read back whole and decoded by us
    info, bag = bag_info(path), messages(path)
    assert info["messages"] == sum(len(v) for v in bag.values()) > count
    for topic in PAIR:
        seq = sequence(bag[topic])
        assert seq == sorted(set(seq)) and set(seq) <= set(range(count))
    for _, _, msg in bag["/joint_states"]:
        k = int(msg.position[0])
        assert [list(msg.position), list(msg.velocity), list(msg.effort)] == \
            [list(v) for v in expected_state(k)]


def test_ros2_bag_reads_a_sigkilled_recording_before_and_after_reindex(env, tmp_path):
    """metadata.yaml is current while recording (ros2 bag info reads it from a
    killed recorder), and after ``robot-control bag reindex`` rosbag2 plays the MCAP."""
    bag, count = tmp_path / "bag", 500
    recorder = cli(env, "bag", "record", "-o", str(bag), *PAIR)
    pub = publisher(env, count)
    wait_for_line(pub, f"published {count}")
    deadline = time.monotonic() + 10.0  # ten checkpoints of the recorder
    while time.monotonic() < deadline and \
            f"message_count: {2 * count}" not in (bag / "metadata.yaml").read_text():
        time.sleep(0.05)
    recorder.send_signal(signal.SIGKILL)
    finish(recorder)
    info = ros2_bag_info(env, bag)
    assert info["topics"] == {t: ("sensor_msgs/msg/JointState", count) for t in PAIR}
    code, err = finish(cli(env, "bag", "reindex", str(bag)))
    assert code == 0, err
    assert ros2_bag_info(env, bag)["messages"] == 2 * count
    # rosbag2's own MCAP reader walks the rebuilt summary: play it and record it again
    player = popen(ros2_command("bag", "play", str(bag), "--delay", "4",
                                "--wait-for-all-acked", "5000"), env)
    wait_for_line(player, "Playback until timestamp")
    again = cli(env, "bag", "record", "-o", str(tmp_path / "again"), *PAIR)
    code, err = finish(player, timeout_s=120)
    assert code == 0, err
    code, err = stop(again)
    assert code == 0, err
    for topic in PAIR:
        assert sequence(messages(tmp_path / "again")[topic]) == list(range(count))
