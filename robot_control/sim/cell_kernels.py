"""The cell plant (sim.cell) compiled: closed-chain dynamics, holds, forces, and the offline loop.

``CellPlant`` packs its model, constraint sets and workspaces once into a tuple ``c`` (items
named C_*); its ``evaluate`` and ``step`` call ``evaluate`` and ``hold`` here, and the offline
loop ``run_cell_periods`` calls the same kernels for many control periods at once, so both routes
give the same bits. The dynamics are Kim's constrained forward dynamics (§3.2 with Baumgarte's
terms) through the mass matrix factored along the tree (dynamics.constrained_mass: 13 constraint
rows on 18 joints make that cheaper than Kim's unit passes), with the constraint rows of
dynamics.contact; a plastic impact when E reaches the plane solves the same factored system.
The plant's kernels are entry points (no allocation, no reference counting). Sums run in index
order (no BLAS).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from robot_control.control import task_kernels as KT
from robot_control.control.load_sharing_kernels import load_sharing_torque
from robot_control.dynamics import kernels as K
from robot_control.dynamics.constrained_mass import (
    BWORK,
    constrained_mass_pass,
    plastic_impact_pass,
)
from robot_control.dynamics.contact import G_S, GWORK, body_motion, constraint_rows, frame_state
from robot_control.dynamics.kernels import entry_point
from robot_control.dynamics.packing import model_data
from robot_control.sim import plant_kernels as PK
from robot_control.trajectory.cartesian import path_sample_into

# Items of the plant tuple c: model data, gravity, scalars S_*, the saturation table and settings
# of plant_kernels.saturate, packed constraint sets (grasps; grasps + surface; surface alone) and
# their row workspaces and λ, the per-body workspace of the constrained pass and of constraint
# rows, RK4 scratch, the plant's λ (grasps, then contact), no external wrenches, the surface row
# (A, Ȧq̇, φ), the full joint torque [τ; 0], and the frame arrays (F_*) of E and object_com.
(C_D, C_GRAVITY, C_S, C_JOINTS, C_SETTINGS, C_FREE, C_TOUCHING, C_SURFACE, C_FREE_WORK,
 C_TOUCH_WORK, C_FREE_LAM, C_TOUCH_LAM, C_BODY_WORK, C_ROW_WORK, C_X, C_LAM, C_FEXT, C_ROW,
 C_ROW_BIAS, C_ROW_PHI, C_TAU, C_CONTACT_FRAME, C_COM_FRAME) = range(23)
# scalars: physics step, Baumgarte's α and β, in contact (1) or not (0), time
S_DT, S_ALPHA, S_BETA, S_CONTACT, S_T = range(5)
SSLOTS = 5
# rows of the scratch X: RK4 stages a1…a4 and their states q2, v2, q3, v3, q4, v4
X_A1, X_A2, X_A3, X_A4, X_Q2, X_V2, X_Q3, X_V3, X_Q4, X_V4 = range(10)
XROWS = 10

# A frame array (``frame_array``): its body and placement X in it (rotation row-major, origin),
# then what ``frame_from_rows`` leaves: world rotation, origin, classical acceleration, pose T.
F_BODY, F_XR, F_XP, F_R, F_P, F_ACC, F_T = 0, 1, 10, 13, 22, 25, 31
FWORK = 47

#: raised (from compiled code too) when M or A M⁻¹ Aᵀ is singular
SingularConstraints = np.linalg.LinAlgError


def frame_array(model, frame: str) -> np.ndarray:
    """A frame array (F_*) of a named frame of ``model``."""
    body, X = model.frame_placement(frame)
    F = np.zeros(FWORK)
    F[F_BODY] = body
    F[F_XR : F_XR + 9] = np.asarray(X, dtype=float)[:3, :3].ravel()
    F[F_XP : F_XP + 3] = np.asarray(X, dtype=float)[:3, 3]
    return F


def frame_pose_at(model, q: np.ndarray, frame: str) -> np.ndarray:
    """World pose of a named frame of ``model`` at q, as the plant's ``frame_pose`` computes it
    (``frame_kinematics``: the kernel a cell run has loaded anyway)."""
    F, zero = frame_array(model, frame), np.zeros(model.nq)
    frame_kinematics(model_data(model).D, np.zeros((model.nq, GWORK)), F,
                     np.ascontiguousarray(q, dtype=float), zero, zero)
    return F[F_T : F_T + 16].reshape(4, 4).copy()


@entry_point
def impact(c, q, qd):
    """q̇ ← q̇⁺ of a plastic impact closing the contact: A q̇⁺ = 0 over the grasps and the surface
    (dynamics.constrained_mass, e = 0; the impulse into the touching set's λ)."""
    if not plastic_impact_pass(c[C_D], q, qd, c[C_TOUCHING], c[C_BODY_WORK], c[C_TOUCH_WORK],
                               c[C_TOUCH_LAM]):
        raise SingularConstraints("A M⁻¹ Aᵀ is singular at the impact: the constraint rows are "
                                  "dependent at this configuration")


@entry_point
def acceleration(c, q, qd, tau, out):
    """q̈ of M q̈ + b = [τ; 0] + Aᵀλ, A q̈ + Ȧq̇ + 2αAq̇ + β²φ = 0 over the grasps (and the surface
    while touching) (Kim 67–69); λ into c's λ, zero past the active rows."""
    S, full = c[C_S], c[C_TAU]
    for i in range(tau.shape[0]):
        full[i] = tau[i]
    if S[S_CONTACT] > 0.0:
        packed, rows, lam_x = c[C_TOUCHING], c[C_TOUCH_WORK], c[C_TOUCH_LAM]
    else:
        packed, rows, lam_x = c[C_FREE], c[C_FREE_WORK], c[C_FREE_LAM]
    if not constrained_mass_pass(c[C_D], c[C_GRAVITY], S[S_ALPHA], S[S_BETA], q, qd, out, full,
                                 c[C_FEXT], packed, c[C_BODY_WORK], rows, lam_x):
        raise SingularConstraints("A M⁻¹ Aᵀ is singular: the constraint rows are dependent at "
                                  "this configuration")
    lam = c[C_LAM]
    for i in range(lam.shape[0]):
        lam[i] = lam_x[i] if i < lam_x.shape[0] else 0.0


@entry_point
def update_contact_mode(c, q, qd, tau, known):
    """Close the contact with a plastic impact when E arrives (φ ≤ 0, n·v_E ≤ 0); open it when
    λ would pull (a surface only pushes). ``known``: X_A1 and λ already hold q̈ and λ at (q, q̇,
    τ) in the current mode; returns whether they do in the mode it leaves."""
    S, a1 = c[C_S], c[C_X][X_A1]
    if S[S_CONTACT] <= 0.0:
        A, phi = c[C_ROW], c[C_ROW_PHI]
        body_motion(c[C_D], q, qd, c[C_ROW_WORK])
        constraint_rows(c[C_D], c[C_SURFACE], c[C_ROW_WORK], A, c[C_ROW_BIAS], phi)
        approach = 0.0
        for j in range(qd.shape[0]):
            approach += A[0, j] * qd[j]
        if phi[0] > 0.0 or approach > 0.0:
            return known
        impact(c, q, qd)
        S[S_CONTACT] = 1.0
        known = False
    if not known:
        acceleration(c, q, qd, tau, a1)
    lam = c[C_LAM]
    if lam[lam.shape[0] - 1] < 0.0:
        S[S_CONTACT] = 0.0
        return False
    return True


@entry_point
def rk4_step(c, q, qd, tau, known):
    """Classical fourth-order Runge–Kutta on x = (q, q̇) under the held τ (Huo's integrator);
    ``known``: the first stage's q̈ is already in X_A1."""
    h = c[C_S][S_DT]
    X = c[C_X]
    a1, a2, a3, a4 = X[X_A1], X[X_A2], X[X_A3], X[X_A4]
    q2, v2, q3, v3, q4, v4 = X[X_Q2], X[X_V2], X[X_Q3], X[X_V3], X[X_Q4], X[X_V4]
    n = q.shape[0]
    if not known:
        acceleration(c, q, qd, tau, a1)
    for i in range(n):
        q2[i] = q[i] + 0.5 * h * qd[i]
        v2[i] = qd[i] + 0.5 * h * a1[i]
    acceleration(c, q2, v2, tau, a2)
    for i in range(n):
        q3[i] = q[i] + 0.5 * h * v2[i]
        v3[i] = qd[i] + 0.5 * h * a2[i]
    acceleration(c, q3, v3, tau, a3)
    for i in range(n):
        q4[i] = q[i] + h * v3[i]
        v4[i] = qd[i] + h * a3[i]
    acceleration(c, q4, v4, tau, a4)
    for i in range(n):
        q[i] = q[i] + h / 6.0 * (qd[i] + 2.0 * v2[i] + 2.0 * v3[i] + v4[i])
        qd[i] = qd[i] + h / 6.0 * (a1[i] + 2.0 * a2[i] + 2.0 * a3[i] + a4[i])


@entry_point
def hold(c, q, qd, tau, steps, known):
    """``steps`` physics steps under the held (saturated) arm torques: contact mode, then RK4;
    the time in c's scalars advances by repeated addition of the step, as the plant's does.
    ``known``: X_A1 and λ hold q̈ and λ at the start (``evaluate`` under the same τ) — the same
    numbers a fresh call would give, not computed twice."""
    S = c[C_S]
    for _ in range(steps):
        known = update_contact_mode(c, q, qd, tau, known)
        rk4_step(c, q, qd, tau, known)
        known = False
        S[S_T] += S[S_DT]


@entry_point
def evaluate(c, q, qd, tau, applied, saturated, qdd):
    """q̈ and λ at (q, q̇) under τ saturated into ``applied`` (what a torque does right away)."""
    PK.saturate(c[C_JOINTS], c[C_SETTINGS], tau, applied, saturated)
    acceleration(c, q, qd, applied, qdd)


@entry_point
def frame_from_rows(D, G, F, qdd):
    """World pose T = T_{0,b} X and classical acceleration (ω̇; p̈) = J q̈ + J̇q̇ (world axes, Craig
    §5.9) of the frame in F, from ``body_motion``'s rows G at (q, q̇) (J̇q̇: its q̈ = 0 part)."""
    R, p, acc = F[F_R : F_R + 9], F[F_P : F_P + 3], F[F_ACC : F_ACC + 6]
    body = int(F[F_BODY])
    frame_state(G, body, F[F_XR : F_XR + 9], F[F_XP : F_XP + 3], R, p, acc)
    j = body
    while j >= 0:  # + Σ_j (ω_j, v_j + ω_j × p) q̈_j over the chain (the Jacobian's columns)
        xi = G[j, G_S : G_S + 6]
        a = qdd[j]
        acc[0] += xi[0] * a
        acc[1] += xi[1] * a
        acc[2] += xi[2] * a
        acc[3] += (xi[3] + xi[1] * p[2] - xi[2] * p[1]) * a
        acc[4] += (xi[4] + xi[2] * p[0] - xi[0] * p[2]) * a
        acc[5] += (xi[5] + xi[0] * p[1] - xi[1] * p[0]) * a
        j = int(D[j, K.PARENT])
    T = F[F_T : F_T + 16]
    for r in range(3):
        for k in range(3):
            T[4 * r + k] = R[3 * r + k]
        T[4 * r + 3] = p[r]
        T[12 + r] = 0.0
    T[15] = 1.0


@entry_point
def frame_kinematics(D, G, F, q, qd, qdd):
    """``frame_from_rows`` at (q, q̇, q̈): the frame's pose and classical acceleration into F."""
    body_motion(D, q, qd, G)
    frame_from_rows(D, G, F, qdd)


@njit(cache=True)
def pressing_forces(F, mass, accel, gravity, normal, shares, out):
    """p_i = −n·(f_i − s_i Mᴼ(a_C − g)): arm i's part of the normal force (Huo 3-148/3-154 split)."""
    i0 = mass * (accel[0] - gravity[0])
    i1 = mass * (accel[1] - gravity[1])
    i2 = mass * (accel[2] - gravity[2])
    for i in range(F.shape[0]):
        s = shares[i]
        out[i] = -((F[i, 0] - s * i0) * normal[0] + (F[i, 1] - s * i1) * normal[1]
                   + (F[i, 2] - s * i2) * normal[2])


@entry_point
def log_forces(c, G, qdd, shares, mass, normal, F, p):
    """λ_E (0 off the plane) and each arm's pressing force p_i at the last evaluated q̈ and λ,
    ``body_motion``'s rows at (q, q̇) in G."""
    lam = c[C_LAM]
    for i in range(F.shape[0]):
        for k in range(3):
            F[i, k] = -lam[6 * i + 3 + k]  # f_i: the force arm i exerts on the object
    com = c[C_COM_FRAME]
    frame_from_rows(c[C_D], G, com, qdd)
    pressing_forces(F, mass, com[F_ACC + 3 : F_ACC + 6], c[C_GRAVITY], normal, shares, p)
    return lam[lam.shape[0] - 1] if c[C_S][S_CONTACT] > 0.0 else 0.0


@entry_point
def run_cell_periods(k0, k1, steps, tick_ns, substeps, c, state, noise, sigma, law, path,
                     q_hold, f_d, shares, mass, normal, work, F, t_log, q_log, tau_log, e_log,
                     lam_log, p_log):
    """Control periods k0 … k1−1 of cell_simulate's loop (sense with noise, reference of E at
    t_k, load-sharing τ_k, evaluate at t_k⁺, pose error, log, hold); returns −1, the period whose
    hold made the state non-finite, or −2 − k when τ at period k is non-finite.

    ``state`` rows: q, q̇, q̈ of the closed chain; ``noise`` the standard-normal draws (position,
    then velocity, for those with σ > 0); ``law`` = (Ds, As, O, starts, fractions) of
    load_sharing_kernels; ``work`` rows: measured q, q̇, τ, applied τ, saturation flags, zeros.
    """
    Ds, As, O, starts, fractions = law
    q, qd, qdd = state[0], state[1], state[2]
    na = q_hold.shape[0]
    qm, qdm, tau, applied, sat, zero = work[0], work[1], work[2], work[3], work[4], work[5]
    pose = O[KT.TK_POSE : KT.TK_POSE + 4, :4]
    D, E = c[C_D], c[C_CONTACT_FRAME]
    # the constrained pass leaves body_motion's rows at its (q, q̇) in its body workspace:
    # after ``evaluate`` they are the sampled state's, which the frames of the log read
    G = K.matrix_view(c[C_BODY_WORK][: D.shape[0] * BWORK], D.shape[0], BWORK)
    for k in range(k0, k1):
        t = k * tick_ns * 1e-9
        PK.sense(na, q, qd, sigma, noise[k - k0], qm, qdm)
        path_sample_into(path, t, pose, O[KT.TK_RATES])
        load_sharing_torque(Ds, As, O, starts, fractions, f_d, qm, qdm, q_hold, zero, zero, tau)
        if not PK.all_finite(tau):
            return -2 - k
        evaluate(c, q, qd, tau, applied, sat, qdd)
        frame_from_rows(D, G, E, qdd)  # E's pose (its acceleration unused)
        KT.task_error(K.matrix_view(E[F_T : F_T + 16], 4, 4), pose, 6, e_log[k])
        t_log[k] = t
        for i in range(na):
            q_log[k, i] = q[i]
        lam_log[k] = log_forces(c, G, qdd, shares, mass, normal, F, p_log[k])
        PK.saturate(c[C_JOINTS], c[C_SETTINGS], tau, applied, sat)
        for i in range(na):
            tau_log[k, i] = applied[i]
        if k < steps:
            a1 = c[C_X][X_A1]
            for i in range(qdd.shape[0]):
                a1[i] = qdd[i]  # evaluate's q̈ under the τ held: the hold's first stage
            hold(c, q, qd, applied, substeps, True)
            if not (PK.all_finite(q) and PK.all_finite(qd)):
                return k
    return -1
