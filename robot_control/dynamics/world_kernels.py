"""Composite-body algorithms in base coordinates: mass matrix, Coriolis matrix, frame Jacobian.

Expressed in the base frame, a composite body's inertia is a plain sum of its members' inertias
(no congruence transforms in the backward pass), and every matrix entry is one 6-vector dot
product S_iᵀ(Ic_j S_j). Rigid inertias are kept in their 10-number form (m, h = m c, J about
the base origin), so moving one to the base costs a rotation, not a 6×6 congruence.
"""

from __future__ import annotations

from numba import njit

from robot_control.dynamics.spatial_kernels import (
    AXIS,
    FIRST_MOMENT,
    MASS,
    PARENT,
    ROT_INERTIA,
    ROW_PACKED,
    SCREW,
    W_TMP,
    check_length,
    copy_into,
    dot6,
    entry_point,
    joint_placement,
)

# Workspace columns: world rotation and position, world screw, its rate, twist, composite inertia.
# (Like kernels.W_*, they start after the packed model row: the model's data array holds both.)
O_R, O_P, O_S, O_SD, O_V, O_M, O_H, O_J, O_B, O_U, O_TMP = (
    ROW_PACKED + c for c in (0, 9, 12, 18, 24, 30, 31, 34, 43, 52, 55)
)

#: row 0 columns where ``frame_jacobian_world`` leaves the frame origin o in base coordinates
FRAME_ORIGIN = W_TMP + 12

_CACHE = True


@njit(cache=_CACHE, inline="always")
def world_pose(P, i, q, W, R, p):
    """T_{0,i} = T_{0,λ(i)} T_{λ(i),i}(q_i), written into W[i] (rotation row-major, position)."""
    joint_placement(P, i, q[i], R, p)
    compose_world(P, i, W, R, p)


@njit(cache=_CACHE, inline="always")
def compose_world(P, i, W, R, p):
    """W[i] ← T_{0,λ(i)} (R, p): body i's world pose from its placement in the parent (R, p)."""
    Rw = W[i, O_R : O_R + 9]
    pw = W[i, O_P : O_P + 3]
    lam = int(P[i, PARENT])
    if lam < 0:
        copy_into(R, Rw)
        copy_into(p, pw)
        return
    A = W[lam, O_R : O_R + 9]
    a = W[lam, O_P : O_P + 3]
    # R and p in scalars first: a store into W may alias them as far as the compiler knows
    r0, r1, r2, r3, r4, r5, r6, r7, r8 = R[0], R[1], R[2], R[3], R[4], R[5], R[6], R[7], R[8]
    p0, p1, p2 = p[0], p[1], p[2]
    for r in range(3):
        A0, A1, A2, ar = A[3 * r], A[3 * r + 1], A[3 * r + 2], a[r]
        Rw[3 * r] = A0 * r0 + A1 * r3 + A2 * r6
        Rw[3 * r + 1] = A0 * r1 + A1 * r4 + A2 * r7
        Rw[3 * r + 2] = A0 * r2 + A1 * r5 + A2 * r8
        pw[r] = A0 * p0 + A1 * p1 + A2 * p2 + ar


@njit(cache=_CACHE, inline="always")
def world_screw(P, i, W):
    """S_i in base coordinates: Ad_{T_{0,i}} S_i (Kim eq. 1.10)."""
    R = W[i, O_R : O_R + 9]
    p = W[i, O_P : O_P + 3]
    s = P[i, SCREW : SCREW + 6]
    S = W[i, O_S : O_S + 6]
    axis = P[i, AXIS]
    if axis != 0.0:  # revolute about ±e_a: S_ω is ±column a of R, no products
        a = int(abs(axis)) - 1
        sign = 1.0 if axis > 0.0 else -1.0
        if a >= 3:  # through a point off the origin: S_v = R v (then the shift by p below)
            a -= 3
            for r in range(3):
                S[r] = sign * R[3 * r + a]
                S[r + 3] = R[3 * r] * s[3] + R[3 * r + 1] * s[4] + R[3 * r + 2] * s[5]
        else:
            for r in range(3):
                S[r] = sign * R[3 * r + a]
                S[r + 3] = 0.0
    else:
        for r in range(3):
            S[r] = R[3 * r] * s[0] + R[3 * r + 1] * s[1] + R[3 * r + 2] * s[2]
            S[r + 3] = R[3 * r] * s[3] + R[3 * r + 1] * s[4] + R[3 * r + 2] * s[5]
    S[3] += p[1] * S[2] - p[2] * S[1]
    S[4] += p[2] * S[0] - p[0] * S[2]
    S[5] += p[0] * S[1] - p[1] * S[0]


# A call, not inlined: the composite-body (M, C) and articulated-body passes all begin with it,
# and compiled once (and cached) it is shared by them instead of typed and lowered in each
@njit(cache=_CACHE)
def world_bodies(P, q, W):
    """Every body's world pose T_{0,i}, screw S_i and inertia at q, root to leaves: the forward
    sweep the composite-body and articulated-body passes share (Featherstone RBDA §6.2, 7.3)."""
    R = W[0, W_TMP : W_TMP + 9]
    p = W[0, W_TMP + 9 : W_TMP + 12]
    for i in range(P.shape[0]):
        world_pose(P, i, q, W, R, p)
        world_screw(P, i, W)
        world_inertia(P, i, W)


@njit(cache=_CACHE, inline="always")
def world_twist(P, i, qd, W):
    """V_i = V_λ + S_i q̇_i in base coordinates, from the world screws ``world_bodies`` wrote."""
    lam = int(P[i, PARENT])
    for k in range(6):
        W[i, O_V + k] = W[i, O_S + k] * qd[i] + (W[lam, O_V + k] if lam >= 0 else 0.0)


@njit(cache=_CACHE, inline="always")
def world_inertia(P, i, W):
    """Body i's rigid inertia about the base origin (h = R h_b + m p; J shifted by the parallel-axis rule)."""
    R = W[i, O_R : O_R + 9]
    p = W[i, O_P : O_P + 3]
    m = P[i, MASS]
    hb = P[i, FIRST_MOMENT : FIRST_MOMENT + 3]
    Jb = P[i, ROT_INERTIA : ROT_INERTIA + 9]
    W[i, O_M] = m
    h = W[i, O_H : O_H + 3]
    J = W[i, O_J : O_J + 9]
    # everything in scalars first: a store into W may alias any operand as far as the compiler
    # knows (it would load them again after each store)
    r0, r1, r2, r3, r4, r5, r6, r7, r8 = R[0], R[1], R[2], R[3], R[4], R[5], R[6], R[7], R[8]
    p0, p1, p2 = p[0], p[1], p[2]
    hr0 = r0 * hb[0] + r1 * hb[1] + r2 * hb[2]
    hr1 = r3 * hb[0] + r4 * hb[1] + r5 * hb[2]
    hr2 = r6 * hb[0] + r7 * hb[1] + r8 * hb[2]
    h[0] = hr0 + m * p0
    h[1] = hr1 + m * p1
    h[2] = hr2 + m * p2
    # rows of R J_b
    a0 = r0 * Jb[0] + r1 * Jb[3] + r2 * Jb[6]
    a1 = r0 * Jb[1] + r1 * Jb[4] + r2 * Jb[7]
    a2 = r0 * Jb[2] + r1 * Jb[5] + r2 * Jb[8]
    b0 = r3 * Jb[0] + r4 * Jb[3] + r5 * Jb[6]
    b1 = r3 * Jb[1] + r4 * Jb[4] + r5 * Jb[7]
    b2 = r3 * Jb[2] + r4 * Jb[5] + r5 * Jb[8]
    c0 = r6 * Jb[0] + r7 * Jb[3] + r8 * Jb[6]
    c1 = r6 * Jb[1] + r7 * Jb[4] + r8 * Jb[7]
    c2 = r6 * Jb[2] + r7 * Jb[5] + r8 * Jb[8]
    pp = p0 * p0 + p1 * p1 + p2 * p2
    ph = p0 * hr0 + p1 * hr1 + p2 * hr2
    d = 2.0 * ph + m * pp
    # J = R J_b Rᵀ − [p][h'] − [h'][p] − m[p]², symmetric: the upper triangle, mirrored;
    # −[p][h'] − [h'][p] = 2(p·h')1 − p h'ᵀ − h' pᵀ ;  −m[p]² = m(|p|²1 − p pᵀ)
    J[0] = (a0 * r0 + a1 * r1 + a2 * r2) + (-p0 * hr0 - hr0 * p0 - m * p0 * p0) + d
    J[4] = (b0 * r3 + b1 * r4 + b2 * r5) + (-p1 * hr1 - hr1 * p1 - m * p1 * p1) + d
    J[8] = (c0 * r6 + c1 * r7 + c2 * r8) + (-p2 * hr2 - hr2 * p2 - m * p2 * p2) + d
    x = (a0 * r3 + a1 * r4 + a2 * r5) + (-p0 * hr1 - hr0 * p1 - m * p0 * p1)
    J[1] = x
    J[3] = x
    x = (a0 * r6 + a1 * r7 + a2 * r8) + (-p0 * hr2 - hr0 * p2 - m * p0 * p2)
    J[2] = x
    J[6] = x
    x = (b0 * r6 + b1 * r7 + b2 * r8) + (-p1 * hr2 - hr1 * p2 - m * p1 * p2)
    J[5] = x
    J[7] = x


@njit(cache=_CACHE, inline="always")
def inertia_times(W, j, x, out):
    """out = Ic_j x = (J ω + h × v, m v − h × ω) for x = (ω, v)."""
    m = W[j, O_M]
    h = W[j, O_H : O_H + 3]
    J = W[j, O_J : O_J + 9]
    x0, x1, x2, x3, x4, x5 = x[0], x[1], x[2], x[3], x[4], x[5]
    h0, h1, h2 = h[0], h[1], h[2]
    out[0] = (J[0] * x0 + J[1] * x1 + J[2] * x2) + (h1 * x5 - h2 * x4)
    out[1] = (J[3] * x0 + J[4] * x1 + J[5] * x2) + (h2 * x3 - h0 * x5)
    out[2] = (J[6] * x0 + J[7] * x1 + J[8] * x2) + (h0 * x4 - h1 * x3)
    out[3] = m * x3 - (h1 * x2 - h2 * x1)
    out[4] = m * x4 - (h2 * x0 - h0 * x2)
    out[5] = m * x5 - (h0 * x1 - h1 * x0)


@njit(cache=_CACHE, inline="always")
def add_to_parent_composite(P, j, W, with_coriolis):
    """Ic_λ += Ic_j (and B_λ += B_j): composites add directly in base coordinates."""
    lam = int(P[j, PARENT])
    if lam < 0:
        return
    W[lam, O_M] += W[j, O_M]
    for k in range(3):
        W[lam, O_H + k] += W[j, O_H + k]
    for k in range(9):
        W[lam, O_J + k] += W[j, O_J + k]
    if with_coriolis:
        for k in range(9):
            W[lam, O_B + k] += W[j, O_B + k]
        for k in range(3):
            W[lam, O_U + k] += W[j, O_U + k]


@njit(cache=_CACHE, inline="always")
def coriolis_factor(W, i):
    """B(I, V) = ½(−ad_Vᵀ I − I ad_V + icrf(I V)) for a rigid inertia, base coordinates.

    Worked out in blocks it has only a left column: B = [[B₁₁, 0], [−[u], 0]] with
    B₁₁ = ½([ω]J − J[ω] − [v][h] − [h][v] − [Jω + h×v]) and u = m v + ω × h
    (Echeandia & Wensing's factorisation; B V = −ad_Vᵀ I V and Ṁ − 2C is skew).
    """
    V = W[i, O_V : O_V + 6]
    m = W[i, O_M]
    h = W[i, O_H : O_H + 3]
    J = W[i, O_J : O_J + 9]
    B = W[i, O_B : O_B + 9]
    u = W[i, O_U : O_U + 3]
    w0, w1, w2, v0, v1, v2 = V[0], V[1], V[2], V[3], V[4], V[5]
    # [ω]J − J[ω]
    for r in range(3):
        for c in range(3):
            wJ = 0.0
            Jw = 0.0
            if r == 0:
                wJ = -w2 * J[3 + c] + w1 * J[6 + c]
            elif r == 1:
                wJ = w2 * J[c] - w0 * J[6 + c]
            else:
                wJ = -w1 * J[c] + w0 * J[3 + c]
            if c == 0:
                Jw = J[3 * r + 1] * w2 - J[3 * r + 2] * w1
            elif c == 1:
                Jw = -J[3 * r] * w2 + J[3 * r + 2] * w0
            else:
                Jw = J[3 * r] * w1 - J[3 * r + 1] * w0
            B[3 * r + c] = wJ - Jw
    # −[v][h] − [h][v] = 2(v·h)1 − v hᵀ − h vᵀ
    vh = v0 * h[0] + v1 * h[1] + v2 * h[2]
    vv = (v0, v1, v2)
    for r in range(3):
        for c in range(3):
            B[3 * r + c] += -vv[r] * h[c] - h[r] * vv[c]
        B[4 * r] += 2.0 * vh
    # −[J ω + h × v]
    a0 = J[0] * w0 + J[1] * w1 + J[2] * w2 + h[1] * v2 - h[2] * v1
    a1 = J[3] * w0 + J[4] * w1 + J[5] * w2 + h[2] * v0 - h[0] * v2
    a2 = J[6] * w0 + J[7] * w1 + J[8] * w2 + h[0] * v1 - h[1] * v0
    B[1] += a2
    B[2] -= a1
    B[3] -= a2
    B[5] += a0
    B[6] += a1
    B[7] -= a0
    for k in range(9):
        B[k] *= 0.5
    u[0] = m * v0 + w1 * h[2] - w2 * h[1]
    u[1] = m * v1 + w2 * h[0] - w0 * h[2]
    u[2] = m * v2 + w0 * h[1] - w1 * h[0]


@njit(cache=_CACHE, inline="always")
def factor_times(W, j, x, out):
    """out = B_j x = (B₁₁ x_ω, −u × x_ω)."""
    B = W[j, O_B : O_B + 9]
    u = W[j, O_U : O_U + 3]
    for r in range(3):
        out[r] = B[3 * r] * x[0] + B[3 * r + 1] * x[1] + B[3 * r + 2] * x[2]
    out[3] = -(u[1] * x[2] - u[2] * x[1])
    out[4] = -(u[2] * x[0] - u[0] * x[2])
    out[5] = -(u[0] * x[1] - u[1] * x[0])


@njit(cache=_CACHE, inline="always")
def factor_transpose_times(W, j, x, out):
    """out = B_jᵀ x = (B₁₁ᵀ x_ω + u × x_v, 0)."""
    B = W[j, O_B : O_B + 9]
    u = W[j, O_U : O_U + 3]
    for c in range(3):
        out[c] = B[c] * x[0] + B[3 + c] * x[1] + B[6 + c] * x[2]
    out[0] += u[1] * x[5] - u[2] * x[4]
    out[1] += u[2] * x[3] - u[0] * x[5]
    out[2] += u[0] * x[4] - u[1] * x[3]
    out[3] = 0.0
    out[4] = 0.0
    out[5] = 0.0


# inlined in mass_matrix_kernel: one LLVM optimisation of the mass matrix, not two (0.5 s of CPU
# of its cold compile); Python callers (dynamics/derivatives.py) call it as a kernel of its own
@njit(cache=_CACHE, inline="always")
def crba_world(P, q, W, M):
    """M(q) by composite bodies in base coordinates: M_ij = S_iᵀ Ic_j S_j (Featherstone RBDA §6.2).

    Each column j costs one inertia product Ic_j S_j and one dot product per ancestor; the
    body-frame form moves that product through every joint up the chain, one dependent
    transform after another.
    """
    n = P.shape[0]
    check_length(q, n)
    M[:, :] = 0.0  # bodies on different branches do not couple
    world_bodies(P, q, W)
    composite_columns(P, W, W[0, W_TMP + 12 : W_TMP + 18], M, True)


@njit(cache=_CACHE)
def composite_columns(P, W, F, M, symmetric):
    """M_ij = S_iᵀ Ic_j S_j for j and each ancestor i, leaves to root, accumulating the composite
    inertias (RBDA §6.2) from the bodies' world screws and inertias in W; F is 6-vector scratch.
    Writes M[j, i] (the lower triangle), and M[i, j] too if ``symmetric``."""
    for j in range(P.shape[0] - 1, -1, -1):
        Sj = W[j, O_S : O_S + 6]
        inertia_times(W, j, Sj, F)
        M[j, j] = dot6(Sj, F)
        i = int(P[j, PARENT])
        while i >= 0:
            m = dot6(W[i, O_S : O_S + 6], F)
            M[j, i] = m
            if symmetric:
                M[i, j] = m
            i = int(P[i, PARENT])
        add_to_parent_composite(P, j, W, False)


@njit(cache=_CACHE)
def coriolis_world(P, q, qd, W, C):
    """C(q, q̇) by composite bodies: C_ij = S_iᵀ(Ic_j Ṡ_j + Bc_j S_j), C_ji = Ṡ_iᵀIc_jS_j + S_iᵀBc_jᵀS_j."""
    n = P.shape[0]
    check_length(q, n)
    check_length(qd, n)
    C[:, :] = 0.0  # bodies on different branches do not couple
    world_bodies(P, q, W)
    F1 = W[0, W_TMP + 12 : W_TMP + 18]
    F2 = W[0, W_TMP + 18 : W_TMP + 24]
    F3 = W[0, W_TMP + 24 : W_TMP + 30]
    t = W[0, W_TMP + 30 : W_TMP + 36]
    for i in range(n):
        world_twist(P, i, qd, W)
        S = W[i, O_S : O_S + 6]
        V = W[i, O_V : O_V + 6]
        Sd = W[i, O_SD : O_SD + 6]  # Ṡ_i = ad_{V_i} S_i: the screw turns with its body
        Sd[0] = V[1] * S[2] - V[2] * S[1]
        Sd[1] = V[2] * S[0] - V[0] * S[2]
        Sd[2] = V[0] * S[1] - V[1] * S[0]
        Sd[3] = V[1] * S[5] - V[2] * S[4] + V[4] * S[2] - V[5] * S[1]
        Sd[4] = V[2] * S[3] - V[0] * S[5] + V[5] * S[0] - V[3] * S[2]
        Sd[5] = V[0] * S[4] - V[1] * S[3] + V[3] * S[1] - V[4] * S[0]
        coriolis_factor(W, i)
    for j in range(n - 1, -1, -1):
        Sj = W[j, O_S : O_S + 6]
        inertia_times(W, j, W[j, O_SD : O_SD + 6], F1)
        factor_times(W, j, Sj, t)
        for k in range(6):
            F1[k] += t[k]
        inertia_times(W, j, Sj, F2)
        factor_transpose_times(W, j, Sj, F3)
        C[j, j] = dot6(Sj, F1)
        i = int(P[j, PARENT])
        while i >= 0:
            Si = W[i, O_S : O_S + 6]
            C[i, j] = dot6(Si, F1)
            C[j, i] = dot6(W[i, O_SD : O_SD + 6], F2) + dot6(Si, F3)
            i = int(P[i, PARENT])
        add_to_parent_composite(P, j, W, True)


@entry_point
def frame_origin_world(P, q, body, X, W, o):
    """Origin o of a frame X on ``body`` in base coordinates: T_{0,b}(q) X's translation (Kim 2.8);
    the world poses of bodies 0 … body stay in W (columns O_R, O_P)."""
    check_length(q, P.shape[0])
    R = W[0, W_TMP : W_TMP + 9]
    p = W[0, W_TMP + 9 : W_TMP + 12]
    for i in range(body + 1):
        world_pose(P, i, q, W, R, p)
    frame_point(W, body, X, o)


@njit(cache=_CACHE, inline="always")
def frame_point(W, body, X, o):
    """o = T_{0,b} X's origin from the body's world pose in W."""
    Rb = W[body, O_R : O_R + 9]
    pb = W[body, O_P : O_P + 3]
    for r in range(3):
        o[r] = Rb[3 * r] * X[0, 3] + Rb[3 * r + 1] * X[1, 3] + Rb[3 * r + 2] * X[2, 3] + pb[r]


@njit(cache=_CACHE)
def frame_jacobian_world(P, q, body, X, W, J):
    """Geometric Jacobian of a frame X on ``body`` in base axes: J_j = (S_ω, S_v − p × S_ω)."""
    J[:, :] = 0.0
    o = W[0, FRAME_ORIGIN : FRAME_ORIGIN + 3]
    frame_origin_world(P, q, body, X, W, o)
    frame_columns(P, body, W, o, J)


@njit(cache=_CACHE)
def frame_jacobian_placed(P, body, X, W, J):
    """``frame_jacobian_world`` right after a Newton–Euler forward pass left each T_{λ(i),i}(q_i) in
    W (columns W_R, W_P, the same as O_R, O_P): the world poses composed from those placements in
    place, the same numbers without evaluating the joint placements (sin, cos) again."""
    J[:, :] = 0.0
    R = W[0, W_TMP : W_TMP + 9]
    p = W[0, W_TMP + 9 : W_TMP + 12]
    for i in range(body + 1):
        copy_into(W[i, O_R : O_R + 9], R)
        copy_into(W[i, O_P : O_P + 3], p)
        compose_world(P, i, W, R, p)
    o = W[0, FRAME_ORIGIN : FRAME_ORIGIN + 3]
    frame_point(W, body, X, o)
    frame_columns(P, body, W, o, J)


@njit(cache=_CACHE, inline="always")
def frame_columns(P, body, W, o, J):
    """J's columns for the chain of ``body``: (S_ω, S_v − o × S_ω) of each world screw S_j."""
    j = body
    while j >= 0:
        world_screw(P, j, W)
        S = W[j, O_S : O_S + 6]
        J[0, j] = S[0]
        J[1, j] = S[1]
        J[2, j] = S[2]
        J[3, j] = S[3] - (o[1] * S[2] - o[2] * S[1])
        J[4, j] = S[4] - (o[2] * S[0] - o[0] * S[2])
        J[5, j] = S[5] - (o[0] * S[1] - o[1] * S[0])
        j = int(P[j, PARENT])


# ------------------------------------------------------------- entry points on the data array
@entry_point
def coriolis_kernel(D, q, qd, C):
    """``coriolis_world`` on the model's data array."""
    coriolis_world(D, q, qd, D, C)
