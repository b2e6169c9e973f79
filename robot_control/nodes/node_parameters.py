"""The parameter tables several nodes share (bus/param_table.py): the robot or scenario a node
runs, its timing, its frame prefix, the plant's engine, ``autostart``; and the declarations that
load what they name.

A scenario file supplies the robot, rate and the rest of the experiment, so that a bus run and an
offline ``robot-control simulate`` of the same file do the same thing.
"""

from __future__ import annotations

from dataclasses import dataclass

from robot_control.bus.param_table import GIVEN, declare, param
from robot_control.model.arm import load_arm
from robot_control.sim.plant_config import ENGINES

#: the cell nodes' scenario unless told otherwise
DEFAULT_CELL_SCENARIO = "huo_3_13_load_sharing"
#: the control rate without a scenario, Hz
DEFAULT_RATE = 1000.0


@dataclass(frozen=True)
class RobotParams:
    """What an arm node runs: a robot, or a scenario that names it."""

    robot: str = param("ddarm", "bundled robot name or path to a .urdf / D-H .yaml",
                       read_only=True)
    scenario: str = param("", "scenario file (or bundled name) to take the robot, rates, "
                          "trajectory and law from; '' for none", read_only=True)
    arm_joints: tuple[str, ...] = param(
        (), "the joints the laws drive, in the description's order; empty: every movable joint "
        "but grippers and fingers (model/arm.py), which are held", read_only=True)


@dataclass(frozen=True)
class CellScenarioParams:
    """What a cell node runs."""

    scenario: str = param(DEFAULT_CELL_SCENARIO, "cell scenario file or bundled name (config/"
                          "scenarios/): the cell, where the object starts, the table, the path "
                          "of E, the law", read_only=True)


@dataclass(frozen=True)
class TimingParams:
    """The control period and the mode."""

    rate: float = param(GIVEN, "control rate, Hz", range=(1.0, 10000.0), read_only=True,
                        default_doc=f"the scenario's rate; {DEFAULT_RATE:g} without one")
    lockstep: bool = param(False, "deterministic mode: the plant steps only when the command "
                           "for the current state has arrived and publishes /clock",
                           read_only=True)


@dataclass(frozen=True)
class FrameParams:
    """The prefix of the frames a node stamps (robot_state_publisher's ``frame_prefix``)."""

    frame_prefix: str = param(
        GIVEN, "prepended to every frame_id and /tf frame this node stamps (default: its "
        "namespace, 'arm1/')", read_only=True,
        default_doc="the node's namespace as a prefix ('arm1/' in /arm1; '' in /)")


def _engine_error(engine: str) -> str | None:
    ok = engine == "" or engine in ENGINES
    return None if ok else f"must be one of {ENGINES}, got '{engine}'"


@dataclass(frozen=True)
class EngineParams:
    """The plant's physics engine."""

    engine: str = param(GIVEN, "the plant's physics engine: internal (the package's dynamics) "
                        "or mujoco ('' = the scenario's)", read_only=True,
                        constraints=" | ".join(ENGINES), check=_engine_error,
                        default_doc="the scenario's plant.engine; internal without one")


@dataclass(frozen=True)
class AutostartParams:
    """A managed node run on its own."""

    autostart: bool = param(False, "configure and activate at start, for a node run on its own "
                            "(a launch file leaves it to the lifecycle_manager, which brings the "
                            "stack up in order)", read_only=True)


@dataclass(frozen=True)
class Common:
    """A node's robot, scenario and timing: the values and what they load."""

    robot: RobotParams | None  # None on a cell node
    timing: TimingParams
    scenario: object  # the Scenario (or CellScenario) loaded, or None
    model: object  # the arm (a cell node: the scenario's cell)


def declare_common(node) -> Common:
    """Declare RobotParams and TimingParams; load the scenario and the robot they name."""
    robot = declare(node, RobotParams)
    scenario = load_scenario_param(robot.scenario)
    timing = declare(node, TimingParams,
                     rate=scenario.rate if scenario is not None else DEFAULT_RATE)
    model = scenario.robot if scenario is not None else load_arm(robot.robot,
                                                                 list(robot.arm_joints))
    held = getattr(model, "held_joints", {})
    if held:
        node.get_logger().info("tool joints held (not driven by the arm's law): " + ", ".join(
            f"{k} at {v:.4g}" for k, v in held.items()))
    return Common(robot, timing, scenario, model)


def declare_cell_common(node) -> Common:
    """Declare a cell node's CellScenarioParams and TimingParams; the loaded cell scenario."""
    from robot_control.sim.cell_simulate import load_cell_scenario

    scenario = load_cell_scenario(declare(node, CellScenarioParams).scenario)
    timing = declare(node, TimingParams, rate=scenario.rate)
    return Common(None, timing, scenario, scenario.cell)


def declare_engine(node, plant_cfg: dict) -> dict:
    """The plant's ``engine`` ('' = the scenario's plant.engine, else internal); the ``plant:``
    mapping with it set."""
    from robot_control.sim.engine import with_engine

    default = str(plant_cfg.get("engine", "internal"))
    return with_engine(plant_cfg, declare(node, EngineParams, engine=default).engine or default)


def declare_frame_prefix(node) -> str:
    """Declare FrameParams; the prefix (default: the namespace, ``/arm1`` → ``arm1/``)."""
    namespace = node.namespace.strip("/")
    return declare(node, FrameParams,
                   frame_prefix=f"{namespace}/" if namespace else "").frame_prefix


def load_scenario_param(name: str):
    """The Scenario a ``scenario`` parameter names, or None when it is empty."""
    if not name:
        return None
    from robot_control.sim.scenario import load_scenario

    return load_scenario(name)
