"""Joint friction torques of Schilling (6-3-3): viscous + Coulomb + static with a Stribeck decay."""

from __future__ import annotations

import numpy as np

from robot_control.dynamics.packing import vector

Array = np.ndarray


def friction_torques(model, qd) -> Array:
    """b_k = bᵛ q̇_k + sgn(q̇_k)[bᵈ + (bˢ − bᵈ) exp(−|q̇_k|/ε)] per joint (Schilling 6-3-3)."""
    qd = vector(qd, model.nq, "qd")
    viscous, coulomb, static, eps = model.friction.T
    return viscous * qd + np.sign(qd) * (coulomb + (static - coulomb) * np.exp(-np.abs(qd) / eps))
