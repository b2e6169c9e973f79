"""Environments the end effector can touch: a compliant plane and a rigid one.

A plane is {x : n·x = offset} in the base frame; the robot's side is n·x ≥ offset.
The compliant plane is a spring–damper with Coulomb friction (a Kelvin–Voigt contact); the
rigid plane is a unilateral constraint handled by the plant with Kim's constrained dynamics.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

Array = np.ndarray


@dataclass(frozen=True)
class Plane:
    """A plane n·x = offset with unit normal n pointing to the free side."""

    normal: Array
    offset: float

    @classmethod
    def from_config(cls, cfg: dict, where: str) -> Plane:
        n = np.asarray(cfg.get("normal", (0.0, 0.0, 1.0)), dtype=float)
        if n.shape != (3,) or not np.all(np.isfinite(n)) or np.linalg.norm(n) == 0.0:
            raise ValueError(f"{where}.normal must be a non-zero 3-vector, got {cfg.get('normal')}")
        offset = float(cfg.get("offset", 0.0))
        return cls(n / np.linalg.norm(n), offset)

    def penetration(self, p: Array) -> float:
        """Depth of point p below the plane (positive when in contact)."""
        return self.offset - float(self.normal @ p)


@dataclass(frozen=True)
class CompliantSurface:
    """Spring–damper plane with Coulomb friction: f_n = max(0, kδ − b δ̇_n), |f_t| ≤ μ f_n."""

    plane: Plane
    stiffness: float
    damping: float
    friction: float = 0.0
    slip_velocity: float = 1e-3  # speed over which Coulomb friction is smoothed (tanh)

    def force(self, p: Array, v: Array) -> Array:
        """World force the surface exerts on the contact point at p moving with velocity v."""
        depth = self.plane.penetration(p)
        if depth <= 0.0:
            return np.zeros(3)
        n = self.plane.normal
        vn = float(n @ v)
        fn = max(0.0, self.stiffness * depth - self.damping * vn)  # a surface can only push
        f = fn * n
        if self.friction > 0.0 and fn > 0.0:
            vt = v - vn * n
            speed = float(np.linalg.norm(vt))
            if speed > 0.0:
                f -= self.friction * fn * np.tanh(speed / self.slip_velocity) * vt / speed
        return f


@dataclass(frozen=True)
class RigidSurface:
    """Rigid plane: penetration is prevented by a unilateral constraint (plastic impact)."""

    plane: Plane
    friction: float = 0.0


KINDS = ("compliant", "rigid")


def environment_from_config(cfg: dict | None, where: str = "plant.environment"):
    """Build the environment from a scenario's ``plant.environment`` mapping (None: free space)."""
    if not cfg:
        return None
    cfg = dict(cfg)
    kind = cfg.pop("type", "compliant")
    known = {"normal", "offset", "stiffness", "damping", "friction", "frame", "slip_velocity"}
    unknown = set(cfg) - known
    if unknown:
        raise ValueError(f"{where}: unknown keys {sorted(unknown)} (known: {sorted(known)})")
    plane = Plane.from_config(cfg, where)
    mu = float(cfg.get("friction", 0.0))
    if mu < 0.0:
        raise ValueError(f"{where}.friction must be ≥ 0, got {mu}")
    if kind == "compliant":
        k, b = float(cfg.get("stiffness", 1e4)), float(cfg.get("damping", 50.0))
        if k <= 0.0 or b < 0.0:
            raise ValueError(f"{where}: stiffness must be > 0 and damping ≥ 0, got {k}, {b}")
        return CompliantSurface(plane, k, b, mu, float(cfg.get("slip_velocity", 1e-3)))
    if kind == "rigid":
        return RigidSurface(plane, mu)
    raise ValueError(f"{where}.type must be one of {KINDS}, got '{kind}'")
