"""What every plant engine shares: its configuration, state, sensors, saturation and disturbance.

An engine (sim/plant.py: the package's own dynamics; sim/mujoco_engine.py: MuJoCo) integrates
(M(q) + J_m) q̈ = τ_sat − C q̇ − g − b(q̇) + d(t) + τ_stop + Jᵀ F_env (Huo 2.6) its own way; what
goes in (the saturated torque, the disturbance) and what comes out (the noisy sensors, the
limits reached) is the same code for both, so the two engines differ only in their physics.
"""

from __future__ import annotations

import math

import numpy as np

from robot_control.dynamics.packing import Data
from robot_control.model.robot_model import RobotModel
from robot_control.sim.environment import environment_from_config
from robot_control.sim.plant_config import PlantConfig, parse_plant_config, plant_model

Array = np.ndarray


class PlantBase:
    """Configuration, state (q, q̇, q̈, t), sensors, saturation and disturbance of a plant."""

    #: free space runs whole holds in one compiled call of the package (sim.run_kernels)
    compiled = False

    def __init__(self, model: RobotModel, config: PlantConfig | dict | None,
                 physics_dt: float) -> None:
        if not physics_dt > 0.0:
            raise ValueError(f"physics_dt must be > 0, got {physics_dt}")
        self.config = config if isinstance(config, PlantConfig) else parse_plant_config(config, model)
        self.nominal = model
        self.model = plant_model(model, self.config)
        self.dt = float(physics_dt)
        self.n = model.nq
        self._shape = (self.n,)
        self.environment = environment_from_config(self.config.environment)
        self.contact_frame = self.config.contact_frame or model.end_effector
        self.in_contact = False
        self._effort = self.model.effort_limit
        self._lower, self._upper = self.model.lower, self.model.upper
        self._limits_on = self.config.limits_enabled and bool(
            np.any(np.isfinite(self._lower)) or np.any(np.isfinite(self._upper)))
        self._data = Data(self.model)  # the plant's own: no law's arrays are its workspace

    @property
    def data(self) -> Data:
        """The plant's own data array (dynamics.packing.Data), current with model.gravity (an
        engine's own state, such as MuJoCo's MjData, goes by another name)."""
        return self._data.current(self.model)

    def reset(self, q, qd=None, t: float = 0.0) -> None:
        """Place the plant at (q, q̇) at time t, at rest unless q̇ is given; reseed noise/disturbance."""
        self.q = np.array(q, dtype=float).reshape(self.n)
        self.qd = np.zeros(self.n) if qd is None else np.array(qd, dtype=float).reshape(self.n)
        if not (np.all(np.isfinite(self.q)) and np.all(np.isfinite(self.qd))):
            raise ValueError("plant state must be finite")
        self.t = float(t)
        self.qdd = np.zeros(self.n)
        self.applied = np.zeros(self.n)
        self.saturated = np.zeros(self.n, dtype=bool)
        self.wrench = np.zeros(6)
        self._noise = np.random.default_rng(self.config.noise_seed)
        phase_rng = np.random.default_rng(self.config.disturbance_seed)
        self._dist_phase = phase_rng.uniform(0.0, 2.0 * np.pi, self.n)

    def measure(self) -> tuple[Array, Array]:
        """(q, q̇) as the joint sensors report them: truth plus seeded Gaussian noise."""
        cfg = self.config
        q, qd = self.q.copy(), self.qd.copy()
        if cfg.noise_position > 0.0:
            q += self._noise.normal(0.0, cfg.noise_position, self.n)
        if cfg.noise_velocity > 0.0:
            qd += self._noise.normal(0.0, cfg.noise_velocity, self.n)
        return q, qd

    def at_limit(self) -> Array:
        """Joints currently beyond a position limit."""
        return (self.q < self._lower) | (self.q > self._upper)

    def saturate(self, tau: Array) -> Array:
        """τ clipped to the effort limits when saturation is on; remembers which joints saturated."""
        tau = np.asarray(tau, dtype=float)
        if not self.config.saturate:
            self.saturated[:] = False
            return tau
        effort = self._effort
        self.saturated = np.abs(tau) > effort
        return np.minimum(np.maximum(tau, -effort), effort)  # np.clip's result, 3× faster

    def disturbance(self, t: float) -> Array:
        """Bounded disturbance torque d(t), |d_i| ≤ amplitude_i (Huo 2.6)."""
        amp = self.config.disturbance_amplitude
        if amp is None:
            return np.zeros(self.n)
        return amp * np.sin(2.0 * np.pi * self.config.disturbance_frequency * t + self._dist_phase)

    def _joint_vector(self, x) -> Array:
        """x as a contiguous float vector of length n (what the compiled plant indexes)."""
        a = np.ascontiguousarray(x, dtype=np.float64)
        if a.shape != self._shape:
            raise ValueError(f"joint vectors of the plant have length {self.n}, got shape {a.shape}")
        return a

    def _check_finite(self) -> None:
        """The safe stop of every engine: a non-finite state raises FloatingPointError."""
        if not finite(self.q) or not finite(self.qd):
            raise FloatingPointError(f"plant state diverged at t = {self.t:.6f} s")


def finite(x: Array) -> bool:
    """No NaN or ±∞ in x: they make the sum non-finite (as does an overflow past 1e308, which is
    divergence too); one reduction instead of np.all(np.isfinite(x))'s two (5 µs → 1 µs)."""
    return math.isfinite(x.sum())
