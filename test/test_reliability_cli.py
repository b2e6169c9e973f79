"""Refusals, never tracebacks. Every command below answers a hostile but
fair user with one clear line and an exit status, never a traceback (real processes: a real
controller node on its own domain, the real ``robot-control`` commands)."""

from __future__ import annotations

import signal
import subprocess
import time

import pytest
from launch_run import Stack, robot_control_command, stack_env
from stack_helpers import Stack as Nodes
from stack_helpers import private_domain


def run(env: dict[str, str], *args: str, timeout_s: float = 60.0) -> tuple[int, str, str]:
    """``robot-control ARGS`` in a process: (exit status, stdout, stderr)."""
    done = subprocess.run(robot_control_command(*args), env=env, capture_output=True, text=True,
                          timeout=timeout_s)
    return done.returncode, done.stdout, done.stderr


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in text, text
    return lines[0]


@pytest.fixture(scope="module")
def controller():
    """A controller node alone on a private domain (its parameter services are what we need)."""
    env = private_domain(131)
    with Nodes(env, {"controller": ["rate:=100.0"]}) as nodes:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            code, out, _ = run(env, "node", "list")
            if "/controller" in out.split():
                break
        yield env
        nodes.stop()


@pytest.mark.parametrize("name, value, words", [
    ("computed_torque.kp", "hello", ["{computed_torque.kp}", "{double array}", "{string}"]),
    ("controller", "42", ["{controller}", "{string}", "{integer}"]),
    ("rate", "1e9", ["'rate'", "read-only"]),
    ("computed_torque.kp", "[1e300, 1.0, 1.0]", ["computed_torque.kp", "1e+300 is outside"]),
    ("computed_torque.kp", "[2e6, 1.0, 1.0]", ["computed_torque.kp", "2000000.0 is outside"]),
])
def test_param_set_refuses_in_one_line(controller, name, value, words):
    code, out, err = run(controller, "param", "set", "/controller", name, value)
    line = one_line(err)
    assert code == 1 and out == ""
    assert line.startswith("Setting parameter failed")
    for word in words:
        assert word in line


def test_a_gain_description_states_its_bound(controller):
    code, out, _ = run(controller, "param", "describe", "/controller", "computed_torque.kp")
    assert code == 0
    assert "range (0, 1e+06]" in out and "Max value: 1000000.0" in out


def test_launch_refuses_a_lockstep_that_is_not_a_boolean():
    code, out, err = run(stack_env("rel-cli"), "launch", "lockstep:=maybe", "--duration", "1")
    assert code == 2 and out == ""
    assert 'Argument "lockstep" provided value "maybe" is not valid' in one_line(err)


@pytest.mark.parametrize("args", [["launch", "--duration", "1"], ["node", "list"]])
def test_a_domain_id_that_is_not_a_number_is_one_line(args):
    env = {**stack_env("rel-cli"), "ROS_DOMAIN_ID": "abc"}
    code, out, err = run(env, *args)
    assert code in (1, 2) and out == ""
    assert "ROS_DOMAIN_ID='abc' is not a non-negative integer" in one_line(err)


@pytest.mark.parametrize("flag, value", [("--duration", "nan"), ("--duration", "-5"),
                                         ("--startup-timeout", "inf"),
                                         ("--liveness-timeout", "0")])
def test_launch_validates_its_own_flags(flag, value):
    code, out, err = run(stack_env("rel-cli"), "launch", flag, value)
    assert code == 2 and out == ""
    assert f"argument {flag}: must be a positive, finite number of seconds" in err
    assert "Traceback" not in err


def test_topic_hz_of_a_topic_nobody_publishes_gives_up_with_a_reason():
    code, out, err = run(stack_env("rel-cli"), "topic", "hz", "/nonexistent", "--timeout", "1")
    assert code == 1 and out == ""
    assert one_line(err) == "robot-control topic hz: no publisher on /nonexistent within 1 s"


@pytest.mark.slow  # a stack launch
def test_ctrl_c_during_start_up_stops_quietly():
    stack = Stack(stack_env("rel-ctrl-c"), "rate:=100.0")
    try:
        assert stack.wait_for("[launch] started plant", timeout_s=60), "\n".join(stack.lines)
    finally:
        stack.proc.send_signal(signal.SIGINT)  # the nodes are still importing / starting
        code = stack.finish(timeout_s=60)
    output = "\n".join(stack.lines)
    assert code == 0, output
    assert "Traceback" not in output and "KeyboardInterrupt" not in output
    assert stack.summary()["stopped_by"] == "interrupted"
    assert all(s["exit"] in (0, 130, 143) for s in stack.summary()["nodes"].values())
