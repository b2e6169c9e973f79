"""What the ROS 2 suite (tests marked ``ros2``) needs around it: whether a ROS 2 is sourced, the
Python that runs the rclpy-free stack, environments for the ROS 2 side and the Cyclone DDS side,
the ``ros2`` command with a deadline, and processes whose output lines can be waited for.

The suite runs on the Python ROS 2 runs on (``/usr/bin/python3`` with ROS sourced); the
rclpy-free stack runs as a user without ROS 2 runs it: on ``$ROBOT_CONTROL_DDS_PYTHON`` (the
project's venv, set by ``scripts/test_ros2.sh``) with ROS 2's entries taken out of its paths.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

import domains

HINT = "source /opt/ros/jazzy/setup.bash, or run bash scripts/test_ros2.sh"
DDS_PYTHON_ENV = "ROBOT_CONTROL_DDS_PYTHON"
STACK_NODES = ("/controller", "/dynamics_server", "/plant", "/trajectory_generator")
TEST_DIR = Path(__file__).resolve().parent


def ros2_missing() -> str | None:
    """Why the ROS 2 suite cannot run here, or None when it can."""
    if importlib.util.find_spec("rclpy") is None:
        return f"rclpy is not importable: ROS 2 is not sourced ({HINT})"
    if shutil.which("ros2") is None:
        return f"the ros2 command is not on PATH ({HINT})"
    return None


def dds_python() -> str | None:
    """The Python that runs the rclpy-free stack: $ROBOT_CONTROL_DDS_PYTHON, else this one when
    it has the cyclonedds package; None when there is none."""
    chosen = os.environ.get(DDS_PYTHON_ENV)
    if chosen:
        return chosen
    return sys.executable if importlib.util.find_spec("cyclonedds") is not None else None


def dds_python_missing() -> str | None:
    if dds_python() is None:
        return (f"no Python with the cyclonedds package for the rclpy-free side: set "
                f"{DDS_PYTHON_ENV} (scripts/test_ros2.sh sets the project's .venv)")
    return None


def ros_env(tag: str, discovery_range: str = "LOCALHOST") -> dict[str, str]:
    """This environment on a ROS domain claimed for ``tag``, with the given discovery range."""
    return {**os.environ, "ROS_DOMAIN_ID": str(domains.claim(tag)),
            "ROS_AUTOMATIC_DISCOVERY_RANGE": discovery_range,
            "RMW_IMPLEMENTATION": "rmw_cyclonedds_cpp"}


def private_rclpy_domain(tag: str):
    """A module-wide autouse fixture giving this process's rclpy its own domain (rclpy reads the
    domain and discovery range from the environment at init): ``private_domain =
    private_rclpy_domain("tag")`` in a test module."""
    import pytest

    @pytest.fixture(scope="module", autouse=True)
    def private_domain():
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("ROS_DOMAIN_ID", str(domains.claim(tag)))
            mp.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
            yield

    return private_domain


def _ros_prefixes(env: Mapping[str, str]) -> list[str]:
    return [p.rstrip("/") for var in ("AMENT_PREFIX_PATH", "COLCON_PREFIX_PATH")
            for p in env.get(var, "").split(os.pathsep) if p]


def without_ros(env: Mapping[str, str]) -> dict[str, str]:
    """env as a shell that never sourced ROS 2 has it (same domain and discovery range), with the
    DDS backend: ROS 2's PYTHONPATH and LD_LIBRARY_PATH entries removed."""
    prefixes = _ros_prefixes(env)
    out = dict(env)
    for var in ("PYTHONPATH", "LD_LIBRARY_PATH"):
        kept = [e for e in env.get(var, "").split(os.pathsep)
                if e and not any(e == p or e.startswith(p + "/") for p in prefixes)]
        if kept:
            out[var] = os.pathsep.join(kept)
        else:
            out.pop(var, None)
    out["ROBOT_CONTROL_BUS"] = "dds"
    return out


def ros2(env: Mapping[str, str], *args: str, timeout: float = 30.0) -> str:
    """Run ``ros2 args…``; its stdout and stderr (what it printed so far if the deadline hit)."""
    try:
        out = subprocess.run(["ros2", *args], env=dict(env), capture_output=True, text=True,
                             timeout=timeout)
        return out.stdout + out.stderr
    except subprocess.TimeoutExpired as exc:
        text = [s.decode() if isinstance(s, bytes) else (s or "") for s in (exc.stdout, exc.stderr)]
        return "".join(text) + f"\n[ros2 {' '.join(args)}: no exit within {timeout} s]"


def wait_for(predicate, timeout: float, every: float = 0.1):
    """Poll predicate() until it returns something truthy or the deadline passes; its last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(every)


class Watched:
    """A process whose merged stdout/stderr lines are collected by a thread (it never blocks on a
    full pipe); ``wait_for_line`` waits for a pattern, ``stop`` ends it with SIGINT (then kill)."""

    def __init__(self, argv: list[str], env: Mapping[str, str], cwd: str | None = None):
        self.argv = argv
        self.proc = subprocess.Popen(argv, env=dict(env), cwd=cwd, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, errors="replace",
                                     start_new_session=True)
        self.lines: list[str] = []
        self._changed = threading.Condition()
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        for line in self.proc.stdout:
            with self._changed:
                self.lines.append(line.rstrip("\n"))
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    @property
    def output(self) -> str:
        return "\n".join(self.lines)

    def wait_for_line(self, pattern: str, timeout: float) -> str | None:
        """The first line (already seen or still to come) matching the regex, else None."""
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        seen = 0
        with self._changed:
            while True:
                for line in self.lines[seen:]:
                    if rx.search(line):
                        return line
                seen = len(self.lines)
                left = deadline - time.monotonic()
                if left <= 0 or (self.proc.poll() is not None and seen == len(self.lines)):
                    return None
                self._changed.wait(min(left, 0.2))

    def wait_for_lines(self, patterns: Iterable[str], timeout: float) -> list[str]:
        """The patterns not matched by any line within the deadline (empty: all were)."""
        deadline = time.monotonic() + timeout
        return [p for p in patterns
                if self.wait_for_line(p, max(0.0, deadline - time.monotonic())) is None]

    def stop(self, timeout: float = 15.0) -> int:
        """SIGINT to the process (a launcher passes it on to its nodes), then SIGKILL to its
        whole session after the timeout; its exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # whatever it left behind
        except ProcessLookupError:
            pass
        self.proc.wait(10)
        return self.proc.returncode

    def __enter__(self) -> Watched:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def node_ready_patterns(nodes: Iterable[str] = STACK_NODES) -> list[str]:
    """A logged line of each node (rcutils format ``[INFO] [stamp] [name]: …``): it is up."""
    return [rf"\] \[{re.escape(n.lstrip('/'))}\]: " for n in nodes]


def start_dds_stack(env: Mapping[str, str], *launch_args: str) -> Watched:
    """The package's launch file run without ROS 2 (``robot-control launch``) on the DDS backend."""
    return Watched([dds_python(), "-m", "robot_control.cli", "launch", "--no-monitor",
                    *launch_args], without_ros(env))


def start_stack(route: str, tag: str, *launch_args: str) -> tuple[Watched, dict[str, str]]:
    """The package's launch file on a domain claimed for ``tag``, on ``route``: ``ros2 launch``
    (``rclpy``: the nodes on rclpy, ROS 2's default RMW) or ``robot-control launch`` without ROS 2
    (``dds``: Cyclone DDS); (the process, the environment for ``ros2`` commands on its domain)."""
    if route == "dds":
        env = ros_env(tag)
        return start_dds_stack(env, *launch_args), env
    env = {**os.environ, "ROS_DOMAIN_ID": str(domains.claim(tag)),
           "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    return Watched(["ros2", "launch", "robot_control", "control.launch.yaml", *launch_args],
                   env), env


def stop_daemon(env: Mapping[str, str]) -> None:
    """Stop the ros2 daemon of env's domain, if one was started (by a test or a ros2 command)."""
    ros2(env, "daemon", "stop", timeout=30)


#: Jazzy's ``ros2 bag record`` can abort on Ctrl-C when a message's callback runs after its
#: writer closed (rosbag2's recorder stops its subscriptions but not callbacks already queued;
#: fixed in Rolling with rclcpp's disable_callbacks, not backported: ros2/rosbag2#2410)
ROSBAG2_STOP_CRASH = r"Bag is not open\. Call open\(\) before writing"


def crashed_as(code: int | None, output: str, pattern: str) -> bool:
    """Whether a program died of a signal (a negative exit status) with ``pattern`` in its output:
    a known crash of a third-party tool, not of what the test checks."""
    return code is not None and code < 0 and re.search(pattern, output) is not None


def record_bag(env: Mapping[str, str], path: Path, topics: Iterable[str],
               seconds: float = 3.0) -> str:
    """``ros2 bag record -s mcap`` of topics for ``seconds`` once it subscribed to each of them,
    stopped with Ctrl-C; the output of ``ros2 bag info`` on the result. A recording that hit
    rosbag2's own crash on Ctrl-C (ROSBAG2_STOP_CRASH) is made once more."""
    topics = list(topics)
    for attempt in (1, 2):
        with Watched(["ros2", "bag", "record", "-s", "mcap", "-o", str(path), *topics],
                     env) as recorder:
            for topic in topics:
                assert recorder.wait_for_line(f"Subscribed to topic '{topic}'", 60), \
                    recorder.output
            time.sleep(seconds)
            code = recorder.stop()
        if code == 0 or attempt == 2 or not crashed_as(code, recorder.output, ROSBAG2_STOP_CRASH):
            break
        shutil.rmtree(path)
    assert code == 0, recorder.output
    return ros2(env, "bag", "info", str(path))


def bag_topics(info: str) -> dict[str, tuple[str, int]]:
    """{topic: (type, message count)} from ``ros2 bag info``'s CDR topic lines."""
    rx = re.compile(r"Topic: (\S+) \| Type: (\S+) \| Count: (\d+) \| Serialization Format: cdr")
    return {m.group(1): (m.group(2), int(m.group(3))) for m in rx.finditer(info)}


def exit_after_ctrl_c(argv: list[str], env: Mapping[str, str], ready: str, signals: int) -> tuple:
    """Start a node process, wait for its ``ready`` line and a moment more (it spins), send it
    SIGINT ``signals`` times 20 ms apart (Ctrl-C under a launcher arrives twice); (exit code or
    None if it did not end within 20 s, its output)."""
    with Watched(argv, env) as proc:
        assert proc.wait_for_line(ready, 120), proc.output
        time.sleep(1.0)
        for _ in range(signals):
            proc.proc.send_signal(signal.SIGINT)
            time.sleep(0.02)
        try:
            code = proc.proc.wait(20)
        except subprocess.TimeoutExpired:
            code = None
    return code, proc.output


#: ``ros2 topic echo`` of the motion the trajectory generator sent once, started late: the
#: topic is reliable and transient local, so the echo still gets it
MOTION_ECHO = ("topic", "echo", "--once", "/controller/joint_trajectory",
               "trajectory_msgs/msg/JointTrajectory", "--qos-durability", "transient_local",
               "--qos-reliability", "reliable")


def echoed_knots(out: str) -> tuple[list[str], list[float]]:
    """(joint_names, time_from_start of each point in s) of one echoed JointTrajectory."""
    names = re.search(r"joint_names:\n((?:- .+\n)+)", out + "\n")
    times = re.findall(r"time_from_start:\n\s+sec: (\d+)\n\s+nanosec: (\d+)", out)
    return ([n[2:] for n in names.group(1).splitlines()] if names else [],
            [int(s) + int(ns) * 1e-9 for s, ns in times])
