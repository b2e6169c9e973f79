"""The controller node's own parameter table (bus/param_table.py). Its law and the law's gains
are declared by nodes/law_host.py from the laws' ParamSpec rows (control/parameters.py)."""

from __future__ import annotations

from dataclasses import dataclass

from robot_control.bus.param_table import param

SOURCES = ("local", "server")
TRIGGERS = ("state", "timer")


@dataclass(frozen=True)
class ControllerParams:
    """Where the model terms come from, what starts a computation, and what is published."""

    dynamics_source: str = param(
        "local", "model terms from this node's model ('local') or from /dynamics/terms "
        "('server')", read_only=True, choices=SOURCES)
    trigger: str = param(
        "state", "compute on each joint state ('state') or on a timer at rate ('timer')",
        read_only=True, choices=TRIGGERS)
    reference_blend_time: float = param(
        1.0, "on activation (real time) the tracked reference starts at the measured state and "
        "joins the published one over this time, s", range=(1e-3, 60.0))
    monitor_rate: float = param(
        100.0, "real time: rate of /controller/state (for rqt, bags), Hz; 0: none",
        range=(0.0, 10000.0), read_only=True)
    state_publish_rate: float = param(
        100.0, "real time: rate of ~/controller_state (JTC's message: reference, feedback, "
        "error, output), Hz; 0: none", range=(0.0, 10000.0), read_only=True)
