"""The nodes' safety rules on the ROS route: ``ros2 launch`` of the installed package, nodes on rclpy.

A stack that cannot start (``rate:=0.0``, ``rate:=1e9``, read as a number) ends within seconds;
a node killed while the stack runs ends the launch (``on_exit: shutdown``, nothing respawned);
a node that hangs (SIGSTOP: alive, silent) is named by the lifecycle manager, on /diagnostics
and in its log, as the one it stopped the stack for, and the launch ends; an intruder answering
the plant's states with copied stamps is refused, reported once, and does not fault the plant;
Ctrl-C ends every node cleanly within launch's timeout.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from ros2_env import Watched, ros2_missing

if ros2_missing():
    pytest.skip(ros2_missing(), allow_module_level=True)

import domains  # noqa: E402
from launch_helpers import cli_env  # noqa: E402

pytestmark = pytest.mark.ros2
HOSTILE = str(Path(__file__).with_name("hostile.py"))
UP_S = 180.0  # a fresh install compiles its kernels on the first start


def ros2_launch(domain: int, *arguments: str) -> Watched:
    return Watched(["ros2", "launch", "robot_control", "control.launch.yaml", *arguments],
                   cli_env(domain))


def ended_within(proc: Watched, seconds: float) -> int | None:
    try:
        return proc.proc.wait(seconds)
    except subprocess.TimeoutExpired:
        return None


@pytest.mark.parametrize("rate, refused", [("0.0", "0.0 is outside"),
                                           ("1e9", "1000000000.0 is outside")])
def test_a_stack_that_cannot_start_ends_within_seconds(rate, refused):
    with ros2_launch(domains.claim(f"rel-ros-rate-{rate}"), f"rate:={rate}") as launch:
        assert ended_within(launch, 60) is not None, launch.output[-3000:]
        assert f"parameter 'rate': {refused}" in launch.output, launch.output[-3000:]


def started_pids(output: str) -> dict[str, int]:
    """node process name (``plant``) -> pid, from launch's "process started with pid" lines."""
    found = re.finditer(r"\[INFO\] \[(\w+)-\d+\]: process started with pid \[(\d+)\]", output)
    return {m[1]: int(m[2]) for m in found}


def test_a_killed_node_ends_the_launch():
    with ros2_launch(domains.claim("rel-ros-kill"), "rate:=100.0") as launch:
        assert launch.wait_for_line(r"stack active", UP_S), launch.output[-3000:]
        os.kill(started_pids(launch.output)["plant"], signal.SIGKILL)
        assert ended_within(launch, 60) is not None, launch.output[-3000:]
    assert re.search(r"\[plant-\d+\]: process has died", launch.output)


def test_a_hung_node_is_named_and_the_stack_stops():
    """As test_reliability_stack.py's hung-node test on the rclpy-free route: the lifecycle
    manager blames the silent /controller (not itself), on /diagnostics and in the launch's
    output, and exits 1, which ends the launch."""
    from diagnostic_msgs.msg import DiagnosticArray
    from launch_helpers import Observer

    domain = domains.claim("rel-ros-hung")
    observer = Observer(domain, "hung_probe")
    stops: list[dict[str, str]] = []

    def on_diagnostics(msg) -> None:
        for status in msg.status:
            values = {kv.key: kv.value for kv in status.values}
            if "stopped_for" in values:
                stops.append({"name": status.name, "message": status.message, **values})

    observer.node.create_subscription(DiagnosticArray, "/diagnostics", on_diagnostics, 100)
    try:
        with ros2_launch(domain, "rate:=100.0") as launch:
            assert launch.wait_for_line(r"stack active", UP_S), "\n".join(
                line for line in launch.lines if "lifecycle_manager" in line)[-3000:]
            pid = started_pids(launch.output)["controller"]
            os.kill(pid, signal.SIGSTOP)  # alive but silent: no heartbeat, no commands
            try:
                assert ended_within(launch, 90) is not None, launch.output[-3000:]
            finally:
                try:
                    os.kill(pid, signal.SIGCONT)
                except ProcessLookupError:
                    pass  # stopped with the launch
    finally:
        observer.close()
    said = [line for line in launch.lines if "stopping the stack:" in line]
    assert said, launch.output[-3000:]
    assert all("stopping the stack: /controller silent on /diagnostics" in line
               for line in said), said
    assert re.search(r"\[lifecycle_manager-\d+\]: process has died .*exit code 1",
                     launch.output), launch.output[-3000:]
    assert stops, "the lifecycle manager's /diagnostics never said what it stopped the stack for"
    assert {s["stopped_for"] for s in stops} == {"/controller"}, stops
    assert all(s["stop_reason"].startswith("silent on /diagnostics") for s in stops), stops


def test_an_intruder_is_refused_once_and_ctrl_c_ends_every_node_cleanly():
    domain = domains.claim("rel-ros-intruder")
    with ros2_launch(domain, "rate:=100.0") as launch:
        assert launch.wait_for_line(r"stack active", UP_S), launch.output[-3000:]
        env = {**cli_env(domain), "ROBOT_CONTROL_BUS": "rclpy"}
        intruder = subprocess.run(
            [sys.executable, HOSTILE, "answer", "--tau", "50", "0", "0", "--seconds", "4"],
            env=env, capture_output=True, text=True, timeout=120)
        assert intruder.stdout.strip().splitlines()[-1].startswith("sent"), intruder.stderr
        refusals = [line for line in launch.lines if "refusing /joint_command from" in line]
        assert len(refusals) == 1 and "/hostile" in refusals[0], refusals
        assert "fault:" not in launch.output, launch.output[-3000:]
        launch.proc.send_signal(signal.SIGINT)
        assert ended_within(launch, 30) is not None, launch.output[-3000:]
    assert "SIGTERM" not in launch.output and "SIGKILL" not in launch.output
    cleanly = re.findall(r"\[(\w+)-\d+\]: process has finished cleanly", launch.output)
    assert sorted(cleanly) == ["controller", "dynamics_server", "lifecycle_manager", "plant",
                               "trajectory_generator"], launch.output[-3000:]
