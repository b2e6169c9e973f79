"""Compiled tangent recursions of Kim §4: derivatives of RNEA (Table 5) and of hybrid dynamics
(Table 7, which with no joint prescribed is the ABA derivative of Table 6), as corrected in
notes/lie_group.md.

Each recursion differentiates the dynamics along one scalar p — a coordinate q_k, a rate
q̇_k or a given input (q̈_k or τ_k) — and is run once per coordinate to fill full Jacobians.
Our joints are 1-DOF with a constant screw S_i in the child frame, so in Kim's list (92)
∂S_i = ∂Ṡ_i = Ṡ_i = 0 and ∂𝓘_i = 0; ∂h_i/∂q_k = S_i if i = k, else 0 (Corollary 2); external
wrenches are held fixed in their body frames.

Only bodies where a derivative can be non-zero are visited with spatial work: ∂V and ∂η live
in the subtree of joint k (indices ≥ k, since λ(i) < i); ∂𝓑̂, ∂β also on the chain of
ancestors of k, where each body has a single contributing child; ∂𝓘̂ and ∂Π only on that
chain, and only for p = q_k. The final forward pass (∂V̇, ∂q̈, ∂τ) visits every body.
"""

from __future__ import annotations

from numba import njit

from robot_control.dynamics import kernels as K
from robot_control.dynamics.hybrid import (
    H_A,
    H_AP,
    H_BETA,
    H_D,
    H_ETA,
    H_IA,
    H_P,
    H_PI,
    H_R,
    H_RES,
    H_U,
    H_V,
    hybrid_pass,
)

# kinds of differentiation variable p
BY_Q, BY_QD, BY_INPUT = 0, 1, 2

# Columns of a body row of the RNEA tangent scratch: ∂V, ∂V̇, ∂F, in-subtree flag.
R_DV, R_DA, R_DF, R_SUB = 0, 6, 12, 18
RWORK = 19
# Columns of a body row of the hybrid tangent scratch: ∂V, ∂η, ∂𝓘̂, ∂𝓑̂, ∂Π, ∂β, ∂V̇, ∂𝓘̂S,
# ∂Ψ and flags (in the subtree of k; ∂𝓘̂ ≠ 0; ∂𝓑̂ ≠ 0).
T_DV, T_DETA, T_DIA, T_DB, T_DPI, T_DBETA, T_DA, T_DIS = 0, 6, 12, 48, 54, 90, 96, 102
T_DPSI, T_SUB, T_FLAG, T_ACT = 108, 109, 110, 111
TWORK = 112
#: scratch length the tangent recursions take
SCRATCH = 162

_CACHE = True


# ----------------------------------------------------------------------------- Table 5
@njit(cache=_CACHE)
def rnea_tangent(P, W, qd, kind, k, Dw, dtau, tmp):
    """∂τ/∂p for p = q_k (kind BY_Q) or q̇_k (BY_QD) by Kim Table 5, about the RNEA state in W.

    W is a workspace of ``kernels.rnea`` (T, V, V̇, F, 𝓘V and ad_V S per body); with ∂q̈ = 0
    the only sources are joint k's ∂h_k = S_k (for q_k) or ∂q̇_k = 1 (for q̇_k).
    """
    n = P.shape[0]
    a = tmp[0:6]
    x = tmp[6:12]
    y = tmp[12:18]
    for i in range(k):
        dtau[i] = 0.0
    # forward over the subtree of k: ∂V, ∂V̇ and the body's own part of ∂F
    for i in range(k, n):
        lam = int(P[i, K.PARENT])
        sub = i == k or (lam >= k and Dw[lam, R_SUB] > 0.0)
        Dw[i, R_SUB] = 1.0 if sub else 0.0
        if not sub:
            dtau[i] = 0.0
            continue
        dV = Dw[i, R_DV : R_DV + 6]
        dA = Dw[i, R_DA : R_DA + 6]
        dF = Dw[i, R_DF : R_DF + 6]
        S = P[i, K.SCREW : K.SCREW + 6]
        V = W[i, K.W_V : K.W_V + 6]
        adVS = W[i, K.W_C : K.W_C + 6]  # ad_{V_i} S_i
        if i == k:
            if kind == BY_Q:
                # ∂V = −ad_S Ad V_λ = ad_V S;  ∂V̇ = −ad_S a + ad_{∂V} S q̇ with a = Ad V̇_λ
                Vd = W[i, K.W_A : K.W_A + 6]
                for c in range(6):
                    dV[c] = adVS[c]
                    a[c] = Vd[c] - adVS[c] * qd[i]  # a_i up to S q̈ (ad_S S = 0)
                K.ad_motion(a, S, dA)
                K.ad_motion(dV, S, x)
                for c in range(6):
                    dA[c] += x[c] * qd[i]
            else:
                # ∂V = S;  ∂V̇ = ad_{∂V} S q̇ + ad_V S ∂q̇ = ad_V S
                for c in range(6):
                    dV[c] = S[c]
                    dA[c] = adVS[c]
        else:
            R = W[i, K.W_R : K.W_R + 9]
            p = W[i, K.W_P : K.W_P + 3]
            K.motion_to_child(R, p, Dw[lam, R_DV : R_DV + 6], dV)
            K.motion_to_child(R, p, Dw[lam, R_DA : R_DA + 6], dA)
            K.ad_motion(dV, S, x)
            for c in range(6):
                dA[c] += x[c] * qd[i]
        # ∂F = 𝓘∂V̇ − ad*_{∂V} 𝓘V − ad*_V 𝓘∂V + (children, added below)
        I = P[i, K.INERTIA : K.INERTIA + 36]
        K.mat6_vec(I, dA, dF)
        K.add_coad_neg(dV, W[i, K.W_U : K.W_U + 6], dF)
        K.mat6_vec(I, dV, x)
        K.add_coad_neg(V, x, dF)
    # backward over the subtree; joint k hands Ad*(∂F_k − ad*_{∂h_k} F_k) to its parent as y
    for c in range(6):
        y[c] = 0.0
    for i in range(n - 1, k - 1, -1):
        if Dw[i, R_SUB] == 0.0:
            continue
        dF = Dw[i, R_DF : R_DF + 6]
        S = P[i, K.SCREW : K.SCREW + 6]
        dtau[i] = K.dot6(S, dF)
        lam = int(P[i, K.PARENT])
        if lam < 0:
            continue
        R = W[i, K.W_R : K.W_R + 9]
        p = W[i, K.W_P : K.W_P + 3]
        if i == k:
            for c in range(6):
                x[c] = dF[c]
            if kind == BY_Q:
                K.add_coad_neg(S, W[i, K.W_F : K.W_F + 6], x)
            K.add_force_to_parent(R, p, x, y)
        else:
            K.add_force_to_parent(R, p, dF, Dw[lam, R_DF : R_DF + 6])
    # the ancestors of k only pass that one wrench down to the base
    j = int(P[k, K.PARENT])
    while j >= 0:
        dtau[j] = K.dot6(P[j, K.SCREW : K.SCREW + 6], y)
        lam = int(P[j, K.PARENT])
        if lam >= 0:
            for c in range(6):
                x[c] = 0.0
            K.add_force_to_parent(W[j, K.W_R : K.W_R + 9], W[j, K.W_P : K.W_P + 3], y, x)
            for c in range(6):
                y[c] = x[c]
        j = lam


@njit(cache=_CACHE, inline="always")
def set_column(A, k, col):
    """A[:, k] = col elementwise (the slice assignment may copy col first: it allocates)."""
    for r in range(A.shape[0]):
        A[r, k] = col[r]


@njit(cache=_CACHE)
def rnea_derivatives(P, g, q, qd, qdd, fext, W, Dw, tau, dtau_dq, dtau_dqd, scratch):
    """τ = RNEA(q, q̇, q̈) and its full Jacobians ∂τ/∂q, ∂τ/∂q̇ (Kim Table 5, one column per p).

    ``scratch`` holds n + SCRATCH floats (no allocation per call).
    """
    n = P.shape[0]
    K.rnea(P, g, q, qd, qdd, fext, W, tau)
    col = scratch[:n]
    tmp = scratch[n : n + SCRATCH]
    for k in range(n):
        rnea_tangent(P, W, qd, BY_Q, k, Dw, col, tmp)
        set_column(dtau_dq, k, col)
        rnea_tangent(P, W, qd, BY_QD, k, Dw, col, tmp)
        set_column(dtau_dqd, k, col)


# ----------------------------------------------------------------------------- Table 7
@njit(cache=_CACHE, inline="always")
def articulated_tangent(P, i, qdd_i, prescribed_i, given, H, Tw, tmp):
    """Body i's step of the backward pass of Table 7: ∂Ψ_i, ∂Π_i, ∂β_i from ∂𝓘̂_i, ∂𝓑̂_i, ∂η_i."""
    x = tmp[0:6]
    z = tmp[12:18]
    S = P[i, K.SCREW : K.SCREW + 6]
    IA = H[i, H_IA : H_IA + 36]
    U = H[i, H_U : H_U + 6]
    eta = H[i, H_ETA : H_ETA + 6]
    dIA = Tw[i, T_DIA : T_DIA + 36]
    dB = Tw[i, T_DB : T_DB + 6]
    deta = Tw[i, T_DETA : T_DETA + 6]
    dPi = Tw[i, T_DPI : T_DPI + 36]
    dbeta = Tw[i, T_DBETA : T_DBETA + 6]
    dIS = Tw[i, T_DIS : T_DIS + 6]
    flag = Tw[i, T_FLAG] > 0.0
    if flag:
        K.mat6_vec(dIA, S, dIS)
    if prescribed_i:
        # ∂Π = ∂𝓘̂;  ∂β = ∂𝓑̂ + ∂𝓘̂(η + S q̈) + 𝓘̂(∂η + S ∂q̈)   (q̈, ∂q̈ — not q̇ as printed)
        if flag:
            K.copy_into(dIA, dPi)
            for c in range(6):
                x[c] = eta[c] + S[c] * qdd_i
            K.mat6_vec(dIA, x, dbeta)
        else:
            for c in range(6):
                dbeta[c] = 0.0
        for c in range(6):
            x[c] = deta[c] + S[c] * given
        K.mat6_vec(IA, x, z)
        for c in range(6):
            dbeta[c] += dB[c] + z[c]
        return
    D = H[i, H_D]
    r = H[i, H_RES]
    dPsi = 0.0
    if flag:
        dPsi = -K.dot6(S, dIS) / (D * D)  # ∂Ψ = −Ψ (Sᵀ∂𝓘̂S) Ψ
        # ∂Π = ∂𝓘̂ − {U ∂Ψ Uᵀ + ∂𝓘̂SΨUᵀ + (∂𝓘̂SΨUᵀ)ᵀ}
        for a in range(6):
            for b in range(6):
                dPi[6 * a + b] = (dIA[6 * a + b] - U[a] * dPsi * U[b]
                                  - (dIS[a] * U[b] + U[a] * dIS[b]) / D)
        for c in range(6):
            x[c] = eta[c] + S[c] * r / D
        K.mat6_vec(dIA, x, dbeta)  # ∂𝓘̂(η + SΨr)
        dr = given - K.dot6(dIS, eta)
    else:
        for c in range(6):
            dbeta[c] = 0.0
        dr = given
    Tw[i, T_DPSI] = dPsi
    # ∂r = ∂τ − Sᵀ∂𝓘̂η − Uᵀ∂η − Sᵀ∂𝓑̂;  ∂β = ∂𝓑̂ + ∂𝓘̂(η + SΨr) + 𝓘̂∂η + U(∂Ψ r + Ψ ∂r)
    dr -= K.dot6(U, deta) + K.dot6(S, dB)
    K.mat6_vec(IA, deta, z)
    w = dPsi * r + dr / D
    for c in range(6):
        dbeta[c] += dB[c] + z[c] + U[c] * w


@njit(cache=_CACHE, inline="always")
def pass_to_parent(P, i, lam, kind, k, H, Tw, tmp):
    """∂𝓘̂_λ += Ad*{∂Π − Π ad_{∂h} − (Π ad_{∂h})ᵀ}Ad and ∂𝓑̂_λ += Ad*(∂β − ad*_{∂h} β), Table 7."""
    x = tmp[0:6]
    y = tmp[6:12]
    z = tmp[12:18]
    M6 = tmp[18:54]
    N6 = tmp[54:90]
    cong = tmp[90:162]
    R = H[i, H_R : H_R + 9]
    p = H[i, H_P : H_P + 3]
    dbeta = Tw[i, T_DBETA : T_DBETA + 6]
    if kind == BY_Q and i == k:
        # ∂h_k = S_k; ∂Π_k = 0 because 𝓘̂_k does not depend on q_k
        S = P[i, K.SCREW : K.SCREW + 6]
        Pi = H[i, H_PI : H_PI + 36]
        for c in range(6):
            for e in range(6):
                x[e] = 0.0
            x[c] = 1.0
            K.ad_motion(S, x, y)  # column c of ad_S
            K.mat6_vec(Pi, y, z)
            for a in range(6):
                M6[6 * a + c] = z[a]
        for a in range(6):
            for b in range(6):
                N6[6 * a + b] = -(M6[6 * a + b] + M6[6 * b + a])
        K.add_congruence_to_parent(R, p, N6, Tw[lam, T_DIA : T_DIA + 36], cong)
        for c in range(6):
            x[c] = dbeta[c]
        K.add_coad_neg(S, H[i, H_BETA : H_BETA + 6], x)
        K.add_force_to_parent(R, p, x, Tw[lam, T_DB : T_DB + 6])
    else:
        if Tw[i, T_FLAG] > 0.0:
            K.add_congruence_to_parent(R, p, Tw[i, T_DPI : T_DPI + 36],
                                       Tw[lam, T_DIA : T_DIA + 36], cong)
        K.add_force_to_parent(R, p, dbeta, Tw[lam, T_DB : T_DB + 6])


@njit(cache=_CACHE)
def hybrid_tangent(P, qd, qdd, prescribed, H, kind, k, Tw, out, tmp):
    """∂(τ_u, q̈_v)/∂p by Kim Table 7 (corrected) about the hybrid state in H.

    p is q_k (BY_Q), q̇_k (BY_QD) or the given input of joint k (BY_INPUT: q̈_k if k ∈ u,
    else τ_k). With nothing prescribed this is Table 6, the derivative of the ABA.
    out[i] = ∂τ_i/∂p for i ∈ u and ∂q̈_i/∂p otherwise.
    """
    n = P.shape[0]
    x = tmp[0:6]
    y = tmp[6:12]
    for i in range(n):
        Tw[i, T_SUB] = 0.0
        Tw[i, T_FLAG] = 0.0
        Tw[i, T_ACT] = 0.0
    # ---- forward over the subtree of k: ∂V, ∂η and the body's own part of ∂𝓑̂
    if kind == BY_INPUT:
        Tw[k, T_ACT] = 1.0
        for c in range(6):
            Tw[k, T_DETA + c] = 0.0
            Tw[k, T_DB + c] = 0.0
    else:
        for i in range(k, n):
            lam = int(P[i, K.PARENT])
            if not (i == k or (lam >= k and Tw[lam, T_SUB] > 0.0)):
                continue
            Tw[i, T_SUB] = 1.0
            Tw[i, T_ACT] = 1.0
            S = P[i, K.SCREW : K.SCREW + 6]
            V = H[i, H_V : H_V + 6]
            dV = Tw[i, T_DV : T_DV + 6]
            deta = Tw[i, T_DETA : T_DETA + 6]
            dB = Tw[i, T_DB : T_DB + 6]
            if i == k:
                if kind == BY_Q:
                    K.ad_motion(V, S, dV)  # −ad_{∂h} Ad V_λ = −ad_S(V − S q̇) = ad_V S
                else:
                    K.copy_into(S, dV)
            else:
                K.motion_to_child(H[i, H_R : H_R + 9], H[i, H_P : H_P + 3],
                                  Tw[lam, T_DV : T_DV + 6], dV)
            # ∂η = ad_{∂V} S q̇ + ad_V S ∂q̇
            K.ad_motion(dV, S, deta)
            for c in range(6):
                deta[c] *= qd[i]
            if kind == BY_QD and i == k:
                K.ad_motion(V, S, x)
                for c in range(6):
                    deta[c] += x[c]
            # ∂𝓑̂ = −ad*_{∂V} 𝓘V − ad*_V 𝓘∂V + (children, added below)
            I = P[i, K.INERTIA : K.INERTIA + 36]
            for c in range(6):
                dB[c] = 0.0
            K.mat6_vec(I, V, x)
            K.add_coad_neg(dV, x, dB)
            K.mat6_vec(I, dV, x)
            K.add_coad_neg(V, x, dB)
    # ---- backward over the subtree (∂𝓘̂ = 0 there), then down the chain of ancestors
    for i in range(n - 1, k - 1, -1):
        if Tw[i, T_ACT] == 0.0:
            continue
        given = 1.0 if (kind == BY_INPUT and i == k) else 0.0
        articulated_tangent(P, i, qdd[i], prescribed[i], given, H, Tw, tmp)
        lam = int(P[i, K.PARENT])
        if lam >= 0 and i != k:
            pass_to_parent(P, i, lam, kind, k, H, Tw, tmp)
    child = k
    j = int(P[k, K.PARENT])
    while j >= 0:
        Tw[j, T_ACT] = 1.0
        for c in range(6):
            Tw[j, T_DB + c] = 0.0
            Tw[j, T_DETA + c] = 0.0
        if kind == BY_Q:
            Tw[j, T_FLAG] = 1.0
            for c in range(36):
                Tw[j, T_DIA + c] = 0.0
        pass_to_parent(P, child, j, kind, k, H, Tw, tmp)
        articulated_tangent(P, j, qdd[j], prescribed[j], 0.0, H, Tw, tmp)
        child = j
        j = int(P[j, K.PARENT])
    # ---- forward over all bodies: ∂q̈_v or ∂τ_u
    for i in range(n):
        S = P[i, K.SCREW : K.SCREW + 6]
        da = x
        lam = int(P[i, K.PARENT])
        if lam < 0:
            for c in range(6):
                da[c] = 0.0
        else:
            K.motion_to_child(H[i, H_R : H_R + 9], H[i, H_P : H_P + 3], Tw[lam, T_DA : T_DA + 6],
                              da)
        if kind == BY_Q and i == k:
            K.ad_motion(H[i, H_AP : H_AP + 6], S, y)  # −ad_{∂h_i} a_i (∂h_i, not ∂h_λ(i))
            for c in range(6):
                da[c] += y[c]
        sub = Tw[i, T_SUB] > 0.0
        act = Tw[i, T_ACT] > 0.0
        flag = Tw[i, T_FLAG] > 0.0
        given = 1.0 if (kind == BY_INPUT and i == k) else 0.0
        dVd = Tw[i, T_DA : T_DA + 6]
        U = H[i, H_U : H_U + 6]
        if prescribed[i]:
            # ∂V̇ = ∂a + S ∂q̈ + ∂η;  ∂τ = Sᵀ(∂𝓘̂ V̇ + 𝓘̂ ∂V̇ + ∂𝓑̂)
            for c in range(6):
                dVd[c] = da[c] + S[c] * given
            if sub:
                for c in range(6):
                    dVd[c] += Tw[i, T_DETA + c]
            s = K.dot6(U, dVd)
            if act:
                s += K.dot6(S, Tw[i, T_DB : T_DB + 6])
            if flag:
                s += K.dot6(Tw[i, T_DIS : T_DIS + 6], H[i, H_A : H_A + 6])
            out[i] = s
        else:
            # ∂q̈ = ∂Ψ(r − Uᵀa) + Ψ{∂τ − Sᵀ∂𝓘̂(a + η) − Uᵀ(∂a + ∂η) − Sᵀ∂𝓑̂}
            D = H[i, H_D]
            s = given - K.dot6(U, da)
            if sub:
                s -= K.dot6(U, Tw[i, T_DETA : T_DETA + 6])
            if act:
                s -= K.dot6(S, Tw[i, T_DB : T_DB + 6])
            if flag:
                dIS = Tw[i, T_DIS : T_DIS + 6]
                a = H[i, H_AP : H_AP + 6]
                s -= K.dot6(dIS, a) + K.dot6(dIS, H[i, H_ETA : H_ETA + 6])
                s += Tw[i, T_DPSI] * D * (H[i, H_RES] - K.dot6(U, a))
            dq = s / D
            out[i] = dq
            for c in range(6):
                dVd[c] = da[c] + S[c] * dq
            if sub:
                for c in range(6):
                    dVd[c] += Tw[i, T_DETA + c]


@K.entry_point
def hybrid_derivatives(P, g, q, qd, qdd, tau, prescribed, fext, H, Tw, scratch, dy_dq, dy_dqd,
                       dy_dx):
    """Hybrid dynamics (Table 4) and its Jacobians w.r.t. q, q̇ and the given inputs (Table 7).

    ``scratch`` holds n + SCRATCH floats (no allocation per call).
    """
    n = P.shape[0]
    hybrid_pass(P, g, q, qd, qdd, tau, prescribed, fext, H)
    col = scratch[:n]
    tmp = scratch[n : n + SCRATCH]
    for k in range(n):
        hybrid_tangent(P, qd, qdd, prescribed, H, BY_Q, k, Tw, col, tmp)
        set_column(dy_dq, k, col)
        hybrid_tangent(P, qd, qdd, prescribed, H, BY_QD, k, Tw, col, tmp)
        set_column(dy_dqd, k, col)
        hybrid_tangent(P, qd, qdd, prescribed, H, BY_INPUT, k, Tw, col, tmp)
        set_column(dy_dx, k, col)
