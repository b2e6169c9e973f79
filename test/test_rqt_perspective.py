"""The rqt perspective ``rqt:=true`` opens, as data (bringup/rqt_perspective.py): curves and
titles per joint with each joint's unit from the robot's description, names as rqt gives its
docks, values that read back the way qt_gui's perspective_manager reads them, and the plot grid.
The window layout itself needs Qt and rqt: test/test_rqt_ros2.py."""

from __future__ import annotations

import json

import pytest

from robot_control.bringup.rqt_layout import WindowLayout, plot_grid
from robot_control.bringup.rqt_perspective import (
    CONSOLE,
    PLOT,
    RECONFIGURE,
    docks,
    joint_units,
    perspective,
    plot_docks,
    state_topic,
)
from robot_control.bringup.rqt_robot_control import default_output, joint_types
from robot_control.model.loader import load_robot
from robot_control.model.urdf_export import robot_description

LAYOUT = WindowLayout(geometry=b"\x01\xd9", state=b"\x00\xff\x10", console_splitter=b"\x02",
                      reconfigure_splitter=b"\x03\x04")


def _read(value: dict) -> object:
    """A perspective value as qt_gui's PerspectiveManager._import_value reads it."""
    if value["type"] == "repr":
        return eval(value["repr"])  # noqa: S307 - the reader rqt uses
    assert value["type"] == "repr(QByteArray.hex)"
    return bytes.fromhex(eval(value["repr(QByteArray.hex)"]).decode())  # noqa: S307


def _keys(group: dict) -> dict[str, object]:
    return {k: _read(v) for k, v in group["keys"].items()}


def test_state_topic_in_a_namespace():
    assert state_topic("") == "/controller/controller_state"
    assert state_topic("arm1") == state_topic("/arm1/") == "/arm1/controller/controller_state"


@pytest.mark.parametrize("robot, units", [
    ("stanford_arm", ["rad", "rad", "m", "rad", "rad", "rad"]),
    ("scara", ["rad", "rad", "m"]),
    ("ddarm", ["rad", "rad", "rad"]),
])
def test_each_joint_has_the_unit_of_its_type_in_the_description(robot, units):
    model = load_robot(robot)
    names = [j.name for j in model.joints]
    assert joint_units(names, joint_types(robot_description(model))) == units


def test_without_or_with_a_bad_description_every_joint_is_revolute(capsys):
    assert joint_units(["a", "b"], joint_types(None)) == ["rad", "rad"]
    assert joint_units(["a"], joint_types("<robot><joint/></robot>")) == ["rad"]
    err = capsys.readouterr().err
    assert "no robot_description" in err and "robot_description unreadable" in err


def test_one_plot_of_q_d_and_q_per_joint_then_one_of_every_error():
    plots = plot_docks("/arm1/controller/controller_state", ["j1", "j2", "slide"],
                       ["rad", "rad", "m"])
    assert [p.title for p in plots] == [
        "j1: q_d (reference) and q (feedback), rad", "j2: q_d (reference) and q (feedback), rad",
        "slide: q_d (reference) and q (feedback), m",
        "tracking error e = q_d − q of j1, j2, slide, rad/m"]
    assert plots[2].topics == ["/arm1/controller/controller_state/reference/positions[2]",
                               "/arm1/controller/controller_state/feedback/positions[2]"]
    assert plots[3].topics == [f"/arm1/controller/controller_state/error/positions[{i}]"
                               for i in range(3)]


def test_the_perspective_reads_back_as_rqt_reads_it():
    plots = plot_docks(state_topic("arm1"), ["joint1", "joint2"], ["rad", "rad"])
    data = json.loads(json.dumps(perspective(plots, "arm1", LAYOUT)))  # as written to the file
    assert _keys(data["groups"]["mainwindow"]) == {"geometry": LAYOUT.geometry,
                                                   "state": LAYOUT.state}
    manager = data["groups"]["pluginmanager"]
    running = _keys(manager)["running-plugins"]
    assert running == {CONSOLE: [1], PLOT: [1, 2, 3], RECONFIGURE: [1]}
    assert list(running)[-1] == RECONFIGURE  # loaded last: it lists the nodes it finds then
    groups = manager["groups"]
    assert set(groups) == {f"plugin__{p.replace('/', '__')}__{n}"
                           for p, serials in running.items() for n in serials}
    second = groups["plugin__rqt_plot__Plot__2"]["groups"]
    assert _keys(second["plugin"]) == {"topics": plots[1].topics, "autoscroll": True,
                                       "plot_type": 1, "x_limits": [0.0, 10.0],
                                       "y_limits": [-1e-3, 1e-3]}
    assert _keys(second["dock_widget__DataPlotWidget"])["dock_widget_title"] == plots[1].title
    reconfigure = groups["plugin__rqt_reconfigure__Param__1"]["groups"]
    assert _keys(reconfigure["plugin"])["selected_nodes"] == ["/arm1/controller"]
    assert _keys(reconfigure["plugin"])["splitter"] == LAYOUT.reconfigure_splitter
    console = groups["plugin__rqt_console__Console__1"]["groups"]
    assert _keys(console["plugin"])["table_splitter"] == LAYOUT.console_splitter
    assert "/arm1" in _keys(console["dock_widget__ConsoleWidget"])["dock_widget_title"]


def test_dock_names_are_those_rqt_gives_its_plugins_docks():
    plots, reconfigure, console = docks(plot_docks("/c", ["a"], ["rad"]))
    assert plots == ["rqt_plot__Plot__1__DataPlotWidget", "rqt_plot__Plot__2__DataPlotWidget"]
    assert reconfigure == "rqt_reconfigure__Param__1___plugincontainer_top_widget"
    assert console == "rqt_console__Console__1__ConsoleWidget"


def test_plots_fill_two_columns_row_by_row_three_beyond_six():
    assert plot_grid(1) == [[0]]
    assert plot_grid(4) == [[0, 2], [1, 3]]  # joint1 | joint2 over joint3 | errors
    assert plot_grid(5) == [[0, 2, 4], [1, 3]]
    assert plot_grid(7) == [[0, 3, 6], [1, 4], [2, 5]]
    for count in range(1, 12):
        assert sorted(i for column in plot_grid(count) for i in column) == list(range(count))


def test_one_perspective_file_per_namespace(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_output("") == tmp_path / "robot_control" / "rqt" / "robot_control.perspective"
    assert default_output("/arm1").name == "robot_control_arm1.perspective"
