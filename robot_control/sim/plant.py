"""The simulated robot: forward dynamics integrated at a fixed physics step under a held torque.

Equation integrated (Huo 2.6's extended model with contact):
    (M(q) + J_m) q̈ = τ_sat − C(q,q̇)q̇ − g(q) − b(q̇) + d(t) + τ_stop(q,q̇) + Jᵀ(q) F_env
where J_m is the reflected actuator inertia, b Schilling's friction (6-3-3), d a bounded disturbance,
τ_stop stiff joint-limit stops and F_env the environment's wrench on the contact frame.
A rigid surface is a unilateral constraint instead (Kim §3): a plastic impact when the contact
point arrives, then constrained dynamics with Baumgarte stabilisation while the surface pushes
(λ ≥ 0), and free motion again when it would have to pull.
"""

from __future__ import annotations

import numpy as np

from robot_control import dynamics as dyn
from robot_control.model.robot_model import RobotModel
from robot_control.sim import plant_kernels as PK
from robot_control.sim.environment import CompliantSurface, RigidSurface
from robot_control.sim.plant_base import PlantBase
from robot_control.sim.plant_config import INTEGRATORS, PlantConfig

Array = np.ndarray


class Plant(PlantBase):
    """Integrates the plant model; ``step(tau, duration)`` holds τ (zero-order hold) over sub-steps."""

    def __init__(self, model: RobotModel, config: PlantConfig | dict | None = None,
                 physics_dt: float = 1e-4) -> None:
        super().__init__(model, config, physics_dt)
        if self.config.engine != "internal":
            raise ValueError(f"Plant is the internal engine, not '{self.config.engine}' "
                             "(sim.engine.make_plant chooses)")
        self._contact_body, self._contact_X = self.model.frame_placement(self.contact_frame)
        self._friction_on = bool(np.any(self.model.friction[:, :3]))
        self._rigid = None
        if isinstance(self.environment, RigidSurface):
            plane = self.environment.plane
            self._rigid = dyn.ConstraintSet(dyn.surface_contact(
                self.model, self.contact_frame, plane.normal, plane.offset))
            # critically damped drift correction, fast against the control period
            self._baumgarte = (1.0 / (20.0 * physics_dt) ** 0.5, 1.0 / (20.0 * physics_dt) ** 0.5)
        cfg = self.config
        self._armature = None if cfg.actuator_inertia is None else np.diag(cfg.actuator_inertia)
        self._J, self._S = self._packed_settings()
        self._hold = PK.HOLDS[int(self._S[PK.S_INTEGRATOR])]  # its integrator's compiled hold
        self._X = np.zeros((PK.XROWS, self.n))
        self._M = np.zeros((self.n, self.n))
        self._C = self._packed_surface()
        self.reset(np.zeros(self.n))

    def _packed_settings(self) -> tuple[Array, Array]:
        """Per-joint table J and scalar row S of plant_kernels (the compiled free-space plant)."""
        cfg, n = self.config, self.n
        J = np.zeros((n, PK.JCOLS))
        if cfg.actuator_inertia is not None:
            J[:, PK.J_ARMATURE] = cfg.actuator_inertia
        J[:, PK.J_EFFORT] = self._effort
        J[:, PK.J_LOWER], J[:, PK.J_UPPER] = self._lower, self._upper
        J[:, PK.J_VISCOUS : PK.J_STRIBECK + 1] = self.model.friction
        if cfg.disturbance_amplitude is not None:
            J[:, PK.J_AMPLITUDE] = cfg.disturbance_amplitude
        S = np.zeros(PK.SCOLS)
        S[PK.S_DT] = self.dt
        S[PK.S_INTEGRATOR] = INTEGRATORS.index(cfg.integrator)
        S[PK.S_FRICTION] = self._friction_on
        S[PK.S_LIMITS] = self._limits_on
        S[PK.S_STIFFNESS], S[PK.S_DAMPING] = cfg.limit_stiffness, cfg.limit_damping
        S[PK.S_DISTURBANCE] = cfg.disturbance_amplitude is not None
        S[PK.S_FREQUENCY] = cfg.disturbance_frequency
        S[PK.S_SATURATE] = cfg.saturate
        return J, S

    def _packed_surface(self) -> Array | None:
        """The compliant surface as plant_kernels' array C (None in free space or on a rigid one)."""
        env = self.environment
        if not isinstance(env, CompliantSurface):
            return None
        C = np.zeros(PK.contact_shape(self.n))
        row = C[0]
        row[PK.C_BODY] = self._contact_body
        row[PK.C_NORMAL : PK.C_NORMAL + 3], row[PK.C_OFFSET] = env.plane.normal, env.plane.offset
        row[PK.C_STIFFNESS], row[PK.C_DAMPING] = env.stiffness, env.damping
        row[PK.C_FRICTION], row[PK.C_SLIP] = env.friction, env.slip_velocity
        C[PK.C_FRAME : PK.C_FRAME + 4, :4] = self._contact_X
        return C

    @property
    def surface(self) -> Array | None:
        """The compliant surface for the compiled kernels (plant_kernels' C), None without one."""
        return self._C

    @property
    def mass_buffer(self) -> Array | None:
        """Scratch for M + J_m in the compiled plant; None without actuator inertia (no M needed)."""
        return self._M if self._armature is not None else None

    @property
    def compiled(self) -> bool:  # type: ignore[override]
        """Free space or a compliant surface: ``step`` runs the whole hold in one compiled call
        (plant_kernels.hold_*); a rigid surface's contact modes run in Python."""
        return self.environment is None or self._C is not None

    # ------------------------------------------------------------------ state
    def reset(self, q, qd=None, t: float = 0.0) -> None:
        """Place the plant at (q, q̇) at time t (PlantBase.reset) and give the kernels its phases."""
        super().reset(q, qd, t)
        self._J[:, PK.J_PHASE] = self._dist_phase

    # --------------------------------------------------------------- dynamics
    def _stop_torque(self, q: Array, qd: Array) -> Array:
        """Stiff spring–damper stops beyond the position limits (damping only while going further in)."""
        k, b = self.config.limit_stiffness, self.config.limit_damping
        over = np.maximum(q - self._upper, 0.0)
        under = np.maximum(self._lower - q, 0.0)
        tau = -k * over + k * under
        tau -= b * np.where(over > 0.0, np.maximum(qd, 0.0), 0.0)
        tau -= b * np.where(under > 0.0, np.minimum(qd, 0.0), 0.0)
        return tau

    def contact(self, q: Array, qd: Array) -> tuple[Array, Array]:
        """(joint torque Jᵀ F, world wrench (n, f) about the contact point) of a compliant surface."""
        if self._C is None:
            return np.zeros(self.n), np.zeros(6)
        tau = np.zeros(self.n)
        PK.contact_torque(self.data.D, self._C, self._joint_vector(q),
                          self._joint_vector(qd), tau)
        return tau, self._C[PK.C_WRENCH, :6].copy()

    def acceleration(self, t: float, q: Array, qd: Array, tau: Array) -> Array:
        """q̈ of the plant's full model for a held (already saturated) torque."""
        if self.compiled:
            out = np.empty(self.n)
            PK.acceleration(self.data.D, self._J, self._S, self._X, self.mass_buffer,
                            self._C, t, self._joint_vector(q), self._joint_vector(qd),
                            self._joint_vector(tau), out)
            if self._C is not None:
                self.wrench = self._C[PK.C_WRENCH, :6].copy()
            return out
        total = tau + self.disturbance(t) if self.config.disturbance_amplitude is not None else tau
        if self._friction_on:
            total = total - dyn.friction_torques(self.model, qd)
        if self._limits_on:
            total = total + self._stop_torque(q, qd)
        if self.in_contact:
            qdd, lam = dyn.constrained_forward_dynamics(self.model, q, qd, total, self._rigid,
                                                        baumgarte=self._baumgarte)
            self._lambda = float(lam[0])
            self.wrench = np.concatenate([np.zeros(3), self._lambda
                                          * self.environment.plane.normal])
            return qdd
        if self._armature is None:
            return dyn.forward_dynamics(self.model, q, qd, total)
        M = dyn.mass_matrix(self.model, q) + self._armature
        return np.linalg.solve(M, total - dyn.bias_torques(self.model, q, qd))

    # ------------------------------------------------------------ integration
    def step(self, tau, duration: float) -> Array:
        """Hold τ for ``duration`` (a whole number of physics steps, at least one); returns τ applied."""
        tau = self._joint_vector(self.saturate(tau))
        steps = max(1, int(round(duration / self.dt)))
        if self.compiled:
            q, qd, qdd = self.q.copy(), self.qd.copy(), np.empty(self.n)
            self.t = self._hold(self.data.D, self._J, self._S, self._X,
                                self.mass_buffer, self._C, self.t, steps, q, qd, qdd, tau)
            self.q, self.qd, self.qdd = q, qd, qdd
            if self._C is not None:
                self.wrench = self._C[PK.C_WRENCH, :6].copy()
        else:
            integrate = _INTEGRATORS[self.config.integrator]
            for _ in range(steps):
                if self._rigid is not None:
                    self._update_contact_mode(tau)
                integrate(self, tau)
                self.t += self.dt
        self.applied = tau
        self._check_finite()
        return tau

    def _update_contact_mode(self, tau: Array) -> None:
        """Rigid surface: close the contact with a plastic impact, open it when λ would pull."""
        A, _, phi = dyn.constraint_terms(self.model, self.q, self.qd, self._rigid)
        if not self.in_contact:
            if phi[0] <= 0.0 and float(A[0] @ self.qd) <= 0.0:
                self.qd = dyn.impact_velocity(self.model, self.q, self.qd, self._rigid)[0]
                self.in_contact = True
            else:
                self.wrench = np.zeros(6)
                return
        self.acceleration(self.t, self.q, self.qd, tau)
        if self._lambda < 0.0:  # a surface cannot pull: lift off
            self.in_contact = False
            self.wrench = np.zeros(6)


def _rk4(plant: Plant, tau: Array) -> None:
    """Classical fourth-order Runge–Kutta on x = (q, q̇) (the integrator Huo recommends)."""
    h, t, q, qd = plant.dt, plant.t, plant.q, plant.qd
    a1 = plant.acceleration(t, q, qd, tau)
    q2, v2 = q + 0.5 * h * qd, qd + 0.5 * h * a1
    a2 = plant.acceleration(t + 0.5 * h, q2, v2, tau)
    q3, v3 = q + 0.5 * h * v2, qd + 0.5 * h * a2
    a3 = plant.acceleration(t + 0.5 * h, q3, v3, tau)
    q4, v4 = q + h * v3, qd + h * a3
    a4 = plant.acceleration(t + h, q4, v4, tau)
    plant.q = q + h / 6.0 * (qd + 2.0 * v2 + 2.0 * v3 + v4)
    plant.qd = qd + h / 6.0 * (a1 + 2.0 * a2 + 2.0 * a3 + a4)
    plant.qdd = a1
    if plant.environment is not None:
        plant.acceleration(t + h, plant.q, plant.qd, tau)  # report the wrench at the new state


def _semi_implicit_euler(plant: Plant, tau: Array) -> None:
    """Symplectic Euler: q̇⁺ = q̇ + q̈h, q⁺ = q + q̇⁺h."""
    plant.qdd = plant.acceleration(plant.t, plant.q, plant.qd, tau)
    plant.qd = plant.qd + plant.dt * plant.qdd
    plant.q = plant.q + plant.dt * plant.qd


def _huo_2_107(plant: Plant, tau: Array) -> None:
    """Huo's step (2-107): q̇⁺ = q̇ + q̈Δt, q⁺ = q + q̇Δt + ½q̈Δt²."""
    h = plant.dt
    plant.qdd = plant.acceleration(plant.t, plant.q, plant.qd, tau)
    plant.q = plant.q + h * plant.qd + 0.5 * h * h * plant.qdd
    plant.qd = plant.qd + h * plant.qdd


_INTEGRATORS = {"rk4": _rk4, "semi_implicit_euler": _semi_implicit_euler, "huo_2_107": _huo_2_107}
