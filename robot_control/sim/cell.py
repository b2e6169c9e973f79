"""The simulated cell: m arms and the object they hold integrated as one closed chain (Kim §3).

State: the arms' joints and the object's coordinates X (robot_control.model.cell
``closed_chain_model``). The grasps are six-row loop closures, always active; the contact point E
on a rigid smooth plane is a unilateral one-row constraint handled as the single-arm plant does:
a plastic impact when E arrives, constrained dynamics while the plane pushes (λ ≥ 0), free motion
when it would have to pull. Drift is held by Baumgarte stabilisation; the equations are

    M q̈ + b = [τ; 0] + Aᵀλ,   A q̈ + Ȧq̇ + 2αAq̇ + β²φ = 0,

with A the grasp rows (J_ee − J_grasp per arm) and, in contact, the surface row nᵀJ_E. Only the
arms' joints are measured (with the configured sensor noise) and driven. The arithmetic runs in
compiled kernels (sim.cell_kernels), the same the offline loop runs many periods of at once.
"""

from __future__ import annotations

import numpy as np

from robot_control import dynamics as dyn
from robot_control.control.compiled import vector
from robot_control.dynamics.constrained_mass import row_work_size, work_size
from robot_control.dynamics.contact import GWORK, Constraint, loop_closure
from robot_control.dynamics.packing import Data
from robot_control.model.cell import (
    OBJECT_JOINTS,
    Cell,
    closed_chain_model,
    object_coordinates,
)
from robot_control.model.robot_model import RobotModel
from robot_control.sim import cell_kernels as CK
from robot_control.sim import plant_kernels as PK
from robot_control.sim.environment import RigidSurface, environment_from_config

Array = np.ndarray
_KEYS = {"environment", "noise", "saturate"}


def grasp_constraints(cell: Cell, model: RobotModel) -> list[Constraint]:
    """One six-row loop closure per arm: its grasping frame welded to its place on the object.

    Row order (n, f) per arm: the constraint force λ is the wrench the object exerts on the arm
    at the grasp point, world axes (Kim: M q̈ + b = τ + Aᵀλ with A = J_ee − J_grasp).
    """
    return [loop_closure(model, f"{arm.name}_ee", f"grasp_{arm.name}", "6d", f"grasp_{arm.name}")
            for arm in cell.arms]


class CellPlantBase:
    """What every cell engine shares: configuration, the closed-chain model (its kinematics),
    the initial grasp, the arms' sensors and saturation; an engine adds the dynamics."""

    #: the ``engine`` a configuration must name (or leave out) for this class
    ENGINE = "internal"

    def __init__(self, cell: Cell, config: dict | None = None, physics_dt: float = 1e-3) -> None:
        cfg = dict(config or {})
        engine = cfg.pop("engine", self.ENGINE)
        if engine != self.ENGINE:  # sim.engine.make_cell_plant picks the class of the engine
            raise ValueError(f"{type(self).__name__} is engine '{self.ENGINE}', the "
                             f"configuration asks for '{engine}'")
        unknown = set(cfg) - _KEYS
        if unknown:
            raise ValueError(f"plant: unknown keys {sorted(unknown)} for a cell "
                             f"(known: {sorted(_KEYS)})")
        if not physics_dt > 0.0:
            raise ValueError(f"physics_dt must be > 0, got {physics_dt}")
        self.cell = cell
        self.dt = float(physics_dt)
        self.model = closed_chain_model(cell)
        self.data = Data(self.model)  # the plant's own data array (its kinematics and its hold)
        self.n_arms = cell.nq
        self.n = self.model.nq
        env = environment_from_config(cfg.get("environment"))
        if not isinstance(env, RigidSurface):
            raise ValueError("plant.environment: a cell needs a rigid plane (type: rigid) under E")
        if env.friction > 0.0:  # neither engine's cell models it: refused, not ignored
            raise ValueError("plant.environment.friction: a cell's table is smooth (friction 0)")
        self.environment = env
        self.plane = env.plane
        self._free = dyn.ConstraintSet(grasp_constraints(cell, self.model))
        noise = dict(cfg.get("noise") or {})
        bad = set(noise) - {"position", "velocity", "seed"}
        if bad:
            raise ValueError(f"plant.noise: unknown keys {sorted(bad)}")
        self.noise_position = float(noise.get("position", 0.0))
        self.noise_velocity = float(noise.get("velocity", 0.0))
        if self.noise_position < 0.0 or self.noise_velocity < 0.0:
            raise ValueError("plant.noise: standard deviations must be ≥ 0")
        self.noise_seed = int(noise.get("seed", 0))
        self.saturate_on = bool(cfg.get("saturate", True))
        self._effort = self.model.effort_limit[: self.n_arms]
        self._lower = self.model.lower[: self.n_arms]
        self._upper = self.model.upper[: self.n_arms]
        self.in_contact = False

    # ------------------------------------------------------------------ state
    def assemble(self, q_arms_guess, object_pose) -> Array:
        """Arm joints that grasp the object at ``object_pose`` (Gauss–Newton from the guess)."""
        guess = np.asarray(q_arms_guess, dtype=float).reshape(self.n_arms)
        q = np.concatenate([guess, object_coordinates(object_pose)])
        fixed = range(self.n_arms, self.n)
        return dyn.project_to_constraints(self.model, q, self._free, fixed=fixed)

    def reset(self, q_arms_guess, object_pose, t: float = 0.0) -> None:
        """Grasp the object at rest at ``object_pose`` (placement of O); E on or above the plane."""
        self.q = self.assemble(q_arms_guess, object_pose)
        self.qd = np.zeros(self.n)
        self.t = float(t)
        depth = self.plane.penetration(self.frame_pose("contact")[:3, 3])
        if depth > 1e-6:
            raise ValueError(f"the object's contact point starts {depth:.3g} m inside the plane")
        self.in_contact = depth > -1e-9
        self.applied = np.zeros(self.n_arms)
        self.saturated = np.zeros(self.n_arms, dtype=bool)
        self.qdd = np.zeros(self.n)
        self._rng = np.random.default_rng(self.noise_seed)

    def measure(self) -> tuple[Array, Array]:
        """(q, q̇) of the arms' joints as their sensors report them (seeded Gaussian noise)."""
        q, qd = self.q[: self.n_arms].copy(), self.qd[: self.n_arms].copy()
        if self.noise_position > 0.0:
            q += self._rng.normal(0.0, self.noise_position, self.n_arms)
        if self.noise_velocity > 0.0:
            qd += self._rng.normal(0.0, self.noise_velocity, self.n_arms)
        return q, qd

    def at_limit(self) -> Array:
        """Arm joints currently beyond a position limit (the cell has no limit stops: reported)."""
        q = self.q[: self.n_arms]
        return (q < self._lower) | (q > self._upper)

    def saturate(self, tau) -> Array:
        """Arm torques clipped to the effort limits (when saturation is on)."""
        tau = np.asarray(tau, dtype=float).reshape(self.n_arms)
        if not self.saturate_on:
            return tau
        self.saturated = np.abs(tau) > self._effort
        return np.clip(tau, -self._effort, self._effort)

    # ------------------------------------------------------------- kinematics
    def frame_array(self, frame: str) -> Array:
        """The frame array (sim.cell_kernels F_*) of a frame of the closed-chain model (made once
        per frame)."""
        frames = self.__dict__.setdefault("_frames", {})
        if frame not in frames:
            frames[frame] = CK.frame_array(self.model, frame)
        return frames[frame]

    def _frame(self, frame: str, qdd: Array) -> Array:
        """The frame's array after ``cell_kernels.frame_kinematics`` at (q, q̇, q̈)."""
        F = self.frame_array(frame)
        G = self.__dict__.get("_frame_rows")
        if G is None:
            G = self._frame_rows = np.zeros((self.n, GWORK))
        CK.frame_kinematics(self.data.current(self.model).D, G, F, vector(self.q), vector(self.qd),
                            qdd)
        return F

    def frame_pose(self, frame: str) -> Array:
        """World placement of a frame of the closed-chain model (``object``, ``contact``, …)."""
        pose = self._frame(frame, self.data.zeros)  # (the pose needs no q̈)
        return pose[CK.F_T : CK.F_T + 16].reshape(4, 4).copy()

    def object_acceleration(self) -> Array:
        """Classical acceleration of the object's centre of mass at the last evaluated q̈."""
        return self.object_accelerations()[1]

    def object_accelerations(self) -> tuple[Array, Array]:
        """(angular acceleration of the object, classical acceleration of its centre of mass),
        world axes, at the last evaluated q̈: the rows of J q̈ + J̇q̇ of frame object_com."""
        acc = self._frame("object_com", vector(self.qdd))[CK.F_ACC : CK.F_ACC + 6].copy()
        return acc[:3], acc[3:]


class CellPlant(CellPlantBase):
    """Integrates the cell (RK4 at ``physics_dt``) under held arm torques; reports λ."""

    def __init__(self, cell: Cell, config: dict | None = None, physics_dt: float = 1e-3) -> None:
        super().__init__(cell, config, physics_dt)
        grasps = list(self._free.constraints)
        self._surface = dyn.surface_contact(self.model, "contact", self.plane.normal,
                                            self.plane.offset)
        self._touching = dyn.ConstraintSet([*grasps, self._surface])
        self._surface_only = dyn.ConstraintSet([self._surface])
        gain = 1.0 / (20.0 * self.dt) ** 0.5  # critically damped, fast against the period
        self._baumgarte = (gain, gain)
        self._c = self._pack()
        self.lam = self._c[CK.C_LAM]

    def _pack(self) -> tuple:
        """The plant tuple of sim.cell_kernels (items C_*), built once."""
        model, n, na = self.model, self.n, self.n_arms
        d = self.data
        S = np.zeros(CK.SSLOTS)
        S[CK.S_DT], (S[CK.S_ALPHA], S[CK.S_BETA]) = self.dt, self._baumgarte
        joints = np.zeros((na, PK.JCOLS))
        joints[:, PK.J_EFFORT] = self._effort
        settings = np.zeros(PK.SCOLS)
        settings[PK.S_SATURATE] = self.saturate_on
        sets = (self._free, self._touching, self._surface_only)
        for cs in sets:
            cs.check(model)  # bodies in [−1, n): the kernels index them without bounds checks
        free, touching = self._free.m, self._touching.m
        return (d.D, model.gravity, S, joints, settings, *(cs.packed for cs in sets),
                np.zeros(row_work_size(n, free)), np.zeros(row_work_size(n, touching)),
                np.zeros(free), np.zeros(touching), np.zeros(work_size(n)),
                np.zeros((n, GWORK)), np.zeros((CK.XROWS, n)), np.zeros(touching),
                d.fext0, np.zeros((1, n)), np.zeros(1), np.zeros(1),
                np.zeros(n), self.frame_array("contact"), self.frame_array("object_com"))

    def reset(self, q_arms_guess, object_pose, t: float = 0.0) -> None:
        """Grasp the object at rest at ``object_pose``; no constraint force yet."""
        super().reset(q_arms_guess, object_pose, t)
        self.lam[:] = 0.0

    # --------------------------------------------------------------- dynamics
    def acceleration(self, q: Array, qd: Array, tau_arms: Array) -> Array:
        """q̈ of the closed chain for held arm torques; λ (grasps, then contact) into ``self.lam``."""
        self._c[CK.C_S][CK.S_CONTACT] = self.in_contact
        qdd = np.empty(self.n)
        CK.acceleration(self._c, vector(q), vector(qd), vector(tau_arms), qdd)
        return qdd

    def contact_force(self) -> float:
        """Normal force the plane exerts on E (λ of the surface row; 0 when not touching)."""
        return float(self.lam[-1]) if self.in_contact else 0.0

    def grasp_wrenches(self) -> Array:
        """(m, 6): wrench (n, f) each arm exerts on the object at its grasp point, world axes."""
        return -self.lam[: 6 * self.cell.m].reshape(self.cell.m, 6)

    def evaluate(self, tau_arms) -> None:
        """q̈ and λ at the current state under ``tau_arms`` (what a torque does right away)."""
        self.qdd = self.acceleration(self.q, self.qd, self.saturate(tau_arms))

    # ------------------------------------------------------------ integration
    def step(self, tau_arms, duration: float) -> Array:
        """Hold the arm torques for ``duration`` (whole physics steps); returns the torque applied."""
        tau = vector(self.saturate(tau_arms))
        steps = max(1, int(round(duration / self.dt)))
        S = self._c[CK.C_S]
        S[CK.S_CONTACT], S[CK.S_T] = self.in_contact, self.t
        self.q, self.qd = self.q.copy(), self.qd.copy()  # new arrays, as before: views stay valid
        CK.hold(self._c, self.q, self.qd, tau, steps, False)
        self.t, self.in_contact = float(S[CK.S_T]), bool(S[CK.S_CONTACT] > 0.0)
        self.applied = tau
        if not (np.all(np.isfinite(self.q)) and np.all(np.isfinite(self.qd))):
            raise FloatingPointError(f"cell state diverged at t = {self.t:.6f} s")
        return tau


__all__ = ["OBJECT_JOINTS", "CellPlant", "CellPlantBase"]
