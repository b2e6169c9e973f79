"""Shared by the recording tests: node processes on a private domain, and bags read back with
rosbags' own reader."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from bus_probe import bus_env
from ros2_env import dds_python, without_ros
from rosbags.rosbag2 import Reader
from rosbags.typesys import Stores, get_typestore

REPO = Path(__file__).resolve().parents[1]
PUBLISHER = Path(__file__).resolve().parent / "bag_publisher.py"
TYPESTORE = get_typestore(Stores.ROS2_JAZZY)
PAIR = ("/joint_states", "/joint_command")  # what bag_publisher.py publishes
ROS_SETUP = Path("/opt/ros/jazzy/setup.bash")
_started: list[subprocess.Popen] = []


def recording_env(tag: str) -> dict[str, str]:
    """The environment of a test's own ROS domain (claimed machine-wide), this checkout first."""
    out = {**os.environ, **bus_env(tag)}
    out["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), out.get("PYTHONPATH")]))
    return out


def ros2_available() -> bool:
    return shutil.which("ros2") is not None or ROS_SETUP.is_file()


def ros2_command(*args: str) -> list[str]:
    """``ros2 ARGS`` as a command line, sourcing /opt/ros/jazzy when ros2 is not on PATH."""
    if shutil.which("ros2"):
        return ["ros2", *args]
    return ["bash", "-c", f'source {ROS_SETUP} && exec ros2 "$@"', "ros2", *args]


def ros2_env(tag: str) -> dict[str, str]:
    """recording_env for tests that also run ROS 2 processes (system python3, rmw_cyclonedds)."""
    out = recording_env(tag)
    out["PATH"] = "/usr/bin:" + out.get("PATH", "")
    out["RMW_IMPLEMENTATION"] = "rmw_cyclonedds_cpp"
    return out


@pytest.fixture(autouse=True)
def reaped():
    """Import into a test module: whatever its tests started is killed after each one."""
    yield
    reap()


def popen(command: list[str], env, **kwargs) -> subprocess.Popen:
    """A process whose stdout and stderr lines are collected by threads (``proc.out``,
    ``proc.err``), so a chatty child never blocks and waits can have deadlines."""
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=REPO, **kwargs)
    _started.append(proc)
    proc.out, proc.err, proc.pumps = [], [], []
    for stream, lines in ((proc.stdout, proc.out), (proc.stderr, proc.err)):
        pump = threading.Thread(target=lambda s=stream, ls=lines: ls.extend(s), daemon=True)
        pump.start()
        proc.pumps.append(pump)
    return proc


def reap() -> None:
    """Kill whatever a test started and left running (a failed assertion, a timeout)."""
    while _started:
        proc = _started.pop()
        if proc.poll() is None:
            try:
                if os.getpgid(proc.pid) == proc.pid:  # its own session: take its children too
                    os.killpg(proc.pid, signal.SIGKILL)
                else:
                    proc.kill()
            except ProcessLookupError:
                pass
            proc.wait()


def start(env, *args: str) -> subprocess.Popen:
    """A Python process of ours on the rclpy-free side: in the ROS 2 suite on the Python with the
    cyclonedds package ($ROBOT_CONTROL_DDS_PYTHON), with ROS 2's paths taken out of env."""
    return popen([dds_python() or sys.executable, *args], without_ros(env))


def cli(env, *args: str) -> subprocess.Popen:
    return start(env, "-m", "robot_control.cli", *args)


def publisher(env, count: int, rate: float = 1000.0, subscribers: int = 1) -> subprocess.Popen:
    """test/bag_publisher.py: count messages on each of PAIR at rate, once subscribed."""
    return start(env, str(PUBLISHER), "--count", str(count), "--rate", str(rate),
                 "--subscribers", str(subscribers))


def wait_for_line(proc: subprocess.Popen, text: str, timeout_s: float = 60.0) -> None:
    """Wait until the process printed a line holding text (stdout or stderr)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if any(text in line for line in proc.out + proc.err):
            return
        if proc.poll() is not None:
            break
        time.sleep(0.02)
    finish(proc, signal.SIGKILL)
    raise AssertionError(f"no '{text}' within {timeout_s} s:\n{''.join(proc.out + proc.err)}")


def finish(proc: subprocess.Popen, sig=None, timeout_s: float = 60.0) -> tuple[int, str]:
    """Send sig (if still running), wait for the exit; (exit code, all of stderr)."""
    if sig is not None and proc.poll() is None:
        proc.send_signal(sig)
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise
    for pump in proc.pumps:
        pump.join(timeout=10)
    return proc.returncode, "".join(proc.err)


def stop(proc: subprocess.Popen, sig=signal.SIGINT, timeout_s: float = 30.0) -> tuple[int, str]:
    """Stop a process with a signal (SIGINT: as Ctrl-C); (exit code, stderr)."""
    return finish(proc, sig, timeout_s)


def messages(path: Path) -> dict[str, list]:
    """topic -> [(bag timestamp, serialized data, decoded)] through rosbags' reader alone;
    also checks that metadata and MCAP agree on the counts."""
    out: dict[str, list] = {}
    with Reader(path) as reader:
        for conn, stamp, data in reader.messages():
            out.setdefault(conn.topic, []).append(
                (stamp, bytes(data), TYPESTORE.deserialize_cdr(data, conn.msgtype)))
        for conn in reader.connections:
            assert conn.msgcount == len(out.get(conn.topic, []))
    return out


def sequence(msgs: list) -> list[int]:
    return [int(m.effort[0]) if len(m.position) == 0 else int(m.position[0]) for _, _, m in msgs]
