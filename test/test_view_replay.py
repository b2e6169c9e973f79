"""``robot-control view --bag DIR`` in headless Chromium: a recording (``robot-control simulate
--record``) replayed with its time slider: the posture and the readout follow the slider."""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml
from launch_run import stack_env
from view_helpers import Browser, View, browser_missing, free_port, png_pixels

# slow (scripts/test.sh --slow): a headless Chromium replaying a run
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(browser_missing() is not None, reason=str(browser_missing())),
              pytest.mark.timeout(600)]

SCENARIO = {"robot": "ddarm", "duration": 2.0, "rate": 200, "physics_dt": 0.001,
            "initial": {"q": [-0.1, 1.5, 1.0]},
            "trajectory": {"type": "named", "name": "huo_intended"},
            "controller": {"type": "passivity", "params": {"lambda": [4, 4, 5],
                                                           "kd": [100, 20, 10]}}}


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    root = tmp_path_factory.mktemp("view_bag")
    (root / "run.yaml").write_text(yaml.safe_dump(SCENARIO))
    got = subprocess.run([sys.executable, "-m", "robot_control.cli", "simulate",
                          str(root / "run.yaml"), "--record", str(root / "bag"), "--quiet"],
                         capture_output=True, text=True, timeout=500)
    assert got.returncode == 0, got.stderr
    return root / "bag"


def test_a_bag_is_replayed_with_a_time_slider(recording) -> None:
    view = View(stack_env("view_bag"), "--bag", str(recording), "--port", str(free_port()))
    browser = None
    try:
        view.wait_serving()
        browser = Browser()
        browser.open(view.url)
        browser.wait_text(r"replay of bag: ddarm, 2\.00 s recorded", 60)
        end = browser.wait_text(r"t = ([\d.]+) s\s+joint[^\n]*\n\s*joint1\s+([-+\d.]+) rad", 60)
        assert float(end[1]) == pytest.approx(2.0, abs=0.01)
        at_end = browser.canvas_png()
        slider = browser.page.get_by_role("slider").first
        slider.focus()
        for _ in range(10):  # ten steps of 1/1000 of the run back… then Home: its start
            slider.press("ArrowLeft")
        slider.press("Home")
        start = browser.wait_text(r"t = (0\.0\d) s\s+joint[^\n]*\n\s*joint1\s+([-+\d.]+) rad", 60)
        assert float(start[2]) == pytest.approx(-0.1, abs=0.02)  # the scenario's initial q
        moved = png_pixels(browser.canvas_png())
        assert abs(moved - png_pixels(at_end)).mean() > 0.05, "the posture did not follow"
        assert browser.errors == [], browser.errors
        assert browser.hosts <= {"127.0.0.1", ""}, browser.hosts
    finally:
        if browser is not None:
            browser.close()
        assert view.stop() == 0, "\n".join(view.lines)
