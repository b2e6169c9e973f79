"""``robot-control simulate`` and bad run lengths: a physics_dt that would make a run of days is
refused in one line at load, and Ctrl-C stops a long run within a second whatever it is doing
(loading, compiling, in the compiled loop) — real subprocesses, a real SIGINT."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
import yaml

#: a long run: 900 s of the DDArm at 1 kHz with 100 physics steps a period (9·10⁷ in all)
LONG = {"robot": "ddarm", "duration": 900.0, "rate": 1000, "physics_dt": 1e-5,
        "initial": {"q": [-0.1, 1.5, 1.0]}, "trajectory": {"type": "named", "name": "huo_intended"},
        "controller": {"type": "computed_torque",
                       "params": {"kp": [50, 50, 50], "kd": [10, 10, 10]}}}
#: how long Ctrl-C may take to end the command
STOP_S = 1.0


def simulate(path: Path, *args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "robot_control.cli", "simulate", str(path),
                             *args], **kw)


def scenario(tmp_path: Path, name: str = "run", **changes) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump({**LONG, **changes}))
    return path


def interrupt(proc: subprocess.Popen) -> float:
    """Send SIGINT; the seconds until the process ended."""
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    return time.monotonic() - sent


@pytest.mark.parametrize("changes, named", [
    ({"physics_dt": 1e-9, "duration": 1000.0}, "physics steps in 1000 s"),  # 10¹² steps
    ({"physics_dt": 1e-9, "duration": 0.01}, "physics steps a control period"),  # 10⁶ a period
])
def test_a_physics_dt_that_makes_a_run_too_long_is_refused_in_one_line(tmp_path, changes, named):
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "robot_control.cli", "simulate",
                           str(scenario(tmp_path, **changes))], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and named in lines[0] and "physics_dt" in lines[0], done.stderr
    assert time.monotonic() - started < 60  # refused at load, nothing run


def test_ctrl_c_stops_a_long_run_in_its_compiled_loop_within_a_second(tmp_path):
    path = scenario(tmp_path)
    # compile (or load) the loop first: a run this short exercises the same kernels
    warm = scenario(tmp_path, "warm", duration=0.01)
    subprocess.run([sys.executable, "-m", "robot_control.cli", "simulate", str(warm), "--quiet"],
                   capture_output=True, timeout=600, check=True)
    master, slave = pty.openpty()  # a terminal: the progress bar says the loop runs
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # tqdm needs width
    proc = simulate(path, stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    seen, deadline = b"", time.monotonic() + 120
    try:
        while b"/900.00 s" not in seen and time.monotonic() < deadline:
            if select.select([master], [], [], 1.0)[0]:
                seen += os.read(master, 4096)
        assert b"/900.00 s" in seen, seen[-500:]
        took = interrupt(proc)
        while select.select([master], [], [], 0.2)[0]:
            try:
                seen += os.read(master, 4096)
            except OSError:
                break
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    assert took < STOP_S, f"Ctrl-C took {took:.2f} s"
    assert proc.returncode in (130, -signal.SIGTERM)
    assert b"robot-control simulate: interrupted" in seen and b"Traceback" not in seen


@pytest.mark.parametrize("after_s", [3.0, 8.0])
def test_ctrl_c_stops_simulate_within_a_second_while_it_loads_or_compiles(tmp_path, after_s):
    # loading, compiling (cold cache) or running at after_s: Ctrl-C ends it alike
    proc = simulate(scenario(tmp_path), "--quiet", stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE)
    time.sleep(after_s)
    assert proc.poll() is None
    took = interrupt(proc)
    err = proc.stderr.read().decode()
    assert took < STOP_S, f"Ctrl-C took {took:.2f} s: {err[-2000:]}"
    assert "interrupted" in err.strip().splitlines()[-1], err[-2000:]
    assert "Traceback" not in err, err[-2000:]
