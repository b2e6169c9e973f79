"""Cell scenarios (several arms holding one object, Huo §3.13): files, offline runs, summaries.

A cell scenario is a scenario file with a ``cell`` key instead of ``robot``::

    cell: two_puma560                 # bundled cell (config/cells/) or a cell file
    duration: 3.0
    rate: 1000
    physics_dt: 0.001
    initial:
      object: {xyz: [0, 0, 0.25]}     # placement of the object frame O (at rest)
      arms: {arm1: [...], arm2: [...]}   # joint guesses, refined until every grasp closes
    trajectory: {type: cartesian, positions: [[0.1, 0, 0.15]], durations: [1.5]}   # of E
    controller: {type: load_sharing, params: {...}}   # ``cell`` defaults to the scenario's
    force_reference: [0, 0, -30]      # force the object exerts on the surface, base axes
    plant: {environment: {type: rigid, normal: [0, 0, 1], offset: 0.15}, noise: {...}}

The run follows the single-arm offline loop (sense with noise, reference at t_k, τ_k held over
the period). Forces are logged right after τ_k is applied at the sampled state (t_k⁺): the
contact force λ_E and each arm's pressing share

    p_i = −n·(f_i − s_i Mᴼ(a_C − g)),

the normal part of the force f_i arm i exerts on the object beyond its share s_i = M_iᴼ/Mᴼ of
the object's inertia and weight (the split of Huo 3-148/3-154). Σp_i = λ_E exactly, and with an
exact model p_i = f_nᵈ'ⁱ of Huo 3-161.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field

import numpy as np

from robot_control.control import task_kernels as KT
from robot_control.control.base import NonFiniteOutput, Reference, State
from robot_control.control.compiled import task_inputs, vector
from robot_control.control.load_sharing import LoadSharing
from robot_control.control.registry import available, create, is_available
from robot_control.dynamics.compile_cache import notice_if_slow
from robot_control.foundation.safe_yaml import load_file
from robot_control.model.cell import (
    Cell,
    arms_model,
    closed_chain_model,
    load_cell,
    object_coordinates,
    share_vector,
)
from robot_control.model.dh import _placement
from robot_control.model.expressions import read_constants
from robot_control.model.robot_model import ModelError
from robot_control.sim import cell_kernels as CK
from robot_control.sim.cell import CellPlant, CellPlantBase
from robot_control.sim.clock import period_ns, seconds
from robot_control.sim.engine import make_cell_plant
from robot_control.sim.scenario import (
    CartesianPath,
    ScenarioError,
    _require,
    check_physics_steps,
    chunk_periods,
    resolve_scenario_path,
)

Array = np.ndarray
TOP_KEYS = {"cell", "duration", "rate", "physics_dt", "initial", "trajectory", "controller",
            "plant", "force_reference", "description"}


@dataclass
class CellScenario:
    """A validated cell scenario."""

    name: str
    cell: Cell
    duration: float
    rate: float
    physics_dt: float
    object_pose: Array
    arm_guess: Array
    trajectory: dict
    controller_type: str
    controller_params: dict
    plant: dict
    force_reference: Array | None
    description: str = ""
    raw: dict = field(default_factory=dict)

    @property
    def steps(self) -> int:
        return int(round(self.duration * self.rate))


def _read(source) -> tuple[dict, str]:
    if isinstance(source, dict):
        return dict(source), "scenario"
    path = resolve_scenario_path(source)
    doc = load_file(path, ScenarioError)
    _require(isinstance(doc, dict), f"{path}: a scenario must be a YAML mapping")
    return doc, path.stem


def is_cell_scenario(source) -> bool:
    """Whether a scenario (file, bundled name or mapping) describes a cell (has a ``cell`` key)."""
    try:
        doc, _ = _read(source)
    except (ScenarioError, OSError):
        return False
    return "cell" in doc


def scenario_engine(source) -> str | None:
    """``plant.engine`` of a scenario (file, bundled name or mapping); None if it names none or
    cannot be read (loading it reports why)."""
    try:
        doc, _ = _read(source)
    except (ScenarioError, OSError):
        return None
    plant = doc.get("plant")
    return str(plant["engine"]) if isinstance(plant, dict) and "engine" in plant else None


def load_cell_scenario(source) -> CellScenario:
    """Read and validate a cell scenario; errors name the key at fault."""
    doc, name = _read(source)
    unknown = set(doc) - TOP_KEYS
    _require(not unknown, f"unknown cell scenario keys {sorted(unknown)} (known: {sorted(TOP_KEYS)})")
    for key in ("cell", "duration", "controller", "initial", "trajectory"):
        _require(key in doc, f"cell scenario needs '{key}'")
    try:
        cell = load_cell(str(doc["cell"]))
    except (ModelError, ValueError) as exc:
        raise ScenarioError(f"cell: {exc}") from exc
    duration, rate = float(doc["duration"]), float(doc.get("rate", 1000.0))
    physics_dt = float(doc.get("physics_dt", 1e-3))
    _require(duration > 0.0 and rate > 0.0, "duration and rate must be > 0")
    check_physics_steps(duration, rate, physics_dt)
    initial = doc["initial"]
    _require(isinstance(initial, dict) and set(initial) == {"object", "arms"},
             "initial needs 'object' (placement of O) and 'arms' (joint guesses per arm)")
    try:
        pose = _placement(initial["object"], read_constants(None, "initial"), "initial.object", ())
    except ModelError as exc:
        raise ScenarioError(str(exc)) from exc
    arms = initial["arms"]
    _require(isinstance(arms, dict) and set(arms) == set(cell.arm_names),
             f"initial.arms needs one joint vector per arm: {cell.arm_names}")
    guess = []
    for arm in cell.arms:
        q = np.asarray(arms[arm.name], dtype=float)
        _require(q.shape == (arm.model.nq,) and bool(np.all(np.isfinite(q))),
                 f"initial.arms.{arm.name} must be {arm.model.nq} finite numbers")
        guess.append(q)
    traj = doc["trajectory"]
    _require(isinstance(traj, dict) and traj.get("type") == "cartesian"
             and set(traj) <= {"type", "positions", "durations"},
             "trajectory: a cell follows a cartesian path of E (type, positions, durations)")
    ctrl = doc["controller"]
    _require(isinstance(ctrl, dict) and "type" in ctrl and set(ctrl) <= {"type", "params"},
             "controller needs a 'type' (and optional 'params')")
    if not is_available(str(ctrl["type"])):  # the list of names only for the message
        raise ScenarioError(f"controller.type '{ctrl['type']}' is not one of "
                            + ", ".join(available()))
    params = dict(ctrl.get("params") or {})
    params.setdefault("cell", str(doc["cell"]))
    force = doc.get("force_reference")
    force_ref = None
    if force is not None:
        f = np.asarray(force, dtype=float)
        _require(f.shape == (3,), "force_reference must be a force (3 numbers, base axes)")
        force_ref = np.concatenate([np.zeros(3), f])
    return CellScenario(name, cell, duration, rate, physics_dt, pose, np.concatenate(guess), traj,
                        str(ctrl["type"]), params, dict(doc.get("plant") or {}), force_ref,
                        str(doc.get("description", "")), doc)


@dataclass
class CellResult:
    """Time series of a cell run (one row per control period) and its summary."""

    t: Array
    q: Array
    tau: Array
    pose_error: Array        # (rows, 6): e_p (m), e_o (rad) of E
    contact_force: Array     # λ_E, N
    desired_force: Array     # f_nᵈ, N
    arm_forces: Array        # (rows, m): p_i, N
    summary: dict

    def series(self) -> dict:
        """JSON-friendly time series."""
        return {k: getattr(self, k).tolist() for k in ("t", "q", "tau", "pose_error",
                                                       "contact_force", "desired_force",
                                                       "arm_forces")}


def pressing_forces(grasp_forces: Array, mass: float, accel_com: Array, gravity: Array,
                    normal: Array, shares: Array) -> Array:
    """p_i = −n·(f_i − s_i Mᴼ(a_C − g)): arm i's part of the normal force (Huo 3-148/3-154 split).

    ``grasp_forces`` (m, 3): the forces f_i the arms exert on the object; ``accel_com``: a_C."""
    F = np.ascontiguousarray(grasp_forces, dtype=float)
    out = np.empty(F.shape[0])
    CK.pressing_forces(F, float(mass), vector(accel_com), vector(gravity), vector(normal),
                       vector(shares), out)
    return out


def pressing_shares(plant: CellPlantBase, shares: Array) -> Array:
    """p_i of the plant's last evaluated state (``pressing_forces``)."""
    return pressing_forces(plant.grasp_wrenches()[:, 3:], plant.cell.object_inertia.mass,
                           plant.object_acceleration(), plant.cell.gravity, plant.plane.normal,
                           shares)


def initial_contact_pose(sc: CellScenario, model=None) -> Array:
    """World pose of E with the object at its initial placement: where the plant starts (its
    contact frame depends only on the object's coordinates, which assembling leaves as given).
    ``model``: the cell's closed_chain_model if one is at hand (a plant's), else built here."""
    model = closed_chain_model(sc.cell) if model is None else model
    q = np.zeros(model.nq)
    q[sc.cell.nq:] = object_coordinates(sc.object_pose)
    return CK.frame_pose_at(model, q, "contact")


def cell_path(sc: CellScenario, start: Array) -> CartesianPath:
    """The scenario's path of E (consecutive quintics through its positions) from ``start``."""
    return CartesianPath(start, [np.asarray(p, float) for p in sc.trajectory.get("positions", [])],
                         list(np.atleast_1d(sc.trajectory.get("durations", []))), "contact")


def cell_reference(path: CartesianPath, t: float, q: Array, wrench: Array | None) -> Reference:
    """The law's reference at t: pose, twist and acceleration of E on the path, the force
    reference; ``q`` only fills the joint slot (a task-space law reads the pose)."""
    pose, twist, accel = path.sample(t)
    return Reference(q, pose=pose, twist=twist, accel=accel, wrench=wrench)


def pose_error(T: Array, T_d: Array) -> Array:
    """e = (p_d − p, orientation error of R against R_d) of E: the rows the summary reports."""
    e = np.empty(6)
    KT.task_error(np.ascontiguousarray(T, dtype=float), np.ascontiguousarray(T_d, dtype=float),
                  6, e)
    return e


def desired_normal_force(force_reference: Array | None, normal: Array, law) -> float:
    """f_nᵈ: the force reference (n, f) pressing along −normal, else the law's set point."""
    if force_reference is None:
        return law.get_parameters().get("force_setpoint", 0.0)
    return -float(normal @ force_reference[3:])


class CellLog:
    """Preallocated time series of a cell run, one row per control period."""

    def __init__(self, rows: int, n: int, m: int) -> None:
        self.t = np.empty(rows)
        self.q, self.tau = np.empty((rows, n)), np.empty((rows, n))
        self.e = np.empty((rows, 6))
        self.lam, self.f_d = np.empty(rows), np.empty(rows)
        self.p = np.empty((rows, m))


def run_cell(scenario: CellScenario | str, progress: bool = False,
             compiled: bool = True) -> CellResult:
    """Simulate a cell scenario and summarise pose, force and force shares.

    With the internal engine and the load-sharing law, chunks of control periods run in one
    compiled call each (sim.cell_kernels); otherwise (engine ``mujoco``, another law, or
    ``compiled=False``) Python runs each period, the plant holding τ in one compiled call. Both
    give the same numbers.
    """
    sc = scenario if isinstance(scenario, CellScenario) else load_cell_scenario(scenario)
    try:
        plant = make_cell_plant(sc.cell, sc.plant, sc.physics_dt)
        plant.reset(sc.arm_guess, sc.object_pose)
    except ValueError as exc:
        raise ScenarioError(f"plant: {exc}") from exc
    law = create(sc.controller_type)
    law.configure(arms_model(sc.cell), sc.controller_params)
    shares = share_vector(law.get_parameters().get("load_shares", []), sc.cell.m)
    path = cell_path(sc, initial_contact_pose(sc, plant.model))
    log = CellLog(sc.steps + 1, plant.n_arms, sc.cell.m)
    started = time.perf_counter()
    if compiled and has_compiled_loop(plant, law):
        run_compiled(sc, plant, law, path, shares, log, progress)
    else:
        run_stepwise(sc, plant, law, path, shares, log, progress)
    wall = time.perf_counter() - started
    if progress:
        print(file=sys.stderr)
    diag = law.diagnostics()
    summary = summarise_cell(sc, log.t, log.e, log.lam, log.f_d, log.p, log.tau,
                             np.asarray(diag.get("force_fractions", np.full(sc.cell.m, np.nan))),
                             wall)
    return CellResult(log.t, log.q, log.tau, log.e, log.lam, log.f_d, log.p, summary)


def has_compiled_loop(plant: CellPlantBase, law) -> bool:
    """Whether a run can take the compiled loop: the internal engine's plant and the
    load-sharing law as such (a MuJoCo cell, another law or a subclass: the Python loop)."""
    return type(plant) is CellPlant and type(law) is LoadSharing


def run_stepwise(sc: CellScenario, plant: CellPlantBase, law, path: CartesianPath, shares: Array,
                 log: CellLog, progress: bool) -> None:
    """Python once per control period: sense, reference, law, pose error, evaluate, log, hold."""
    q_hold = plant.q[: plant.n_arms].copy()
    tick = period_ns(sc.rate)
    normal = plant.plane.normal
    for k in range(sc.steps + 1):
        t = seconds(k * tick)
        q_meas, qd_meas = plant.measure()
        ref = cell_reference(path, t, q_hold, sc.force_reference)
        tau = law.update(t, State(t, q_meas, qd_meas), ref)
        log.e[k] = pose_error(plant.frame_pose("contact"), ref.pose)
        plant.evaluate(tau)
        log.t[k], log.q[k] = t, plant.q[: plant.n_arms]
        log.lam[k] = plant.contact_force()
        log.f_d[k] = desired_normal_force(sc.force_reference, normal, law)
        log.p[k] = pressing_shares(plant, shares)
        log.tau[k] = plant.step(tau, seconds(tick)) if k < sc.steps else plant.saturate(tau)
        if progress and k % 100 == 0:
            print(f"\rt = {t:6.3f} s", end="", file=sys.stderr, flush=True)


def run_compiled(sc: CellScenario, plant: CellPlant, law: LoadSharing, path: CartesianPath,
                 shares: Array, log: CellLog, progress: bool) -> None:
    """Chunks of control periods in one compiled call each (sim.cell_kernels.run_cell_periods)."""
    na, steps, tick = plant.n_arms, sc.steps, period_ns(sc.rate)
    rows = steps + 1
    q_hold = plant.q[:na].copy()
    cfg = law.cfg
    # the law's inputs that do not change: flags of the reference, the desired wrench, f_nᵈ
    # (a placeholder pose and rates: the loop samples the path itself)
    ref = Reference(q_hold, pose=np.eye(4), twist=np.zeros(6), accel=np.zeros(6),
                    wrench=sc.force_reference)
    task_inputs(cfg.object, ref, None)
    f_d = law.desired_normal_force(ref)
    log.f_d[:] = desired_normal_force(sc.force_reference, plant.plane.normal, law)
    sigma = np.array([plant.noise_position, plant.noise_velocity])
    draws = int(sigma[0] > 0.0) + int(sigma[1] > 0.0)
    state = np.stack([plant.q, plant.qd, plant.qdd])
    S = plant._c[CK.C_S]
    S[CK.S_CONTACT], S[CK.S_T] = plant.in_contact, plant.t
    work = np.zeros((6, na))
    substeps = max(1, int(round(seconds(tick) / plant.dt)))
    law_arrays = (cfg.data, cfg.tasks, cfg.object, cfg.starts, cfg.force_fractions)
    F = np.empty((sc.cell.m, 3))

    def periods(k0: int, k1: int, noise: Array) -> int:
        return CK.run_cell_periods(
            k0, k1, steps, tick, substeps, plant._c, state, noise, sigma, law_arrays, path.table,
            q_hold, f_d, shares, plant.cell.object_inertia.mass, plant.plane.normal, work, F,
            log.t, log.q, log.tau, log.e, log.lam, log.p)

    with notice_if_slow("the cell's offline loop"):
        periods(0, 0, np.empty((0, draws, na)))  # no period: compiled or loaded only
    chunk = chunk_periods(rows, substeps)
    for k0 in range(0, rows, chunk):
        k1 = min(rows, k0 + chunk)
        # the same draws, in the same order, as plant.measure() once per period
        bad = periods(k0, k1, plant._rng.standard_normal((k1 - k0, draws, na)))
        if bad <= -2:
            raise NonFiniteOutput(f"{law.name}: torque is non-finite even from the initial "
                                  f"state (t = {seconds((-2 - bad) * tick):.6f} s)")
        if bad >= 0:
            raise FloatingPointError(f"cell state diverged at t = {S[CK.S_T]:.6f} s")
        if progress:
            print(f"\rt = {log.t[k1 - 1]:6.3f} s", end="", file=sys.stderr, flush=True)
    plant.q, plant.qd, plant.qdd = state[0].copy(), state[1].copy(), state[2].copy()
    plant.t, plant.in_contact = float(S[CK.S_T]), bool(S[CK.S_CONTACT] > 0.0)
    plant.applied, plant.saturated = work[3].copy(), work[4] > 0.0
    law.task_error = cfg.object[KT.TK_OUT, :6].copy()
    law.arm_forces = cfg.force_fractions * f_d
    law._t_prev = seconds(steps * tick)
    law.dt = seconds(steps * tick) - seconds((steps - 1) * tick) if steps > 0 else 0.0


def _stats(x: Array) -> dict:
    """rms, max |·| and final value of a scalar series."""
    return {"rms": float(np.sqrt(np.mean(x**2))), "max": float(np.abs(x).max()),
            "final": float(x[-1])}


def summarise_cell(sc: CellScenario, t: Array, e: Array, lam: Array, f_d: Array, p: Array,
                   tau: Array, fractions: Array, wall: float) -> dict:
    """Object pose error, normal force error and each arm's force share against W's share."""
    e_pos = np.linalg.norm(e[:, :3], axis=1)
    e_rot = np.linalg.norm(e[:, 3:], axis=1)
    force_error = f_d - lam
    mean_normal = float(np.mean(lam))
    shares = {}
    for i, arm in enumerate(sc.cell.arms):
        prescribed = fractions[i] * f_d
        shares[arm.name] = {
            "prescribed_fraction": float(fractions[i]),
            # no normal force over the run (the object never touched): no share to measure
            "measured_fraction_mean": (float(np.mean(p[:, i]) / mean_normal)
                                       if mean_normal != 0.0 else None),
            "prescribed_force_final": float(prescribed[-1]),
            "measured_force_final": float(p[-1, i]),
            "max_deviation": float(np.abs(p[:, i] - prescribed).max()),
        }
    slices = sc.cell.joint_slices()
    return {
        "scenario": sc.name,
        "cell": sc.cell.name,
        "controller": sc.controller_type,
        "arms": sc.cell.arm_names,
        "error_reference": "rows of rms/max/final_error: contact frame E, position (m) then "
                           "orientation (rad), e = desired − actual",
        "rms_error": np.sqrt(np.mean(e**2, axis=0)).tolist(),
        "max_error": np.abs(e).max(axis=0).tolist(),
        "final_error": e[-1].tolist(),
        "object_pose_error": {"position_m": _stats(e_pos), "orientation_rad": _stats(e_rot)},
        "normal_force": {"desired_final": float(f_d[-1]), "actual_final": float(lam[-1]),
                         "min_actual": float(lam.min()), "error": _stats(force_error)},
        "force_shares": shares,
        "max_torque": {arm.name: np.abs(tau[:, s]).max(axis=0).tolist()
                       for arm, s in zip(sc.cell.arms, slices)},
        "steps": int(len(t) - 1),
        "duration_s": sc.duration,
        "wall_time_s": wall,
        "realtime_factor": sc.duration / wall if wall > 0 else float("inf"),
    }

