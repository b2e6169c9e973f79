"""Compiled analytical derivatives of inverse dynamics in base coordinates (Carpentier & Mansard,
"Analytical derivatives of rigid body dynamics algorithms", RSS 2018), and through them those of
forward dynamics.

Everything is expressed in the base frame at the base origin: J_i is joint i's screw there
(world_kernels.world_screw), v_i and a_i the body's twist and spatial acceleration (the base
accelerates by (0, −g)), Y_i its inertia and Yc_i the composite inertia of its subtree. Turning
joint k carries its whole subtree rigidly, so a world quantity X of a body there varies by
J_k × X (or J_k ×* X for a wrench) plus a genuine part that is the same for every body of the
subtree up to one term linear in its own twist. With λ = λ(k) the paper's joint columns are

    ∂v/∂q_k = v_λ × J_k,   ∂a/∂q_k = a_λ × J_k + v_λ × ∂v/∂q_k,   ∂a/∂q̇_k = v_k × J_k + ∂v/∂q_k,

and a body's wrench f = Y a + v ×* Y v varies by Y ∂a + Ẏ ∂v with Ẏ = v ×* Y − Y v× − (Y v)×̄,
which is twice the Coriolis factor B(Y, v) of world_kernels (Ẏ only reads the angular part of a
motion). Composites add in base coordinates, so with Fc_i the subtree's wrench, for i ⪰ k:

    ∂τ_i/∂q_k = J_iᵀ(Yc_i ∂a/∂q_k + Ẏc_i ∂v/∂q_k),   ∂τ_i/∂q̇_k = J_iᵀ(Yc_i ∂a/∂q̇_k + Ẏc_i J_k),

and for an ancestor i ≺ k the same bracket at i = k plus the transport J_k ×* Fc_k (for q only).
The first form is evaluated as (Yc_i J_i)ᵀ ∂a + (Ẏc_iᵀ J_i)ᵀ ∂v, so one forward pass and one
backward pass over the ancestors of each joint fill both Jacobians and M_ik = J_iᵀ Yc_k J_k.
External wrenches are fixed in their body frames, so they only move with the subtree.
"""

from __future__ import annotations

from numba import njit

from robot_control.dynamics.cholesky import (
    cholesky_in_place,
    inverse_from_factor_in_place,
    solve_factored_columns,
)
from robot_control.dynamics.kernels import (
    GRAVITY,
    PARENT,
    ROW_PACKED,
    W_QDD,
    W_TMP,
    aba,
    ad_motion,
    add_coad_neg,
    add_force_to_parent,
    check_length,
    dot6,
    entry_point,
)
from robot_control.dynamics.world_kernels import (
    O_P,
    O_R,
    O_S,
    O_SD,
    O_V,
    add_to_parent_composite,
    coriolis_factor,
    factor_times,
    factor_transpose_times,
    inertia_times,
    world_inertia,
    world_pose,
    world_screw,
)

# Workspace columns after world_kernels's (which end at ROW_PACKED + 67): acceleration a_i, the
# subtree's wrench Fc_i, and joint i's columns ∂v/∂q_i, ∂a/∂q_i, ∂a/∂q̇_i.
O_A, O_F, O_DVQ, O_DAQ, O_DAV = (ROW_PACKED + c for c in (67, 73, 79, 85, 91))

_CACHE = True


@njit(cache=_CACHE, inline="always")
def forward_step(P, g, i, q, qd, qdd, fext, W, tmp):
    """Body i's J_i, v_i, a_i, f_i, Ẏ_i/2 and columns ∂v/∂q_i, ∂a/∂q_i, ∂a/∂q̇_i (C&M 2018, forward pass)."""
    R = tmp[0:9]
    p = tmp[9:12]
    vp = tmp[12:18]
    ap = tmp[18:24]
    h = tmp[24:30]
    world_pose(P, i, q, W, R, p)
    world_screw(P, i, W)
    world_inertia(P, i, W)
    J = W[i, O_S : O_S + 6]
    v = W[i, O_V : O_V + 6]
    dJ = W[i, O_SD : O_SD + 6]
    a = W[i, O_A : O_A + 6]
    dvq = W[i, O_DVQ : O_DVQ + 6]
    daq = W[i, O_DAQ : O_DAQ + 6]
    dav = W[i, O_DAV : O_DAV + 6]
    lam = int(P[i, PARENT])
    if lam < 0:
        for c in range(6):
            vp[c] = 0.0
            ap[c] = 0.0 if c < 3 else -g[c - 3]  # the base accelerates upward by −g
    else:
        for c in range(6):
            vp[c] = W[lam, O_V + c]
            ap[c] = W[lam, O_A + c]
    # v_i = v_λ + J_i q̇_i;  a_i = a_λ + (v_i × J_i) q̇_i + J_i q̈_i
    for c in range(6):
        v[c] = vp[c] + J[c] * qd[i]
    ad_motion(v, J, dJ)
    for c in range(6):
        a[c] = ap[c] + dJ[c] * qd[i] + J[c] * qdd[i]
    # ∂v/∂q_i = v_λ × J_i;  ∂a/∂q_i = a_λ × J_i + v_λ × ∂v/∂q_i;  ∂a/∂q̇_i = v_i × J_i + ∂v/∂q_i
    ad_motion(vp, J, dvq)
    ad_motion(ap, J, daq)
    ad_motion(vp, dvq, h)
    for c in range(6):
        daq[c] += h[c]
        dav[c] = dJ[c] + dvq[c]
    # f_i = Y_i a_i + v_i ×* Y_i v_i − f_ext (the external wrench moved from body i to the base)
    F = W[i, O_F : O_F + 6]
    inertia_times(W, i, v, h)
    inertia_times(W, i, a, F)
    add_coad_neg(v, h, F)
    if fext is not None:
        for c in range(6):
            h[c] = -fext[i, c]
        add_force_to_parent(W[i, O_R : O_R + 9], W[i, O_P : O_P + 3], h, F)
    coriolis_factor(W, i)  # B = Ẏ_i / 2 from v_i and Y_i


@njit(cache=_CACHE)
def rnea_derivatives_world(P, g, q, qd, qdd, fext, W, dtau_dq, dtau_dqd, M):
    """∂τ/∂q, ∂τ/∂q̇ and M = ∂τ/∂q̈ of the RNEA in base coordinates (Carpentier & Mansard 2018)."""
    n = P.shape[0]
    check_length(q, n)
    check_length(qd, n)
    check_length(qdd, n)
    tmp = W[0, W_TMP : W_TMP + 30]
    for i in range(n):
        forward_step(P, g, i, q, qd, qdd, fext, W, tmp)
    dtau_dq[:, :] = 0.0  # joints on different branches do not couple
    dtau_dqd[:, :] = 0.0
    M[:, :] = 0.0
    alpha = W[0, W_TMP + 30 : W_TMP + 36]
    beta = W[0, W_TMP + 36 : W_TMP + 42]
    dfq = W[0, W_TMP + 42 : W_TMP + 48]
    dfv = W[0, W_TMP + 48 : W_TMP + 54]
    y = W[0, W_TMP + 54 : W_TMP + 60]
    for j in range(n - 1, -1, -1):
        J = W[j, O_S : O_S + 6]
        # α = Yc_j J_j and β = Ẏc_jᵀ J_j (angular part only: Ẏ has no right column)
        inertia_times(W, j, J, alpha)
        factor_transpose_times(W, j, J, beta)
        b0, b1, b2 = 2.0 * beta[0], 2.0 * beta[1], 2.0 * beta[2]
        # rows j over the ancestors k ⪯ j: ∂τ_j/∂q_k, ∂τ_j/∂q̇_k and M_jk
        k = j
        while k >= 0:
            dvq = W[k, O_DVQ : O_DVQ + 6]
            Jk = W[k, O_S : O_S + 6]
            dtau_dq[j, k] = dot6(alpha, W[k, O_DAQ : O_DAQ + 6]) + b0 * dvq[0] + b1 * dvq[1] \
                + b2 * dvq[2]
            dtau_dqd[j, k] = dot6(alpha, W[k, O_DAV : O_DAV + 6]) + b0 * Jk[0] + b1 * Jk[1] \
                + b2 * Jk[2]
            m = dot6(alpha, Jk)
            M[j, k] = m
            M[k, j] = m
            k = int(P[k, PARENT])
        # column j over the strict ancestors i ≺ j: J_iᵀ(Yc_j ∂a + Ẏc_j ∂v (+ J_j ×* Fc_j for q))
        lam = int(P[j, PARENT])
        if lam >= 0:
            inertia_times(W, j, W[j, O_DAQ : O_DAQ + 6], dfq)
            factor_times(W, j, W[j, O_DVQ : O_DVQ + 6], y)
            for c in range(6):
                dfq[c] += 2.0 * y[c]
            add_coad_neg(J, W[j, O_F : O_F + 6], dfq)
            inertia_times(W, j, W[j, O_DAV : O_DAV + 6], dfv)
            factor_times(W, j, J, y)
            for c in range(6):
                dfv[c] += 2.0 * y[c]
            i = lam
            while i >= 0:
                Ji = W[i, O_S : O_S + 6]
                dtau_dq[i, j] = dot6(Ji, dfq)
                dtau_dqd[i, j] = dot6(Ji, dfv)
                i = int(P[i, PARENT])
            add_to_parent_composite(P, j, W, True)
            for c in range(6):
                W[lam, O_F + c] += W[j, O_F + c]


# ------------------------------------------------------------- entry points on the data array
@entry_point
def inverse_dynamics_derivatives_kernel(D, q, qd, qdd, fext, J):
    """``rnea_derivatives_world`` on the model's data array: J = (∂τ/∂q, ∂τ/∂q̇, M)."""
    rnea_derivatives_world(D, D[0, GRAVITY : GRAVITY + 3], q, qd, qdd, fext, D, J[0], J[1], J[2])


@entry_point
def forward_dynamics_derivatives_kernel(D, q, qd, tau, fext, J):
    """J = (∂q̈/∂q, ∂q̈/∂q̇, M⁻¹): ∂FD = −M⁻¹ ∂ID at q̈ = ABA(q, q̇, τ) (C&M 2018), by Cholesky."""
    g = D[0, GRAVITY : GRAVITY + 3]
    qdd = D[:, W_QDD]
    aba(D, g, q, qd, tau, fext, D, qdd)
    L = J[2]  # M from the derivative pass, factored, then inverted in place
    rnea_derivatives_world(D, g, q, qd, qdd, fext, D, J[0], J[1], L)
    cholesky_in_place(L)
    solve_factored_columns(L, J[0], -1.0)
    solve_factored_columns(L, J[1], -1.0)
    inverse_from_factor_in_place(L)
