"""The plant's integration step for a description: the default 0.5 ms, shortened where the
description's joint damping makes the explicit integrator stiff.

An explicit step h is stable for the viscous mode λ = λ_max(M⁻¹B) (B the joints' viscous
friction) only while hλ stays below a constant (RK4: 2.78 on the real axis), and accurate well
below it: the xArm7's wrist (M₇₇ = 1.4·10⁻⁴ kg·m², damping 2 N·m·s/rad, λ ≈ 1.5·10⁴ s⁻¹)
diverges within 4 ms at h = 0.5 ms, tracks to 0.03 rad at hλ = 1.5 and to 7·10⁻⁴ rad at
hλ = 0.73 under computed torque. So the step is sub-divided until hλ ≤ VISCOUS_STEP — the
sub-stepped explicit integrator rather than an implicit one, which would need the plant's kernel
to factor M + hB at every step (the damped arms cost ~60 sub-steps of a 2 ms period).
"""

from __future__ import annotations

import math

import numpy as np

#: the plant's step unless the description needs a shorter one, s
DEFAULT_PHYSICS_DT = 5e-4
#: hλ_max the step keeps for the fastest viscous mode
VISCOUS_STEP = 0.5


def viscous_rate(model, q) -> float:
    """λ_max(M⁻¹B) at pose q, 1/s: the fastest decay the joints' viscous friction imposes."""
    from robot_control import dynamics as dyn

    damping = np.asarray(model.friction, dtype=float)[:, 0]
    if not np.any(damping > 0.0):
        return 0.0
    import scipy.linalg  # here: its import costs every plant a tenth of a second; seldom needed

    M = dyn.mass_matrix(model, np.asarray(q, dtype=float))
    return float(scipy.linalg.eigh(np.diag(damping), M, eigvals_only=True).max())


def default_physics_dt(model, q, rate: float) -> float:
    """min(DEFAULT_PHYSICS_DT, 1/rate), divided into whole steps of the control period until
    h·λ_max(M⁻¹B) ≤ VISCOUS_STEP at pose q."""
    period = 1.0 / float(rate)
    h = min(DEFAULT_PHYSICS_DT, period)
    lam = viscous_rate(model, q)
    if lam * h <= VISCOUS_STEP:
        return h
    return period / math.ceil(period * lam / VISCOUS_STEP)
