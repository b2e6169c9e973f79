"""Compiled load sharing (Huo C15): several arms' hybrid torques on one object estimate.

``LoadSharing.compute`` calls ``load_sharing_torque`` once per control period and the cell's
offline loop (sim.cell_run_kernels) calls it for many periods in one compiled call, so both give
the same bits. The arrays: per arm i the data array ``Ds[i]`` of its augmented model (kinematics
and terms) and a task array ``As[i]`` (control.task_kernels layout: frame E on its last link, a
pose task); the object's task array ``O`` holds what the arms share — the reference and desired
wrench (as ``compiled.task_inputs`` writes them), gains K_p, K_d, the plane normal, the averaged
pose and twist of E, the error and the commanded acceleration a_p (its QR rows, which no solve
uses on O, are ``average_pose``'s scratch). ``starts`` are the arms' first joints in
q = [q¹; …; qᵐ] (m + 1 entries). Sums run in index order (no BLAS).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from robot_control.control import task_kernels as KT
from robot_control.control.svd_kernels import jacobi_svd
from robot_control.dynamics import kernels as K

#: task rows of a pose task: linear, then angular rows of the (ω; v) Jacobian
POSE_ROWS = (3, 4, 5, 0, 1, 2)


def task_array(model, frame: str) -> np.ndarray:
    """A zeroed task_kernels array for a pose task of ``frame`` on ``model`` (frame, body, rows)."""
    A = np.zeros(KT.task_shape(model.nq))
    body, X = model.frame_placement(frame)
    A[KT.TK_FRAME : KT.TK_FRAME + 4, :4] = X
    A[KT.TK_SCALAR, KT.TS_BODY] = body
    A[KT.TK_SCALAR, KT.TS_M] = 6
    A[KT.TK_ROWS, :6] = POSE_ROWS
    return A


@njit(cache=True)
def average_pose(As, T, work):
    """T: mean position of the arms' T_E, rotation nearest the sum S of theirs (Huo 3.13 ③):
    U diag(1, 1, sgn det UVᵀ) Vᵀ of S = UΣVᵀ (one-sided Jacobi, control.svd_kernels), U's columns
    w_i / σ_i for the two largest σ_i and the third their cross product, as V's. ``work``: 2 × 9
    scratch (W = UΣ and V, row-major)."""
    m = len(As)
    W, V = K.matrix_view(work[0, :9], 3, 3), K.matrix_view(work[1, :9], 3, 3)
    for r in range(3):
        for c in range(3):
            acc = 0.0
            for i in range(m):
                acc += As[i][KT.TK_T + r, c]
            W[r, c] = acc
    jacobi_svd(W, V)
    # products, not ** 2: numba's integer power is a compiled helper whose environment makes
    # a cached kernel's load import numba.cpython.numbers (the same bits)
    sq = (W[0, 0] * W[0, 0] + W[1, 0] * W[1, 0] + W[2, 0] * W[2, 0],
          W[0, 1] * W[0, 1] + W[1, 1] * W[1, 1] + W[2, 1] * W[2, 1],
          W[0, 2] * W[0, 2] + W[1, 2] * W[1, 2] + W[2, 2] * W[2, 2])
    k3 = 0  # the smallest σ last; its direction's sign is the one det(UVᵀ) decides
    for k in range(1, 3):
        if sq[k] < sq[k3]:
            k3 = k
    k1, k2 = (1, 2) if k3 == 0 else ((0, 2) if k3 == 1 else (0, 1))
    s1, s2 = np.sqrt(sq[k1]), np.sqrt(sq[k2])
    u1 = (W[0, k1] / s1, W[1, k1] / s1, W[2, k1] / s1)
    u2 = (W[0, k2] / s2, W[1, k2] / s2, W[2, k2] / s2)
    u3 = (u1[1] * u2[2] - u1[2] * u2[1], u1[2] * u2[0] - u1[0] * u2[2],
          u1[0] * u2[1] - u1[1] * u2[0])
    v3 = (V[1, k1] * V[2, k2] - V[2, k1] * V[1, k2], V[2, k1] * V[0, k2] - V[0, k1] * V[2, k2],
          V[0, k1] * V[1, k2] - V[1, k1] * V[0, k2])
    for r in range(3):
        for c in range(3):
            T[r, c] = u1[r] * V[c, k1] + u2[r] * V[c, k2] + u3[r] * v3[c]
        acc = 0.0
        for i in range(m):
            acc += As[i][KT.TK_T + r, 3]
        T[r, 3] = acc / m
        T[3, r] = 0.0
    T[3, 3] = 1.0


@njit(cache=True)
def arm_kinematics(D, A, q, qd):
    """T_E, J (pose rows), ẋ = Jq̇ and J̇q̇ of arm i's frame E into its task array (Kim 2.13)."""
    n, m = q.shape[0], int(A[KT.TK_SCALAR, KT.TS_M])
    J6, J = A[KT.TK_J6 : KT.TK_J6 + 6, :n], A[KT.TK_J : KT.TK_J + m, :n]
    KT.frame_kinematics(D, A, int(A[KT.TK_SCALAR, KT.TS_BODY]), q, qd,
                        A[KT.TK_T : KT.TK_T + 4, :4], J6, A[KT.TK_SIX])
    KT.task_rows(A, m, J6, J, A[KT.TK_SIX], A[KT.TK_X, 6:12])
    KT.task_velocity(J, qd, A[KT.TK_X, :6])


@njit(cache=True)
def object_motion(Ds, As, O, starts, q, qd, q_d, qd_d, qdd_d):
    """Averaged (T_E, ẋ_E) of the arms, (T_d, ẋ_d, ẍ_d) and e = [e_p; e_o] in O (Huo 3-40, ③)."""
    m = len(As)
    for i in range(m):
        s0, s1 = starts[i], starts[i + 1]
        arm_kinematics(Ds[i], As[i], q[s0:s1], qd[s0:s1])
    average_pose(As, O[KT.TK_T : KT.TK_T + 4, :4], O[KT.TK_QR : KT.TK_QR + 2])
    for r in range(6):
        acc = 0.0
        for i in range(m):
            acc += As[i][KT.TK_X, r]
        O[KT.TK_X, r] = acc / m
    KT.desired_motion(Ds[0], O, q_d[starts[0] : starts[1]], qd_d[starts[0] : starts[1]],
                      qdd_d[starts[0] : starts[1]])
    KT.task_error(O[KT.TK_T : KT.TK_T + 4, :4], O[KT.TK_TD : KT.TK_TD + 4, :4], 6,
                  O[KT.TK_OUT, :6])


@K.entry_point
def load_sharing_torque(Ds, As, O, starts, fractions, f_d, q, qd, q_d, qd_d, qdd_d, tau):
    """τⁱ = M̃ⁱJ⁻¹(a_p − J̇ⁱq̇ⁱ) + C̃ⁱq̇ⁱ + g̃ⁱ − f_nᵈ'ⁱ J_vⁱᵀn, f_nᵈ'ⁱ = fraction_i f_nᵈ, one a_p =
    E_pᵀE_p(ẍ_d + K_d(ẋ_d − ẋ) + K_p e) for all arms (Huo 3-158, 3-161)."""
    object_motion(Ds, As, O, starts, q, qd, q_d, qd_d, qdd_d)
    KT.commanded_acceleration(O, 6)
    a, N = O[KT.TK_ACC, :6], O[KT.TK_STIFF, 6:9]
    KT.tangential_part(N, a)
    for i in range(len(As)):
        s0, s1 = starts[i], starts[i + 1]
        A, n = As[i], s1 - s0
        J = A[KT.TK_J : KT.TK_J + 6, :n]
        KT.joint_acceleration(A, J, qd[s0:s1], a)
        KT.pressing_torque(J, N, fractions[i] * f_d, A[KT.TK_EXTRA])
        KT.joint_torque(Ds[i], A, q[s0:s1], qd[s0:s1], tau[s0:s1])
