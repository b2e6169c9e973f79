"""Compiled robust laws: sliding mode VS-1/2/3 (Huo C11) and Spong's robust law (Huo C12).

The laws' ``compute`` call these kernels, and so does the offline loop (control.compiled), so the
two give the same bits. ``D`` is the law's own model (its regressor), ``Dh`` the model of its
terms Ĥ, Ĉ, Ĝ. Array layout: control.law_kernels.
"""

from __future__ import annotations

import numpy as np

from robot_control.control import law_kernels as L
from robot_control.control.adaptive_kernels import basis_regressor
from robot_control.dynamics import kernels as K
from robot_control.dynamics import regressor_kernels as RK

#: sliding-mode scheme codes in s[S_SCHEME]
VS1, VS2, VS3 = 1, 2, 3


@K.entry_point
def sliding_mode(D, Dh, G, E, V, B, Z, Y, s, q, qd, qr, qdr, qddr, tau):
    """VS-1 (3-103), VS-2 (3-105/3-106) or VS-3 (3-107) with sat(s/ε) for sgn(s) (sliding_mode.py)."""
    n, m = q.shape[0], B.shape[1]
    L.tracking_errors(q, qd, qr, qdr, qddr, G[L.G_LAMBDA], E, True)
    r, qdd_r, sat, gain = E[L.E_R], E[L.E_QDDR], E[L.E_SAT], E[L.E_GAIN]
    L.saturation(r, G[L.G_LAYER], sat)
    scheme = int(s[L.S_SCHEME])
    if scheme == VS1:
        # τ = Ĥ[q̈_r + sat(s/ε)∘(|Ĥ⁻¹Y_p(q, q̇, q̈_r)|a + η)] + Ĉq̇ + Ĝ
        H, Hc = L.block(Z, 2, n)[:, :n], L.block(Z, 3, n)[:, :n]
        Phi = L.block(Z, 1, n)[:, :m]
        K.mass_matrix_kernel(Dh, q, H)
        for i in range(n):
            for j in range(n):
                Hc[i, j] = H[i, j]
        basis_regressor(D, B, Y, q, qd, qdd_r, Phi)
        if not L.lu_solve(Hc, Phi):
            for i in range(n):
                tau[i] = np.nan  # a singular Ĥ: the caller's non-finite handling takes over
            return
        L.abs_mat_vec(Phi, V[L.V_A], gain)
        eta, v, zero, bias = G[L.G_ETA], E[L.E_V], E[L.E_W], E[L.E_TMP]
        for i in range(n):
            gain[i] = gain[i] + eta[i]
            v[i] = qdd_r[i] + sat[i] * gain[i]
            zero[i] = 0.0
        L.mat_vec(H, v, tau)
        K.inverse_dynamics_kernel(Dh, q, qd, zero, None, bias)  # Ĉq̇ + Ĝ
        for i in range(n):
            tau[i] = tau[i] + bias[i]
        return
    Yp = L.block(Z, 0, n)[:, :m]
    RK.reference_regressor(D, D[0, K.GRAVITY : K.GRAVITY + 3], q, qd, E[L.E_QDR], qdd_r, D, Y)
    L.basis_product(Y, B, Yp)
    kd = G[L.G_KD]
    if scheme == VS2:
        # τ = Y_p(q, q̇, q̇_r, q̈_r)p̂ + sat(s/ε)∘(|Y_p|a) + K s
        L.abs_mat_vec(Yp, V[L.V_A], gain)
        L.mat_vec(Yp, V[L.V_P], tau)
        for i in range(n):
            tau[i] = tau[i] + sat[i] * gain[i] + kd[i] * r[i]
    else:
        # τ = sat(s/ε)∘(|Y_p|p̄) + K s
        L.abs_mat_vec(Yp, V[L.V_PBAR], gain)
        for i in range(n):
            tau[i] = sat[i] * gain[i] + kd[i] * r[i]


@K.entry_point
def robust_acceleration(D, G, E, V, B, Z, Y, s, q, qd, qr, qdr, qddr, v):
    """v = q̈_d + K_d ė + K_p e + Δv, Δv = ±ρ w/max(‖w‖, ε), w = P₂ᵀe + P₃ė (Huo 3-110, 3-121),
    ρ = [α(q̈_M + ‖K‖‖x‖) + α₂Φ]/(1 − α) (3-119); the sign s[S_SCHEME] is +1 (corrected)."""
    n = q.shape[0]
    L.tracking_errors(q, qd, qr, qdr, qddr, G[L.G_LAMBDA], E, False)
    e, ed = E[L.E_E], E[L.E_ED]
    qdd_max = max(s[L.S_QDD_MAX], L.norm(qddr))
    x2 = 0.0
    for i in range(n):
        x2 += e[i] * e[i]
    for i in range(n):
        x2 += ed[i] * ed[i]
    phi = s[L.S_PHI]
    if s[L.S_BOUNDED] > 0.0:
        # Φ ≥ ‖C̃q̇ + G̃‖ ≤ φ₀ + ‖|Y_p(q, q̇, q̇, 0)| a‖ (Ex 3-6 with the trigonometric factors kept)
        m = B.shape[1]
        zero, bound = E[L.E_V], E[L.E_TMP]
        for i in range(n):
            zero[i] = 0.0
        Yp = L.block(Z, 0, n)[:, :m]
        RK.reference_regressor(D, D[0, K.GRAVITY : K.GRAVITY + 3], q, qd, qd, zero, D, Y)
        L.basis_product(Y, B, Yp)
        L.abs_mat_vec(Yp, V[L.V_A], bound)
        phi += L.norm(bound)
    alpha = s[L.S_ALPHA]
    rho = (alpha * (qdd_max + s[L.S_K_NORM] * np.sqrt(x2))
           + s[L.S_INV_INERTIA] * phi) / (1.0 - alpha)
    s[L.S_RHO] = rho
    w, dv = E[L.E_W], E[L.E_GAIN]
    L.state_gain(L.block(Z, 4, n)[:, : 2 * n], e, ed, w)
    scale = max(L.norm(w), s[L.S_EPSILON])
    kp, kd, sign = G[L.G_KP], G[L.G_KD], s[L.S_SCHEME]
    for i in range(n):
        dv[i] = sign * (rho * w[i] / scale)
        v[i] = qddr[i] + kd[i] * ed[i] + kp[i] * e[i] + dv[i]
