"""Lagrange–Euler dynamics of any RobotModel: the slow, exact oracle for the compiled kernels.

Schilling's Algorithm 6-4-1 (Proposition 6-4-1, D(q)q̈ + c(q, q̇) + h(q) = τ, friction left
out) written with Huo's 4×4 pseudo-inertias: the kinetic energy of link k is
½ Σ_ij tr(∂T_k/∂q_i J_k ∂T_kᵀ/∂q_j) q̇_i q̇_j, so D_ij = Σ_k tr(∂T_k/∂q_i J_k ∂T_kᵀ/∂q_j), which
is Schilling's Σ_k [Aᵏᵀ m_k Aᵏ + Bᵏᵀ D_k Bᵏ] (6-2-15) in another notation.

It works for joint screws, not only D-H frames. With T_k = T_{0,k}(q) the world placement of
body k and Ξ_i = T_{0,i} [S_i] T_{0,i}⁻¹ the 4×4 twist matrix of joint i in the base frame
(independent of q_i and of every joint below i), the derivatives are exact products:

    ∂T_k/∂q_i = Ξ_i T_k                      (joint i moves body k)
    ∂²T_k/∂q_a∂q_b = Ξ_a Ξ_b T_k             (a an ancestor of, or equal to, b; both move k)

Plain numpy and O(n⁴): no finite differences, and nothing from the compiled Newton–Euler code.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robot_control.foundation.spatial import inverse_transform, screw_exp, skew

Array = np.ndarray


@dataclass(frozen=True)
class LinkKinematics:
    """Placements and their exact first and second joint derivatives for one configuration.

    ``T[k]`` = T_{0,k}; ``dT[k, i]`` = ∂T_k/∂q_i; ``d2T[k, i, j]`` = ∂²T_k/∂q_i∂q_j (all 4×4).
    """

    T: Array
    dT: Array
    d2T: Array


@dataclass(frozen=True)
class LagrangeEulerTerms:
    """The terms of Proposition 6-4-1 at one state.

    ``D`` inertia matrix; ``dD[m]`` = ∂D/∂q_m; ``C`` the Christoffel Coriolis matrix (Huo 2-34);
    ``c`` = C q̇ the velocity-coupling vector; ``h`` gravity loading; ``tau`` = D q̈ + c + h.
    """

    D: Array
    dD: Array
    C: Array
    c: Array
    h: Array
    tau: Array


def twist_matrix(S: Array) -> Array:
    """[S] ∈ se(3) as a 4×4 matrix [[ [ω], v ], [0, 0]] for an angular-first screw S = (ω, v)."""
    X = np.zeros((4, 4))
    X[:3, :3] = skew(S[:3])
    X[:3, 3] = S[3:]
    return X


def pseudo_inertia(theta: Array) -> Array:
    """Huo's pseudo-inertia J = ∫ r̄ r̄ᵀ dm from [xx, xy, xz, yy, yz, zz, mx, my, mz, m] (origin)."""
    xx, xy, xz, yy, yz, zz, mx, my, mz, m = theta
    Io = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    J = np.zeros((4, 4))
    # ∫ r rᵀ dm = ½ tr(I_o) 1 − I_o, because I_o = ∫ (rᵀr 1 − r rᵀ) dm
    J[:3, :3] = 0.5 * np.trace(Io) * np.eye(3) - Io
    J[:3, 3] = J[3, :3] = (mx, my, mz)
    J[3, 3] = m
    return J


def link_kinematics(model, q) -> LinkKinematics:
    """T_{0,k}(q) by products of exponentials and their exact derivatives Ξ_i T_k, Ξ_a Ξ_b T_k."""
    q = np.asarray(q, dtype=float)
    n = model.nq
    parent = [b.parent for b in model.bodies]
    T = np.zeros((n, 4, 4))
    Xi = np.zeros((n, 4, 4))
    moves = np.zeros((n, n), dtype=bool)  # moves[k, i]: joint i is on the path from the base to k
    for k, body in enumerate(model.bodies):
        up = T[parent[k]] if parent[k] >= 0 else np.eye(4)
        T[k] = up @ body.joint.origin @ screw_exp(body.joint.screw, q[k])
        Xi[k] = T[k] @ twist_matrix(np.asarray(body.joint.screw, float)) @ inverse_transform(T[k])
        if parent[k] >= 0:
            moves[k] = moves[parent[k]]
        moves[k, k] = True
    dT = np.zeros((n, n, 4, 4))
    d2T = np.zeros((n, n, n, 4, 4))
    for k in range(n):
        chain = np.flatnonzero(moves[k])  # ascending indices = base-to-tip order (parent < child)
        for i in chain:
            dT[k, i] = Xi[i] @ T[k]
        for i in chain:
            for j in chain[chain >= i]:
                d2T[k, i, j] = d2T[k, j, i] = Xi[i] @ dT[k, j]
    return LinkKinematics(T, dT, d2T)


def pseudo_inertias(model) -> Array:
    """The pseudo-inertia J_k of every body in its own frame, shape (n, 4, 4)."""
    theta = model.inertial_parameters().reshape(model.nq, 10)
    return np.array([pseudo_inertia(th) for th in theta])


def inertia_matrix(kin: LinkKinematics, J: Array) -> Array:
    """D_ij = Σ_k tr(∂T_k/∂q_i J_k ∂T_kᵀ/∂q_j) (Huo's h_ij; Schilling 6-2-15)."""
    return np.einsum("kiab,kbc,kjac->ij", kin.dT, J, kin.dT)


def inertia_matrix_derivatives(kin: LinkKinematics, J: Array) -> Array:
    """dD[m, i, j] = ∂D_ij/∂q_m, differentiating the trace form with the exact ∂²T_k."""
    half = np.einsum("kimab,kbc,kjac->mij", kin.d2T, J, kin.dT)
    return half + half.transpose(0, 2, 1)


def velocity_coupling_matrices(dD: Array) -> Array:
    """Schilling's Cⁱ_kj = ∂D_ij/∂q_k − ½ ∂D_kj/∂q_i (6-4-6), as Cs[i, k, j]; not symmetric."""
    return dD.transpose(1, 0, 2) - 0.5 * dD


def velocity_coupling(dD: Array, qd) -> Array:
    """c_i(q, q̇) = q̇ᵀ Cⁱ q̇, the velocity-coupling vector of Proposition 6-4-1."""
    qd = np.asarray(qd, dtype=float)
    return np.einsum("k,ikj,j->i", qd, velocity_coupling_matrices(dD), qd)


def christoffel_matrix(dD: Array, qd) -> Array:
    """C_ij = Σ_k ½(∂D_ij/∂q_k + ∂D_ik/∂q_j − ∂D_jk/∂q_i) q̇_k (Huo 2-34): Ḋ − 2C skew."""
    qd = np.asarray(qd, dtype=float)
    gamma = 0.5 * (dD.transpose(1, 2, 0) + dD.transpose(1, 0, 2) - dD)  # gamma[i, j, k]
    return gamma @ qd


def gravity_loading(kin: LinkKinematics, J: Array, gravity) -> Array:
    """h_i = ∂U/∂q_i = −Σ_k ḡᵀ (∂T_k/∂q_i) (m_k c̄_k) (Schilling 6-4-7, Huo's g_i)."""
    g = np.append(np.asarray(gravity, dtype=float), 0.0)
    # J_k's last column is (m_k c_k, m_k): the first moment in homogeneous coordinates
    return -np.einsum("a,kiab,kb->i", g, kin.dT, J[:, :, 3])


def lagrange_euler(model, q, qd, qdd) -> LagrangeEulerTerms:
    """Algorithm 6-4-1: D, ∂D/∂q, C, c, h and τ = D q̈ + c + h (Proposition 6-4-1, no friction)."""
    kin = link_kinematics(model, q)
    J = pseudo_inertias(model)
    D = inertia_matrix(kin, J)
    dD = inertia_matrix_derivatives(kin, J)
    C = christoffel_matrix(dD, qd)
    c = velocity_coupling(dD, qd)
    h = gravity_loading(kin, J, model.gravity)
    tau = D @ np.asarray(qdd, dtype=float) + c + h
    return LagrangeEulerTerms(D, dD, C, c, h, tau)
