"""Compiled regressors and the O(n) Slotine–Li torque over the packed model (see ``packing.py``).

A body wrench is linear in the body's ten standard parameters θ = [xx, xy, xz, yy, yz, zz,
mx, my, mz, m] (about the body origin, Huo 2-113). The "inertia map" Φ(x) is the 6×10 matrix
with I(θ) x = Φ(x) θ; every wrench map below is built from it column by column and stored
column-major (column c of a 6×10 block at U[6c : 6c + 6]) so each column is a wrench that the
transform helpers of ``kernels.py`` carry down the tree unchanged.

The workspace rows are the Newton–Euler ones (same placement, velocity and acceleration
columns); the reference velocity V_r and the 6×10 block use columns no other pass keeps.
"""

from __future__ import annotations

from numba import njit

from robot_control.dynamics import kernels as K
from robot_control.dynamics.kernels import (
    ad_motion,
    add_coad_neg,
    add_force_to_parent,
    check_length,
    dot6,
    joint_placement,
    mat6_vec,
    motion_to_child,
)

#: reference velocity V_r of each body (the articulated-body bias column, free here)
W_VR = K.W_PA
#: the body's 6×10 wrench map, column-major, over the inertia scratch columns
W_BLOCK = K.W_IA
#: two 6-vector temporaries right after the block
W_SCRATCH = W_BLOCK + 60
assert W_SCRATCH + 12 <= K.W_SD

_CACHE = True


@njit(cache=_CACHE, inline="always")
def inertia_map_column(x, c, out):
    """out = column c of Φ(x) = ∂(I(θ) x)/∂θ_c, I x = (I_o x_ω + h × x_v, m x_v + x_ω × h)."""
    for k in range(6):
        out[k] = 0.0
    w0, w1, w2 = x[0], x[1], x[2]
    if c < 6:
        # I_o x_ω with I_o = [[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]
        if c == 0:
            out[0] = w0
        elif c == 1:
            out[0] = w1
            out[1] = w0
        elif c == 2:
            out[0] = w2
            out[2] = w0
        elif c == 3:
            out[1] = w1
        elif c == 4:
            out[1] = w2
            out[2] = w1
        else:
            out[2] = w2
    elif c < 9:
        # first moment h = e_k: torque e_k × x_v, force x_ω × e_k
        k = c - 6
        e0 = 1.0 if k == 0 else 0.0
        e1 = 1.0 if k == 1 else 0.0
        e2 = 1.0 if k == 2 else 0.0
        out[0] = e1 * x[5] - e2 * x[4]
        out[1] = e2 * x[3] - e0 * x[5]
        out[2] = e0 * x[4] - e1 * x[3]
        out[3] = w1 * e2 - w2 * e1
        out[4] = w2 * e0 - w0 * e2
        out[5] = w0 * e1 - w1 * e0
    else:
        out[3] = x[3]
        out[4] = x[4]
        out[5] = x[5]


@njit(cache=_CACHE)
def reference_kinematics(P, g, q, qd, qd_r, qdd_r, W):
    """Forward pass: V_i, V_r,i and A_i = X A_λ + S q̈_r + ad_{V_i} S q̇_r (ID_SlotineLi).

    With q̇_r = q̇ and q̈_r = q̈ it is the Newton–Euler pass (Kim Table 2) and A_i = V̇_i. The base
    accelerates by −g, which puts gravity into every A_i.
    """
    n = P.shape[0]
    check_length(q, n)
    check_length(qd, n)
    check_length(qd_r, n)
    check_length(qdd_r, n)
    for i in range(n):
        R = W[i, K.W_R : K.W_R + 9]
        p = W[i, K.W_P : K.W_P + 3]
        V = W[i, K.W_V : K.W_V + 6]
        Vr = W[i, W_VR : W_VR + 6]
        A = W[i, K.W_A : K.W_A + 6]
        S = P[i, K.SCREW : K.SCREW + 6]
        joint_placement(P, i, q[i], R, p)
        lam = int(P[i, K.PARENT])
        if lam < 0:
            base = W[i, K.W_U : K.W_U + 6]
            for k in range(3):
                V[k] = 0.0
                V[k + 3] = 0.0
                Vr[k] = 0.0
                Vr[k + 3] = 0.0
                base[k] = 0.0
                base[k + 3] = -g[k]
            motion_to_child(R, p, base, A)
        else:
            motion_to_child(R, p, W[lam, K.W_V : K.W_V + 6], V)
            motion_to_child(R, p, W[lam, W_VR : W_VR + 6], Vr)
            motion_to_child(R, p, W[lam, K.W_A : K.W_A + 6], A)
        for k in range(6):
            V[k] += S[k] * qd[i]
            Vr[k] += S[k] * qd_r[i]
        c = W[i, K.W_C : K.W_C + 6]
        ad_motion(V, S, c)
        for k in range(6):
            A[k] += c[k] * qd_r[i] + S[k] * qdd_r[i]


@njit(cache=_CACHE, inline="always")
def newton_euler_map(V, A, U, col):
    """U θ = I(θ) V̇ − ad_Vᵀ I(θ) V: U = Φ(V̇) − ad_Vᵀ Φ(V), Huo's parameter-linear body wrench."""
    for c in range(10):
        Uc = U[6 * c : 6 * c + 6]
        inertia_map_column(A, c, Uc)
        inertia_map_column(V, c, col)
        add_coad_neg(V, col, Uc)


@njit(cache=_CACHE, inline="always")
def slotine_li_map(V, Vr, A, U, col, tmp):
    """U θ = I(θ) A + B(I(θ), V) V_r, B = ½(−ad_Vᵀ I − I ad_V + icrf(I V)) as in coriolis_matrix.

    B V_r = ½[−ad_Vᵀ (I V_r) − I (ad_V V_r) − ad_{V_r}ᵀ (I V)], so
    U = Φ(A − ½ ad_V V_r) + ½[−ad_Vᵀ Φ(V_r) − ad_{V_r}ᵀ Φ(V)].
    """
    a = tmp[0:6]
    half = tmp[6:12]
    ad_motion(V, Vr, a)
    for k in range(6):
        a[k] = A[k] - 0.5 * a[k]
    for c in range(10):
        Uc = U[6 * c : 6 * c + 6]
        inertia_map_column(a, c, Uc)
        for k in range(6):
            half[k] = 0.0
        inertia_map_column(Vr, c, col)
        add_coad_neg(V, col, half)
        inertia_map_column(V, c, col)
        add_coad_neg(Vr, col, half)
        for k in range(6):
            Uc[k] += 0.5 * half[k]


@njit(cache=_CACHE, inline="always")
def compose_into(Ra, pa, R, p):
    """(R, p) ← (R_a, p_a)·(R, p): a placement in frame b re-expressed in a, given b's pose in a."""
    for c in range(3):
        x, y, z = R[c], R[3 + c], R[6 + c]
        R[c] = Ra[0] * x + Ra[1] * y + Ra[2] * z
        R[3 + c] = Ra[3] * x + Ra[4] * y + Ra[5] * z
        R[6 + c] = Ra[6] * x + Ra[7] * y + Ra[8] * z
    x, y, z = p[0], p[1], p[2]
    p[0] = Ra[0] * x + Ra[1] * y + Ra[2] * z + pa[0]
    p[1] = Ra[3] * x + Ra[4] * y + Ra[5] * z + pa[1]
    p[2] = Ra[6] * x + Ra[7] * y + Ra[8] * z + pa[2]


@njit(cache=_CACHE)
def project_blocks(P, W, Y):
    """Y_ij = S_iᵀ X*_{i←j} U_j for j in the subtree of i, else 0 (Huo 2-137 … 2-146).

    S_iᵀ X*_{i←j} = (X_{j←i} S_i)ᵀ: one motion transform of the ancestor's screw into frame j
    replaces carrying all ten wrench columns of U_j up the tree.
    """
    n = P.shape[0]
    for r in range(n):
        for c in range(10 * n):
            Y[r, c] = 0.0
    for j in range(n):
        U = W[j, W_BLOCK : W_BLOCK + 60]
        S = P[j, K.SCREW : K.SCREW + 6]
        for c in range(10):
            Y[j, 10 * j + c] = dot6(S, U[6 * c : 6 * c + 6])
        i = int(P[j, K.PARENT])
        if i < 0:
            continue
        # T_{i,j}, the pose of body j in its ancestor i, starting from the parent
        R = W[j, W_SCRATCH : W_SCRATCH + 9]
        p = W[j, W_SCRATCH + 9 : W_SCRATCH + 12]
        K.copy_into(W[j, K.W_R : K.W_R + 9], R)
        K.copy_into(W[j, K.W_P : K.W_P + 3], p)
        s = W[j, K.W_F : K.W_F + 6]
        while True:
            motion_to_child(R, p, P[i, K.SCREW : K.SCREW + 6], s)
            for c in range(10):
                Y[i, 10 * j + c] = dot6(s, U[6 * c : 6 * c + 6])
            lam = int(P[i, K.PARENT])
            if lam < 0:
                break
            compose_into(W[i, K.W_R : K.W_R + 9], W[i, K.W_P : K.W_P + 3], R, p)
            i = lam


@njit(cache=_CACHE)
def regressor(P, g, q, qd, qdd, W, Y):
    """Y(q, q̇, q̈) with Y θ = M q̈ + C q̇ + g (Huo 2-113) by the parameter-linear Newton–Euler."""
    reference_kinematics(P, g, q, qd, qd, qdd, W)
    for i in range(P.shape[0]):
        newton_euler_map(W[i, K.W_V : K.W_V + 6], W[i, K.W_A : K.W_A + 6],
                         W[i, W_BLOCK : W_BLOCK + 60], W[i, K.W_F : K.W_F + 6])
    project_blocks(P, W, Y)


@njit(cache=_CACHE)
def reference_regressor(P, g, q, qd, qd_r, qdd_r, W, Y):
    """Y(q, q̇, q̇_r, q̈_r) with Y θ = M q̈_r + C(q, q̇) q̇_r + g, C Christoffel-consistent (Huo 3-79)."""
    reference_kinematics(P, g, q, qd, qd_r, qdd_r, W)
    for i in range(P.shape[0]):
        slotine_li_map(W[i, K.W_V : K.W_V + 6], W[i, W_VR : W_VR + 6], W[i, K.W_A : K.W_A + 6],
                       W[i, W_BLOCK : W_BLOCK + 60], W[i, K.W_F : K.W_F + 6],
                       W[i, W_SCRATCH : W_SCRATCH + 12])
    project_blocks(P, W, Y)


@njit(cache=_CACHE)
def slotine_li(P, g, q, qd, qd_r, qdd_r, W, tau):
    """τ = M q̈_r + C(q, q̇) q̇_r + g in O(n): F_i = I_i A_i + B(I_i, V_i) V_r,i, then S_iᵀ F_i."""
    reference_kinematics(P, g, q, qd, qd_r, qdd_r, W)
    n = P.shape[0]
    for i in range(n):
        I = P[i, K.INERTIA : K.INERTIA + 36]
        V = W[i, K.W_V : K.W_V + 6]
        Vr = W[i, W_VR : W_VR + 6]
        F = W[i, K.W_F : K.W_F + 6]
        a = W[i, W_BLOCK : W_BLOCK + 6]
        IVr = W[i, W_BLOCK + 6 : W_BLOCK + 12]
        IV = W[i, W_BLOCK + 12 : W_BLOCK + 18]
        # B V_r = ½[−ad_Vᵀ (I V_r) − I (ad_V V_r) − ad_{V_r}ᵀ (I V)]; fold I(ad_V V_r) into I A
        ad_motion(V, Vr, a)
        A = W[i, K.W_A : K.W_A + 6]
        for k in range(6):
            a[k] = A[k] - 0.5 * a[k]
        mat6_vec(I, a, F)
        mat6_vec(I, Vr, IVr)
        mat6_vec(I, V, IV)
        half = W[i, W_BLOCK + 18 : W_BLOCK + 24]
        for k in range(6):
            half[k] = 0.0
        add_coad_neg(V, IVr, half)
        add_coad_neg(Vr, IV, half)
        for k in range(6):
            F[k] += 0.5 * half[k]
    for i in range(n - 1, -1, -1):
        F = W[i, K.W_F : K.W_F + 6]
        tau[i] = dot6(P[i, K.SCREW : K.SCREW + 6], F)
        lam = int(P[i, K.PARENT])
        if lam >= 0:
            add_force_to_parent(W[i, K.W_R : K.W_R + 9], W[i, K.W_P : K.W_P + 3], F,
                                W[lam, K.W_F : K.W_F + 6])
