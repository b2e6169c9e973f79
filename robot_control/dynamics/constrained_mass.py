"""Constrained forward dynamics through the mass matrix factored along the tree (Kim §3.2 eqs.
67–69 with M = LᵀDL, Featherstone RBDA §6.5), for trees with many constraint rows.

    M q̈ + b = τ + Aᵀλ,   A q̈ + Ȧq̇ + 2αAq̇ + β²φ = 0   (Baumgarte's terms as constrained.py)

``constrained.constrained_pass`` gets M⁻¹Aᵀ from m no-bias articulated-body passes, each a full
sweep over the tree. When m is comparable to n (the two-arm cell: n = 18, m = 13) it is cheaper
to form M once by composite bodies in base coordinates (world_kernels), factor it as LᵀDL along
the tree (only ancestor entries fill in) and solve per row with O(depth) work: with
Y = L⁻ᵀAᵀ and u = L⁻ᵀ(τ − b),

    A M⁻¹ Aᵀ = Yᵀ D⁻¹ Y,   A q̈_r = Yᵀ D⁻¹ u,   q̈ = L⁻¹ D⁻¹ (u + Y λ).

The bias b = C q̇ + g − Σ Jᵀf_ext is the Newton–Euler wrench of every body at q̈ = 0 (gravity as
the base's acceleration), summed to the root in base coordinates. The kernels are entry points
(no allocation, no reference counting; ``row_views`` is inlined into them): the caller hands in
the workspaces.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from robot_control.dynamics import kernels as K
from robot_control.dynamics import world_kernels as KW
from robot_control.dynamics.constrained import _gains, cholesky_solve
from robot_control.dynamics.contact import (
    G_A,
    G_S,
    G_V,
    GWORK,
    ConstraintSet,
    as_constraint_set,
    body_motion,
    constraint_rows,
)
from robot_control.dynamics.packing import Data, array, model_data, workspace, wrenches

Array = np.ndarray

# Columns of a body row of the workspace, past the contact kernels' (body_motion's world
# placement, screw, twist and bias acceleration) and world_kernels's composite inertia: the
# composite bias wrench in base coordinates, then the body's scratch.
X_F = max(GWORK, KW.O_TMP + 12)
X_TMP = X_F + 6
BWORK = X_TMP + 18


def work_size(n: int) -> int:
    """Length of the flat per-model workspace: body rows | M (its LᵀDL factor) | u | x."""
    return n * BWORK + n * n + 2 * n


def row_work_size(n: int, m: int) -> int:
    """Length of a constraint set's row workspace: Aᵀ | Y = L⁻ᵀAᵀ | Z = D⁻¹Y | Gram | Ȧq̇ | φ."""
    return m * (3 * n + m + 2)


@njit(cache=True, inline="always")
def row_views(S, m, n):
    """The row workspace's blocks: Aᵀ, Y, Z (n × m: a joint's entries of all rows side by side,
    so the sweeps along the tree update whole rows of them), the Gram matrix (m × m), Ȧq̇, φ."""
    At = K.matrix_view(S[0 : m * n], n, m)
    Y = K.matrix_view(S[m * n : 2 * m * n], n, m)
    Z = K.matrix_view(S[2 * m * n : 3 * m * n], n, m)
    o = 3 * m * n
    return At, Y, Z, K.matrix_view(S[o : o + m * m], m, m), S[o + m * m : o + m * m + m], \
        S[o + m * m + m : o + m * m + 2 * m]


@K.entry_point
def composite_mass(P, G, M):
    """M(q) (lower triangle, ancestor entries only) by composite bodies in base coordinates
    (RBDA §6.2, world_kernels), from ``body_motion``'s placements and screws in G."""
    n = P.shape[0]
    for i in range(n):
        KW.world_inertia(P, i, G)
    KW.composite_columns(P, G, G[0, X_TMP : X_TMP + 6], M, False)  # G_S is world_kernels's O_S


@K.entry_point
def bias_torques(P, g, tau, fext, G, u):
    """u = τ − b, b = C q̇ + g − Σ Jᵀf_ext: each body's Newton–Euler wrench at q̈ = 0 (Kim Table 2,
    gravity as the base's acceleration) moved to base coordinates and summed to the root."""
    n = P.shape[0]
    for i in range(n):
        R = G[i, KW.O_R : KW.O_R + 9]
        V = G[i, G_V : G_V + 6]
        a = G[i, X_TMP : X_TMP + 6]
        Iv = G[i, X_TMP + 6 : X_TMP + 12]
        F = G[i, X_TMP + 12 : X_TMP + 18]
        for k in range(3):  # V̇ at q̈ = 0 plus the base's (0, −g) seen in the body: (0, Rᵀ(−g))
            a[k] = G[i, G_A + k]
            a[3 + k] = G[i, G_A + 3 + k] - (R[k] * g[0] + R[3 + k] * g[1] + R[6 + k] * g[2])
        K.rigid_inertia_times(P, i, a, F)
        K.rigid_inertia_times(P, i, V, Iv)
        K.add_coad_neg(V, Iv, F)
        for k in range(6):
            F[k] -= fext[i, k]
        Fw = G[i, X_F : X_F + 6]  # in base coordinates: (R n + p × R f, R f)
        for k in range(6):
            Fw[k] = 0.0
        K.add_force_to_parent(R, G[i, KW.O_P : KW.O_P + 3], F, Fw)
    for j in range(n - 1, -1, -1):
        u[j] = tau[j] - K.dot6(G[j, G_S : G_S + 6], G[j, X_F : X_F + 6])
        lam = int(P[j, K.PARENT])
        if lam >= 0:
            for k in range(6):
                G[lam, X_F + k] += G[j, X_F + k]


@K.entry_point
def tree_factor(P, M):
    """M = LᵀDL in place along the tree (RBDA Table 6.3): D on the diagonal, L's ancestor entries
    below it (unit diagonal implied). Returns False unless every pivot is positive."""
    n = P.shape[0]
    for k in range(n - 1, -1, -1):
        d = M[k, k]
        if not d > 0.0:
            return False
        i = int(P[k, K.PARENT])
        while i >= 0:
            a = M[k, i] / d
            j = i
            while j >= 0:
                M[i, j] -= a * M[k, j]
                j = int(P[j, K.PARENT])
            M[k, i] = a
            i = int(P[i, K.PARENT])
    return True


@K.entry_point
def solve_lt(P, M, x):
    """x ← L⁻ᵀx with L from ``tree_factor`` (leaves to root)."""
    for i in range(P.shape[0] - 1, -1, -1):
        j = int(P[i, K.PARENT])
        while j >= 0:
            x[j] -= M[i, j] * x[i]
            j = int(P[j, K.PARENT])


@K.entry_point
def solve_l(P, M, x):
    """x ← L⁻¹x with L from ``tree_factor`` (root to leaves)."""
    for i in range(P.shape[0]):
        j = int(P[i, K.PARENT])
        while j >= 0:
            x[i] -= M[i, j] * x[j]
            j = int(P[j, K.PARENT])


@K.entry_point
def constraint_gram(P, M, At, Y, Z, Gm):
    """Y = L⁻ᵀAᵀ, Z = D⁻¹Y and Gm = A M⁻¹ Aᵀ = Yᵀ D⁻¹ Y (n × m blocks as ``row_views``), M
    factored by ``tree_factor``.

    Gm = Σ_l z_l y_lᵀ over the joints l in order, skipping the rows whose z_l entry is zero (a
    constraint whose bodies do not have joint l among their ancestors): every sum sees the same
    non-zero terms in the same order as the plain inner products, so the same bits."""
    n, m = At.shape[0], At.shape[1]
    for l in range(n):
        for r in range(m):
            Y[l, r] = At[l, r]
    for i in range(n - 1, -1, -1):  # ``solve_lt`` on all m columns at once
        j = int(P[i, K.PARENT])
        while j >= 0:
            a = M[i, j]
            for r in range(m):
                Y[j, r] -= a * Y[i, r]
            j = int(P[j, K.PARENT])
    for i in range(m):
        for j in range(i + 1):
            Gm[i, j] = 0.0
    for l in range(n):
        d = M[l, l]
        for r in range(m):
            Z[l, r] = Y[l, r] / d
        for i in range(m):
            z = Z[l, i]
            if z != 0.0:
                for j in range(i + 1):
                    Gm[i, j] += z * Y[l, j]
    for i in range(m):
        for j in range(i):
            Gm[j, i] = Gm[i, j]


@K.entry_point
def respond(P, M, Y, u, lam, out):
    """out = L⁻¹D⁻¹(u + Yλ): with u = L⁻ᵀ(τ − b) the q̈ = M⁻¹(τ − b + Aᵀλ) of (69), with u = 0
    the velocity change M⁻¹AᵀΛ of an impulse Λ."""
    for l in range(out.shape[0]):
        s = u[l]
        for r in range(Y.shape[1]):
            s += Y[l, r] * lam[r]
        out[l] = s / M[l, l]
    solve_l(P, M, out)


@K.entry_point
def constrained_mass_pass(P, g, alpha, beta, q, qd, qdd, tau, fext, C, W, S, lam):
    """q̈ and λ of M q̈ + b = τ + Aᵀλ, A q̈ + Ȧq̇ + 2αAq̇ + β²φ = 0 (Kim 67–69 by LᵀDL).

    W: ``work_size(n)`` floats, S: ``row_work_size(n, m)``; returns False if M is not positive
    definite or A M⁻¹ Aᵀ is singular (dependent constraint rows)."""
    n, m = P.shape[0], C.shape[0]
    G = K.matrix_view(W[0 : n * BWORK], n, BWORK)
    M = K.matrix_view(W[n * BWORK : n * BWORK + n * n], n, n)
    u = W[n * BWORK + n * n : n * BWORK + n * n + n]
    At, Y, Z, Gm, bias, phi = row_views(S, m, n)
    body_motion(P, q, qd, G)
    constraint_rows(P, C, G, At.T, bias, phi)
    composite_mass(P, G, M)
    bias_torques(P, g, tau, fext, G, u)
    if not tree_factor(P, M):
        return False
    solve_lt(P, M, u)
    constraint_gram(P, M, At, Y, Z, Gm)
    # −(A q̈_r + Ȧq̇ + 2α A q̇ + β² φ), A q̈_r = Zᵀu (eq. 76 with Baumgarte's terms); the m sums
    # advance side by side over l, each term rounded as (A·2α)·q̇_l + Z·u_l (2α is exact)
    two_alpha = 2.0 * alpha
    for i in range(m):
        lam[i] = bias[i] + beta * beta * phi[i]
    for l in range(n):
        v, w = qd[l], u[l]
        for i in range(m):
            lam[i] += At[l, i] * two_alpha * v + Z[l, i] * w
    for i in range(m):
        lam[i] = -lam[i]
    if not cholesky_solve(Gm, lam):
        return False
    respond(P, M, Y, u, lam, qdd)
    return True


@K.entry_point
def plastic_impact_pass(P, q, qd, C, W, S, impulse):
    """q̇ ← q̇⁺ = q̇ + M⁻¹AᵀΛ, Λ = −(AM⁻¹Aᵀ)⁻¹Aq̇: a plastic impact closing the rows C (A q̇⁺ = 0);
    the impulse Λ into ``impulse``. False if M or A M⁻¹ Aᵀ is singular."""
    n, m = P.shape[0], C.shape[0]
    G = K.matrix_view(W[0 : n * BWORK], n, BWORK)
    M = K.matrix_view(W[n * BWORK : n * BWORK + n * n], n, n)
    u = W[n * BWORK + n * n : n * BWORK + n * n + n]
    x = W[n * BWORK + n * n + n : n * BWORK + n * n + 2 * n]
    At, Y, Z, Gm, bias, phi = row_views(S, m, n)
    body_motion(P, q, qd, G)
    constraint_rows(P, C, G, At.T, bias, phi)
    for i in range(n):
        x[i] = 0.0
    composite_mass(P, G, M)
    if not tree_factor(P, M):
        return False
    constraint_gram(P, M, At, Y, Z, Gm)
    for i in range(m):
        impulse[i] = 0.0
    for l in range(n):
        for i in range(m):
            impulse[i] -= At[l, i] * qd[l]
    if not cholesky_solve(Gm, impulse):
        return False
    respond(P, M, Y, x, impulse, u)
    for i in range(n):
        qd[i] += u[i]
    return True


# ----------------------------------------------------------------------------- Python API
def _workspaces(model, d: Data, cs: ConstraintSet) -> tuple[Array, Array]:
    n = model.nq
    W = workspace(d, "mass_constrained", lambda: np.zeros(work_size(n)))
    cache = cs.__dict__.setdefault("_mass_rows", {})
    S = cache.get(n)
    if S is None:
        cs.check(model)  # bodies in [−1, n): the kernels index them without bounds checks
        S = cache[n] = np.zeros(row_work_size(n, cs.m))
    return W, S


def constrained_forward_dynamics_mass(model, q, qd, tau, constraints, f_ext=None,
                                      baumgarte=None) -> tuple[Array, Array]:
    """(q̈, λ) as ``constrained_forward_dynamics`` computes them, by the factored mass matrix."""
    d = model_data(model)
    cs = as_constraint_set(constraints)
    W, S = _workspaces(model, d, cs)
    alpha, beta = _gains(baumgarte)
    qdd, lam = np.empty(d.n), np.empty(cs.m)
    if not constrained_mass_pass(d.P, model.gravity, alpha, beta, array(q), array(qd), qdd,
                                 array(tau), d.fext0 if f_ext is None else wrenches(f_ext, d),
                                 cs.packed, W, S, lam):
        raise np.linalg.LinAlgError("M or A M⁻¹ Aᵀ is singular at this configuration")
    return qdd, lam


def plastic_impact_velocity(model, q, qd, constraints) -> tuple[Array, Array]:
    """(q̇⁺, Λ) of ``impact_velocity`` with e = 0, by the factored mass matrix."""
    d = model_data(model)
    cs = as_constraint_set(constraints)
    W, S = _workspaces(model, d, cs)
    out, impulse = np.array(qd, dtype=np.float64), np.empty(cs.m)
    if not plastic_impact_pass(d.P, array(q), out, cs.packed, W, S, impulse):
        raise np.linalg.LinAlgError("M or A M⁻¹ Aᵀ is singular at this configuration")
    return out, impulse
