"""Building blocks of the compiled control laws: array layout, tracking errors, small linear algebra.

A law with a compiled form keeps its gains, state and scratch in a few arrays (``CompiledLaw`` in
``control.compiled``); the rows and slots are named here. The same kernels serve the law's Python
``compute`` (one call per control period) and the offline loop (many periods per call), so both
give the same bits. Sums run in index order (no BLAS): the order is part of the result.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

# rows of the per-joint gains G, then the nominal model's joint friction (Schilling 6-3-3: viscous,
# Coulomb, static, Stribeck velocity) that a model-based law feeds forward (zero: none)
G_KP, G_KD, G_LAMBDA, G_LAYER, G_ETA = 0, 1, 2, 3, 4
G_VISCOUS, G_COULOMB, G_STATIC, G_STRIBECK = 5, 6, 7, 8
GROWS = 9
# rows of the per-joint vectors E: TrackingErrors' e, ė, r, q̇_r, q̈_r, a scratch row, then the
# laws' own: sat(s/ε), switching gain or Δv, filtered q̈ and the previous q̇ (acceleration
# estimate), a measured q̈, w of the robust law, and a second scratch row
E_E, E_ED, E_R, E_QDR, E_QDDR, E_TMP = 0, 1, 2, 3, 4, 5
E_SAT, E_GAIN, E_ACC, E_QD_PREV, E_QDD_MEASURED, E_W, E_V = 6, 7, 8, 9, 10, 11, 12
EROWS = 13
# rows of the parameter-length vectors V: p̂, p̂̇, Γ⁻¹ (diagonal), p̂(0), bounds a and p̄
V_P, V_RATE, V_GAMMA, V_P0, V_A, V_PBAR = 0, 1, 2, 3, 4, 5
VROWS = 6
# scalar slots s: time bookkeeping and recoveries, then the laws' scalars
S_TPREV, S_DT, S_RECOVERIES, S_T_RECOVERY, S_CULPRIT = 0, 1, 2, 3, 4
S_SCHEME, S_ALPHA, S_INV_INERTIA, S_QDD_MAX, S_PHI, S_K_NORM, S_EPSILON = 5, 6, 7, 8, 9, 10, 11
S_CUTOFF, S_PRIMED, S_MEASURED, S_SINGULAR, S_RHO, S_BOUNDED = 12, 13, 14, 15, 16, 17
SSLOTS = 18


def scratch_shape(n: int, m: int) -> tuple[int, int]:
    """Z holds Y_p (n × m), Φ (n × m), two n × n matrices and an n × 2n gain block, stacked."""
    return 5 * n, max(m, 2 * n)


@njit(cache=True, inline="always")  # inlined: code without numba's runtime returns no views
def block(Z, k, n):
    """Row block k (n rows) of the scratch Z: 0 Y_p, 1 Φ, 2 M, 3 a copy of M, 4 gain block."""
    return Z[k * n : (k + 1) * n]


@njit(cache=True)
def tracking_errors(q, qd, qr, qdr, qddr, lam, E, with_lambda):
    """e = q_d − q, ė = q̇_d − q̇; with Λ r = ė + Λe, q̇_r = q̇_d + Λe, q̈_r = q̈_d + Λė (errors.py)."""
    e, ed, r, qd_r, qdd_r = E[E_E], E[E_ED], E[E_R], E[E_QDR], E[E_QDDR]
    for i in range(q.shape[0]):
        e[i] = qr[i] - q[i]
        ed[i] = qdr[i] - qd[i]
        if with_lambda:
            r[i] = lam[i] * e[i]
            qd_r[i] = qdr[i] + r[i]
            r[i] = r[i] + ed[i]
            qdd_r[i] = lam[i] * ed[i]
            qdd_r[i] = qdd_r[i] + qddr[i]


@njit(cache=True)
def add_friction_feedforward(G, qdr, tau):
    """τ += F̂(q̇_d): the nominal model's joint friction (Schilling 6-3-3) at the reference velocity,
    the F(Θ, Θ̇) of Craig's τ = MΘ̈ + V + G + F; joints without friction are left untouched."""
    for i in range(tau.shape[0]):
        viscous, coulomb, static = G[G_VISCOUS, i], G[G_COULOMB, i], G[G_STATIC, i]
        v = qdr[i]
        if v == 0.0 or (viscous == 0.0 and coulomb == 0.0 and static == 0.0):
            continue
        tau[i] += viscous * v + np.sign(v) * (
            coulomb + (static - coulomb) * np.exp(-abs(v) / G[G_STRIBECK, i]))


@njit(cache=True)
def saturation(s, eps, out):
    """sat(s_i/ε_i), ε_i = 0 meaning sgn(s_i) (Huo 3.10 III, boundary layer; errors.saturation)."""
    for i in range(s.shape[0]):
        out[i] = np.sign(s[i])
        if eps[i] > 0.0 and abs(s[i]) < eps[i]:
            out[i] = s[i] / eps[i]


@njit(cache=True)
def basis_product(Y, B, out):
    """Y_p = Y · regressor_map (Y_p p = Y θ, control.basis)."""
    for i in range(Y.shape[0]):
        for j in range(B.shape[1]):
            acc = 0.0
            for c in range(Y.shape[1]):
                acc += Y[i, c] * B[c, j]
            out[i, j] = acc


@njit(cache=True)
def copy_matrix(src, dst):
    """dst ← src, element by element (a slice assignment of an array needs numba's runtime)."""
    for i in range(src.shape[0]):
        for j in range(src.shape[1]):
            dst[i, j] = src[i, j]


@njit(cache=True)
def mat_vec(A, x, out):
    """out = A x."""
    for i in range(A.shape[0]):
        acc = 0.0
        for j in range(A.shape[1]):
            acc += A[i, j] * x[j]
        out[i] = acc


@njit(cache=True)
def abs_mat_vec(A, x, out):
    """out = |A| x (elementwise absolute value: the pointwise bound |Y| a)."""
    for i in range(A.shape[0]):
        acc = 0.0
        for j in range(A.shape[1]):
            acc += abs(A[i, j]) * x[j]
        out[i] = acc


@njit(cache=True)
def mat_t_vec(A, x, out):
    """out = Aᵀ x."""
    for j in range(A.shape[1]):
        acc = 0.0
        for i in range(A.shape[0]):
            acc += A[i, j] * x[i]
        out[j] = acc


@njit(cache=True)
def state_gain(A, e, ed, out):
    """out = A [e; ė] for an n × 2n block A (BᵀR x of Craig's law, [P₂ᵀ, P₃] x of Spong's)."""
    n = e.shape[0]
    for i in range(A.shape[0]):
        acc = 0.0
        for j in range(n):
            acc += A[i, j] * e[j]
        for j in range(n):
            acc += A[i, n + j] * ed[j]
        out[i] = acc


@njit(cache=True)
def norm(x):
    """Euclidean norm ‖x‖ (sum in index order)."""
    acc = 0.0
    for i in range(x.shape[0]):
        acc += x[i] * x[i]
    return math.sqrt(acc)


@njit(cache=True)
def lu_solve(M, X):
    """X ← M⁻¹X by Gaussian elimination with partial pivoting (M destroyed); False if singular."""
    n = M.shape[0]
    for k in range(n):
        p = k
        for i in range(k + 1, n):
            if abs(M[i, k]) > abs(M[p, k]):
                p = i
        if M[p, k] == 0.0:
            return False
        if p != k:
            for j in range(n):
                M[k, j], M[p, j] = M[p, j], M[k, j]
            for j in range(X.shape[1]):
                X[k, j], X[p, j] = X[p, j], X[k, j]
        for i in range(k + 1, n):
            f = M[i, k] / M[k, k]
            for j in range(k + 1, n):
                M[i, j] -= f * M[k, j]
            for j in range(X.shape[1]):
                X[i, j] -= f * X[k, j]
    for k in range(n - 1, -1, -1):
        for j in range(X.shape[1]):
            acc = X[k, j]
            for i in range(k + 1, n):
                acc -= M[k, i] * X[i, j]
            X[k, j] = acc / M[k, k]
    return True


@njit(cache=True)
def integrate_estimate(V, dt):
    """p̂ ← p̂ + Δt p̂̇, explicit Euler over the period since the previous update (adaptive.py)."""
    if dt > 0.0:
        p, rate = V[V_P], V[V_RATE]
        for j in range(p.shape[0]):
            p[j] = p[j] + dt * rate[j]


@njit(cache=True)
def filtered_acceleration(qd, dt, E, s):
    """q̈: the measured one if s[S_MEASURED], else the low-pass filtered difference of q̇
    (control.acceleration): q̈_f ← q̈_f + h/(T_f + h)((q̇ − q̇_prev)/h − q̈_f), T_f = 1/(2π f_c)."""
    acc, prev = E[E_ACC], E[E_QD_PREV]
    n = qd.shape[0]
    if s[S_MEASURED] > 0.0:
        for i in range(n):
            acc[i] = E[E_QDD_MEASURED, i]
    elif s[S_PRIMED] > 0.0 and dt > 0.0:
        cutoff = s[S_CUTOFF]
        if cutoff > 0.0:
            gain = dt / (1.0 / (2.0 * math.pi * cutoff) + dt)
            for i in range(n):
                acc[i] = acc[i] + gain * ((qd[i] - prev[i]) / dt - acc[i])
        else:
            for i in range(n):
                acc[i] = (qd[i] - prev[i]) / dt
    for i in range(n):
        prev[i] = qd[i]
    s[S_PRIMED] = 1.0


@njit(cache=True)
def all_finite(x):
    """Every entry of the vector x is finite."""
    for i in range(x.shape[0]):
        if not math.isfinite(x[i]):
            return False
    return True
