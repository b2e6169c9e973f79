"""The controller nodes' parameter tables (bus/param_table.py): the controller's own, and the law
host's (the law, and how the laws not selected are made ready), shared with the cell controller.
Each law's gains are declared by nodes/law_host.py from the law's ParamSpec rows
(control/parameters.py)."""

from __future__ import annotations

from dataclasses import dataclass

from robot_control.bus.param_table import GIVEN, param

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


@dataclass(frozen=True)
class LawHostParams:
    """The law a controller node runs, and how the laws not selected are made ready to swap."""

    controller: str = param(
        GIVEN, "control law by registry name (the laws this node offers: its constraints)",
        default_doc="computed_torque, or the scenario's law", constraints=GIVEN,
        constraints_doc="one of the laws the node offers (`robot-control laws`)")
    precompile_laws: bool = param(
        True, "configure loads every law offered that the compile cache holds, so a swap is "
        "instant, and compiles the others in a background process; false: only the selected "
        "one (a swap to another is then made on a worker thread, and takes over once it is "
        "ready)", read_only=True)
    precompile_budget: float = param(
        20.0, "s configure may spend loading the laws not selected (a large model's warm-up is "
        "numeric work); the rest are made at their swap", range=(0.0, 3600.0), read_only=True)
