"""``robot-control view`` in a real headless Chromium (Playwright driving Debian's chromium) on a
real stack (``robot-control launch composed:=true``, rclpy-free) and a second namespace's plant:
the page, its 3D view and plots, the law switched from the page (seen by ``robot-control param
get``), a refusal's reason, "disconnected" and back, a bag replayed, and a port in use."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from launch_run import Stack, robot_control_command, stack_env
from view_helpers import Browser, View, browser_missing, free_port, png_pixels

# slow (scripts/test.sh --slow): a composed stack and a headless Chromium
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(browser_missing() is not None, reason=str(browser_missing())),
              pytest.mark.timeout(600)]

SECOND = "/side"  # the second namespace: a plant alone, stopped and started again by the test
SCREENSHOTS = os.environ.get("ROBOT_CONTROL_VIEW_SCREENSHOTS")  # a directory: save them there


def plant_alone(env: dict[str, str]) -> subprocess.Popen:
    """A plant node in SECOND, active by itself (it publishes its state and heartbeat)."""
    return subprocess.Popen([sys.executable, "-m", "robot_control.nodes.plant_node", "--ros-args",
                             "-r", f"__ns:={SECOND}", "-p", "autostart:=true", "-p",
                             "robot:=ddarm"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.STDOUT)


def stopped(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


@pytest.fixture(scope="module")
def session():
    env = stack_env("view")
    launched_port = free_port()  # the launch file's own view (view:=true) serves here
    stack = Stack(env, "composed:=true", "view:=true", f"view_port:={launched_port}",
                  "--startup-timeout", "300")
    side = plant_alone(env)
    view = View(env, "--namespace", "/", "--namespace", SECOND, "--port", str(free_port()))
    browser = None
    try:
        view.wait_serving()
        assert stack.wait_for("control loop running", 300), "\n".join(stack.lines[-30:])
        browser = Browser()
        browser.open(view.url)
        yield {"env": env, "stack": stack, "view": view, "browser": browser, "side": [side],
               "launched_port": launched_port}
    finally:
        if browser is not None:
            browser.close()
        view.stop()
        stack.stop()
        for proc in [side]:
            stopped(proc)


def joint1_q(browser: Browser) -> tuple[float, float]:
    """(t, q of joint1) of the first robot's readout."""
    found = browser.wait_text(r"t = ([-\d.]+) s\s+joint\s+q[^\n]*\n\s*joint1\s+([-+\d.]+) rad", 60)
    return float(found[1]), float(found[2])


def test_page_loads_with_the_robot_moving_in_3d_and_plots(session) -> None:
    browser = session["browser"]
    browser.wait_text(r"connected\*?\*? to the stack in /\n", 60)
    t1, q1 = joint1_q(browser)
    first = browser.canvas_png()
    time.sleep(2.0)
    t2, q2 = joint1_q(browser)
    second = browser.canvas_png()
    assert t2 > t1 and q2 != q1, "the readout did not change while the arm moves"
    a, b = png_pixels(first), png_pixels(second)
    assert a.std() > 3.0, "the 3D view is blank"
    assert np.abs(a - b).mean() > 0.05, "the 3D view did not change while the arm moved"
    browser.wait_text(r"joint1: q vs q_d \[rad\]", 60)
    browser.wait_text(r"joint3: torque \[N·m\], limit ±100", 60)
    if SCREENSHOTS:
        browser.page.screenshot(path=os.path.join(SCREENSHOTS, "view.png"))
    assert browser.errors == [], browser.errors
    assert browser.hosts <= {"127.0.0.1", ""}, f"requests left the machine: {browser.hosts}"


def test_law_switched_from_the_page_changes_the_controllers_parameter(session) -> None:
    browser = session["browser"]
    browser.wait_text(r"kp\[0\]", 60)  # the descriptors were read: the selector has its choices
    selector = browser.field("law")
    selector.click(force=True)
    browser.page.get_by_role("option", name="pd_gravity", exact=True).click()
    browser.wait_text(r"law: pd_gravity accepted", 60)
    got = subprocess.run(robot_control_command("param", "get", "/controller", "controller"),
                         env=session["env"], capture_output=True, text=True, timeout=60)
    assert got.stdout.strip() == "String value is: pd_gravity", got.stdout + got.stderr


def test_a_refused_law_shows_the_controllers_reason(session) -> None:
    browser = session["browser"]
    box = browser.field("law by name")
    box.fill("no_such_law")
    box.press("Enter")
    found = browser.wait_text(r"law no_such_law refused: ([^\n]+)", 60)
    assert "unknown controller 'no_such_law'; available:" in found[1]
    assert browser.errors == [], browser.errors


def test_disconnected_when_a_stack_stops_and_back_when_it_returns(session) -> None:
    browser = session["browser"]
    browser.wait_text(rf"connected\*?\*? to the stack in {SECOND}", 120)
    stopped(session["side"][0])
    browser.wait_text(rf"disconnected: no message from the stack in {SECOND}", 90)
    browser.wait_text(r"(?<!dis)connected\*?\*? to the stack in /\n", 60)  # the other robot is unaffected
    session["side"][0] = plant_alone(session["env"])
    browser.wait_text(rf"connected\*?\*? to the stack in {SECOND}", 120)


def test_a_port_in_use_is_one_clear_line(session) -> None:
    port = str(session["view"].port)
    got = subprocess.run(robot_control_command("view", "--port", port), env=session["env"],
                         capture_output=True, text=True, timeout=120)
    assert got.returncode == 1
    assert got.stderr.strip().splitlines() == [
        f"robot-control view: port {port} on 127.0.0.1 is in use (another view, or another "
        f"server): choose another with --port"], got.stderr


def test_view_true_on_the_launch_file_serves_the_page(session) -> None:
    import urllib.request

    port = session["launched_port"]
    assert session["stack"].wait_for(f"robot-control view: http://localhost:{port}/", 60)
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=30) as answer:
        assert answer.status == 200 and b"<html" in answer.read(2000).lower()
    stalls = [line for line in session["stack"].lines if "stalled" in line]
    assert not any("/view " in line for line in stalls), stalls  # its heartbeat is watched
