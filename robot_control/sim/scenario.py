"""Scenario files (config/scenarios/): what to simulate, validated before anything runs.

Unknown keys are an error, not ignored, so a typo never silently changes an experiment. Numbers
are type-checked with the key named, and a run is bounded: the rate by what the nodes accept
(MAX_RATE), the number of control periods by what a run may log (MAX_STEPS), the number of physics
steps by what a run may take (MAX_PHYSICS_STEPS).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from robot_control.foundation.safe_yaml import load_file
from robot_control.model import load_robot
from robot_control.model.resources import share_path
from robot_control.model.robot_model import RobotModel
from robot_control.trajectory import CartesianQuintic, Hold, JointTrajectory, named_trajectory
from robot_control.trajectory.cartesian import path_sample_into, path_table
from robot_control.trajectory.excitation import EXCITATION_KEYS, excitation_from_config
from robot_control.trajectory.feasibility import reference_feasibility

TOP_KEYS = {"robot", "duration", "rate", "physics_dt", "initial", "trajectory", "controller",
            "plant", "force_reference", "description"}
TRAJECTORY_TYPES = ("quintic", "hold", "named", "cartesian", "excitation")
#: highest control rate, Hz (the nodes' ``rate`` parameter has the same bound)
MAX_RATE = 10000.0
#: most control periods one run may have: an offline run logs ~35 numbers a joint a period, so
#: this keeps a 6-joint log under about 300 MB (1000 s at 1 kHz)
MAX_STEPS = 1_000_000
#: most physics steps one run may take: about a minute or two of integration on one core for a
#: 6-joint arm (~1 µs a step), so a physics_dt typo cannot start a run of days
MAX_PHYSICS_STEPS = 100_000_000
#: most physics steps in one control period, and in one compiled call of an offline loop: a
#: call runs a few ms to ~0.1 s, so Ctrl-C (handled between calls) stops a run within 1 s
MAX_SUBSTEPS = 20_000
#: control periods per compiled call of an offline loop (and per progress-bar update)
CHUNK_PERIODS = 2000


class ScenarioError(ValueError):
    """A scenario file that cannot be run, with the key at fault."""


@dataclass
class Scenario:
    """A validated scenario: models, trajectory, law and plant settings."""

    name: str
    robot: RobotModel
    duration: float
    rate: float
    physics_dt: float
    q0: np.ndarray
    qd0: np.ndarray
    trajectory: object
    controller_type: str
    controller_params: dict
    controller_model: RobotModel
    plant: dict
    force_reference: np.ndarray | None = None
    description: str = ""
    raw: dict = field(default_factory=dict)
    #: why the arm cannot execute the trajectory as timed ("" if it can; trajectory/feasibility.py)
    motion_warning: str = ""

    @property
    def steps(self) -> int:
        """Number of control periods simulated."""
        return int(round(self.duration * self.rate))


def _require(cond: bool, message: str) -> None:
    if not cond:
        raise ScenarioError(message)


def _scalar(doc: dict, key: str, default: float | None = None) -> float:
    """A finite number under ``key`` (ScenarioError naming the key otherwise)."""
    value = doc.get(key, default)
    if isinstance(value, str):  # YAML 1.1 reads 1e-4 (no dot) as text
        try:
            value = float(value)
        except ValueError:
            raise ScenarioError(f"{key} must be a number, got {value!r}") from None
    _require(isinstance(value, int | float) and not isinstance(value, bool),
             f"{key} must be a number, got {value!r}")
    _require(np.isfinite(value), f"{key} must be finite, got {value!r}")
    return float(value)


def _vector(value, n: int, key: str) -> np.ndarray:
    try:
        a = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ScenarioError(f"{key} must be {n} finite numbers, got {value!r}") from None
    # the message is formatted only when raised: printing an array costs a fresh process 0.5 ms
    if not (a.shape == (n,) and bool(np.all(np.isfinite(a)))):
        raise ScenarioError(f"{key} must be {n} finite numbers, got {value}")
    return a


def resolve_scenario_path(name_or_path: str | Path) -> Path:
    """A scenario file path, or the name of a bundled one in config/scenarios/."""
    path = Path(name_or_path)
    if path.is_file():
        return path
    bundled = share_path("config", "scenarios", f"{Path(str(name_or_path)).stem}.yaml")
    if bundled.is_file():
        return bundled
    raise ScenarioError(f"no scenario file '{name_or_path}' (nor a bundled one of that name)")


def check_physics_steps(duration: float, rate: float, physics_dt: float) -> None:
    """ScenarioError unless physics_dt is in (0, 1/rate], divides the control period into at most
    MAX_SUBSTEPS whole steps, and the run takes at most MAX_PHYSICS_STEPS of them."""
    _require(0.0 < physics_dt <= 1.0 / rate * (1 + 1e-9),
             f"physics_dt must be in (0, 1/rate], got {physics_dt}")
    _require(duration / physics_dt <= MAX_PHYSICS_STEPS,
             f"physics_dt {physics_dt:g} s makes {duration / physics_dt:.3g} physics steps in "
             f"{duration:g} s: at most {MAX_PHYSICS_STEPS:.0e} are run (a larger physics_dt, or "
             "a shorter duration)")
    ratio = 1.0 / (rate * physics_dt)
    _require(ratio <= MAX_SUBSTEPS,
             f"physics_dt {physics_dt:g} s makes {ratio:.3g} physics steps a control period: at "
             f"most {MAX_SUBSTEPS} are run (physics_dt ≥ 1/rate / {MAX_SUBSTEPS})")
    _require(abs(ratio - round(ratio)) < 1e-6,
             f"physics_dt must divide the control period 1/rate into whole steps ({ratio:.4f})")


def chunk_periods(rows: int, substeps: int) -> int:
    """Control periods per compiled call of an offline loop: CHUNK_PERIODS, fewer when the
    physics steps of a period would make a call longer than MAX_SUBSTEPS steps."""
    return max(1, min(rows, CHUNK_PERIODS, MAX_SUBSTEPS // max(1, substeps)))


def load_scenario(source: str | Path | dict) -> Scenario:
    """Read and validate a scenario from a YAML file, a bundled scenario name, or a mapping."""
    if isinstance(source, dict):
        doc, name = dict(source), "scenario"
    else:
        path = resolve_scenario_path(source)
        doc = load_file(path, ScenarioError)
        name = path.stem
        _require(isinstance(doc, dict), f"{path}: a scenario must be a YAML mapping")
    unknown = set(doc) - TOP_KEYS
    _require(not unknown, f"unknown scenario keys {sorted(unknown)} (known: {sorted(TOP_KEYS)})")
    for key in ("robot", "duration", "controller"):
        _require(key in doc, f"scenario needs '{key}'")
    try:  # a built model (an arm whose tools are held: sim/stack_scenario.py) or a robot's name
        robot = (doc["robot"] if isinstance(doc["robot"], RobotModel)
                 else load_robot(str(doc["robot"])))
    except ValueError as exc:
        raise ScenarioError(f"robot: {exc}") from exc
    n = robot.nq
    duration = _scalar(doc, "duration")
    rate = _scalar(doc, "rate", 1000.0)
    physics_dt = _scalar(doc, "physics_dt", 1e-4)
    _require(duration > 0.0, f"duration must be > 0, got {duration}")
    _require(0.0 < rate <= MAX_RATE, f"rate must be in (0, {MAX_RATE:g}] Hz, got {rate}")
    _require(duration * rate <= MAX_STEPS,
             f"duration × rate must be at most {MAX_STEPS} control periods, got "
             f"{duration * rate:.3g} (duration {duration:g} s at {rate:g} Hz)")
    check_physics_steps(duration, rate, physics_dt)
    initial = doc.get("initial") or {}
    _require(set(initial) <= {"q", "qd"}, f"initial: unknown keys {sorted(set(initial) - {'q', 'qd'})}")
    q0 = _vector(initial.get("q", np.zeros(n)), n, "initial.q")
    qd0 = _vector(initial.get("qd", np.zeros(n)), n, "initial.qd")
    trajectory = build_trajectory(doc.get("trajectory") or {"type": "hold"}, robot, q0)
    # a warning, not a refusal: an offline run may study saturation on purpose
    motion = reference_feasibility(robot, trajectory)
    warning = "" if motion is None or motion.feasible else (
        f"the trajectory needs more than the arm's limits: {motion.violation} (about "
        f"×{motion.slowdown:.3g} slower would fit)")
    ctrl = doc["controller"]
    _require(isinstance(ctrl, dict) and "type" in ctrl, "controller needs a 'type' (registry name)")
    from robot_control.control.registry import available, is_available

    if not is_available(str(ctrl["type"])):  # the list of names only for the message
        raise ScenarioError(f"controller.type '{ctrl['type']}' is not one of "
                            + ", ".join(available()))
    bad = set(ctrl) - {"type", "params", "model"}
    _require(not bad, f"controller: unknown keys {sorted(bad)} (known: type, params, model)")
    force = doc.get("force_reference")
    force_ref = None
    if force is not None:
        f = np.asarray(force, dtype=float)
        _require(f.shape in ((3,), (6,)), "force_reference must be a force (3) or a wrench (n, f) (6)")
        force_ref = np.concatenate([np.zeros(3), f]) if f.shape == (3,) else f
    return Scenario(
        name=name, robot=robot, duration=duration, rate=rate, physics_dt=physics_dt, q0=q0,
        qd0=qd0, trajectory=trajectory, controller_type=str(ctrl["type"]),
        controller_params=dict(ctrl.get("params") or {}),
        controller_model=controller_model(ctrl.get("model"), robot),
        plant=dict(doc.get("plant") or {}), force_reference=force_ref,
        description=str(doc.get("description", "")), raw=doc, motion_warning=warning,
    )


def controller_model(spec, robot: RobotModel) -> RobotModel:
    """The controller's own model: the nominal robot, another robot file, or a perturbed copy."""
    if spec is None:
        return robot.copy()
    if isinstance(spec, str):
        model = load_robot(spec)
        _require(model.nq == robot.nq, f"controller.model '{spec}' has {model.nq} joints, "
                                        f"the robot {robot.nq}")
        return model
    _require(isinstance(spec, dict), "controller.model must be a robot name/path or a mapping")
    from robot_control.sim.plant_config import parse_plant_config, plant_model

    allowed = {"payload", "inertia_scale", "parameters", "basis", "estimate"}
    bad = set(spec) - allowed
    _require(not bad, f"controller.model: unknown keys {sorted(bad)} (known: {sorted(allowed)})")
    if "estimate" in spec:
        # an estimate p̂ in a parameter basis (Huo's P1…P9): it need not be physically consistent
        _require(set(spec) <= {"basis", "estimate"},
                 "controller.model: 'estimate' goes with 'basis' only")
        from robot_control.control.model_terms import estimated_model

        try:
            return estimated_model(robot, str(spec.get("basis", "base")), spec["estimate"])
        except (KeyError, ValueError) as exc:
            raise ScenarioError(f"controller.model.estimate: {exc}") from exc
    try:
        return plant_model(robot, parse_plant_config(spec, robot))
    except ValueError as exc:
        raise ScenarioError(f"controller.model: {exc}") from exc


def build_trajectory(spec: dict, robot: RobotModel, q0: np.ndarray):
    """The reference generator a scenario asks for (joint-space, or Cartesian for force laws)."""
    _require(isinstance(spec, dict), "trajectory must be a mapping with a 'type'")
    kind = spec.get("type", "quintic")
    _require(kind in TRAJECTORY_TYPES, f"trajectory.type must be one of {TRAJECTORY_TYPES}")
    n = robot.nq
    allowed = {"quintic": {"type", "waypoints", "durations", "velocities", "accelerations",
                           "from_initial"},
               "hold": {"type", "q"},
               "named": {"type", "name"},
               "cartesian": {"type", "positions", "durations", "frame"},
               "excitation": {"type", *EXCITATION_KEYS}}[kind]
    bad = set(spec) - allowed
    _require(not bad, f"trajectory ({kind}): unknown keys {sorted(bad)} (known: {sorted(allowed)})")
    try:
        if kind == "hold":
            return Hold(_vector(spec.get("q", q0), n, "trajectory.q"))
        if kind == "excitation":  # identification runs (trajectory/excitation.py)
            return excitation_from_config(spec, robot, q0)
        if kind == "named":
            traj = named_trajectory(str(spec.get("name")))
            _require(traj.dof == n, f"trajectory '{spec.get('name')}' has {traj.dof} joints")
            return traj
        if kind == "quintic":
            waypoints = [_vector(w, n, "trajectory.waypoints[]") for w in spec.get("waypoints", [])]
            if spec.get("from_initial", False):
                waypoints = [q0, *waypoints]
            _require(len(waypoints) >= 2, "trajectory.waypoints needs at least two points")
            return JointTrajectory.through(waypoints, spec.get("durations"),
                                           spec.get("velocities"), spec.get("accelerations"))
        # cartesian: straight-line quintic segments between positions, orientation held
        from robot_control.dynamics.kinematics import frame_placement_once

        start = frame_placement_once(robot, q0, spec.get("frame"))
        positions = [np.asarray(p, dtype=float) for p in spec.get("positions", [])]
        durations = list(np.atleast_1d(spec.get("durations", [])))
        _require(len(positions) >= 1 and len(durations) == len(positions),
                 "trajectory (cartesian): one duration per target position")
        return CartesianPath(start, positions, durations, spec.get("frame"))
    except (TypeError, ValueError) as exc:
        if isinstance(exc, ScenarioError):
            raise
        raise ScenarioError(f"trajectory: {exc}") from exc


class CartesianPath:
    """Consecutive Cartesian quintics through target positions, orientation kept from the start."""

    def __init__(self, start: np.ndarray, positions: list, durations: list, frame) -> None:
        self.frame = frame
        self.segments = []
        t0, pose = 0.0, start
        for p, T in zip(positions, durations):
            _require(np.shape(p) == (3,), "trajectory.positions must be 3-vectors")
            goal = pose.copy()
            goal[:3, 3] = p
            self.segments.append(CartesianQuintic(pose, goal, float(T), start_time=t0))
            t0, pose = t0 + float(T), goal
        self.end_time = t0
        #: the segments packed for compiled sampling (the offline loop samples the same table)
        self.table = path_table(self.segments)

    def sample(self, t: float):
        """(pose, twist, acceleration) of the segment active at t; the last pose is held."""
        T, rates = np.empty((4, 4)), np.empty(12)
        path_sample_into(self.table, float(t), T, rates)
        return T, rates[:6], rates[6:]
