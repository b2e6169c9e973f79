"""Offline simulation: the control loop of the stack, run in one process at full speed.

Each control period k (t_k = k / rate): sense (q, q̇) with the plant's sensor noise, sample the
reference at t_k, compute τ_k, hold it over the period while the plant integrates. The nodes run
the same sequence over the bus, so a lockstep run reproduces this one.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

import numpy as np

from robot_control import dynamics as dyn
from robot_control.clock import period_ns, seconds
from robot_control.control.base import Reference, State
from robot_control.control.registry import create
from robot_control.sim.plant import Plant
from robot_control.sim.scenario import CartesianPath, Scenario, load_scenario

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


def run(scenario: Scenario | str, progress: bool = False) -> Result:
    """Simulate a scenario and summarise how well it tracked (design.md simulate keys)."""
    sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
    plant = Plant(sc.robot, sc.plant, sc.physics_dt)
    plant.reset(sc.q0, sc.qd0)
    law = make_controller(sc)
    n, steps = sc.robot.nq, sc.steps
    # time in whole nanoseconds, rounded exactly as the nodes stamp their messages
    tick_ns = period_ns(sc.rate)
    period = seconds(tick_ns)
    rows = steps + 1
    t_log = np.empty(rows)
    q_log, qd_log, ref_log, tau_log = (np.empty((rows, n)) for _ in range(4))
    qm_log, qdm_log, cmd_log = (np.empty((rows, n)) for _ in range(3))
    wrench_log = np.zeros((rows, 6))
    cartesian = isinstance(sc.trajectory, CartesianPath)
    task_log = np.zeros((rows, 3)) if cartesian else None
    touching = plant.environment is not None
    ref_force = np.zeros(rows)
    normal = None
    if touching:
        normal = np.asarray(sc.plant["environment"].get("normal", (0, 0, 1)), dtype=float)
        normal = normal / np.linalg.norm(normal)
    started = time.perf_counter()
    shown = -1
    for k in range(rows):
        t = seconds(k * tick_ns)
        q_meas, qd_meas = plant.measure()
        # what a controller node knows: measured q, q̇ and the force sensor (no q̈)
        state = State(t, q_meas, qd_meas, wrench=plant.wrench.copy())
        ref = reference_at(sc, t, sc.q0)
        tau = law.update(t, state, ref)
        t_log[k], q_log[k], qd_log[k] = t, plant.q, plant.qd
        qm_log[k], qdm_log[k], cmd_log[k] = q_meas, qd_meas, tau
        ref_log[k] = ref.q
        if cartesian:  # position error of the task frame, p_d − p
            p = dyn.frame_placement(plant.model, plant.q, sc.trajectory.frame)[:3, 3]
            task_log[k] = ref.pose[:3, 3] - p
        wrench_log[k] = plant.wrench
        if touching and ref.wrench is not None:
            ref_force[k] = float(normal @ ref.wrench[3:])
        if k < steps:
            tau_log[k] = plant.step(tau, period)
        else:
            tau_log[k] = plant.saturate(tau)
        if progress and (pct := 100 * k // max(steps, 1)) != shown:
            shown = pct
            bar = "#" * (pct // 4)
            print(f"\r[{bar:<25}] {pct:3d}%  t = {t:6.3f} s", end="", file=sys.stderr, flush=True)
    wall = time.perf_counter() - started
    if progress:
        print(file=sys.stderr)
    force_error = None
    if touching:
        # pressing magnitudes along −n: desired −(n·f_d), actual = the surface's push n·f_env
        exerted = wrench_log[:, 3:] @ normal
        force_error = -ref_force - exerted if sc.force_reference is not None else None
    summary = summarise(sc, t_log, q_log, ref_log, tau_log, wall, force_error)
    if cartesian:
        summary["error_reference"] = "joint errors are from the initial posture; see task_error"
        summary["task_error"] = {
            "rms": np.sqrt(np.mean(task_log**2, axis=0)).tolist(),
            "max": np.abs(task_log).max(axis=0).tolist(),
            "final": task_log[-1].tolist(),
        }
    return Result(t_log, q_log, qd_log, ref_log, tau_log, wrench_log, force_error, task_log,
                  summary, _jsonable(law.diagnostics()), qm_log, qdm_log, cmd_log)


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
