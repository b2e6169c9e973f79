"""The plant on MuJoCo: the same interface as sim/plant.py, physics by MuJoCo (``engine: mujoco``).

The model MuJoCo integrates is the package's plant model (nominal parameters with the scenario's
mismatch and payload, friction, actuator inertia) converted by model/mjcf.py, so a controller's
own model and the physics are two independent codes. The torque τ (saturated as the internal
plant does, plus the disturbance d(t)) goes into ``qfrc_applied`` and is held over the control
period's physics steps (``mj_step`` with ``nstep``; one step at a time when d(t) changes).
Joint friction: viscous → ``damping``, Coulomb → ``frictionloss`` (MuJoCo has no Stribeck term);
joint stops and the environment: sim/mujoco_contact.py.

Integrator: ``implicitfast`` by default — MuJoCo's recommended one: joint damping is integrated
implicitly (stable for any damping at the scenario's step), one dynamics evaluation per step (a
quarter of RK4's), and its contact and limit rows are built for it. ``rk4`` (MuJoCo's RK4) and
``semi_implicit_euler`` (MuJoCo's Euler) are there for comparison with the internal engine.

Determinism: one thread, warm start reset with the state; the same torques from the same state
give bit-identical states (MuJoCo, doc "Reproducibility": same version, same machine). MuJoCo's
automatic reset on a bad acceleration is off, so a diverging state is seen and becomes the
internal engine's FloatingPointError (the safe stop).
"""

from __future__ import annotations

import logging

import numpy as np

from robot_control.model.mjcf import compile_mjcf, require_mujoco, to_mjcf
from robot_control.model.robot_model import RobotModel
from robot_control.sim import mujoco_contact as MC
from robot_control.sim.plant_base import PlantBase, finite
from robot_control.sim.plant_config import PlantConfig

log = logging.getLogger(__name__)
Array = np.ndarray
#: the scenario's integrator name → MuJoCo's
MJ_INTEGRATOR = {"implicitfast": "implicitfast", "rk4": "RK4", "semi_implicit_euler": "Euler"}


class MujocoPlant(PlantBase):
    """A plant stepped by MuJoCo; ``step(tau, duration)`` holds τ over the physics steps."""

    def __init__(self, model: RobotModel, config: PlantConfig | dict | None = None,
                 physics_dt: float = 1e-4) -> None:
        mujoco = self._mujoco = require_mujoco()
        super().__init__(model, config, physics_dt)
        cfg = self.config
        world, sites = MC.environment_geoms(self.environment, self.model, self.contact_frame)
        xml = to_mjcf(self.model, timestep=self.dt, integrator=MJ_INTEGRATOR[cfg.integrator],
                      armature=cfg.actuator_inertia, sites=sites, world=world,
                      quiet=model.name in _WARNED)
        _WARNED.add(model.name)  # the minimum-mass warning once per robot and process
        self.mj = compile_mjcf(xml)
        self.data = mujoco.MjData(self.mj)
        m = self.mj
        m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_AUTORESET
        friction = self.model.friction  # plant_model's: the scenario's friction, if any
        m.dof_damping[:] = friction[:, 0]
        m.dof_frictionloss[:] = friction[:, 1]
        if np.any(friction[:, 2] != friction[:, 1]):
            log.warning("engine 'mujoco': static friction (Stribeck) is not modelled; Coulomb "
                        "friction %s is used as MuJoCo's frictionloss", friction[:, 1].tolist())
        if not self._limits_on:
            m.jnt_limited[:] = 0
        else:
            MC.map_joint_stops(mujoco, m, self.data, self._lower, self._upper,
                               cfg.limit_stiffness, cfg.limit_damping)
        MC.map_environment(mujoco, m, self.data, self.environment, self.dt)
        self._sphere = m.geom(MC.SPHERE).id if self.environment is not None else -1
        self._disturbed = cfg.disturbance_amplitude is not None
        d = self.data  # views into MjData, fetched once (each attribute access builds one)
        self._qpos, self._qvel, self._qacc, self._force = d.qpos, d.qvel, d.qacc, d.qfrc_applied
        self.reset(np.zeros(self.n))

    def reset(self, q, qd=None, t: float = 0.0) -> None:
        """Place the plant at (q, q̇) at time t (PlantBase.reset) and MuJoCo's data with it."""
        super().reset(q, qd, t)
        d = self.data
        self._mujoco.mj_resetData(self.mj, d)  # also clears the solver's warm start
        d.qpos[:], d.qvel[:], d.time = self.q, self.qd, self.t
        self._mujoco.mj_forward(self.mj, d)
        self._read_contact()

    def step(self, tau, duration: float) -> Array:
        """Hold τ for ``duration`` (a whole number of physics steps, at least one); returns τ applied."""
        tau = self._joint_vector(self.saturate(tau))
        if not finite(tau):  # what NaN torques do to the internal plant, at once
            self.q = np.full(self.n, np.nan)
            self._check_finite()
        steps = max(1, int(round(duration / self.dt)))
        mujoco, m, d = self._mujoco, self.mj, self.data
        if self._disturbed:
            for _ in range(steps):
                self._force[:] = tau + self.disturbance(d.time)
                mujoco.mj_step(m, d)
        else:
            self._force[:] = tau
            mujoco.mj_step(m, d, steps)
        self.q, self.qd, self.qdd = self._qpos.copy(), self._qvel.copy(), self._qacc.copy()
        self.t = d.time
        self.applied = tau
        self._check_finite()
        if self.environment is not None:
            mujoco.mj_forward(m, d)  # the contact force at the state this step ends in
            self._read_contact()
        return tau

    def _read_contact(self) -> None:
        """The wrench on the contact frame from MuJoCo's contact forces (zero in free space)."""
        if self._sphere < 0:
            return
        MC.contact_wrench(self._mujoco, self.mj, self.data, self._sphere, self.wrench)
        self.in_contact = bool(self.wrench[3:].any())


_WARNED: set[str] = set()
