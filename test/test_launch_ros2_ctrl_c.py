"""Ctrl-C of ``ros2 launch robot_control control.launch.yaml`` is a clean, quiet stop: a
terminal sends SIGINT to launch and to every node of its process group, launch then
sends each node its own SIGINT — at whatever moment (nodes configuring, the stack running) no
process dies with an exit code (launch logs that as ``[ERROR] … process has died``), and launch
exits 0."""

from __future__ import annotations

import os
import signal
import time

import pytest
from ros2_env import Watched, ros2_missing, ros_env

if ros2_missing():
    pytest.skip(ros2_missing(), allow_module_level=True)

pytestmark = pytest.mark.ros2


@pytest.mark.timeout(400)
@pytest.mark.parametrize("moment", ["configured in", "stack active"])
def test_ctrl_c_of_ros2_launch_is_a_clean_quiet_stop(moment):
    env = ros_env(f"launch-ctrl-c-{moment}")
    with Watched(["ros2", "launch", "robot_control", "control.launch.yaml", "rate:=250.0"],
                 env) as launch:
        assert launch.wait_for_line(moment, 300), launch.output[-4000:]
        time.sleep(0.5)
        os.killpg(launch.proc.pid, signal.SIGINT)  # the terminal: launch and its nodes alike
        try:
            code = launch.proc.wait(60)
        except Exception:
            code = None
        time.sleep(0.2)  # the last lines
    errors = [line for line in launch.lines if "[ERROR]" in line or "Traceback" in line]
    assert code == 0 and not errors, "\n".join(launch.lines[-60:])
    exits = [line for line in launch.lines if "process has finished cleanly" in line]
    assert len(exits) == 5, "\n".join(launch.lines[-40:])  # the four nodes and the manager
