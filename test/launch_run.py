"""``robot-control launch`` in a subprocess for the tests that run the stack (each on its own
ROS domain, loopback discovery, the DDS backend), and the ``robot-control`` command line."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

from bus_probe import bus_env


def robot_control_command(*args: str) -> list[str]:
    """``robot-control ARGS`` (through cli.py once it lists the command, else its module)."""
    from robot_control import cli

    if args[0] in cli.COMMANDS:
        return [sys.executable, "-m", "robot_control.cli", *args]
    if args[0] == "launch":
        return [sys.executable, "-m", "robot_control.cli.launch", *args[1:]]
    return [sys.executable, "-m", "robot_control.cli.bus_tools", *args]


class Collected:
    """A command in a subprocess, its output lines (stdout and stderr) collected as they come."""

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))


class Stack(Collected):
    """``robot-control launch`` in a subprocess, its output lines collected as they come."""

    def __init__(self, env: dict[str, str], *args: str) -> None:
        super().__init__(robot_control_command("launch", *args), env)

    def wait_for(self, text: str, timeout_s: float = 90.0) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and self.proc.poll() is None:
            if any(text in line for line in self.lines):
                return True
            time.sleep(0.1)
        return any(text in line for line in self.lines)

    def finish(self, timeout_s: float = 60.0) -> int:
        code = self.proc.wait(timeout_s)
        self.reader.join(5.0)
        return code

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            return self.finish(30.0)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.finish(10.0)

    def node_pids(self) -> dict[str, int]:
        found = (re.match(r"\[launch\] started (\S+) \(pid (\d+)\)", line) for line in self.lines)
        return {m[1]: int(m[2]) for m in found if m}

    def summary(self) -> dict:
        start = self.lines.index("{")
        end = len(self.lines) - self.lines[::-1].index("}")  # the verdict line follows
        return json.loads("\n".join(self.lines[start:end]))

    @property
    def final_line(self) -> str:
        return self.lines[-1] if self.lines else ""


def stack_env(tag: str) -> dict[str, str]:
    return {**os.environ, **bus_env(tag)}


def check_deadlines_and_outcome(summary: dict, final_line: str) -> None:
    """The missed-deadline figures agree with each other, and the run's outcome follows them: more
    than DEGRADED_MISSED_RATIO of the deadlines missed (or a torque saturated, or motion dropped)
    is ``degraded``, anything else ``ok`` — this machine's load decides which, the rule does not
    change."""
    from robot_control.bringup.verdict import DEGRADED_MISSED_RATIO, dropped_motion

    base, missed = summary["plant"]["commanded_deadlines"], summary["missed_deadlines"]
    assert 0 < base and 0 <= missed <= base, (missed, base)
    assert summary["missed_deadline_ratio"] == missed / base
    dropped = dropped_motion(summary)  # none expected; said if the loaded machine made some
    degraded = summary["missed_deadline_ratio"] > DEGRADED_MISSED_RATIO or \
        summary["plant"]["saturation_events"] or dropped
    assert summary["outcome"] == ("degraded" if degraded else "ok"), (summary["verdict"], dropped)
    assert final_line == f"robot-control launch: {summary['outcome']}: {summary['verdict']}"
    if degraded:  # with its figures
        assert any(word in summary["verdict"]
                   for word in ("% of its deadlines", "saturated", "dropped", "rejected"))
