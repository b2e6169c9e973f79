"""Compiled adaptive laws: Slotine–Li (Huo C10) and Craig–Hsu–Sastry (Huo C9), one period a call.

Both laws' ``compute`` call these kernels, and so does the offline loop (control.compiled), so the
two give the same bits. Array layout: control.law_kernels.
"""

from __future__ import annotations

from numba import njit

from robot_control.control import law_kernels as L
from robot_control.dynamics import kernels as K
from robot_control.dynamics import regressor_kernels as RK


@K.entry_point
def slotine_li(D, G, E, V, B, Z, Y, s, q, qd, qr, qdr, qddr, tau):
    """τ = Y_p(q, q̇, q̇_r, q̈_r)p̂ + K_d r, p̂̇ = Γ⁻¹Y_pᵀr (Huo 3-79, 3-81); p̂ integrated first."""
    n = q.shape[0]
    L.integrate_estimate(V, s[L.S_DT])
    L.tracking_errors(q, qd, qr, qdr, qddr, G[L.G_LAMBDA], E, True)
    r = E[L.E_R]
    RK.reference_regressor(D, D[0, K.GRAVITY : K.GRAVITY + 3], q, qd, E[L.E_QDR], E[L.E_QDDR],
                           D, Y)
    Yp = L.block(Z, 0, n)[:, : B.shape[1]]
    L.basis_product(Y, B, Yp)
    rate, gamma = V[L.V_RATE], V[L.V_GAMMA]
    L.mat_t_vec(Yp, r, rate)
    for j in range(rate.shape[0]):
        rate[j] = gamma[j] * rate[j]
    L.mat_vec(Yp, V[L.V_P], tau)
    kd = G[L.G_KD]
    for i in range(n):
        tau[i] = tau[i] + kd[i] * r[i]


@njit(cache=True)
def basis_regressor(D, B, Y, q, qd, qdd, out):
    """Y_p(q, q̇, q̈) = Y(q, q̇, q̈) · regressor_map."""
    RK.regressor(D, D[0, K.GRAVITY : K.GRAVITY + 3], q, qd, qdd, D, Y)
    L.basis_product(Y, B, out)


@njit(cache=True)
def estimated_mass_matrix(D, B, Y, Yp, p, q, zero, unit, g, M):
    """M̂(q) of p: column j is Y_p(q, 0, e_j)p − Y_p(q, 0, 0)p, symmetrised (control.basis)."""
    n = q.shape[0]
    for i in range(n):
        zero[i] = 0.0
        unit[i] = 0.0
    basis_regressor(D, B, Y, q, zero, zero, Yp)
    L.mat_vec(Yp, p, g)
    for j in range(n):
        unit[j] = 1.0
        basis_regressor(D, B, Y, q, zero, unit, Yp)
        for i in range(n):
            acc = 0.0
            for c in range(p.shape[0]):
                acc += Yp[i, c] * p[c]
            M[i, j] = acc - g[i]
        unit[j] = 0.0
    for i in range(n):
        for j in range(i):
            M[i, j] = 0.5 * (M[i, j] + M[j, i])
            M[j, i] = M[i, j]


@K.entry_point
def craig(D, G, E, V, B, Z, Y, s, q, qd, qr, qdr, qddr, tau):
    """τ = Y_p(q, q̇, q̈*)p̂, q̈* = q̈_d + K_d ė + K_p e; p̂̇ = Γ⁻¹ΦᵀBᵀRx, Φ = Ĥ⁻¹Y_p(q, q̇, q̈)
    (Huo 3-72, 3-76); p̂̇ = 0 while Ĥ(p̂) is singular (s[S_SINGULAR] = 1)."""
    n, m = q.shape[0], B.shape[1]
    dt = s[L.S_DT]
    L.integrate_estimate(V, dt)
    L.tracking_errors(q, qd, qr, qdr, qddr, G[L.G_LAMBDA], E, False)
    e, ed = E[L.E_E], E[L.E_ED]
    L.filtered_acceleration(qd, dt, E, s)
    kp, kd = G[L.G_KP], G[L.G_KD]
    cmd = E[L.E_TMP]
    for i in range(n):
        cmd[i] = qddr[i] + kd[i] * ed[i] + kp[i] * e[i]
    Yp = L.block(Z, 0, n)[:, :m]
    Phi = L.block(Z, 1, n)[:, :m]
    H = L.block(Z, 2, n)[:, :n]
    p = V[L.V_P]
    basis_regressor(D, B, Y, q, qd, cmd, Yp)
    L.mat_vec(Yp, p, tau)
    zero, unit = E[L.E_W], E[L.E_V]
    estimated_mass_matrix(D, B, Y, Yp, p, q, zero, unit, E[L.E_TMP], H)
    basis_regressor(D, B, Y, q, qd, E[L.E_ACC], Phi)
    rate = V[L.V_RATE]
    if L.lu_solve(H, Phi):
        bx = E[L.E_TMP]
        L.state_gain(L.block(Z, 4, n)[:, : 2 * n], e, ed, bx)
        L.mat_t_vec(Phi, bx, rate)
        gamma = V[L.V_GAMMA]
        for j in range(m):
            rate[j] = gamma[j] * rate[j]
        s[L.S_SINGULAR] = 0.0
    else:
        for j in range(m):
            rate[j] = 0.0
        s[L.S_SINGULAR] = 1.0
