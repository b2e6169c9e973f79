"""The browser view on the rclpy route: ``ros2 launch robot_control control.launch.yaml
view:=true`` starts the view beside the stack (launch_ros runs ``robot_control_view`` on the
system Python, its node an rclpy node named /view); its page is served and, in a real headless
Chromium, shows the stack "connected", with no console error and no request off the machine.

The browser runs on $ROBOT_CONTROL_DDS_PYTHON (the project's venv, where Playwright is:
test/view_page_probe.py); the launched view needs viser on the system Python
(scripts/ros2_workspace.sh installs it)."""

from __future__ import annotations

import importlib.util
import subprocess
import urllib.request
from pathlib import Path

import pytest
from ros2_env import (
    Watched,
    dds_python,
    dds_python_missing,
    ros2,
    ros2_missing,
    ros_env,
    wait_for,
    without_ros,
)

if ros2_missing():
    pytest.skip(ros2_missing(), allow_module_level=True)
if importlib.util.find_spec("viser") is None:
    pytest.skip("viser is not installed for the system Python that ros2 launch runs the view on "
                "(scripts/ros2_workspace.sh installs it)", allow_module_level=True)
if dds_python_missing():
    pytest.skip(dds_python_missing(), allow_module_level=True)

from view_helpers import free_port  # noqa: E402

pytestmark = [pytest.mark.ros2, pytest.mark.timeout(900)]
UP_S = 300.0  # a first start compiles the stack's kernels, on a shared 2-core machine
PROBE = str(Path(__file__).resolve().parent / "view_page_probe.py")


def browser_missing_in_venv(env: dict[str, str]) -> str | None:
    """Why the venv's Python cannot drive a browser here, or None."""
    code = "import sys; sys.path.insert(0, sys.argv[1]); from view_helpers import " \
           "browser_missing as m; print(m() or '')"
    got = subprocess.run([dds_python(), "-c", code, str(Path(PROBE).parent)], env=env,
                         capture_output=True, text=True, timeout=120)
    return (got.stdout.strip() or None) if got.returncode == 0 else got.stderr.strip()[-500:]


def test_view_true_under_ros2_launch_serves_a_page_that_shows_the_stack_connected():
    env = ros_env("view-ros2")
    venv_env = without_ros(env)
    if (why := browser_missing_in_venv(venv_env)) is not None:
        pytest.skip(f"no browser for the venv's Python: {why}")
    port = free_port()
    launch = Watched(["ros2", "launch", "robot_control", "control.launch.yaml", "rate:=250",
                      "view:=true", f"view_port:={port}"], env)
    try:
        served = launch.wait_for_line(rf"robot-control view: http://localhost:{port}/", UP_S)
        assert served, launch.output[-4000:]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=60) as answer:
            assert answer.status == 200 and b"<html" in answer.read(2000).lower()
        assert wait_for(lambda: "/view" in ros2(env, "node", "list", timeout=60).split(), 90), \
            "no /view node on the ROS 2 graph"
        probe = subprocess.run(
            [dds_python(), PROBE, f"http://127.0.0.1:{port}/",
             r"(?<!dis)connected\*?\*? to the stack in /\n", str(UP_S)],
            env=venv_env, capture_output=True, text=True, timeout=UP_S + 180)
        assert probe.returncode == 0, probe.stdout[-3000:] + probe.stderr[-2000:] + \
            "\n--- launch ---\n" + launch.output[-8000:]
    finally:
        launch.stop(30.0)
