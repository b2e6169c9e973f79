"""The law families the robot × law matrix judges a law in, each with its tracking bound.

A law declares its family (``Controller.FAMILY``, or per variant ``Controller.VARIANTS``); the
matrix (sim/matrix.py, docs/law_matrix.md) and a finished run's verdict (bringup/verdict.py)
hold its max tracking error |e| over the robot's demo motion to the family's bound.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Family:
    """A family of laws: its name, the max |e| (rad or m) it must keep, and why that much."""

    name: str
    bound: float
    why: str


PD = Family("pd", 0.4, "no gravity compensation: e = K_p⁻¹G(q); Huo Ex 3-1's DDArm gains sag "
            "0.38 rad")
PD_GRAVITY = Family("pd_gravity", 0.1, "M q̈_d + C q̇ is left to the PD: e ≈ q̈_d/ω²")
MODEL = Family("model", 0.01, "the nominal model: 1e-3 or better")
SLIDING = Family("sliding", 0.05, "|s| stays in the boundary layer, e ≤ ε/Λ (the DDArm's Ex 3-5 "
                 "estimate: 0.03)")
MODEL_FREE = Family("model_free", 0.15, "no model at all: a wider layer")
ADAPTIVE = Family("adaptive", 0.4, "the DDArm's deliberately wrong initial estimate of Ex 3-4 "
                  "(0.36 while it converges)")
