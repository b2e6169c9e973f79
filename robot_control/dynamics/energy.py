"""Kinetic and potential energy of the whole arm (Craig §6.10, Schilling 6-2-17)."""

from __future__ import annotations

import numpy as np

from robot_control.dynamics.kinematics import _body_motion, forward_kinematics
from robot_control.dynamics.packing import vector

Array = np.ndarray


def kinetic_energy(model, q, qd) -> float:
    """T = ½ Σ V_iᵀ 𝓘_i V_i with body-frame twists and spatial inertias (= ½ q̇ᵀ M q̇)."""
    V, _ = _body_motion(model, q, vector(qd, model.nq, "qd"))
    return 0.5 * float(np.einsum("ni,nij,nj->", V, model.spatial_inertia, V))


def potential_energy(model, q) -> float:
    """U = −Σ m_i gᵀ c_i with c_i the world position of body i's centre of mass (Schilling 6-2-17)."""
    T = forward_kinematics(model, q)
    U = 0.0
    for i, body in enumerate(model.bodies):
        c = T[i, :3, :3] @ body.inertia.com + T[i, :3, 3]
        U -= body.inertia.mass * float(model.gravity @ c)
    return U
