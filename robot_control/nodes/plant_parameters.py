"""The plant nodes' own parameter tables (bus/param_table.py): their initial state, the
integration step, whose commands they obey, and what lockstep waits for. The drive's safety
settings: nodes/drive_safety.py; the robot, timing, engine and frames: nodes/node_parameters.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from robot_control.bus.param_table import GIVEN, param


@dataclass(frozen=True)
class PlantStart:
    """The arm plant's initial state."""

    initial_q: tuple[float, ...] = param(
        GIVEN, "initial joint positions", read_only=True, size="joint",
        default_doc="the scenario's q0; else the robot's default pose (control/tuning.py)")


@dataclass(frozen=True)
class PlantStep:
    """The arm plant's integration step."""

    physics_dt: float = param(
        GIVEN, "integration step, s (default: 0.5 ms or the control period, shorter where the "
        "description's joint damping needs it: sim/step_size.py)", range=(1e-6, 0.1),
        read_only=True, default_doc="the scenario's physics_dt; else sim/step_size.py's")


@dataclass(frozen=True)
class CellPlantParams:
    """The cell plant's integration step and load shares."""

    physics_dt: float = param(GIVEN, "integration step, s", range=(1e-6, 0.1), read_only=True,
                              default_doc="the cell scenario's physics_dt")
    load_shares: tuple[float, ...] = param(
        GIVEN, "M_iᴼ/Mᴼ per arm: the share of the object each arm carries in the hold and is "
        "credited with when its pressing force is reported (empty: equal shares)",
        read_only=True, default_doc="the cell scenario's controller load_shares")


@dataclass(frozen=True)
class CommandSourceParams:
    """Whose commands the plant obeys."""

    command_source: str = param(
        GIVEN, "the node whose /joint_command publishers this plant obeys (in its namespace "
        "unless absolute; '': any; defence in depth, not security: nodes/command_source.py)",
        read_only=True, default_doc="controller (the cell plant: cell_controller)")


@dataclass(frozen=True)
class PlantLockstepStart:
    """Lockstep: the arm plant's first state waits for its readers."""

    lockstep_start_subscribers: int = param(
        2, "lockstep: /joint_states subscribers to wait for before the first state (controller "
        "+ trajectory generator)", range=(0, 100), read_only=True)


@dataclass(frozen=True)
class CellLockstepStart:
    """Lockstep: the cell plant's first state waits for its reader."""

    lockstep_start_subscribers: int = param(
        1, "lockstep: /joint_states subscribers to wait for before the first state (the cell "
        "controller)", range=(0, 100), read_only=True)
