"""Forward dynamics by the articulated-body algorithm in base coordinates (Featherstone RBDA §7.3).

Every quantity — screws S_i, twists V_i, articulated inertias I^A_i and bias wrenches p^A_i — is
expressed in the base frame at the base origin (world_kernels's poses, screws and rigid inertias),
as Pinocchio's ABA does. A body's articulated inertia then adds to its parent's as it is: the
backward pass has no 6×6 congruence transform per joint (the body-frame form's dearest step), and
the rigid inertias move to the base in their 10-number form (a rotation, world_kernels).

The three passes are inlined into their callers: ``aba`` here, and the plant's surface pass
(sim.plant_kernels), which adds the surface's push to the contact body's bias wrench between the
first and the second.
"""

from __future__ import annotations

from numba import njit

from robot_control.dynamics.spatial_kernels import (
    PARENT,
    ROW_PACKED,
    W_QDD,
    ad_motion,
    add_coad_neg,
    add_force_to_parent,
    check_length,
    dot6,
)
from robot_control.dynamics.world_kernels import (
    O_B,
    O_H,
    O_J,
    O_M,
    O_P,
    O_R,
    O_S,
    O_SD,
    O_V,
    inertia_times,
    world_bodies,
    world_twist,
)

# Workspace columns besides world_kernels's pose O_R/O_P, screw O_S, twist O_V and rigid inertia
# O_M/O_H/O_J: bias acceleration c_i (in O_SD), the body's acceleration (in O_B, which the ABA
# does not otherwise use), articulated inertia I^A (6×6 row-major), bias wrench p^A, U = I^A S and
# (D, u). They end before W_QDD, where a derivative pass reads the q̈ this ABA wrote.
A_C, A_ACC = O_SD, O_B
A_IA, A_PA, A_U, A_SD = (ROW_PACKED + c for c in (67, 103, 109, 115))
assert A_SD + 2 <= W_QDD

_CACHE = True


@njit(cache=_CACHE)
def aba(P, g, q, qd, tau, fext, W, qdd):
    """Forward dynamics by the articulated-body algorithm (RBDA Table 7.1, base coordinates);
    fext (body-frame wrenches, one row per body) may be None."""
    n = P.shape[0]
    check_length(q, n)
    check_length(qd, n)
    check_length(tau, n)
    aba_velocities(P, q, qd, fext, W)
    aba_articulated(P, tau, W)
    aba_accelerations(P, g, W, qdd)


@njit(cache=_CACHE, inline="always")
def aba_velocities(P, q, qd, fext, W):
    """ABA pass 1: world poses and screws, twists V_i = V_λ + S_i q̇_i, c_i = (V_i × S_i) q̇_i,
    I^A_i = I_i and p^A_i = V_i ×* I_i V_i − F_ext (RBDA Table 7.1; fext may be None)."""
    world_bodies(P, q, W)
    for i in range(P.shape[0]):
        world_twist(P, i, qd, W)
        S = W[i, O_S : O_S + 6]
        V = W[i, O_V : O_V + 6]
        c = W[i, A_C : A_C + 6]
        ad_motion(V, S, c)
        for k in range(6):
            c[k] *= qd[i]
        spatial_inertia(W, i, W[i, A_IA : A_IA + 36])
        pA = W[i, A_PA : A_PA + 6]
        for k in range(6):
            pA[k] = 0.0
        if fext is not None:  # the body-frame wrench seen at the base origin
            f = W[i, A_ACC : A_ACC + 6]
            for k in range(6):
                f[k] = -fext[i, k]
            add_force_to_parent(W[i, O_R : O_R + 9], W[i, O_P : O_P + 3], f, pA)
        h = W[i, A_U : A_U + 6]
        inertia_times(W, i, V, h)
        add_coad_neg(V, h, pA)


@njit(cache=_CACHE, inline="always")
def spatial_inertia(W, i, out):
    """out = [[J, [h]], [−[h], m 1]] (row-major 6×6) from body i's rigid inertia (m, h, J) in W."""
    m = W[i, O_M]
    h0, h1, h2 = W[i, O_H], W[i, O_H + 1], W[i, O_H + 2]
    for r in range(3):
        for c in range(3):
            out[6 * r + c] = W[i, O_J + 3 * r + c]
            out[6 * (r + 3) + c + 3] = m if r == c else 0.0
    out[3], out[4], out[5] = 0.0, -h2, h1
    out[9], out[10], out[11] = h2, 0.0, -h0
    out[15], out[16], out[17] = -h1, h0, 0.0
    out[18], out[19], out[20] = 0.0, h2, -h1
    out[24], out[25], out[26] = -h2, 0.0, h0
    out[30], out[31], out[32] = h1, -h0, 0.0


@njit(cache=_CACHE, inline="always")
def aba_articulated(P, tau, W):
    """ABA pass 2 (leaves to root): U_i = I^A_i S_i, D_i = S_iᵀU_i, u_i = τ_i − S_iᵀp^A_i; the
    parent gains I^a = I^A − U Uᵀ/D and p^a = p^A + I^a c + U u/D, in the same axes."""
    n = P.shape[0]
    for i in range(n - 1, -1, -1):
        # operands are read into scalars first: the compiler must assume any store into W can
        # change any entry of W, and would otherwise load them again after every store
        S = W[i, O_S : O_S + 6]
        s0, s1, s2, s3, s4, s5 = S[0], S[1], S[2], S[3], S[4], S[5]
        IA = W[i, A_IA : A_IA + 36]
        pA = W[i, A_PA : A_PA + 6]
        U = W[i, A_U : A_U + 6]
        for r in range(6):
            row = IA[6 * r : 6 * r + 6]
            U[r] = ((((row[0] * s0 + row[1] * s1) + row[2] * s2) + row[3] * s3) + row[4] * s4
                    + row[5] * s5)
        u0, u1, u2, u3, u4, u5 = U[0], U[1], U[2], U[3], U[4], U[5]
        D = s0 * u0 + s1 * u1 + s2 * u2 + s3 * u3 + s4 * u4 + s5 * u5
        u = tau[i] - (s0 * pA[0] + s1 * pA[1] + s2 * pA[2] + s3 * pA[3] + s4 * pA[4] + s5 * pA[5])
        W[i, A_SD] = D
        W[i, A_SD + 1] = u
        lam = int(P[i, PARENT])
        if lam < 0:
            continue
        # I^a = I^A − U Uᵀ/D added to the parent's as it is computed (U_r U_c is symmetric in r, c:
        # so is I^a, exactly), and I^a c for the parent's bias wrench; one division per joint
        dinv = 1.0 / D
        IAp = W[lam, A_IA : A_IA + 36]
        pAp = W[lam, A_PA : A_PA + 6]
        c = W[i, A_C : A_C + 6]
        c0, c1, c2, c3, c4, c5 = c[0], c[1], c[2], c[3], c[4], c[5]
        ud = u * dinv
        for r in range(6):
            ur = U[r]
            row = IA[6 * r : 6 * r + 6]
            x0 = row[0] - ur * u0 * dinv
            x1 = row[1] - ur * u1 * dinv
            x2 = row[2] - ur * u2 * dinv
            x3 = row[3] - ur * u3 * dinv
            x4 = row[4] - ur * u4 * dinv
            x5 = row[5] - ur * u5 * dinv
            acc = (((((0.0 + x0 * c0) + x1 * c1) + x2 * c2) + x3 * c3) + x4 * c4) + x5 * c5
            pAp[r] += pA[r] + acc + ur * ud
            out = IAp[6 * r : 6 * r + 6]
            out[0] += x0
            out[1] += x1
            out[2] += x2
            out[3] += x3
            out[4] += x4
            out[5] += x5


@njit(cache=_CACHE, inline="always")
def aba_accelerations(P, g, W, qdd):
    """ABA pass 3 (root to leaves): a'_i = a_λ + c_i (the base's a = (0, −g)),
    q̈_i = (u_i − U_iᵀa'_i)/D_i, a_i = a'_i + S_i q̈_i."""
    n = P.shape[0]
    for i in range(n):
        A = W[i, A_ACC : A_ACC + 6]
        c = W[i, A_C : A_C + 6]
        lam = int(P[i, PARENT])
        for k in range(6):
            if lam >= 0:
                A[k] = W[lam, A_ACC + k] + c[k]
            else:
                A[k] = (0.0 if k < 3 else -g[k - 3]) + c[k]
        U = W[i, A_U : A_U + 6]
        qdd[i] = (W[i, A_SD + 1] - dot6(U, A)) / W[i, A_SD]
        S = W[i, O_S : O_S + 6]
        for k in range(6):
            A[k] += S[k] * qdd[i]
