"""``ros2 launch robot_control control.launch.yaml rqt:=true`` as a person sees it: under Xvfb at
1920×1080 the stack (default robot, 3 joints) comes up, rqt_robot_control writes the perspective
for its joints and becomes rqt_gui, and two screenshots some seconds apart show per joint q_d and
q, the tracking errors, plotted and moving; the console listing the nodes' messages; reconfigure
showing the controller's parameters.

Regions are those of the layout (bringup/rqt_layout.py: plots in a 2×2 grid on the left over
the full height, reconfigure over the console on the right), with margins. rqt_plot draws its
curves in DataPlot's colours (blue, red, cyan, …); a plot has data when those colours fill many
columns of it (the legend's swatches fill about 30). ``RQT_SCREENSHOT=/abs/path.png`` keeps the
second screenshot (docs/rqt_robot_control.png is one).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
from ros2_env import Watched, ros2_missing, ros_env

if ros2_missing():
    pytest.skip(ros2_missing(), allow_module_level=True)
MISSING = [tool for tool in ("Xvfb", "xdotool", "import", "convert") if shutil.which(tool) is None]
if MISSING:
    pytest.skip(f"needs {', '.join(MISSING)} (Debian: xvfb, xdotool, imagemagick)",
                allow_module_level=True)

from robot_control.bringup.rqt_layout import (  # noqa: E402
    CONSOLE_HEIGHT,
    NODE_LIST_WIDTH,
    RIGHT_WIDTH,
    SCREEN,
)

pytestmark = pytest.mark.ros2
UP_S = 300.0  # a first start compiles the stack's kernels, on a shared 2-core machine
WINDOW_S = 60.0  # rqt_gui up and its window mapped
FILL_S = 12.0  # plots take a few seconds of 100 Hz states (rqt_plot redraws every 40 ms)
APART_S = 4.0
WIDTH, HEIGHT = SCREEN
PLOTS_RIGHT = WIDTH - RIGHT_WIDTH - 10
RIGHT_LEFT = WIDTH - RIGHT_WIDTH + 10
CONSOLE_TOP = HEIGHT - CONSOLE_HEIGHT


def _run(argv: list[str], env: dict[str, str], timeout: float) -> str:
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout,
                          check=True).stdout


@pytest.fixture(scope="module")
def display(tmp_path_factory):
    """An Xvfb server of its own (it picks a free display number and reports it)."""
    read, write = os.pipe()
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0",
                             f"{WIDTH}x{HEIGHT}x24", "-nolisten", "tcp"], pass_fds=(write,),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write)
    with os.fdopen(read) as reported:
        number = reported.readline().strip()  # once the server listens
    try:
        assert number.isdigit(), "Xvfb did not report its display"
        yield f":{number}"
    finally:
        xvfb.terminate()
        xvfb.wait(10)


@pytest.fixture(scope="module")
def rqt(display, tmp_path_factory):
    """The stack with rqt:=true on that display; rqt's settings in a directory of its own."""
    home = tmp_path_factory.mktemp("rqt_config")
    env = {**ros_env("rqt"), "DISPLAY": display, "XDG_CONFIG_HOME": str(home),
           "XDG_RUNTIME_DIR": str(home)}
    launch = Watched(["ros2", "launch", "robot_control", "control.launch.yaml", "rate:=250",
                      "rqt:=true"], env)
    try:
        yield env, launch
    finally:
        launch.stop(30.0)


def _screenshot(env: dict[str, str], path: Path) -> np.ndarray:
    """The whole screen, saved as PNG at path, as an HEIGHT×WIDTH×3 array of bytes."""
    _run(["import", "-window", "root", str(path)], env, 60)
    raw = subprocess.run(["convert", str(path), "-depth", "8", "rgb:-"], capture_output=True,
                         timeout=60, check=True).stdout
    return np.frombuffer(raw, np.uint8).reshape(HEIGHT, WIDTH, 3)


def _traces(image: np.ndarray) -> np.ndarray:
    """Where a pixel has one of the first three curves' colours (DataPlot's blue, red, cyan),
    antialiased edges included; no widget of rqt's is drawn in them."""
    high, low = image > 150, image < 100
    r, g, b = (high[:, :, i] for i in range(3))
    rl, gl, bl = (low[:, :, i] for i in range(3))
    return (b & rl & gl) | (r & gl & bl) | (g & b & rl)


def _dark(image: np.ndarray) -> np.ndarray:
    """Where a pixel is text-dark."""
    return image.max(axis=2) < 110


@pytest.mark.timeout(UP_S + WINDOW_S + FILL_S + APART_S + 180)
def test_rqt_true_opens_plots_of_every_joint_that_move_the_console_and_reconfigure(rqt, tmp_path):
    env, launch = rqt
    ready = launch.wait_for_line(r"rqt_robot_control: 3 joints \(joint1, joint2, joint3\)", UP_S)
    assert ready, launch.output[-4000:]
    window = _run(["xdotool", "search", "--sync", "--onlyvisible", "--name", "rqt"], env,
                  WINDOW_S).split()
    assert window, launch.output[-4000:]
    time.sleep(FILL_S)
    first = _screenshot(env, tmp_path / "first.png")
    time.sleep(APART_S)
    second = _screenshot(env, tmp_path / "second.png")
    if os.environ.get("RQT_SCREENSHOT"):
        shutil.copyfile(tmp_path / "second.png", os.environ["RQT_SCREENSHOT"])
    assert launch.proc.poll() is None, launch.output[-4000:]

    # the plots: a 2×2 grid (joint1, joint2 / joint3, errors) over the window's height
    top, bottom = 40, HEIGHT - 10
    middle_x, middle_y = PLOTS_RIGHT // 2, (top + bottom) // 2
    cells = {"joint1": (top, middle_y, 0, middle_x), "joint2": (top, middle_y, middle_x, PLOTS_RIGHT),
             "joint3": (middle_y, bottom, 0, middle_x),
             "errors": (middle_y, bottom, middle_x, PLOTS_RIGHT)}
    # in either shot: a curve may run along the top of its axes, under the legend, a while
    columns = {name: int((_traces(first[y0:y1, x0:x1]) | _traces(second[y0:y1, x0:x1]))
                         .any(axis=0).sum()) for name, (y0, y1, x0, x1) in cells.items()}
    print(f"columns with curve colours per plot: {columns}")
    assert min(columns.values()) > 100, columns  # the legend's swatches alone: about 30
    moved = int((_traces(first[top:bottom, :PLOTS_RIGHT])
                 ^ _traces(second[top:bottom, :PLOTS_RIGHT])).sum())
    print(f"curve pixels that changed in {APART_S} s: {moved}")
    assert moved > 500, moved

    # the console (right, bottom): rows of messages below its header (an empty table is white)
    rows = second[CONSOLE_TOP + 90:HEIGHT - 30, RIGHT_LEFT:WIDTH - 30]
    print(f"dark pixels in the console's rows: {int(_dark(rows).sum())}")
    assert _dark(rows).sum() > 2000, int(_dark(rows).sum())

    # reconfigure's parameter editor (right of its node list): the controller's parameters
    editor = second[150:CONSOLE_TOP - 150, RIGHT_LEFT + NODE_LIST_WIDTH + 20:WIDTH - 10]
    print(f"dark pixels in reconfigure's editor: {int(_dark(editor).sum())}")
    assert _dark(editor).sum() > 1500, int(_dark(editor).sum())  # empty: none
