"""The launcher's start gate (nodes/start_gate.py): a node process started by ``robot-control
launch`` imports while the launcher checks the domain and joins the bus only on the launcher's
go; told no (a refused or interrupted launch) it ends quietly with 0, never having joined."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from bus_probe import bus_env

from robot_control.nodes import start_gate
from robot_control.nodes.start_gate import GATE_ENV, GO, GateTimeout, wait_for_go


class Stop:
    requested = False


@pytest.fixture
def gate(monkeypatch):
    """(write end) of a gate this process waits at, as a node started by the launcher does."""
    read_end, write_end = os.pipe()
    monkeypatch.setenv(GATE_ENV, str(read_end))
    yield write_end
    try:
        os.close(write_end)
    except OSError:
        pass


def test_without_a_gate_a_node_goes_at_once(monkeypatch):
    monkeypatch.delenv(GATE_ENV, raising=False)
    assert wait_for_go(Stop()) is True


def test_the_go_byte_lets_it_start_and_the_gate_is_not_passed_on(gate):
    os.write(gate, GO)
    assert wait_for_go(Stop()) is True
    assert GATE_ENV not in os.environ  # the processes a node starts have no gate


def test_a_gate_closed_without_go_says_no(gate):
    os.close(gate)
    assert wait_for_go(Stop()) is False


def test_a_ctrl_c_at_the_gate_says_no(gate):
    stop = Stop()
    stop.requested = True
    assert wait_for_go(stop) is False


def test_no_answer_within_the_limit_is_an_error(gate, monkeypatch):
    monkeypatch.setattr(start_gate, "GATE_TIMEOUT_S", 0.3)
    started = time.monotonic()
    with pytest.raises(GateTimeout, match="did not let it start within 0.3 s"):
        wait_for_go(Stop())
    assert time.monotonic() - started < 2.0


def _gated_node(env: dict[str, str]) -> tuple[subprocess.Popen, int]:
    read_end, write_end = os.pipe()
    proc = subprocess.Popen(
        [sys.executable, "-m", "robot_control.nodes.dynamics_server_node"],
        env={**env, GATE_ENV: str(read_end)}, pass_fds=(read_end,),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    os.close(read_end)
    return proc, write_end


def _nodes(env: dict[str, str]) -> list[str]:
    """``robot-control node list`` on the test's domain (it discovers before it answers)."""
    out = subprocess.run([sys.executable, "-m", "robot_control.cli", "node", "list"],
                         env=env, capture_output=True, text=True, timeout=60)
    return out.stdout.split()


def test_a_real_node_joins_only_on_go_and_ends_quietly_on_no():
    env = {**os.environ, **bus_env("start-gate")}
    told_no, gate_no = _gated_node(env)
    told_go, gate_go = _gated_node(env)
    try:
        time.sleep(3.0)  # both imported by now, waiting at the gate
        assert told_no.poll() is None and told_go.poll() is None
        assert "/dynamics_server" not in _nodes(env)
        os.close(gate_no)
        out, _ = told_no.communicate(timeout=30)
        assert told_no.returncode == 0 and out.strip() == "", out
        os.write(gate_go, GO)
        os.close(gate_go)
        deadline = time.monotonic() + 60
        while "/dynamics_server" not in _nodes(env):
            assert time.monotonic() < deadline and told_go.poll() is None, "it never joined"
    finally:
        for proc in (told_no, told_go):
            if proc.poll() is None:
                proc.terminate()
                proc.communicate(timeout=30)
