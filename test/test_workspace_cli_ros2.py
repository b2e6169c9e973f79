"""The package's CLI from a colcon workspace, as a ROS 2 user runs it: on PATH after
``source install/setup.bash`` and as ``ros2 run robot_control robot-control``, on the
distribution's Python, which has no ``cyclonedds`` package. The README's ``robot-control launch``
after sourcing runs in test_readme_examples_ros2.py; here, what surrounds it.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from ros2_env import ros2_missing, ros_env

pytestmark = [pytest.mark.ros2, pytest.mark.skipif(bool(ros2_missing()),
                                                    reason=str(ros2_missing()))]


def run(env, *argv, timeout=120):
    return subprocess.run(list(argv), env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def env():
    return ros_env("workspace-cli")


def test_robot_control_is_on_path_from_the_workspace_install(env):
    found = shutil.which("robot-control", path=env["PATH"])
    assert found is not None and Path(found).parent.name == "bin", found
    assert (Path(found).parent.parent / "lib" / "robot_control" / "robot-control").is_file()
    out = run(env, found, "gains", "one_axis", "--rate", "500")
    assert out.returncode == 0, out.stderr
    assert "kp:" in out.stdout


def test_ros2_run_finds_the_cli_too(env):
    out = run(env, "ros2", "run", "robot_control", "robot-control", "gains", "one_axis")
    assert out.returncode == 0, out.stderr


def test_a_dds_tool_without_cyclonedds_names_its_ros2_twin_in_one_line(env):
    if subprocess.run(["python3", "-c", "import cyclonedds"], env=env,
                      capture_output=True).returncode == 0:
        pytest.skip("this Python has the cyclonedds package")
    out = run(env, "robot-control", "topic", "list")
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "cyclonedds" in lines[0] and "ros2 topic" in lines[0], out.stderr
