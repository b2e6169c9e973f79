"""Compiled recursions over a model packed as one float array (see ``packing.py``).

Spatial vectors are angular-first, expressed in body frames (Kim §1–2). The packed row of
body i holds its parent λ(i), joint type, screw S_i, fixed offset M_i and spatial inertia
I_i. Each kernel recomputes the joint placements T_{λ(i),i}(q) = M_i exp([S_i] q_i), so a
call is self-contained; the only state is the caller's preallocated workspace.

The data-array layout and the inlined spatial helpers live in ``spatial_kernels.py``; the
articulated-body algorithm, in base coordinates, in ``aba_kernels.py`` (re-exported here).
"""

from __future__ import annotations

from numba import njit

from robot_control.dynamics.aba_kernels import aba  # noqa: F401 (re-exported as K.aba)
from robot_control.dynamics.spatial_kernels import (  # noqa: F401 (re-exported as K.*)
    AXIS,
    FIRST_MOMENT,
    GRAVITY,
    INERTIA,
    MASS,
    PARENT,
    POS,
    ROT,
    ROT_INERTIA,
    ROW_PACKED,
    SCREW,
    TYPE,
    W_A,
    W_BC,
    W_C,
    W_F,
    W_IA,
    W_P,
    W_PA,
    W_QDD,
    W_R,
    W_SD,
    W_TMP,
    W_U,
    W_V,
    WORK,
    ad_motion,
    add_coad_neg,
    add_congruence_to_parent,
    add_force_to_parent,
    check_length,
    copy_into,
    dot6,
    entry_point,
    joint_placement,
    mat6_vec,
    mat6T_vec,
    matrix_view,
    motion_to_child,
    rigid_inertia_times,
    rotate_block,
)
from robot_control.dynamics.world_kernels import crba_world

_CACHE = True


# ----------------------------------------------------------------------------- algorithms
@njit(cache=_CACHE)
def rnea(P, g, q, qd, qdd, fext, W, tau):
    """Recursive Newton–Euler inverse dynamics with external wrenches (Kim Table 2); fext may be None."""
    n = P.shape[0]
    check_length(q, n)
    check_length(qd, n)
    check_length(qdd, n)
    for i in range(n):
        R = W[i, W_R : W_R + 9]
        p = W[i, W_P : W_P + 3]
        V = W[i, W_V : W_V + 6]
        A = W[i, W_A : W_A + 6]
        S = P[i, SCREW : SCREW + 6]
        joint_placement(P, i, q[i], R, p)
        lam = int(P[i, PARENT])
        if lam < 0:
            base = W[i, W_PA : W_PA + 6]
            for k in range(3):
                V[k] = 0.0
                V[k + 3] = 0.0
                base[k] = 0.0
                base[k + 3] = -g[k]  # base accelerates upward by −g: gravity for free (Kim §2.2)
            motion_to_child(R, p, base, A)
        else:
            motion_to_child(R, p, W[lam, W_V : W_V + 6], V)
            motion_to_child(R, p, W[lam, W_A : W_A + 6], A)
        # V_i = Ad V_λ + S q̇ ;  V̇_i = Ad V̇_λ + ad_{V_i} S q̇ + S q̈
        for k in range(6):
            V[k] += S[k] * qd[i]
        c = W[i, W_C : W_C + 6]
        ad_motion(V, S, c)
        for k in range(6):
            A[k] += c[k] * qd[i] + S[k] * qdd[i]
        # F_i = I V̇ − ad_Vᵀ (I V) − F_ext
        F = W[i, W_F : W_F + 6]
        Iv = W[i, W_U : W_U + 6]
        rigid_inertia_times(P, i, A, F)
        rigid_inertia_times(P, i, V, Iv)
        add_coad_neg(V, Iv, F)
        if fext is not None:
            for k in range(6):
                F[k] -= fext[i, k]
    for i in range(n - 1, -1, -1):
        F = W[i, W_F : W_F + 6]
        tau[i] = dot6(P[i, SCREW : SCREW + 6], F)
        lam = int(P[i, PARENT])
        if lam >= 0:
            add_force_to_parent(W[i, W_R : W_R + 9], W[i, W_P : W_P + 3], F, W[lam, W_F : W_F + 6])


@njit(cache=_CACHE)
def gravity_rnea(P, g, q, W, tau):
    """g(q): Newton–Euler at rest (Kim Table 2 with V = V̇_rel = 0), a pure-linear gravity pass.

    With no velocity every body's acceleration is the base's (0, −g) rotated into it, a_i = Rᵢᵀ a_λ,
    and its wrench is (h × a_i, m a_i); the backward pass is the RNEA's.
    """
    n = P.shape[0]
    check_length(q, n)
    for i in range(n):
        R = W[i, W_R : W_R + 9]
        p = W[i, W_P : W_P + 3]
        joint_placement(P, i, q[i], R, p)
        lam = int(P[i, PARENT])
        if lam < 0:
            b0, b1, b2 = -g[0], -g[1], -g[2]
        else:
            b0, b1, b2 = W[lam, W_A + 3], W[lam, W_A + 4], W[lam, W_A + 5]
        a0 = R[0] * b0 + R[3] * b1 + R[6] * b2
        a1 = R[1] * b0 + R[4] * b1 + R[7] * b2
        a2 = R[2] * b0 + R[5] * b1 + R[8] * b2
        W[i, W_A + 3] = a0
        W[i, W_A + 4] = a1
        W[i, W_A + 5] = a2
        m = P[i, MASS]
        h0, h1, h2 = P[i, FIRST_MOMENT], P[i, FIRST_MOMENT + 1], P[i, FIRST_MOMENT + 2]
        F = W[i, W_F : W_F + 6]
        F[0] = h1 * a2 - h2 * a1
        F[1] = h2 * a0 - h0 * a2
        F[2] = h0 * a1 - h1 * a0
        F[3] = m * a0
        F[4] = m * a1
        F[5] = m * a2
    for i in range(n - 1, -1, -1):
        F = W[i, W_F : W_F + 6]
        tau[i] = dot6(P[i, SCREW : SCREW + 6], F)
        lam = int(P[i, PARENT])
        if lam >= 0:
            add_force_to_parent(W[i, W_R : W_R + 9], W[i, W_P : W_P + 3], F, W[lam, W_F : W_F + 6])


# ------------------------------------------------------------- entry points on the data array
# One array D holds a copy of the packed model (gravity in row 0) and a workspace: one user's
# data array (packing.Data).
@entry_point
def inverse_dynamics_kernel(D, q, qd, qdd, fext, tau):
    """``rnea`` on the model's data array with its own gravity."""
    rnea(D, D[0, GRAVITY : GRAVITY + 3], q, qd, qdd, fext, D, tau)


@entry_point
def gravity_kernel(D, q, tau):
    """``gravity_rnea`` on the model's data array."""
    gravity_rnea(D, D[0, GRAVITY : GRAVITY + 3], q, D, tau)


@entry_point
def mass_matrix_kernel(D, q, M):
    """``crba_world`` on the model's data array."""
    crba_world(D, q, D, M)


@entry_point
def forward_dynamics_kernel(D, q, qd, tau, fext, qdd):
    """``aba`` on the model's data array with its own gravity."""
    aba(D, D[0, GRAVITY : GRAVITY + 3], q, qd, tau, fext, D, qdd)


@entry_point
def placements(P, q, T):
    """World placement of every body: T_{0,i} = T_{0,λ(i)} T_{λ(i),i}(q_i) (forward kinematics).

    P is a data array (packing.Data.D): its row-0 scratch holds each joint's
    placement, so nothing is allocated and a first call loads no allocating code (numba's array
    runtime and its imports cost a fresh process ~20 ms)."""
    n = P.shape[0]
    check_length(q, n)
    R = P[0, W_TMP : W_TMP + 9]
    p = P[0, W_TMP + 9 : W_TMP + 12]
    for i in range(n):
        joint_placement(P, i, q[i], R, p)
        lam = int(P[i, PARENT])
        if lam < 0:
            for r in range(3):
                for c in range(3):
                    T[i, r, c] = R[3 * r + c]
                T[i, r, 3] = p[r]
        else:
            for r in range(3):
                for c in range(3):
                    T[i, r, c] = (T[lam, r, 0] * R[c] + T[lam, r, 1] * R[3 + c]
                                  + T[lam, r, 2] * R[6 + c])
                T[i, r, 3] = (T[lam, r, 0] * p[0] + T[lam, r, 1] * p[1] + T[lam, r, 2] * p[2]
                              + T[lam, r, 3])
        T[i, 3, 0] = 0.0
        T[i, 3, 1] = 0.0
        T[i, 3, 2] = 0.0
        T[i, 3, 3] = 1.0
