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
def slotine_li(D, Dh, G, E, V, B, Z, Y, s, q, qd, qr, qdr, qddr, tau):
    """τ = Y_p(q, q̇, q̇_r, q̈_r)p̂ + K_d r, p̂̇ = Γ⁻¹Y_pᵀr (Huo 3-79, 3-81); p̂ integrated first.
    A frozen estimate (Γ⁻¹ = 0) needs no regressor: Y_p p̂ is then the O(n) Slotine–Li Newton–Euler
    on the model of θ = B p̂ (``estimated_model`` into Dh), p̂̇ = 0."""
    n = q.shape[0]
    L.integrate_estimate(V, s[L.S_DT])
    L.tracking_errors(q, qd, qr, qdr, qddr, G[L.G_LAMBDA], E, True)
    r = E[L.E_R]
    rate, gamma = V[L.V_RATE], V[L.V_GAMMA]
    if adapts(gamma):
        RK.reference_regressor(D, D[0, K.GRAVITY : K.GRAVITY + 3], q, qd, E[L.E_QDR],
                               E[L.E_QDDR], D, Y)
        Yp = L.block(Z, 0, n)[:, : B.shape[1]]
        L.basis_product(Y, B, Yp)
        L.mat_t_vec(Yp, r, rate)
        for j in range(rate.shape[0]):
            rate[j] = gamma[j] * rate[j]
        L.mat_vec(Yp, V[L.V_P], tau)
    else:
        for j in range(rate.shape[0]):
            rate[j] = 0.0
        estimated_model(D, B, V[L.V_P], Dh)
        RK.slotine_li(Dh, Dh[0, K.GRAVITY : K.GRAVITY + 3], q, qd, E[L.E_QDR], E[L.E_QDDR], Dh,
                      tau)
    kd = G[L.G_KD]
    for i in range(n):
        tau[i] = tau[i] + kd[i] * r[i]


@njit(cache=True, inline="always")
def adapts(gamma):
    """Some Γ⁻¹_j ≠ 0: the estimate moves, so the law needs its regressor."""
    for j in range(gamma.shape[0]):
        if gamma[j] != 0.0:
            return True
    return False


@njit(cache=True)
def basis_regressor(D, B, Y, q, qd, qdd, out):
    """Y_p(q, q̇, q̈) = Y(q, q̇, q̈) · regressor_map."""
    RK.regressor(D, D[0, K.GRAVITY : K.GRAVITY + 3], q, qd, qdd, D, Y)
    L.basis_product(Y, B, out)


@njit(cache=True, inline="always")
def basis_entry(B, p, r):
    """θ_r = (B p)_r, one standard parameter of p (control.basis)."""
    acc = 0.0
    for k in range(p.shape[0]):
        acc += B[r, k] * p[k]
    return acc


@njit(cache=True)
def estimated_model(D, B, p, Dh):
    """Dh ← the model D with the inertial parameters θ = B p (so Newton–Euler on Dh gives Y_p p):
    each body's (m, h, J about its origin) and its spatial inertia [[J, [h]], [[h]ᵀ, m1]] as
    packing.py lays them out; kinematics stay Dh's own copy of D's, gravity is copied from D."""
    for k in range(3):
        Dh[0, K.GRAVITY + k] = D[0, K.GRAVITY + k]
    for i in range(D.shape[0]):
        r = 10 * i  # θ_i = [xx, xy, xz, yy, yz, zz, mx, my, mz, m] (regressor_kernels)
        J = Dh[i, K.ROT_INERTIA : K.ROT_INERTIA + 9]
        J[0] = basis_entry(B, p, r)
        J[1] = J[3] = basis_entry(B, p, r + 1)
        J[2] = J[6] = basis_entry(B, p, r + 2)
        J[4] = basis_entry(B, p, r + 3)
        J[5] = J[7] = basis_entry(B, p, r + 4)
        J[8] = basis_entry(B, p, r + 5)
        h0, h1, h2 = basis_entry(B, p, r + 6), basis_entry(B, p, r + 7), basis_entry(B, p, r + 8)
        mass = basis_entry(B, p, r + 9)
        Dh[i, K.FIRST_MOMENT] = h0
        Dh[i, K.FIRST_MOMENT + 1] = h1
        Dh[i, K.FIRST_MOMENT + 2] = h2
        Dh[i, K.MASS] = mass
        I6 = Dh[i, K.INERTIA : K.INERTIA + 36]
        for a in range(3):
            for b in range(3):
                I6[6 * a + b] = J[3 * a + b]
                I6[6 * (a + 3) + b + 3] = mass if a == b else 0.0
        I6[3], I6[4], I6[5] = 0.0, -h2, h1  # [h] upper right, [h]ᵀ lower left
        I6[9], I6[10], I6[11] = h2, 0.0, -h0
        I6[15], I6[16], I6[17] = -h1, h0, 0.0
        I6[18], I6[19], I6[20] = 0.0, h2, -h1
        I6[24], I6[25], I6[26] = -h2, 0.0, h0
        I6[30], I6[31], I6[32] = h1, -h0, 0.0


@K.entry_point
def craig(D, Dh, G, E, V, B, Z, Y, s, q, qd, qr, qdr, qddr, tau):
    """τ = Y_p(q, q̇, q̈*)p̂ = Ĥq̈* + Ĉq̇ + Ĝ, q̈* = q̈_d + K_d ė + K_p e; p̂̇ = Γ⁻¹ΦᵀBᵀRx, Φ =
    Ĥ⁻¹Y_p(q, q̇, q̈) (Huo 3-72, 3-76). Ĥ, Ĉ, Ĝ are the terms of θ = B p̂ (Newton–Euler and the
    composite-body M on Dh, ``estimated_model``: no regressor for them); p̂̇ = 0 while Ĥ(p̂) is
    singular (s[S_SINGULAR] = 1), and a frozen estimate (Γ⁻¹ = 0) forms no Φ."""
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
    Phi = L.block(Z, 1, n)[:, :m]
    H = L.block(Z, 2, n)[:, :n]
    estimated_model(D, B, V[L.V_P], Dh)
    K.inverse_dynamics_kernel(Dh, q, qd, cmd, None, tau)
    K.mass_matrix_kernel(Dh, q, H)
    rate, gamma = V[L.V_RATE], V[L.V_GAMMA]
    adapting = m if adapts(gamma) else 0
    if adapting:
        basis_regressor(D, B, Y, q, qd, E[L.E_ACC], Phi)
    if L.lu_solve(H, Phi[:, :adapting]):
        bx = E[L.E_TMP]
        L.state_gain(L.block(Z, 4, n)[:, : 2 * n], e, ed, bx)
        for j in range(m):
            rate[j] = 0.0
        if adapting:
            L.mat_t_vec(Phi, bx, rate)
        for j in range(m):
            rate[j] = gamma[j] * rate[j]
        s[L.S_SINGULAR] = 0.0
    else:
        for j in range(m):
            rate[j] = 0.0
        s[L.S_SINGULAR] = 1.0
