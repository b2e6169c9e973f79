"""Hybrid dynamics of a tree (Kim §2.3, Table 4): per joint either q̈ or τ is given.

Joints in the set u have a prescribed acceleration q̈_u and return their torque τ_u;
the others (v) have a given torque τ_v and return q̈_v. u = all is inverse dynamics
(RNEA), u = ∅ is the articulated-body algorithm (ABA).

The workspace ``H`` keeps every intermediate of the pass (T, V, η, 𝓘̂, 𝓑̂, Π, β, …),
because the constrained dynamics (Kim §3) reuse the q-only ones for their no-bias passes
and the derivatives (Kim Table 7) linearise about them.
"""

from __future__ import annotations

import numpy as np

from robot_control.dynamics import kernels as K
from robot_control.dynamics.packing import Data, array, model_data, workspace, wrenches

Array = np.ndarray

# Columns of a body row of the hybrid workspace H.
H_R, H_P = 0, 9  # T_{λ(i),i}: rotation (row-major), translation
H_V = 12  # V_i
H_ETA = 18  # η_i = ad_{V_i} S_i q̇_i
H_A = 24  # V̇_i
H_IA = 30  # 𝓘̂_i (articulated, or composite where prescribed)
H_B = 66  # 𝓑̂_i
H_U = 72  # U_i = 𝓘̂_i S_i
H_D = 78  # D_i = S_iᵀ 𝓘̂_i S_i = Ψ_i⁻¹
H_RES = 79  # r_i = τ_i − S_iᵀ(𝓘̂_i η_i + 𝓑̂_i)
H_PI = 80  # Π_i
H_BETA = 116  # β_i
H_AP = 122  # a_i = Ad_{T⁻¹} V̇_{λ(i)}: the parent's acceleration seen in body i
H_F = 128  # F_i (prescribed joints)
H_TMP = 134  # row 0 only: scratch of the pass (no allocation, so it compiles as an entry point)
HWORK = 206
# Columns of a body row of the no-bias scratch Z: 𝓑̂ accumulator, β then acceleration, r.
Z_B, Z_X, Z_R = 0, 6, 12
ZWORK = 13

_CACHE = True


@K.entry_point
def hybrid_pass(P, g, q, qd, qdd, tau, prescribed, fext, H):
    """Kim Table 4: fills τ_i where ``prescribed[i]``, else q̈_i; H keeps the intermediates."""
    n = P.shape[0]
    K.check_length(q, n)
    K.check_length(qd, n)
    K.check_length(qdd, n)
    K.check_length(tau, n)
    K.check_length(prescribed, n)
    tmp = H[0, H_TMP : H_TMP + 72]
    h = tmp[0:6]
    for i in range(n):
        R = H[i, H_R : H_R + 9]
        p = H[i, H_P : H_P + 3]
        V = H[i, H_V : H_V + 6]
        S = P[i, K.SCREW : K.SCREW + 6]
        K.joint_placement(P, i, q[i], R, p)
        lam = int(P[i, K.PARENT])
        if lam < 0:
            for k in range(6):
                V[k] = S[k] * qd[i]
        else:
            K.motion_to_child(R, p, H[lam, H_V : H_V + 6], V)
            for k in range(6):
                V[k] += S[k] * qd[i]
        eta = H[i, H_ETA : H_ETA + 6]
        K.ad_motion(V, S, eta)
        for k in range(6):
            eta[k] *= qd[i]
        I = P[i, K.INERTIA : K.INERTIA + 36]
        K.copy_into(I, H[i, H_IA : H_IA + 36])
        B = H[i, H_B : H_B + 6]
        K.mat6_vec(I, V, h)
        for k in range(6):
            B[k] = -fext[i, k]
        K.add_coad_neg(V, h, B)  # 𝓑̂_i starts as −ad*_V 𝓘 V − F_ext; children add below
    for i in range(n - 1, -1, -1):
        S = P[i, K.SCREW : K.SCREW + 6]
        IA = H[i, H_IA : H_IA + 36]
        B = H[i, H_B : H_B + 6]
        eta = H[i, H_ETA : H_ETA + 6]
        U = H[i, H_U : H_U + 6]
        Pi = H[i, H_PI : H_PI + 36]
        beta = H[i, H_BETA : H_BETA + 6]
        K.mat6_vec(IA, S, U)
        if prescribed[i]:
            # Π = 𝓘̂, β = 𝓑̂ + 𝓘̂(η + S q̈): the joint passes its whole inertia to the parent
            K.copy_into(IA, Pi)
            x = tmp[6:12]
            for k in range(6):
                x[k] = eta[k] + S[k] * qdd[i]
            K.mat6_vec(IA, x, beta)
            for k in range(6):
                beta[k] += B[k]
        else:
            D = K.dot6(S, U)
            r = tau[i] - K.dot6(U, eta) - K.dot6(S, B)
            H[i, H_D] = D
            H[i, H_RES] = r
            for a in range(6):
                for b in range(6):
                    Pi[6 * a + b] = IA[6 * a + b] - U[a] * U[b] / D
            # β = 𝓑̂ + 𝓘̂{η + S Ψ r}
            K.mat6_vec(IA, eta, beta)
            for k in range(6):
                beta[k] += B[k] + U[k] * r / D
        lam = int(P[i, K.PARENT])
        if lam >= 0:
            R = H[i, H_R : H_R + 9]
            p = H[i, H_P : H_P + 3]
            K.add_congruence_to_parent(R, p, Pi, H[lam, H_IA : H_IA + 36], tmp)
            K.add_force_to_parent(R, p, beta, H[lam, H_B : H_B + 6])
    base = tmp[12:18]
    for k in range(3):
        base[k] = 0.0
        base[k + 3] = -g[k]  # V̇₀ = (0, −g): gravity enters once, through the base
    for i in range(n):
        R = H[i, H_R : H_R + 9]
        p = H[i, H_P : H_P + 3]
        S = P[i, K.SCREW : K.SCREW + 6]
        a = H[i, H_AP : H_AP + 6]
        lam = int(P[i, K.PARENT])
        if lam < 0:
            K.motion_to_child(R, p, base, a)
        else:
            K.motion_to_child(R, p, H[lam, H_A : H_A + 6], a)
        if not prescribed[i]:
            # q̈ = Ψ{τ − Sᵀ𝓘̂(a + η) − Sᵀ𝓑̂} = Ψ(r − Uᵀa)
            qdd[i] = (H[i, H_RES] - K.dot6(H[i, H_U : H_U + 6], a)) / H[i, H_D]
        eta = H[i, H_ETA : H_ETA + 6]
        Vd = H[i, H_A : H_A + 6]
        for k in range(6):
            Vd[k] = a[k] + eta[k] + S[k] * qdd[i]
        if prescribed[i]:
            F = H[i, H_F : H_F + 6]
            K.mat6_vec(H[i, H_IA : H_IA + 36], Vd, F)
            for k in range(6):
                F[k] += H[i, H_B + k]
            tau[i] = K.dot6(S, F)


@K.entry_point
def unit_response(P, prescribed, H, x, y, Z):
    """Kim §3.2–3.3 no-bias hybrid pass: inputs τ_v = x_v, q̈_u = 0 → y_v = q̈_v, y_u = τ_u.

    With q̇ = 0 and g = 0 the bias terms vanish, so only the q-only quantities of the last
    ``hybrid_pass`` on H (T, 𝓘̂, U, D) are needed: for u = ∅ this is y = M⁻¹x, and in general
    y_v = M_vv⁻¹ x_v. One call costs O(n) vector work, no 6×6 products.
    """
    n = P.shape[0]
    for i in range(n):
        for k in range(6):
            Z[i, Z_B + k] = 0.0
    for i in range(n - 1, -1, -1):
        B = Z[i, Z_B : Z_B + 6]
        beta = Z[i, Z_X : Z_X + 6]
        if prescribed[i]:
            K.copy_into(B, beta)
        else:
            S = P[i, K.SCREW : K.SCREW + 6]
            U = H[i, H_U : H_U + 6]
            r = x[i] - K.dot6(S, B)
            Z[i, Z_R] = r
            D = H[i, H_D]
            for k in range(6):
                beta[k] = B[k] + U[k] * r / D
        lam = int(P[i, K.PARENT])
        if lam >= 0:
            K.add_force_to_parent(H[i, H_R : H_R + 9], H[i, H_P : H_P + 3], beta,
                                  Z[lam, Z_B : Z_B + 6])
    for i in range(n):
        a = Z[i, Z_X : Z_X + 6]
        lam = int(P[i, K.PARENT])
        if lam < 0:
            for k in range(6):
                a[k] = 0.0
        else:
            K.motion_to_child(H[i, H_R : H_R + 9], H[i, H_P : H_P + 3], Z[lam, Z_X : Z_X + 6], a)
        U = H[i, H_U : H_U + 6]
        if prescribed[i]:
            y[i] = K.dot6(U, a) + K.dot6(P[i, K.SCREW : K.SCREW + 6], Z[i, Z_B : Z_B + 6])
        else:
            y[i] = (Z[i, Z_R] - K.dot6(U, a)) / H[i, H_D]
            S = P[i, K.SCREW : K.SCREW + 6]
            for k in range(6):
                a[k] += S[k] * y[i]


class HybridWork:
    """Per-model workspace of the hybrid pass (H) and of its no-bias passes (Z)."""

    __slots__ = ("H", "Z", "none", "all")

    def __init__(self, n: int) -> None:
        self.H = np.zeros((n, HWORK))
        self.Z = np.zeros((n, ZWORK))
        self.none = np.zeros(n, dtype=np.bool_)
        self.all = np.ones(n, dtype=np.bool_)


def hybrid_work(d: Data) -> HybridWork:
    """The hybrid workspace of a Data, allocated on first use."""
    return workspace(d, "kim_hybrid", lambda: HybridWork(d.n))


def prescribed_mask(mask, n: int) -> Array:
    """A length-n boolean array from a mask (bools) or a list of prescribed joint indices."""
    if type(mask) is np.ndarray and mask.dtype == np.bool_ and mask.shape == (n,):
        return mask
    a = np.asarray(mask)
    if a.dtype == np.bool_:
        if a.shape != (n,):
            raise ValueError(f"prescribed_mask must have length {n}, got shape {a.shape}")
        return np.ascontiguousarray(a)
    out = np.zeros(n, dtype=np.bool_)
    idx = a.astype(np.int64).ravel()
    if idx.size and (idx.min() < -n or idx.max() >= n):
        raise ValueError(f"prescribed joint indices must lie in [0, {n}), got {idx.tolist()}")
    out[idx] = True
    return out


def hybrid_dynamics(model, q, qd, qdd_given, tau_given, prescribed,
                    f_ext=None) -> tuple[Array, Array]:
    """(τ, q̈) with q̈_u = qdd_given[u] and τ_v = tau_given[v] (Kim Table 4), u = ``prescribed``.

    ``prescribed`` is a boolean mask or a list of joint indices; entries of ``qdd_given``
    outside u and of ``tau_given`` inside u are ignored. u = all joints gives the RNEA
    torque, u = none the ABA acceleration.
    """
    d = model_data(model)
    u = prescribed_mask(prescribed, d.n)
    qdd = np.array(qdd_given, dtype=np.float64)
    tau = np.array(tau_given, dtype=np.float64)
    hybrid_pass(d.P, model.gravity, array(q), array(qd), qdd, tau, u,
                d.fext0 if f_ext is None else wrenches(f_ext, d), hybrid_work(d).H)
    return tau, qdd
