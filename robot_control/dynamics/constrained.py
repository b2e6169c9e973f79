"""Dynamics of a tree under constraints A(q) q̇ = 0 (Kim §3, eqs. 54–80).

    M q̈ + b = τ + Aᵀλ,    A q̈ + Ȧ q̇ = 0                                     (54), (55)

- forward dynamics (§3.2): one full articulated-body pass gives q̈_r, and m no-bias passes
  that reuse its q-only quantities give M⁻¹Aᵀ; then λ = −(AM⁻¹Aᵀ)⁻¹(A q̈_r + Ȧq̇) (67) and
  q̈ = q̈_r + M⁻¹Aᵀλ (69). O(n m) + O(m³), all in one compiled call.
- hybrid dynamics (§3.3): the same with the hybrid pass of Table 4, so M_vv⁻¹A_vᵀ comes
  from no-bias hybrid passes (76)–(80); needs m ≤ n_v.
- inverse dynamics (§3.1) for an actuated/passive split: exactly actuated (58), redundantly
  actuated with the minimum constraint force (59) or the minimum actuator torque (62)–(64),
  all joints actuated (65)–(66).

For simulation the acceleration constraint can be replaced by Baumgarte's stabilised form
φ̈ + 2α φ̇ + β² φ = 0, i.e. A q̈ + Ȧq̇ + 2α A q̇ + β² φ = 0, which pulls drift in φ and A q̇
back to zero instead of letting it grow.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from robot_control.dynamics.contact import (
    GWORK,
    ConstraintSet,
    as_constraint_set,
    body_motion,
    constraint_rows,
    constraint_terms,
)
from robot_control.dynamics.hybrid import (
    HWORK,
    ZWORK,
    hybrid_pass,
    prescribed_mask,
    unit_response,
)
from robot_control.dynamics.kernels import entry_point
from robot_control.dynamics.packing import Data, array, model_data, vector, workspace, wrenches
from robot_control.dynamics.rigid_body import inverse_dynamics
from robot_control.dynamics.spatial_kernels import matrix_view

Array = np.ndarray

_CACHE = True


@njit(cache=_CACHE, inline="always")
def cholesky_solve(Gm, x):
    """Solve Gm y = x in place (x ← y) for a small SPD Gm, overwriting Gm.

    Returns False when a pivot falls below 1e-12 of the largest diagonal entry: Gm is
    singular to working precision (dependent constraint rows).
    """
    m = Gm.shape[0]
    tol = 0.0
    for j in range(m):
        tol = max(tol, Gm[j, j])
    tol *= 1e-12
    for j in range(m):
        s = Gm[j, j]
        for k in range(j):
            s -= Gm[j, k] * Gm[j, k]
        if not s > tol:
            return False
        Gm[j, j] = np.sqrt(s)
        for i in range(j + 1, m):
            s = Gm[i, j]
            for k in range(j):
                s -= Gm[i, k] * Gm[j, k]
            Gm[i, j] = s / Gm[j, j]
    for i in range(m):
        s = x[i]
        for k in range(i):
            s -= Gm[i, k] * x[k]
        x[i] = s / Gm[i, i]
    for i in range(m - 1, -1, -1):
        s = x[i]
        for k in range(i + 1, m):
            s -= Gm[k, i] * x[k]
        x[i] = s / Gm[i, i]
    return True


@entry_point
def constrained_pass(P, g, alpha, beta, q, qd, qdd, tau, prescribed, fext, C, W, S, lam):
    """Kim §3.2/§3.3: constrained hybrid dynamics (forward dynamics when nothing is prescribed).

    W is the flat per-body workspace H | Z | G and S the flat per-row one
    A | (M_vv⁻¹A_vᵀ)ᵀ | A_vM_vv⁻¹A_vᵀ | Ȧq̇ | φ. On return qdd_v, tau_u and λ are filled;
    returns False if A_v M_vv⁻¹ A_vᵀ is not positive definite (A_v rank-deficient).
    Baumgarte's gains α, β (zero: the plain acceleration constraint) stabilise drift.
    """
    n = P.shape[0]
    m = C.shape[0]
    H = matrix_view(W[0 : n * HWORK], n, HWORK)
    Z = matrix_view(W[n * HWORK : n * (HWORK + ZWORK)], n, ZWORK)
    G = matrix_view(W[n * (HWORK + ZWORK) : n * (HWORK + ZWORK + GWORK)], n, GWORK)
    A = matrix_view(S[0 : m * n], m, n)
    Kt = matrix_view(S[m * n : 2 * m * n], m, n)
    Gm = matrix_view(S[2 * m * n : 2 * m * n + m * m], m, m)
    bias = S[2 * m * n + m * m : 2 * m * n + m * m + m]
    phi = S[2 * m * n + m * m + m : 2 * m * n + m * m + 2 * m]
    body_motion(P, q, qd, G)
    constraint_rows(P, C, G, A, bias, phi)
    # one full pass: q̈_r (v) and τ_ur (u) of the open chain, eq. (68) first line
    hybrid_pass(P, g, q, qd, qdd, tau, prescribed, fext, H)
    # m no-bias passes: row j of Kt is (M_vv⁻¹ A_vᵀ e_j on v; τ_uc per unit λ_j on u)
    for j in range(m):
        unit_response(P, prescribed, H, A[j], Kt[j], Z)
    for i in range(m):
        for j in range(i + 1):
            s = 0.0
            for l in range(n):
                if not prescribed[l]:
                    s += A[i, l] * Kt[j, l]
            Gm[i, j] = s
            Gm[j, i] = s
        # −(A q̈_r + Ȧq̇ + 2α A q̇ + β² φ), eq. (76) with Baumgarte's terms
        s = bias[i] + beta * beta * phi[i]
        for l in range(n):
            s += A[i, l] * (qdd[l] + 2.0 * alpha * qd[l])
        lam[i] = -s
    if not cholesky_solve(Gm, lam):
        return False
    for l in range(n):
        s = 0.0
        if prescribed[l]:
            for j in range(m):
                s += (Kt[j, l] - A[j, l]) * lam[j]  # τ̃_uc = τ_uc − A_uᵀλ, eq. (79)
            tau[l] += s
        else:
            for j in range(m):
                s += Kt[j, l] * lam[j]  # q̈_v = q̈_vr + q̈_vc, eq. (80)
            qdd[l] += s
    return True


# ----------------------------------------------------------------------------- workspaces
def _body_work(d: Data) -> Array:
    """Flat per-body workspace H | Z | G of the constrained pass, allocated once per Data."""
    return workspace(d, "kim_constrained", lambda: np.zeros(d.n * (HWORK + ZWORK + GWORK)))


def _row_work(cs, model) -> Array:
    """Per-row workspace of a constraint set for a model, allocated (and checked) once."""
    n = model.nq
    cache = cs.__dict__.setdefault("_rows", {})
    S = cache.get(n)
    if S is None:
        cs.check(model)  # bodies in [−1, n): the kernels index them without bounds checks
        S = cache[n] = np.zeros(cs.m * (2 * n + cs.m + 2))
    return S


def _gains(baumgarte) -> tuple[float, float]:
    if baumgarte is None:
        return 0.0, 0.0
    alpha, beta = (float(x) for x in baumgarte)
    if not (alpha >= 0.0 and beta >= 0.0):
        raise ValueError(f"Baumgarte gains must be non-negative, got {baumgarte}")
    return alpha, beta


def _solve(model, q, qd, qdd, tau, u, constraints, f_ext, baumgarte):
    d = model_data(model)
    cs = constraints if type(constraints) is ConstraintSet else as_constraint_set(constraints)
    lam = np.empty(cs.m)
    alpha, beta = (0.0, 0.0) if baumgarte is None else _gains(baumgarte)
    ok = constrained_pass(d.P, model.gravity, alpha, beta, array(q), array(qd), qdd, tau, u,
                          d.fext0 if f_ext is None else wrenches(f_ext, d), cs.packed,
                          _body_work(d), _row_work(cs, model), lam)
    if not ok:
        raise np.linalg.LinAlgError(
            "A M⁻¹ Aᵀ is singular: the constraint rows are dependent at this configuration "
            "(or, for hybrid dynamics, the torque-given joints cannot satisfy them)"
        )
    return lam


# ----------------------------------------------------------------------------- Python API
def constrained_forward_dynamics(model, q, qd, tau, constraints, f_ext=None,
                                 baumgarte=None) -> tuple[Array, Array]:
    """(q̈, λ) of M q̈ + b = τ + Aᵀλ, A q̈ + Ȧq̇ = 0 by Kim's method (eqs. 67–69).

    ``constraints``: a Constraint, a list of them or a ConstraintSet (fastest: packed once).
    ``baumgarte=(α, β)`` enforces A q̈ + Ȧq̇ + 2αAq̇ + β²φ = 0 instead (simulation).
    """
    n = model.nq
    none = model._kernel_cache.get("kim_none")
    if none is None:
        none = model._kernel_cache["kim_none"] = np.zeros(n, dtype=np.bool_)
    qdd = np.empty(n)
    lam = _solve(model, q, qd, qdd, array(tau), none, constraints, f_ext, baumgarte)
    return qdd, lam


def constrained_hybrid_dynamics(model, q, qd, qdd_given, tau_given, prescribed, constraints,
                                f_ext=None, baumgarte=None) -> tuple[Array, Array, Array]:
    """(τ, q̈, λ) with q̈_u and τ_v given under the constraints (Kim eqs. 70–80).

    Needs m ≤ n_v and A_v of full row rank; with more constraints than torque-given joints
    the torques are not unique: use ``constrained_inverse_dynamics`` (Kim's remark after 80).
    """
    n = model.nq
    u = prescribed_mask(prescribed, n)
    cs = as_constraint_set(constraints)
    n_v = int(n - u.sum())
    if cs.m > n_v:
        raise ValueError(
            f"{cs.m} constraint rows but only {n_v} torque-given joints: the torques are not "
            "unique (Kim §3.3); use constrained_inverse_dynamics"
        )
    qdd = np.array(qdd_given, dtype=np.float64)
    tau = np.array(tau_given, dtype=np.float64)
    lam = _solve(model, q, qd, qdd, tau, u, cs, f_ext, baumgarte)
    return tau, qdd, lam


def constrained_inverse_dynamics(model, q, qd, qdd, constraints, actuated, tau_passive=None, *,
                                 method: str = "min_force", f_ext=None) -> tuple[Array, Array]:
    """(τ, λ) moving the constrained system with the consistent q̈ (Kim §3.1, eqs. 56–66).

    ``actuated``: mask or indices of the driven joints a; the passive joints p exert
    ``tau_passive`` (their full-length vector's p entries; default zero). With m = n_p the
    answer is unique (58). With m > n_p (redundant actuation) ``method`` picks
    "min_force" (least ‖λ‖, 59) or "min_torque" (least ‖τ_a‖, 62–64); all joints actuated is
    the case n_p = 0 (65–66 for "min_torque"). m < n_p has no solution for a general q̈:
    use ``constrained_hybrid_dynamics`` with the actuated joints prescribed.
    """
    n = model.nq
    a = prescribed_mask(actuated, n)
    p = ~a
    A, _, _ = constraint_terms(model, q, qd, constraints)
    m = A.shape[0]
    n_p = int(p.sum())
    if m < n_p:
        raise ValueError(
            f"{m} constraint rows for {n_p} passive joints: an arbitrary q̈ cannot be produced "
            "(Kim §3.1, m < n_p); use constrained_hybrid_dynamics with the actuated joints "
            "prescribed"
        )
    if method not in ("min_force", "min_torque"):
        raise ValueError(f"method must be 'min_force' or 'min_torque', got '{method}'")
    tau_r = inverse_dynamics(model, q, qd, qdd, f_ext)  # τ_r = M q̈ + b of the cut tree
    tp = np.zeros(n) if tau_passive is None else vector(tau_passive, n, "tau_passive")
    Aa, Ap = A[:, a], A[:, p]
    rp = tau_r[p] - tp[p]  # A_pᵀ λ = τ_pr − τ_p   (57)
    if np.linalg.matrix_rank(Ap) < n_p:
        raise np.linalg.LinAlgError("A_p is rank-deficient: singular configuration for this split")
    lam = np.linalg.pinv(Ap.T) @ rp  # unique for m = n_p (58), least ‖λ‖ otherwise (59)
    if method == "min_torque" and m > n_p:
        N = _null_space(Ap.T, m)
        r = tau_r[a] - Aa.T @ lam
        lam = lam + N @ (np.linalg.pinv(Aa.T @ N) @ r)  # (63)–(64)
    tau = tp.copy()
    tau[a] = tau_r[a] - Aa.T @ lam  # (60)
    return tau, lam


def _null_space(X: Array, m: int) -> Array:
    """An orthonormal basis N (m × (m − rank X)) of the null space of X (k × m)."""
    if X.shape[0] == 0:
        return np.eye(m)
    _, s, Vt = np.linalg.svd(X)
    rank = int((s > s.max() * max(X.shape) * np.finfo(float).eps).sum())
    return Vt[rank:].T


def impact_velocity(model, q, qd, constraints, restitution: float = 0.0) -> tuple[Array, Array]:
    """(q̇⁺, impulse Λ) after an impact that enforces A q̇⁺ = −e A q̇ (e = 0: plastic).

    M(q̇⁺ − q̇) = AᵀΛ with Λ = −(1 + e)(AM⁻¹Aᵀ)⁻¹ A q̇: the velocity-level analogue of (67),
    with M⁻¹Aᵀ from the same no-bias passes. Used when a rigid contact closes.
    """
    d = model_data(model)
    n = d.n
    cs = as_constraint_set(constraints)
    qd = vector(qd, n, "qd")
    A, _, _ = constraint_terms(model, q, qd, cs)
    W = _body_work(d)
    H = W[0 : n * HWORK].reshape(n, HWORK)
    Z = W[n * HWORK : n * (HWORK + ZWORK)].reshape(n, ZWORK)
    none = np.zeros(n, dtype=np.bool_)
    zero = np.zeros(n)
    # only 𝓘̂, U, D of H are used below: they depend on q alone
    hybrid_pass(d.P, model.gravity, vector(q, n, "q"), zero, np.empty(n), zero.copy(), none,
                d.fext0, H)
    Kt = np.empty((cs.m, n))
    for j in range(cs.m):
        unit_response(d.P, none, H, A[j], Kt[j], Z)
    impulse = np.linalg.solve(A @ Kt.T, -(1.0 + restitution) * (A @ qd))
    return qd + Kt.T @ impulse, impulse
