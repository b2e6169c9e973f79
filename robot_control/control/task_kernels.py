"""Compiled task-space laws: resolved acceleration (Huo C5), hybrid force (C13), impedance (C14).

The laws' ``compute`` call these kernels, and so does the offline loop (control.compiled), so the
two give the same bits. ``D`` is the law's own model (its kinematics), ``Dh`` the model of its
terms M, C, g. Everything task-space lives in one array ``A`` (rows TK_*, at least 16 columns):
the task frame, the reference and sensed wrench the caller writes in, gains, outputs and scratch.
Task vectors are linear first (3 rows for a position task, 6 for a pose task), picked from the
(ω; v) rows of the geometric Jacobian (control.task_space). Sums run in index order (no BLAS).
Nothing here allocates: ``task_acceleration`` and ``task_torque`` are entry points compiled without
numba's reference counting (dynamics.spatial_kernels.entry_point), and so is all they call.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from robot_control.control import law_kernels as L
from robot_control.control.svd_kernels import svd_pseudo_inverse_times
from robot_control.dynamics import kernels as K
from robot_control.dynamics import regressor_kernels as RK
from robot_control.dynamics import world_kernels as KW

#: law kind codes (control.compiled)
RESOLVED_ACCELERATION, HYBRID_FORCE, IMPEDANCE = 10, 11, 12

# 4 × 4 blocks of A (columns 0:4): the task frame X on its body, the Cartesian reference pose,
# the frame's pose T and the desired pose T_d
TK_FRAME, TK_POSE, TK_T, TK_TD = 0, 4, 8, 12
# vector rows; 6-vectors in package order (angular, linear) unless "task" (linear first, m rows)
TK_RATES = 16  # reference twist (0:6) and acceleration (6:12)
TK_WRENCH = 17  # sensed wrench on the robot (0:6), desired wrench the robot exerts (6:12)
TK_GAIN = 18  # task K_p (0:6), K_d (6:12) (resolved acceleration, hybrid force)
TK_TARGET = 19  # impedance M_d (0:6), B_d (6:12)
TK_STIFF = 20  # impedance K_d (0:6); plane normal n (6:9) of the hybrid law
TK_ROWS = 21  # the task rows of the (ω; v) Jacobian (0:m)
TK_SCALAR = 22  # the scalars TS_*
TK_OUT = 23  # task error [e_p; e_o] (0:6), contact force f_e of impedance (6:12)
TK_X = 24  # task ẋ (0:6), J̇q̇ (6:12)
TK_XD = 25  # task ẋ_d (0:6), ẍ_d (6:12)
TK_ACC = 26  # commanded task acceleration (0:6), scratch (6:12)
TK_SIX = 27  # J̇q̇ (0:6, package order) of the last frame_kinematics call
TK_QDD = 28  # q̈* (0:n)
TK_EXTRA = 29  # torque added to M q̈* + C q̇ + g (0:n)
TK_NULL = 30  # null-space term (0:n)
TK_ZERO = 31  # zeros: q̈ and gravity of the J̇q̇ recursion
TK_TMP = 32  # scratch (0:n)
TK_J6 = 33  # 6 × n geometric Jacobian (ω; v)
TK_J = 39  # m × n task Jacobian
TK_QR = 45  # 6 × n: Householder QR of a tall J (m > n)
TK_HOUSE = 51  # the Householder reflectors' scalars (0:6), right-hand side (6:16)
TK_LU = 52  # n × (n + 1): [J | a] of the square solve; n × m: QR of Jᵀ for a wide J (m < n)

# slots of row TK_SCALAR
TS_BODY, TS_M, TS_NULL = 0, 1, 2
TS_FORCE_KP, TS_FORCE_KI, TS_FORCE_DAMPING, TS_FORCE_SETPOINT = 3, 4, 5, 6
TS_INTEGRAL, TS_NORMAL_FORCE, TS_MEASURED_FORCE = 7, 8, 9
TS_HAS_POSE, TS_HAS_TWIST, TS_HAS_ACCEL, TS_HAS_WRENCH, TS_HAS_DESIRED = 10, 11, 12, 13, 14


def task_shape(n: int) -> tuple[int, int]:
    """Shape of A for an n-joint model: the fixed rows, then the n × (n + 1) solve."""
    return TK_LU + n, max(16, n + 1)


@njit(cache=True)
def frame_kinematics(D, A, body, q, qd, T, J6, six):
    """T = T_{0,b} X, J (Kim 2.13, world axes) and J̇q̇ = (R_b α, R_b(a + α×p + ω×(v + ω×p)))
    from the body's twist (ω, v) and acceleration (α, a) at q̈ = 0 without gravity (Craig §5.9)."""
    n = q.shape[0]
    X = A[TK_FRAME : TK_FRAME + 4, :4]
    if body < 0:  # a frame fixed to the base does not move
        L.copy_matrix(X, T)
        J6[:, :] = 0.0
        six[:6] = 0.0
        return
    zero = A[TK_ZERO]  # the Newton–Euler forward pass at q̈ = 0 without gravity: twists, V̇
    RK.reference_kinematics(D, zero[:3], q, qd, qd, zero[:n], D)
    W = D[body]
    w0, w1, w2 = W[K.W_V], W[K.W_V + 1], W[K.W_V + 2]
    v0, v1, v2 = W[K.W_V + 3], W[K.W_V + 4], W[K.W_V + 5]
    b0, b1, b2 = W[K.W_A], W[K.W_A + 1], W[K.W_A + 2]
    a0, a1, a2 = W[K.W_A + 3], W[K.W_A + 4], W[K.W_A + 5]
    p0, p1, p2 = X[0, 3], X[1, 3], X[2, 3]
    u0 = v0 + (w1 * p2 - w2 * p1)  # v + ω×p
    u1 = v1 + (w2 * p0 - w0 * p2)
    u2 = v2 + (w0 * p1 - w1 * p0)
    c0 = a0 + (b1 * p2 - b2 * p1) + (w1 * u2 - w2 * u1)
    c1 = a1 + (b2 * p0 - b0 * p2) + (w2 * u0 - w0 * u2)
    c2 = a2 + (b0 * p1 - b1 * p0) + (w0 * u1 - w1 * u0)
    KW.frame_jacobian_placed(D, body, X, D, J6)  # on the pass's placements
    R = D[body, KW.O_R : KW.O_R + 9]
    o = D[0, KW.FRAME_ORIGIN : KW.FRAME_ORIGIN + 3]
    for r in range(3):
        for c in range(3):
            T[r, c] = R[3 * r] * X[0, c] + R[3 * r + 1] * X[1, c] + R[3 * r + 2] * X[2, c]
        T[r, 3] = o[r]
        T[3, r] = 0.0
        six[r] = R[3 * r] * b0 + R[3 * r + 1] * b1 + R[3 * r + 2] * b2
        six[3 + r] = R[3 * r] * c0 + R[3 * r + 1] * c1 + R[3 * r + 2] * c2
    T[3, 3] = 1.0


@njit(cache=True)
def task_rows(A, m, J6, J, six, out):
    """The task rows of J (m × n) and of the 6-vector J̇q̇ (into out[:m]) (control.task_space.TASKS)."""
    rows = A[TK_ROWS]
    for i in range(m):
        r = int(rows[i])
        for j in range(J6.shape[1]):
            J[i, j] = J6[r, j]
        out[i] = six[r]


@njit(cache=True)
def task_velocity(J, qd, out):
    """ẋ = J q̇."""
    L.mat_vec(J, qd, out)


@njit(cache=True)
def desired_motion(D, A, q_d, qd_d, qdd_d):
    """(T_d, ẋ_d, ẍ_d): the Cartesian reference if given, else T(q_d), J q̇_d, J q̈_d + J̇q̇_d."""
    s, m = A[TK_SCALAR], int(A[TK_SCALAR, TS_M])
    Td = A[TK_TD : TK_TD + 4, :4]
    xd, xdd = A[TK_XD, :6], A[TK_XD, 6:12]
    rows = A[TK_ROWS]
    if s[TS_HAS_POSE] > 0.0:
        L.copy_matrix(A[TK_POSE : TK_POSE + 4, :4], Td)
        for i in range(m):
            r = int(rows[i])
            xd[i] = A[TK_RATES, r] if s[TS_HAS_TWIST] > 0.0 else 0.0
            xdd[i] = A[TK_RATES, 6 + r] if s[TS_HAS_ACCEL] > 0.0 else 0.0
        return
    n = q_d.shape[0]
    J6, J = A[TK_J6 : TK_J6 + 6, :n], A[TK_J : TK_J + m, :n]
    frame_kinematics(D, A, int(s[TS_BODY]), q_d, qd_d, Td, J6, A[TK_SIX])
    jdqd = A[TK_ACC, 6:12]
    task_rows(A, m, J6, J, A[TK_SIX], jdqd)
    task_velocity(J, qd_d, xd)
    L.mat_vec(J, qdd_d, xdd)
    for i in range(m):
        xdd[i] = xdd[i] + jdqd[i]


@njit(cache=True)
def task_error(T, Td, m, e):
    """[e_p; e_o], e_p = p_d − p, e_o = ½(n×n_d + o×o_d + a×a_d) = ½ vee(R_d Rᵀ − R R_dᵀ) (Huo 3-40)."""
    for i in range(3):
        e[i] = Td[i, 3] - T[i, 3]
    if m == 6:  # S = R_d Rᵀ, S[r, c] = Σ_k R_d[r, k] R[c, k]
        for i, (r, c) in enumerate(((2, 1), (0, 2), (1, 0))):
            src = Td[r, 0] * T[c, 0] + Td[r, 1] * T[c, 1] + Td[r, 2] * T[c, 2]
            scr = Td[c, 0] * T[r, 0] + Td[c, 1] * T[r, 1] + Td[c, 2] * T[r, 2]
            e[3 + i] = 0.5 * (src - scr)


@njit(cache=True)
def task_state(D, A, q, qd, q_d, qd_d, qdd_d):
    """TaskSpace.kinematics, desired and error: T, J, ẋ, J̇q̇, T_d, ẋ_d, ẍ_d and e (control.task_space)."""
    n, m = q.shape[0], int(A[TK_SCALAR, TS_M])
    desired_motion(D, A, q_d, qd_d, qdd_d)
    J6, J = A[TK_J6 : TK_J6 + 6, :n], A[TK_J : TK_J + m, :n]
    T = A[TK_T : TK_T + 4, :4]
    frame_kinematics(D, A, int(A[TK_SCALAR, TS_BODY]), q, qd, T, J6, A[TK_SIX])
    task_rows(A, m, J6, J, A[TK_SIX], A[TK_X, 6:12])
    task_velocity(J, qd, A[TK_X, :6])
    task_error(T, A[TK_TD : TK_TD + 4, :4], m, A[TK_OUT, :6])


@njit(cache=True)
def householder_qr(Q, beta):
    """Q ← Householder QR of a tall Q (rows ≥ columns): R on and above the diagonal, the
    reflectors v_k (v_k[k] = 1 implied) below it, β_k = 2/(v_kᵀv_k) (Golub–Van Loan Alg. 5.2.1).
    Returns min |R_kk| / max |R_kk| (0 for a zero matrix): how far from rank deficient."""
    rows, cols = Q.shape[0], Q.shape[1]
    small, large = np.inf, 0.0
    for k in range(cols):
        norm2 = 0.0
        for i in range(k, rows):
            norm2 += Q[i, k] * Q[i, k]
        alpha = -np.sqrt(norm2) if Q[k, k] >= 0.0 else np.sqrt(norm2)
        v0 = Q[k, k] - alpha
        beta[k] = 0.0
        if v0 != 0.0:
            vv = 1.0
            for i in range(k + 1, rows):
                Q[i, k] = Q[i, k] / v0
                vv += Q[i, k] * Q[i, k]
            beta[k] = 2.0 / vv
            for j in range(k + 1, cols):
                acc = Q[k, j]
                for i in range(k + 1, rows):
                    acc += Q[i, k] * Q[i, j]
                acc *= beta[k]
                Q[k, j] -= acc
                for i in range(k + 1, rows):
                    Q[i, j] -= acc * Q[i, k]
        Q[k, k] = alpha
        small, large = min(small, abs(alpha)), max(large, abs(alpha))
    return small / large if large > 0.0 else 0.0


@njit(cache=True)
def apply_reflectors(Q, beta, x, transpose):
    """x ← Qᵀx (transpose) or Qx with Q = H_0 H_1 … of ``householder_qr``."""
    rows, cols = Q.shape[0], Q.shape[1]
    for step in range(cols):
        k = step if transpose else cols - 1 - step
        acc = x[k]
        for i in range(k + 1, rows):
            acc += Q[i, k] * x[i]
        acc *= beta[k]
        x[k] -= acc
        for i in range(k + 1, rows):
            x[i] -= acc * Q[i, k]


#: below this min/max |R_kk| the QR of J is too close to rank deficient: the SVD decides
QR_RANK_RATIO = 1e-10


@njit(cache=True)
def pseudo_inverse_times(A, J, a, out):
    """out = J⁺a: for a tall J of full column rank R⁻¹Qᵀa (J = QR, the least-squares solution),
    for a wide J of full row rank Q R⁻ᵀa (Jᵀ = QR, the minimum-norm one); the SVD otherwise."""
    m, n = J.shape[0], J.shape[1]
    beta, x = A[TK_HOUSE, :6], A[TK_HOUSE, 6:16]
    if m > n:
        Q = A[TK_QR : TK_QR + m, :n]
        L.copy_matrix(J, Q)
        if householder_qr(Q, beta) > QR_RANK_RATIO:
            for i in range(m):
                x[i] = a[i]
            apply_reflectors(Q, beta, x[:m], True)
            for i in range(n - 1, -1, -1):  # R x = (Qᵀa)[:n]
                acc = x[i]
                for j in range(i + 1, n):
                    acc -= Q[i, j] * out[j]
                out[i] = acc / Q[i, i]
            return
    elif m < n:
        Q = A[TK_LU : TK_LU + n, :m]
        for i in range(n):
            for j in range(m):
                Q[i, j] = J[j, i]
        if householder_qr(Q, beta) > QR_RANK_RATIO:
            for i in range(m):  # Rᵀy = a, then out = Q [y; 0]
                acc = a[i]
                for j in range(i):
                    acc -= Q[j, i] * out[j]
                out[i] = acc / Q[i, i]
            for i in range(m, n):
                out[i] = 0.0
            apply_reflectors(Q, beta, out, False)
            return
    svd_pseudo_inverse_times(A[TK_QR : TK_QR + m, :n], A[TK_LU : TK_LU + n, :n], J, a, out)


@njit(cache=True)
def resolve(A, J, a, out):
    """A joint vector with J q = a: J⁻¹a (LU, partial pivoting) if J is square and regular, else
    J⁺a (control.task_space.resolve; the LU block is scratch for both)."""
    m, n = J.shape[0], J.shape[1]
    if m == n:
        LU = A[TK_LU : TK_LU + n, : n + 1]
        for i in range(n):
            for j in range(n):
                LU[i, j] = J[i, j]
            LU[i, n] = a[i]
        if L.lu_solve(LU[:, :n], LU[:, n : n + 1]):
            for i in range(n):
                out[i] = LU[i, n]
            return
    pseudo_inverse_times(A, J, a, out)


@njit(cache=True)
def null_space_damping(A, J, qd, k, out, tmp):
    """(I − J⁺J)(−k q̇): damps self-motion a redundant arm's task does not see (m < n, k ≠ 0)."""
    m, n = J.shape[0], J.shape[1]
    if k == 0.0 or m >= n:
        for i in range(n):
            out[i] = 0.0
        return
    w = tmp[:m]
    L.mat_vec(J, qd, w)
    pseudo_inverse_times(A, J, w, out)
    for i in range(n):
        out[i] = -k * (qd[i] - out[i])


@njit(cache=True)
def commanded_acceleration(A, m):
    """a = ẍ_d + K_d(ẋ_d − ẋ) + K_p e per task coordinate (Huo 3-40)."""
    kp, kd = A[TK_GAIN, :6], A[TK_GAIN, 6:12]
    x, xd, xdd, e = A[TK_X, :6], A[TK_XD, :6], A[TK_XD, 6:12], A[TK_OUT, :6]
    a = A[TK_ACC, :6]
    for i in range(m):
        a[i] = xdd[i] + kd[i] * (xd[i] - x[i]) + kp[i] * e[i]


@njit(cache=True)
def joint_acceleration(A, J, qd, a):
    """q̈* = J⁺(a − J̇q̇) + null-space damping (Huo 3-40 with J⁺ for non-square J)."""
    m, n = J.shape[0], J.shape[1]
    jdqd, rhs = A[TK_X, 6:12], A[TK_ACC, 6:12]
    for i in range(m):
        rhs[i] = a[i] - jdqd[i]
    qdd, null = A[TK_QDD, :n], A[TK_NULL, :n]
    resolve(A, J, rhs[:m], qdd)
    null_space_damping(A, J, qd, A[TK_SCALAR, TS_NULL], null, A[TK_TMP])
    for i in range(n):
        qdd[i] = qdd[i] + null[i]


@njit(cache=True)
def resolved_acceleration(A, J, qd):
    """q̈* = J⁺{ẍ_d + K_d(ẋ_d − ẋ) + K_p[e_p; e_o] − J̇q̇}, no extra torque (Huo C5, 3-40)."""
    m = J.shape[0]
    commanded_acceleration(A, m)
    joint_acceleration(A, J, qd, A[TK_ACC, :m])
    A[TK_EXTRA, : J.shape[1]] = 0.0


@njit(cache=True)
def normal_force(A, dt):
    """f_n = f_nᵈ + d_n(n·v) [+ k_f(f_nᵈ − f_m) + k_i∫(f_nᵈ − f_m) on f_m = n·f_sensor, the
    integral only while f_m > 0]; f_nᵈ = −n·f_ref or the set point (force.HybridForce)."""
    s = A[TK_SCALAR]
    n = A[TK_STIFF, 6:9]
    if s[TS_HAS_DESIRED] > 0.0:
        f_d = -(n[0] * A[TK_WRENCH, 9] + n[1] * A[TK_WRENCH, 10] + n[2] * A[TK_WRENCH, 11])
    else:
        f_d = s[TS_FORCE_SETPOINT]
    v = A[TK_X]  # ẋ: linear rows first
    f = f_d + s[TS_FORCE_DAMPING] * (n[0] * v[0] + n[1] * v[1] + n[2] * v[2])
    if s[TS_FORCE_KP] == 0.0 and s[TS_FORCE_KI] == 0.0:
        return f
    f_m = n[0] * A[TK_WRENCH, 3] + n[1] * A[TK_WRENCH, 4] + n[2] * A[TK_WRENCH, 5]
    s[TS_MEASURED_FORCE] = f_m
    if f_m > 0.0:
        s[TS_INTEGRAL] += dt * (f_d - f_m)
    return f + s[TS_FORCE_KP] * (f_d - f_m) + s[TS_FORCE_KI] * s[TS_INTEGRAL]


@njit(cache=True)
def tangential_part(N, a):
    """a ← E_pᵀE_p a = a − n(n·a) on the linear rows: the plane's normal component removed (Huo 3-143)."""
    along = N[0] * a[0] + N[1] * a[1] + N[2] * a[2]
    for i in range(3):
        a[i] = a[i] - N[i] * along


@njit(cache=True)
def pressing_torque(J, N, f_n, out):
    """out = −f_n J_vᵀn: the joint torque of pressing the plane with f_n (Huo 3-144, f_x = −f_n n)."""
    for j in range(J.shape[1]):
        out[j] = -f_n * (J[0, j] * N[0] + J[1, j] * N[1] + J[2, j] * N[2])


@njit(cache=True)
def hybrid_force(A, J, qd, dt):
    """q̈* = J⁻¹(E_pᵀE_p a − J̇q̇), extra torque −f_n J_vᵀn (Huo C13, 3-143/3-144 in joint space)."""
    m = J.shape[0]
    commanded_acceleration(A, m)
    a, N = A[TK_ACC, :m], A[TK_STIFF, 6:9]
    tangential_part(N, a)
    f_n = normal_force(A, dt)
    A[TK_SCALAR, TS_NORMAL_FORCE] = f_n
    joint_acceleration(A, J, qd, a)
    pressing_torque(J, N, f_n, A[TK_EXTRA])


@njit(cache=True)
def impedance(A, J, qd):
    """ẍ_cmd = ẍ_d − M_d⁻¹(B_d(ẋ − ẋ_d) − K_d e + f_e − f_eᵈ), q̈* = J⁺(ẍ_cmd − J̇q̇), extra
    torque Jᵀf_e with f_e = −(sensed wrench) (Huo C14, 3.12 VI; force.Impedance)."""
    m, n = J.shape[0], J.shape[1]
    rows = A[TK_ROWS]
    s = A[TK_SCALAR]
    Md, Bd, Kd = A[TK_TARGET, :6], A[TK_TARGET, 6:12], A[TK_STIFF, :6]
    x, xd, xdd, e = A[TK_X, :6], A[TK_XD, :6], A[TK_XD, 6:12], A[TK_OUT, :6]
    f_e, a = A[TK_OUT, 6:12], A[TK_ACC, :6]
    for i in range(m):
        r = int(rows[i])
        f_e[i] = -A[TK_WRENCH, r]
        f_ed = A[TK_WRENCH, 6 + r] if s[TS_HAS_DESIRED] > 0.0 else 0.0
        a[i] = xdd[i] - (Bd[i] * (x[i] - xd[i]) - Kd[i] * e[i] + f_e[i] - f_ed) / Md[i]
    joint_acceleration(A, J, qd, a[:m])
    L.mat_t_vec(J, f_e[:m], A[TK_EXTRA, :n])


@K.entry_point
def task_acceleration(kind, D, A, q, qd, q_d, qd_d, qdd_d, dt):
    """The law ``kind``'s q̈* (A[TK_QDD]) and extra torque (A[TK_EXTRA]) for this period."""
    n, m = q.shape[0], int(A[TK_SCALAR, TS_M])
    task_state(D, A, q, qd, q_d, qd_d, qdd_d)
    J = A[TK_J : TK_J + m, :n]
    if kind == RESOLVED_ACCELERATION:
        resolved_acceleration(A, J, qd)
    elif kind == HYBRID_FORCE:
        hybrid_force(A, J, qd, dt)
    else:
        impedance(A, J, qd)


@K.entry_point
def task_torque(kind, D, Dh, A, q, qd, q_d, qd_d, qdd_d, dt, tau):
    """τ = M q̈* + C q̇ + g + extra, one inverse-dynamics call on the law's terms model."""
    task_acceleration(kind, D, A, q, qd, q_d, qd_d, qdd_d, dt)
    joint_torque(Dh, A, q, qd, tau)


@njit(cache=True)
def joint_torque(Dh, A, q, qd, tau):
    """τ = M q̈* + C q̇ + g + extra for the q̈* and extra torque in A (Huo 3-40, 3-144)."""
    n = q.shape[0]
    K.inverse_dynamics_kernel(Dh, q, qd, A[TK_QDD, :n], None, tau)
    extra = A[TK_EXTRA]
    for i in range(n):
        tau[i] = tau[i] + extra[i]
