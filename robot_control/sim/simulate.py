"""Offline simulation: the control loop of the stack, run in one process at full speed.

Each control period k (t_k = k / rate): sense (q, q̇) with the plant's sensor noise, sample the
reference at t_k, compute τ_k, hold it over the period while the plant integrates. The nodes run
the same sequence over the bus, so a lockstep run reproduces this one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from robot_control.control import compiled as C
from robot_control.control.base import NonFiniteOutput, Reference, State
from robot_control.control.registry import create
from robot_control.dynamics.compile_cache import notice_if_slow
from robot_control.dynamics.packing import Data
from robot_control.sim import plant_kernels as PK
from robot_control.sim import run_kernels as RK
from robot_control.sim.clock import period_ns, seconds
from robot_control.sim.engine import make_plant
from robot_control.sim.plant_base import PlantBase as Plant
from robot_control.sim.progress import progress_bar
from robot_control.sim.scenario import CartesianPath, Scenario, chunk_periods, load_scenario
from robot_control.trajectory.excitation import FourierExcitation

Array = np.ndarray


@dataclass
class Result:
    """Time series of a run (one row per control period) and its summary."""

    t: Array
    q: Array
    qd: Array
    q_ref: Array
    tau: Array
    wrench: Array
    force_error: Array | None
    task_error: Array | None
    summary: dict
    diagnostics: dict
    # what the bus carries (recordings): sensed state and the law's torque before saturation
    q_measured: Array | None = None
    qd_measured: Array | None = None
    tau_command: Array | None = None

    def series(self) -> dict:
        """JSON-friendly time series."""
        out = {"t": self.t.tolist(), "q": self.q.tolist(), "qd": self.qd.tolist(),
               "q_ref": self.q_ref.tolist(), "tau": self.tau.tolist(),
               "wrench": self.wrench.tolist()}
        if self.force_error is not None:
            out["force_error"] = self.force_error.tolist()
        if self.task_error is not None:
            out["task_error"] = self.task_error.tolist()
        if self.tau_command is not None:
            out["tau_command"] = self.tau_command.tolist()
        return out


def reference_at(scenario: Scenario, t: float, q_hold: Array) -> Reference:
    """The controller's reference at t: joint (q_d, q̇_d, q̈_d) or a Cartesian pose for task laws."""
    traj = scenario.trajectory
    if isinstance(traj, CartesianPath):
        pose, twist, accel = traj.sample(t)
        return Reference(q_hold, pose=pose, twist=twist, accel=accel,
                         wrench=scenario.force_reference)
    q, qd, qdd = traj.sample(t)
    return Reference(q, qd, qdd, wrench=scenario.force_reference)


def make_controller(scenario: Scenario):
    """The scenario's law, configured on the controller's own model."""
    law = create(scenario.controller_type)
    law.configure(scenario.controller_model, scenario.controller_params)
    return law


def run(scenario: Scenario | str, progress: bool = False, compiled: bool = True,
        started: float | None = None) -> Result:
    """Simulate a scenario and summarise how well it tracked (the summary keys README documents).

    With a compiled law (``Controller.compiled``), a joint-space reference that samples through
    ``trajectory.sampling`` (quintics or a Fourier excitation) or a Cartesian path, and a
    compiled plant (free space or a compliant surface), whole chunks of control periods run in
    one compiled call (sim.run_kernels); otherwise Python runs each period and the plant holds τ
    in one compiled call. Both give the same numbers; ``compiled=False`` forces the second.
    ``progress`` shows a bar on stderr (tqdm) for runs that last more than a moment. The wall time
    (and ``realtime_factor``) counts model load, compiled-code cache load and first call: from
    entry, or from ``started`` (a ``time.perf_counter()`` reading, e.g. before the caller loaded
    the scenario).
    """
    started = time.perf_counter() if started is None else started
    sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
    plant = make_plant(sc.robot, sc.plant, sc.physics_dt)
    plant.reset(sc.q0, sc.qd0)
    law = make_controller(sc)
    n, steps = sc.robot.nq, sc.steps
    # time in whole nanoseconds, rounded exactly as the nodes stamp their messages
    tick_ns = period_ns(sc.rate)
    rows = steps + 1
    log = RunLog(rows, n, isinstance(sc.trajectory, CartesianPath))
    spec = law.compiled() if compiled else None
    if isinstance(sc.trajectory, CartesianPath | FourierExcitation):
        sampling = dummy_sampling(n)  # unused: the path or series is sampled instead
    else:
        sampling = getattr(sc.trajectory, "sampling_arrays", lambda: None)()
    with progress_bar(progress, sc.duration) as bar:
        if spec is not None and sampling is not None and plant.compiled:
            run_compiled(sc, plant, law, spec, sampling, tick_ns, log, bar)
        else:
            run_stepwise(sc, plant, law, tick_ns, log, bar)
    wall = time.perf_counter() - started
    return finish(sc, plant, law, log, wall)


class RunLog:
    """Preallocated time series of a run, one row per control period."""

    def __init__(self, rows: int, n: int, cartesian: bool) -> None:
        self.t = np.empty(rows)
        self.q, self.qd, self.ref, self.tau = (np.empty((rows, n)) for _ in range(4))
        # what the controller saw and asked for: sensed state and the unsaturated command
        self.q_measured, self.qd_measured, self.tau_command = (np.empty((rows, n)) for _ in range(3))
        self.wrench = np.zeros((rows, 6))
        self.task = np.zeros((rows, 3)) if cartesian else None
        self.ref_force = np.zeros(rows)


def dummy_sampling(n: int) -> tuple:
    """Joint-sampling arrays of the right types for a run whose reference is a Cartesian path."""
    return np.zeros(1), np.zeros((0, 3, 6, n)), np.zeros((3, n)), np.zeros(n)


def task_frame(sc: Scenario, plant: Plant) -> Array | None:
    """The Cartesian path's frame on the plant for run_kernels.frame_error (X, body in [3, 0])."""
    if not isinstance(sc.trajectory, CartesianPath):
        return None
    body, X = plant.model.frame_placement(sc.trajectory.frame or plant.model.end_effector)
    frame = np.array(X, dtype=float)
    frame[3, 0] = body
    return frame


def run_stepwise(sc: Scenario, plant: Plant, law, tick_ns: int, log: RunLog, bar) -> None:
    """Python once per control period: sense, reference, law, log, then one compiled hold."""
    steps = sc.steps
    period = seconds(tick_ns)
    cartesian = log.task is not None
    frame = task_frame(sc, plant)
    D = Data(plant.model).D  # the log's own (the plant may be another engine, with none)
    normal = contact_normal(sc, plant)
    for k in range(steps + 1):
        t = seconds(k * tick_ns)
        q_meas, qd_meas = plant.measure()
        # what a controller node knows: measured q, q̇ and the force sensor (no q̈)
        state = State(t, q_meas, qd_meas, wrench=plant.wrench.copy())
        ref = reference_at(sc, t, sc.q0)
        tau = law.update(t, state, ref)
        log.t[k], log.q[k], log.qd[k] = t, plant.q, plant.qd
        log.ref[k] = ref.q
        log.q_measured[k], log.qd_measured[k], log.tau_command[k] = q_meas, qd_meas, tau
        if cartesian:  # position error of the task frame, p_d − p
            RK.frame_error(D, frame, plant.q, ref.pose, log.task[k])
        log.wrench[k] = plant.wrench
        if normal is not None and ref.wrench is not None:
            log.ref_force[k] = float(normal @ ref.wrench[3:])
        if k < steps:
            log.tau[k] = plant.step(tau, period)
        else:
            log.tau[k] = plant.saturate(tau)
        bar.advance(t)


def run_compiled(sc: Scenario, plant: Plant, law, spec, sampling, tick_ns: int, log: RunLog,
                 bar) -> None:
    """Chunks of control periods in one compiled call each (Python once per chunk)."""
    n, steps = sc.robot.nq, sc.steps
    rows = steps + 1
    substeps = max(1, int(round(seconds(tick_ns) / plant.dt)))
    cfg = plant.config
    sigma = np.array([cfg.noise_position, cfg.noise_velocity])
    draws = int(sigma[0] > 0.0) + int(sigma[1] > 0.0)
    state = np.stack([plant.q, plant.qd, plant.qdd])
    clock = np.array([plant.t])
    work = np.zeros((8, n))
    knots, seg_rows, first, last = sampling
    D = plant.data.D  # the compiled loop runs the plant's hold on it
    path = sc.trajectory.table if isinstance(sc.trajectory, CartesianPath) else None
    series = sc.trajectory.table if isinstance(sc.trajectory, FourierExcitation) else None
    if path is not None:
        work[5] = sc.q0  # the joint reference of a Cartesian run: hold q₀
    # which inputs the law gets (the loop writes the path's pose, twist and acceleration and the
    # sensed wrench each period; placeholders until then, no path sampling here)
    placeholder = (Reference(sc.q0, pose=np.eye(4), twist=np.zeros(6), accel=np.zeros(6),
                             wrench=sc.force_reference) if path is not None
                   else Reference(sc.q0, wrench=sc.force_reference))
    C.task_inputs(spec.task, placeholder, plant.wrench)
    frame = task_frame(sc, plant)
    chunk = chunk_periods(rows, substeps)
    periods = None
    for k0 in range(0, rows, chunk):
        k1 = min(rows, k0 + chunk)
        # the same draws, in the same order, as plant.measure() once per period
        noise = plant._noise.standard_normal((k1 - k0, draws, n))
        args = (k0, k1, steps, tick_ns, substeps, D, plant._J, plant._S, plant._X,
                plant.mass_buffer, state, clock, noise, sigma, spec.kind,
                int(plant._S[PK.S_INTEGRATOR]), spec.arrays, knots,
                seg_rows, first, last, work, log.t, log.q, log.qd, log.ref, log.tau,
                log.q_measured, log.qd_measured, log.tau_command, plant.surface, path, frame,
                log.wrench, log.task, series)
        if periods is None:
            with notice_if_slow(f"the offline loop of {law.name}"):
                periods = RK.compiled_periods(*args)
        bad = periods(*args)
        if bad <= -2:
            law.finish_compiled(spec, seconds((-2 - bad) * tick_ns), None)
            raise NonFiniteOutput(f"{law.name}: torque is non-finite even from the initial "
                                  f"state (t = {seconds((-2 - bad) * tick_ns):.6f} s)")
        if bad >= 0:
            raise FloatingPointError(f"plant state diverged at t = {clock[0]:.6f} s")
        bar.advance(log.t[k1 - 1])
    plant.q, plant.qd, plant.qdd = state[0].copy(), state[1].copy(), state[2].copy()
    plant.t = float(clock[0])
    plant.applied = work[3].copy()
    plant.saturated = work[4] > 0.0
    if plant.surface is not None:
        plant.wrench = plant.surface[PK.C_WRENCH, :6].copy()
    normal = contact_normal(sc, plant)
    if normal is not None and sc.force_reference is not None:
        log.ref_force[:] = float(normal @ sc.force_reference[3:])  # reference_at's wrench
    law.finish_compiled(spec, seconds(steps * tick_ns),
                        seconds((steps - 1) * tick_ns) if steps > 0 else None)


def contact_normal(sc: Scenario, plant: Plant) -> Array | None:
    """Unit normal of the scenario's surface (None in free space)."""
    if plant.environment is None:
        return None
    normal = np.asarray(sc.plant["environment"].get("normal", (0, 0, 1)), dtype=float)
    return normal / np.linalg.norm(normal)


def finish(sc: Scenario, plant: Plant, law, log: RunLog, wall: float) -> Result:
    """The Result of a finished run: series, force and task errors, summary, diagnostics."""
    force_error = None
    normal = contact_normal(sc, plant)
    if normal is not None:
        # pressing magnitudes along −n: desired −(n·f_d), actual = the surface's push n·f_env
        exerted = log.wrench[:, 3:] @ normal
        force_error = -log.ref_force - exerted if sc.force_reference is not None else None
    summary = summarise(sc, log.t, log.q, log.ref, log.tau, wall, force_error)
    if log.task is not None:
        summary["error_reference"] = "joint errors are from the initial posture; see task_error"
        summary["task_error"] = {
            "rms": np.sqrt(np.mean(log.task**2, axis=0)).tolist(),
            "max": np.abs(log.task).max(axis=0).tolist(),
            "final": log.task[-1].tolist(),
        }
    return Result(log.t, log.q, log.qd, log.ref, log.tau, log.wrench, force_error, log.task,
                  summary, _jsonable(law.diagnostics()), log.q_measured, log.qd_measured,
                  log.tau_command)


def summarise(sc: Scenario, t: Array, q: Array, q_ref: Array, tau: Array, wall: float,
              force_error: Array | None) -> dict:
    """RMS, max and final joint error e = q_d − q, peak torques, steps and speed of the run."""
    e = q_ref - q
    out = {
        "scenario": sc.name,
        "robot": sc.robot.name,
        "controller": sc.controller_type,
        "joints": sc.robot.joint_names,
        "rms_error": np.sqrt(np.mean(e**2, axis=0)).tolist(),
        "max_error": np.abs(e).max(axis=0).tolist(),
        "final_error": e[-1].tolist(),
        "max_torque": np.abs(tau).max(axis=0).tolist(),
        "steps": int(len(t) - 1),
        "duration_s": sc.duration,
        "wall_time_s": wall,
        "realtime_factor": sc.duration / wall if wall > 0 else float("inf"),
    }
    if force_error is not None:
        settled = force_error[len(force_error) // 2 :]
        out["force_error"] = {
            "rms": float(np.sqrt(np.mean(force_error**2))),
            "max": float(np.abs(force_error).max()),
            "final": float(force_error[-1]),
            "rms_second_half": float(np.sqrt(np.mean(settled**2))),
        }
    return out


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value
