"""A minimal closed loop for the control-law tests (the real plant lives in robot_control.sim).

``simulate`` holds each torque for one control period (zero-order hold, 1 kHz by default) and
integrates the plant model with classical RK4 on robot_control.dynamics.forward_dynamics. An
optional compliant plane (spring–damper, frictionless) pushes on the end effector and is reported
as the F/T sensor would (the environment's wrench on the robot, world axes). The tests of this
file check the integrator itself.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robot_control import dynamics as dyn
from robot_control.control import Reference, State
from robot_control.model import load_robot

Array = np.ndarray
#: Huo's DDArm examples all start here, at rest, and move to QF
Q0 = np.array([-0.1, 1.5, 1.0])
QF = np.array([0.6, 1.0, -0.5])


@dataclass
class Wall:
    """Compliant plane n·x = offset (n towards the free side): f = max(0, kδ − b δ̇) n."""

    normal: Array
    offset: float
    stiffness: float
    damping: float
    frame: str | None = None

    def wrench(self, model, q: Array, qd: Array) -> tuple[Array, Array]:
        """(joint torque Jᵀf, world wrench (n, f) of the wall on the robot)."""
        frame = self.frame or model.end_effector
        p = dyn.frame_placement(model, q, frame)[:3, 3]
        J = dyn.jacobian(model, q, frame)
        depth = self.offset - float(self.normal @ p)
        if depth <= 0.0:
            return np.zeros(model.nq), np.zeros(6)
        speed = float(self.normal @ (J[3:] @ qd))
        f = max(0.0, self.stiffness * depth - self.damping * speed) * self.normal
        return J[3:].T @ f, np.concatenate([np.zeros(3), f])


@dataclass
class Run:
    t: Array
    q: Array
    qd: Array
    qdd: Array
    tau: Array
    q_ref: Array
    wrench: Array

    @property
    def error(self) -> Array:
        return self.q_ref - self.q


def quintic(q0, qf, T: float):
    """Huo Ex 3-7 rest-to-rest quintic q₀ → q_f over T, holding q_f afterwards."""
    q0, qf = np.asarray(q0, float), np.asarray(qf, float)
    d = qf - q0

    def reference(t: float) -> Reference:
        s = min(max(t / T, 0.0), 1.0)
        pos = 10 * s**3 - 15 * s**4 + 6 * s**5
        vel = (30 * s**2 - 60 * s**3 + 30 * s**4) / T
        acc = (60 * s - 180 * s**2 + 120 * s**3) / T**2
        return Reference(q0 + d * pos, d * vel, d * acc)

    return reference


def hold(q) -> callable:
    q = np.asarray(q, dtype=float)
    return lambda t: Reference(q)


def simulate(plant, law, reference, q0, qd0=None, duration: float = 1.0, rate: float = 1000.0,
             substeps: int = 1, wall: Wall | None = None, measure_qdd: bool = False,
             on_step=None) -> Run:
    """Closed loop of ``law`` on ``plant``; the law must be configured, this resets it."""
    n = plant.nq
    q = np.array(q0, dtype=float)
    qd = np.zeros(n) if qd0 is None else np.array(qd0, dtype=float)
    period = 1.0 / rate
    h = period / substeps
    steps = int(round(duration * rate))
    out = {k: np.zeros((steps + 1, n)) for k in ("q", "qd", "qdd", "tau", "q_ref")}
    out["wrench"] = np.zeros((steps + 1, 6))
    times = np.arange(steps + 1) * period
    qdd = np.zeros(n)
    wrench = np.zeros(6) if wall is None else wall.wrench(plant, q, qd)[1]
    law.reset(State(0.0, q.copy(), qd.copy()))
    tau = np.zeros(n)

    def accel(q, qd, tau):
        if wall is None:
            return dyn.forward_dynamics(plant, q, qd, tau)
        return dyn.forward_dynamics(plant, q, qd, tau + wall.wrench(plant, q, qd)[0])

    for k in range(steps + 1):
        t = times[k]
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(qd))):
            for series in out.values():  # the plant diverged: no law can be asked any more
                series[k:] = np.nan
            break
        ref = reference(t)
        state = State(t, q.copy(), qd.copy(), qdd.copy() if measure_qdd else None,
                      wrench.copy() if wall is not None else None)
        tau = law.update(t, state, ref)
        for key, val in (("q", q), ("qd", qd), ("qdd", qdd), ("tau", tau), ("q_ref", ref.q)):
            out[key][k] = val
        out["wrench"][k] = wrench
        if on_step is not None:
            on_step(k, t, q, qd, law)
        if k == steps:
            break
        for _ in range(substeps):  # classical RK4 under the held torque
            a1 = accel(q, qd, tau)
            q2, v2 = q + 0.5 * h * qd, qd + 0.5 * h * a1
            a2 = accel(q2, v2, tau)
            q3, v3 = q + 0.5 * h * v2, qd + 0.5 * h * a2
            a3 = accel(q3, v3, tau)
            q4, v4 = q + h * v3, qd + h * a3
            a4 = accel(q4, v4, tau)
            q = q + h / 6.0 * (qd + 2 * v2 + 2 * v3 + v4)
            qd = qd + h / 6.0 * (a1 + 2 * a2 + 2 * a3 + a4)
        qdd = accel(q, qd, tau)
        if wall is not None:
            wrench = wall.wrench(plant, q, qd)[1]
    return Run(times, out["q"], out["qd"], out["qdd"], out["tau"], out["q_ref"], out["wrench"])


class _Gravity:
    """τ = g(q): holds any configuration at rest (a law for testing the loop itself)."""

    def __init__(self, model) -> None:
        self.model = model

    def reset(self, state) -> None:
        pass

    def update(self, t, state, ref):
        return dyn.gravity_torques(self.model, state.q)


class _Zero(_Gravity):
    def update(self, t, state, ref):
        return np.zeros(self.model.nq)


def test_gravity_compensation_holds_the_arm_still():
    model = load_robot("ddarm")
    q0 = np.array([-0.1, 1.5, 1.0])
    run = simulate(model, _Gravity(model), hold(q0), q0, duration=0.5)
    assert np.abs(run.q[-1] - q0).max() < 1e-9


def test_free_fall_conserves_energy_under_rk4():
    model = load_robot("ddarm")
    q0 = np.array([-0.1, 1.5, 1.0])
    run = simulate(model, _Zero(model), hold(q0), q0, duration=0.5)
    energy = [dyn.kinetic_energy(model, q, qd) + dyn.potential_energy(model, q)
              for q, qd in zip(run.q, run.qd)]
    assert np.ptp(run.q[:, 1]) > 0.1  # it does fall
    assert np.ptp(energy) < 1e-6 * max(1.0, abs(energy[0]))


def test_wall_pushes_back_along_its_normal():
    model = load_robot("two_axis_planar")
    q = np.array([-0.5, 1.0])
    p = dyn.frame_placement(model, q, None)[:3, 3]
    wall = Wall(np.array([0.0, 1.0, 0.0]), p[1] + 0.01, 1e4, 0.0)
    tau, w = wall.wrench(model, q, np.zeros(2))
    assert np.allclose(w[3:], [0.0, 100.0, 0.0])
    J = dyn.jacobian(model, q, None)
    assert np.allclose(tau, J[3:].T @ w[3:])
