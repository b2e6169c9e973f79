"""The rqt perspective ``rqt:=true`` opens (launch/control.launch.yaml), made for the running
stack's joints: per joint a plot of q_d and q, one plot of every joint's tracking error, the
console and reconfigure opened on the controller, laid out for a 1920×1080 screen.

Every curve comes from the controller's ``~/controller_state``
(control_msgs/JointTrajectoryControllerState, ``state_publish_rate``, 100 Hz): reference (q_d),
feedback (q) and error (q_d − q) of one tick under one stamp, so q_d and q line up in time, and
rqt_plot's legend (the topic path of each curve) reads ``…/reference/positions[i]``,
``…/feedback/positions[i]`` and ``…/error/positions[i]``; each dock's title names the joint, what
is plotted and the unit. /joint_states (the plant's, at the control rate) would carry q too, at up
to 1 kHz into a Python plot, and stamped a tick apart from the reference.

A perspective file is JSON of rqt's settings tree (qt_gui's perspective_manager): groups of keys,
each value ``{"type": "repr", "repr": …}`` (a Python literal) or ``{"type":
"repr(QByteArray.hex)", …}`` (Qt-serialised bytes: the window layout, bringup/rqt_layout.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from robot_control.bringup.rqt_layout import WindowLayout

PLOT, RECONFIGURE, CONSOLE = "rqt_plot/Plot", "rqt_reconfigure/Param", "rqt_console/Console"
#: object names of the plugins' main widgets once loaded (rqt_plot's is its .ui file's, set after
#: its own): rqt names each dock <plugin>__<serial>__<widget>
WIDGETS = {PLOT: "DataPlotWidget", RECONFIGURE: "_plugincontainer_top_widget",
           CONSOLE: "ConsoleWidget"}
#: rqt_plot's plot types (data_plot.DataPlot.plot_types); it falls back to an installed one
MATPLOT = 1
#: seconds of history each plot shows while it scrolls
PLOT_WINDOW_S = 10.0
#: each plot's first y range: rqt_plot only widens it to the data (around 0, never shrinking),
#: so it starts narrow, else a 1 mrad error would sit flat in matplotlib's default 0…1
Y_START = [-1e-3, 1e-3]
#: a joint type's unit (URDF joint types; others, e.g. a D-H robot's, are revolute)
UNITS = {"prismatic": "m"}


@dataclass(frozen=True)
class PlotDock:
    """One rqt_plot: its dock's title and the topic paths of its curves."""
    title: str
    topics: list[str]


def prefix(namespace: str) -> str:
    """A stack's namespace as the start of its names: '' for none, else '/ns'."""
    return "/" + namespace.strip("/") if namespace.strip("/") else ""


def state_topic(namespace: str) -> str:
    """The controller's JointTrajectoryControllerState topic in a stack's namespace."""
    return f"{prefix(namespace)}/controller/controller_state"


def joint_units(names: list[str], joint_types: dict[str, str]) -> list[str]:
    """The unit of each joint's position: m for a prismatic joint, rad otherwise."""
    return [UNITS.get(joint_types.get(name, "revolute"), "rad") for name in names]


def plot_docks(topic: str, names: list[str], units: list[str]) -> list[PlotDock]:
    """Per joint q_d and q (in that order: blue, then red on top), then every joint's error."""
    docks = [PlotDock(f"{name}: q_d (reference) and q (feedback), {unit}",
                      [f"{topic}/reference/positions[{i}]", f"{topic}/feedback/positions[{i}]"])
             for i, (name, unit) in enumerate(zip(names, units, strict=True))]
    error_unit = "/".join(sorted(set(units), reverse=True))
    docks.append(PlotDock(f"tracking error e = q_d − q of {', '.join(names)}, {error_unit}",
                          [f"{topic}/error/positions[{i}]" for i in range(len(names))]))
    return docks


def instance_id(plugin: str, serial: int) -> str:
    """A plugin instance as rqt names it in settings and object names (qt_gui's tidy_str)."""
    return f"{plugin.replace('/', '__')}__{serial}"


def dock_name(plugin: str, serial: int) -> str:
    """The object name rqt gives a plugin instance's dock (qt_gui's plugin_handler)."""
    return f"{instance_id(plugin, serial)}__{WIDGETS[plugin]}"


def _value(value: object) -> dict[str, str]:
    """A settings value as a perspective file stores it."""
    if isinstance(value, bytes):
        return {"type": "repr(QByteArray.hex)", "repr(QByteArray.hex)": repr(value.hex().encode())}
    return {"type": "repr", "repr": repr(value)}


def _group(keys: dict[str, object] | None = None, **groups: dict) -> dict:
    return {"keys": {k: _value(v) for k, v in (keys or {}).items()}, "groups": groups}


def _instance(plugin: str, title: str, settings: dict[str, object]) -> dict:
    """A plugin instance's settings and its dock's title (qt_gui's dock_widget_title_bar)."""
    return _group(**{"plugin": _group(settings),
                     f"dock_widget__{WIDGETS[plugin]}": _group({"dock_widget_title": title,
                                                                "dockable": True})})


def perspective(plots: list[PlotDock], namespace: str, layout: WindowLayout) -> dict:
    """The perspective: the plots, reconfigure on the controller, the console, the window."""
    ns = prefix(namespace)
    instances = {}
    for serial, plot in enumerate(plots, start=1):
        instances[f"plugin__{instance_id(PLOT, serial)}"] = _instance(
            PLOT, plot.title, {"topics": plot.topics, "autoscroll": True, "plot_type": MATPLOT,
                               "x_limits": [0.0, PLOT_WINDOW_S], "y_limits": Y_START})
    instances[f"plugin__{instance_id(CONSOLE, 1)}"] = _instance(
        CONSOLE, f"Console: log messages of every node (/rosout){' in ' + ns if ns else ''}", {
            "settings_exist": True, "table_splitter": layout.console_splitter,
            "paused": False, "show_highlighted_only": False})
    instances[f"plugin__{instance_id(RECONFIGURE, 1)}"] = _instance(
        RECONFIGURE, f"Parameters of {ns}/controller: the law and its gains", {
            "splitter": layout.reconfigure_splitter, "selected_nodes": [f"{ns}/controller"],
            "expanded_nodes": [f"{ns}/controller"]})
    # reconfigure last: it lists the nodes once, when it starts, so the later the fuller
    running = {CONSOLE: [1], PLOT: list(range(1, len(plots) + 1)), RECONFIGURE: [1]}
    return _group(
        mainwindow=_group({"geometry": layout.geometry, "state": layout.state}),
        pluginmanager=_group({"running-plugins": running}, **instances))


def docks(plots: list[PlotDock]) -> tuple[list[str], str, str]:
    """The dock object names of the plots, reconfigure and the console."""
    return ([dock_name(PLOT, serial) for serial in range(1, len(plots) + 1)],
            dock_name(RECONFIGURE, 1), dock_name(CONSOLE, 1))
