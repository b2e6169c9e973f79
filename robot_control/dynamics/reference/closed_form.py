"""Closed-form dynamics of the textbook arms, transcribed from the seeds: test oracles only.

Each ``*_terms`` function returns the three parts of τ = D(q) q̈ + c + h (+ friction):
the inertia matrix, the velocity term (a vector, or the Christoffel matrix for the DDArm)
and the gravity vector, in the book's own frames and sign conventions. The defaults are
the parameters of the bundled models (``config/robots/*.yaml``).
"""

from __future__ import annotations

import numpy as np

Array = np.ndarray

#: Schilling's standard gravity (m/s²).
G0_SCHILLING = 9.8062


def schilling_friction(qd, viscous, coulomb, static, stribeck_velocity) -> Array:
    """b(q̇) = bᵛq̇ + sgn(q̇)[bᵈ + (bˢ − bᵈ) exp(−|q̇|/ε)] (Schilling 6-3-3)."""
    qd = np.asarray(qd, dtype=float)
    decay = np.exp(-np.abs(qd) / stribeck_velocity)
    return viscous * qd + np.sign(qd) * (coulomb + (static - coulomb) * decay)


def torque(terms: tuple[Array, Array, Array], qdd, friction=None) -> Array:
    """τ = D q̈ + c + h (+ b) from a ``*_terms`` triple whose velocity part is a vector."""
    D, c, h = terms
    tau = D @ np.asarray(qdd, dtype=float) + c + h
    return tau if friction is None else tau + friction


def one_axis_terms(q, qd, m: float = 1.0, a: float = 1.0, g0: float = G0_SCHILLING):
    """One-axis rod: D = m a²/3, c = 0, h = g₀ m a C₁/2 (Schilling 6-9-10, y up)."""
    q1 = float(np.asarray(q, dtype=float).reshape(-1)[0])
    return (np.array([[m * a**2 / 3.0]]), np.zeros(1), np.array([g0 * m * a * np.cos(q1) / 2.0]))


def one_axis_tool_torque(q, a: float = 1.0, f_tool=(0.0, 0.0, 0.0)) -> Array:
    """−J_vᵀ f_tool for a force f_tool acting on the tip (Schilling 6-8: f^{n+1} = −f_tool)."""
    q1 = float(np.asarray(q, dtype=float).reshape(-1)[0])
    fx, fy, _ = np.asarray(f_tool, dtype=float)
    return np.array([-a * (-np.sin(q1) * fx + np.cos(q1) * fy)])


def two_axis_terms(q, qd, m=(1.0, 1.0), a=(1.0, 1.0), g0: float = G0_SCHILLING):
    """Two-axis planar rods (Schilling 6-5): D, Coriolis/centrifugal c, gravity h; y up."""
    q1, q2 = np.asarray(q, dtype=float)
    v1, v2 = np.asarray(qd, dtype=float)
    m1, m2 = m
    a1, a2 = a
    C2, S2 = np.cos(q2), np.sin(q2)
    D11 = m1 * a1**2 / 3.0 + m2 * (a1**2 + a1 * a2 * C2 + a2**2 / 3.0)
    D12 = m2 * (a1 * a2 * C2 / 2.0 + a2**2 / 3.0)
    D22 = m2 * a2**2 / 3.0
    c = np.array([-m2 * a1 * a2 * S2 * (v1 * v2 + v2**2 / 2.0), m2 * a1 * a2 * S2 * v1**2 / 2.0])
    C1, C12 = np.cos(q1), np.cos(q1 + q2)
    h = g0 * np.array([(m1 / 2.0 + m2) * a1 * C1 + m2 * a2 * C12 / 2.0, m2 * a2 * C12 / 2.0])
    return np.array([[D11, D12], [D12, D22]]), c, h


def scara_terms(q, qd, m=(1.0, 1.0, 1.0), a=(1.0, 1.0), g0: float = G0_SCHILLING):
    """Three-axis SCARA rods (Schilling 6-6-25, 6-6-28, 6-6-31): D, c, h with α₁ = π."""
    _, q2, _ = np.asarray(q, dtype=float)
    v1, v2, _ = np.asarray(qd, dtype=float)
    m1, m2, m3 = m
    a1, a2 = a
    C2, S2 = np.cos(q2), np.sin(q2)
    D11 = (m1 / 3.0 + m2 + m3) * a1**2 + (m2 + 2.0 * m3) * a1 * a2 * C2 + (m2 / 3.0 + m3) * a2**2
    D12 = -(m2 / 2.0 + m3) * a1 * a2 * C2 - (m2 / 3.0 + m3) * a2**2
    D22 = (m2 / 3.0 + m3) * a2**2
    D = np.array([[D11, D12, 0.0], [D12, D22, 0.0], [0.0, 0.0, m3]])
    c = np.array([
        -a1 * a2 * S2 * ((m2 + 2.0 * m3) * v1 * v2 - (m2 / 2.0 + m3) * v2**2),
        (m2 / 2.0 + m3) * a1 * a2 * S2 * v1**2,
        0.0,
    ])
    return D, c, np.array([0.0, 0.0, -g0 * m3])


def craig_rr_terms(q, qd, m=(1.0, 1.0), l=(1.0, 1.0), g: float = 9.81):  # noqa: E741 - Craig's l
    """Craig's RR arm with point masses at the link ends: M (corrected M₁₁), V, G (Craig 6.7)."""
    q1, q2 = np.asarray(q, dtype=float)
    v1, v2 = np.asarray(qd, dtype=float)
    m1, m2 = m
    l1, l2 = l
    c1, c2, s2, c12 = np.cos(q1), np.cos(q2), np.sin(q2), np.cos(q1 + q2)
    M11 = l2**2 * m2 + 2.0 * l1 * l2 * m2 * c2 + l1**2 * (m1 + m2)
    M12 = l2**2 * m2 + l1 * l2 * m2 * c2
    M = np.array([[M11, M12], [M12, l2**2 * m2]])
    V = np.array([
        -m2 * l1 * l2 * s2 * v2**2 - 2.0 * m2 * l1 * l2 * s2 * v1 * v2,
        m2 * l1 * l2 * s2 * v1**2,
    ])
    G = np.array([m2 * l2 * g * c12 + (m1 + m2) * l1 * g * c1, m2 * l2 * g * c12])
    return M, V, G


#: Huo's DDArm grouped parameters P1 … P9 (Ex. 3-4, OCR corrected in notes/huo.md).
DDARM_P = np.array([13.0315, 0.4147, -1.3526, 0.8632, 3.0813, -0.2735, -0.0166, 0.3900, 0.3108])
DDARM_D2 = 0.462


def _ddarm_trig(q):
    _, q2, q3 = np.asarray(q, dtype=float)
    return np.cos(q2), np.sin(q2), np.cos(q3), np.sin(q3)


def ddarm_inertia(q, P=DDARM_P, d2: float = DDARM_D2) -> Array:
    """H(q) of the DDArm from the grouped parameters: h₁₁ … h₃₃ (Huo Ex. 3-1)."""
    P1, P2, P3, P4, P5, P6, P7, P8, P9 = P
    c2, s2, c3, s3 = _ddarm_trig(q)
    h11 = (P1 - c2**2 * P2 + 2 * d2 * s3 * P9 - s2**2 * s3**2 * P6 - 2 * c2 * s2 * c3 * P7
           + c2**2 * P8)
    h12 = c2 * P3 - d2 * s2 * c3 * P9 + s2 * c3 * s3 * P6 - c2 * s3 * P7
    h13 = -d2 * c2 * s3 * P9 + s2 * c3 * P7 - c2 * P8
    h22 = P4 - c3**2 * P6
    h23 = s3 * P7
    return np.array([[h11, h12, h13], [h12, h22, h23], [h13, h23, P8]])


def ddarm_inertia_derivatives(q, P=DDARM_P, d2: float = DDARM_D2) -> Array:
    """∂H/∂q_k for k = 1, 2, 3 (shape 3×3×3), by differentiating each h_ij of Huo Ex. 3-1."""
    _, P2, P3, _, _, P6, P7, P8, P9 = P
    c2, s2, c3, s3 = _ddarm_trig(q)
    cos2q2 = c2**2 - s2**2
    dH = np.zeros((3, 3, 3))
    # H does not depend on q1: dH[0] = 0.
    d = dH[1]
    d[0, 0] = 2 * c2 * s2 * P2 - 2 * s2 * c2 * s3**2 * P6 - 2 * cos2q2 * c3 * P7 - 2 * c2 * s2 * P8
    d[0, 1] = -s2 * P3 - d2 * c2 * c3 * P9 + c2 * c3 * s3 * P6 + s2 * s3 * P7
    d[0, 2] = d2 * s2 * s3 * P9 + c2 * c3 * P7 + s2 * P8
    d = dH[2]
    d[0, 0] = 2 * d2 * c3 * P9 - 2 * s2**2 * s3 * c3 * P6 + 2 * c2 * s2 * s3 * P7
    d[0, 1] = d2 * s2 * s3 * P9 + s2 * (c3**2 - s3**2) * P6 - c2 * c3 * P7
    d[0, 2] = -d2 * c2 * c3 * P9 - s2 * s3 * P7
    d[1, 1] = 2 * c3 * s3 * P6
    d[1, 2] = c3 * P7
    for k in (1, 2):
        dH[k] = np.triu(dH[k]) + np.triu(dH[k], 1).T
    return dH


def christoffel_coriolis(dH: Array, qd) -> Array:
    """c_ij = Σ_k ½(∂h_ij/∂q_k + ∂h_ik/∂q_j − ∂h_jk/∂q_i) q̇_k (Huo 2-34); dH[k] = ∂H/∂q_k."""
    qd = np.asarray(qd, dtype=float)
    # Gamma[i, j, k] = ½(∂_k h_ij + ∂_j h_ik − ∂_i h_jk)
    Gamma = 0.5 * (np.einsum("kij->ijk", dH) + np.einsum("jik->ijk", dH) - dH)
    return Gamma @ qd


def ddarm_gravity(q, P=DDARM_P, g: float = 9.81) -> Array:
    """G(q) = [0, g(−s₂P5 + c₂c₃P9), −g s₂s₃P9] (Huo Ex. 3-1)."""
    c2, s2, c3, s3 = _ddarm_trig(q)
    return np.array([0.0, g * (-s2 * P[4] + c2 * c3 * P[8]), -g * s2 * s3 * P[8]])


def ddarm_terms(q, qd, P=DDARM_P, d2: float = DDARM_D2, g: float = 9.81):
    """(H, C, G) of the DDArm, C the Christoffel matrix generated from H."""
    return (ddarm_inertia(q, P, d2),
            christoffel_coriolis(ddarm_inertia_derivatives(q, P, d2), qd),
            ddarm_gravity(q, P, g))
