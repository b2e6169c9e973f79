"""The plant on MuJoCo: the same interface as sim/plant.py, physics by MuJoCo (``engine: mujoco``).

The model MuJoCo integrates is the package's plant model (nominal parameters with the scenario's
mismatch and payload, friction, actuator inertia) converted by model/mjcf.py, so a controller's
own model and the physics are two independent codes. The torque τ (saturated as the internal
plant does, plus the disturbance d(t)) goes into ``qfrc_applied`` and is held over the control
period's physics steps. Without a disturbance the whole hold is one compiled call
(plant_kernels.step_mujoco: saturation, the ``mj_step`` calls, the state copied out; integrator
code MUJOCO, so the offline loop's compiled route runs MuJoCo too); with d(t), which changes every
step, Python steps one ``mj_step`` at a time.
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
from numba import typeof

from robot_control.model.mjcf import compile_mjcf, require_mujoco, to_mjcf
from robot_control.model.robot_model import RobotModel
from robot_control.sim import mujoco_contact as MC
from robot_control.sim import mujoco_kernels as MK
from robot_control.sim import plant_kernels as PK
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
        self.mj_data = mujoco.MjData(self.mj)
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
            MC.map_joint_stops(mujoco, m, self.mj_data, self._lower, self._upper,
                               cfg.limit_stiffness, cfg.limit_damping)
        MC.map_environment(mujoco, m, self.mj_data, self.environment, self.dt)
        self._sphere = m.geom(MC.SPHERE).id if self.environment is not None else -1
        self._disturbed = cfg.disturbance_amplitude is not None
        d = self.mj_data  # views into MjData, fetched once (each attribute access builds one)
        self._qpos, self._qvel, self._qacc, self._force = d.qpos, d.qvel, d.qacc, d.qfrc_applied
        self._probe = mujoco.MjData(self.mj)  # acceleration() evaluates here, never on the state
        MK.load_library(mujoco)
        self._J, self._S = self._packed_settings()
        self._X = np.zeros((PK.XROWS, self.n))  # the internal kernels' scratch: unused by MuJoCo
        self._steps: dict[float, int] = {}
        self._block = (4, self.n)
        # the compiled hold, loaded by the first step (the offline loop's compiled route has its own)
        self._step_kernel = self._load_step_kernel
        self.reset(np.zeros(self.n))

    def _packed_settings(self) -> tuple[Array, Array]:
        """plant_kernels' J and S for the compiled hold: effort limits, saturation, the step,
        integrator code MUJOCO and the addresses of MuJoCo's model, data and state arrays."""
        J = np.zeros((self.n, PK.JCOLS))
        J[:, PK.J_EFFORT] = self._effort
        S = np.zeros(PK.SCOLS)
        S[PK.S_DT], S[PK.S_INTEGRATOR] = self.dt, PK.MUJOCO
        S[PK.S_SATURATE] = self.config.saturate
        addresses = (self.mj._address, self.mj_data._address, self._qpos.ctypes.data,
                     self._qvel.ctypes.data, self._qacc.ctypes.data, self._force.ctypes.data)
        for column, address in zip(range(PK.S_MJ_MODEL, PK.S_MJ_QFRC + 1), addresses):
            if address >= 2**53:
                raise RuntimeError(f"address {address:#x} does not fit a float64 exactly")
            S[column] = address
        return J, S

    @property
    def compiled(self) -> bool:  # type: ignore[override]
        """Free space without disturbance: the offline loop's compiled route holds with MuJoCo."""
        return self.environment is None and not self._disturbed

    @property
    def surface(self) -> None:
        """The internal kernels' compliant surface: none (MuJoCo's contact runs per period)."""
        return None

    @property
    def mass_buffer(self) -> None:
        """The internal kernels' mass-matrix scratch: MuJoCo needs none."""
        return None

    def reset(self, q, qd=None, t: float = 0.0) -> None:
        """Place the plant at (q, q̇) at time t (PlantBase.reset) and MuJoCo's data with it."""
        super().reset(q, qd, t)
        d = self.mj_data
        self._mujoco.mj_resetData(self.mj, d)  # also clears the solver's warm start
        d.qpos[:], d.qvel[:], d.time = self.q, self.qd, self.t
        self._mujoco.mj_forward(self.mj, d)
        self._read_contact()

    def step(self, tau, duration: float) -> Array:
        """Hold τ for ``duration`` (a whole number of physics steps, at least one); returns τ applied."""
        steps = self._steps.get(duration)
        if steps is None:
            steps = self._steps[duration] = max(1, int(round(duration / self.dt)))
        if self._disturbed:
            return self._step_disturbed(self._joint_vector(self.saturate(tau)), steps)
        tau = np.ascontiguousarray(tau, dtype=np.float64)  # _joint_vector, inlined (~0.1 µs)
        if tau.shape != self._shape:
            tau = self._joint_vector(tau)  # raises with the shape expected
        out = np.empty(self._block)  # q, q̇, q̈, τ applied: fresh arrays, as the internal plant's
        self.saturated = np.empty(self._shape, np.bool_)
        t = self._step_kernel(self._J, self._S, self.t, steps, tau, out, self.saturated)
        self.q, self.qd, self.qdd, self.applied = out[0], out[1], out[2], out[3]
        if t != t:  # τ or the state not finite: the internal plant's safe stop
            self.t += steps * self.dt
            self.q = np.full(self.n, np.nan)
            self._check_finite()
        self.t = t
        if self.environment is not None:
            self._mujoco.mj_forward(self.mj, self.mj_data)  # the contact force at the new state
            self._read_contact()
        return self.applied

    def _load_step_kernel(self, *args) -> float:
        """Load plant_kernels.step_mujoco for these argument types, then hold with it."""
        self._step_kernel = entry_point(PK.step_mujoco, *args)
        return self._step_kernel(*args)

    def _step_disturbed(self, tau: Array, steps: int) -> Array:
        """The hold with d(t): qfrc_applied = τ + d(t) renewed before each physics step."""
        if not finite(tau):
            self.q = np.full(self.n, np.nan)
            self._check_finite()
        mujoco, m, d = self._mujoco, self.mj, self.mj_data
        for _ in range(steps):
            self._force[:] = tau + self.disturbance(d.time)
            mujoco.mj_step(m, d)
        self.q, self.qd, self.qdd = self._qpos.copy(), self._qvel.copy(), self._qacc.copy()
        self.t = d.time
        self.applied = tau
        self._check_finite()
        if self.environment is not None:
            mujoco.mj_forward(m, d)
            self._read_contact()
        return tau

    def acceleration(self, t: float, q: Array, qd: Array, tau: Array) -> Array:
        """q̈ MuJoCo gives (q, q̇) under a held (already saturated) τ, as sim/plant.py's (``mj_forward``
        on a scratch MjData: the plant's own state and warm start are untouched)."""
        p = self._probe
        p.qpos[:], p.qvel[:], p.time = q, qd, t
        p.qfrc_applied[:] = tau + self.disturbance(t) if self._disturbed else tau
        self._mujoco.mj_forward(self.mj, p)
        return p.qacc.copy()

    def _read_contact(self) -> None:
        """The wrench on the contact frame from MuJoCo's contact forces (zero in free space)."""
        if self._sphere < 0:
            return
        MC.contact_wrench(self._mujoco, self.mj, self.mj_data, self._sphere, self.wrench)
        self.in_contact = bool(self.wrench[3:].any())


def entry_point(kernel, *args):
    """The compiled (or cached) ``kernel`` for these arguments' types, called without numba's
    dispatcher (which types every argument on every call: ~0.3 µs of a ~2 µs step)."""
    sig = tuple(typeof(a) for a in args)
    kernel.compile(sig)
    return kernel.overloads[sig].entry_point


_WARNED: set[str] = set()
