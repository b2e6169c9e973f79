"""Constraint rows A(q), Ȧq̇ and the error φ(q) for cut loops and contacts (Kim §3).

Kim writes a constrained system as A(q) q̇ = 0, A q̈ + Ȧ q̇ = 0 but leaves open how A is
built. Here every constraint says that a frame A on body a and a frame B on body b
(−1: the fixed base) move together along selected directions. With J_X the Jacobian of
frame X in world-aligned axes at its origin, (ω; v) = J_X q̇ (angular first),

    A = Σ (J_A − J_B),    Ȧ q̇ = Σ (ȧ_A − ȧ_B),    φ = Σ (log(R_A R_Bᵀ); p_A − p_B),

where the rows Σ (k × 6) pick world directions and ȧ_X = (ω̇, p̈) is the classical
acceleration of frame X at q̈ = 0 without gravity. World axes make Ȧq̇ the exact time
derivative of A q̇ and the position rows of A exactly ∂φ/∂q; the rotation rows match
∂φ/∂q where the loop is closed, which is all Baumgarte stabilisation needs.

- a cut loop: two frames that must coincide, all 6 rows, position only, or a planar subset
  (Kim's five-bar: two translations and the rotation about the plane normal, m = 3);
- a point contact: a body point held at a world point (3 rows);
- a surface contact: a body point kept on a plane n·x = offset (1 row, frictionless).

The rows are computed by a compiled pass over world placements and body twists, so the
constrained dynamics can run as one kernel call; they equal the kinematics module's world
``jacobian`` and ``jacobian_dot_qd`` of the frames (column j: Ad_{T_0j} S_j moved to the frame
origin), which test_constrained.py checks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from robot_control.dynamics import kernels as K
from robot_control.dynamics import world_kernels as KW
from robot_control.dynamics.packing import Data, array, model_data, vector, workspace
from robot_control.foundation.safe_yaml import load_file
from robot_control.model.resources import share_path

Array = np.ndarray

#: Names of the world-aligned relative-motion rows a constraint can select.
ROW_NAMES = ("wx", "wy", "wz", "vx", "vy", "vz")
_ROW_SETS = {"6d": ROW_NAMES, "full": ROW_NAMES, "3d": ROW_NAMES[3:], "position": ROW_NAMES[3:]}

# Columns of a packed constraint row: bodies a, b; frame A in a (R row-major, p); frame B in b;
# the selection row σ (6).
C_A, C_B, C_RA, C_PA, C_RB, C_PB, C_SIG = 0, 1, 2, 11, 14, 23, 26
CROW = 32
# Columns of a body row of the constraint workspace: world R, p and world screw Ad_{T_0i} S_i
# where world_kernels's world_pose / world_screw put them; body twist V; body acceleration
# at q̈ = 0 without gravity.
G_R, G_P, G_S = KW.O_R, KW.O_P, KW.O_S
G_V, G_A = G_S + 6, G_S + 12
GWORK = G_A + 6
#: row 0 only, columns G_TMP … G_TMP + 66: scratch of the kernels below (the world columns start
#: past the packed model row of world_kernels's layout, so those in front are free: no allocation)
G_TMP = 0

_CACHE = True


@dataclass(frozen=True)
class Constraint:
    """Frame A (``placement_a`` in body ``body_a``) and frame B move together along ``rows``."""

    name: str
    body_a: int
    placement_a: Array
    body_b: int
    placement_b: Array
    rows: Array = field(default_factory=lambda: np.eye(6))

    @property
    def m(self) -> int:
        return int(self.rows.shape[0])


def selection(rows) -> Array:
    """Selection Σ (k × 6) from "6d", "3d", a list of names in ROW_NAMES, or a k × 6 array."""
    if isinstance(rows, str):
        if rows not in _ROW_SETS:
            raise ValueError(f"unknown constraint rows '{rows}' (use {sorted(_ROW_SETS)} or names)")
        rows = _ROW_SETS[rows]
    if len(rows) and isinstance(rows[0], str):
        bad = [r for r in rows if r not in ROW_NAMES]
        if bad:
            raise ValueError(f"unknown constraint rows {bad}; choose from {list(ROW_NAMES)}")
        return np.eye(6)[[ROW_NAMES.index(r) for r in rows]]
    sigma = np.atleast_2d(np.asarray(rows, dtype=float))
    if sigma.ndim != 2 or sigma.shape[1] != 6 or sigma.shape[0] == 0:
        raise ValueError(f"constraint rows must be a non-empty k × 6 array, got {sigma.shape}")
    return sigma


def loop_closure(model, frame_a: str, frame_b: str, rows="6d",
                 name: str | None = None) -> Constraint:
    """A cut loop: named frames (bodies or frames of the model) that coincide along ``rows``."""
    a, Xa = model.frame_placement(frame_a)
    b, Xb = model.frame_placement(frame_b)
    return Constraint(name or f"{frame_a}={frame_b}", a, np.array(Xa, float), b,
                      np.array(Xb, float), selection(rows))


def point_contact(model, q, frame: str, point=None, name: str | None = None) -> Constraint:
    """A sticking contact: the origin of ``frame`` held at ``point`` (default: its place at q)."""
    a, Xa = model.frame_placement(frame)
    if point is None:
        point = frame_world_placement(model, q, a, Xa)[:3, 3]
    anchor = np.eye(4)
    anchor[:3, 3] = vector(point, 3, "point")
    return Constraint(name or f"{frame}@point", a, np.array(Xa, float), -1, anchor,
                      selection("3d"))


def surface_contact(model, frame: str, normal, offset: float = 0.0,
                    name: str | None = None) -> Constraint:
    """A frictionless surface contact: the origin of ``frame`` stays on the plane n·x = offset."""
    a, Xa = model.frame_placement(frame)
    n = vector(normal, 3, "normal")
    norm = np.linalg.norm(n)
    if norm == 0.0:
        raise ValueError("surface normal must be non-zero")
    n = n / norm
    on_plane = np.eye(4)
    on_plane[:3, 3] = offset * n
    return Constraint(name or f"{frame}@plane", a, np.array(Xa, float), -1, on_plane,
                      np.concatenate([np.zeros(3), n])[None, :])


class ConstraintSet:
    """Constraints stacked and packed once for the compiled kernels (m rows in all)."""

    def __init__(self, constraints) -> None:
        if isinstance(constraints, Constraint):
            constraints = [constraints]
        self.constraints: list[Constraint] = list(constraints)
        if not self.constraints:
            raise ValueError("a constraint set needs at least one constraint")
        rows = []
        for c in self.constraints:
            for sigma in c.rows:
                row = np.zeros(CROW)
                row[C_A], row[C_B] = c.body_a, c.body_b
                row[C_RA : C_RA + 9] = c.placement_a[:3, :3].ravel()
                row[C_PA : C_PA + 3] = c.placement_a[:3, 3]
                row[C_RB : C_RB + 9] = c.placement_b[:3, :3].ravel()
                row[C_PB : C_PB + 3] = c.placement_b[:3, 3]
                row[C_SIG : C_SIG + 6] = sigma
                rows.append(row)
        self.packed = np.array(rows)
        self.m = len(rows)

    def check(self, model) -> None:
        """Raise ValueError if a constraint names a body the model does not have."""
        bodies = self.packed[:, [C_A, C_B]]
        if bodies.max() >= model.nq or bodies.min() < -1:
            raise ValueError(f"constraint bodies {bodies.tolist()} out of range for {model.name}")


def as_constraint_set(constraints) -> ConstraintSet:
    """A ConstraintSet from a Constraint, a list of them, or a ConstraintSet (returned as is)."""
    return constraints if isinstance(constraints, ConstraintSet) else ConstraintSet(constraints)


def load_loop_constraints(model, path=None) -> list[Constraint]:
    """Loop closures listed in ``config/robots/<model name>.loop.yaml`` (or ``path``)."""
    path = share_path("config", "robots", f"{model.name}.loop.yaml") if path is None else path
    spec = load_file(path) or {}
    loops = spec.get("loops")
    if not isinstance(loops, list) or not loops:
        raise ValueError(f"{path}: expected a non-empty list under 'loops'")
    out = []
    for k, loop in enumerate(loops):
        unknown = set(loop) - {"name", "frame_a", "frame_b", "rows"}
        if unknown:
            raise ValueError(f"{path}: loops[{k}] has unknown keys {sorted(unknown)}")
        out.append(loop_closure(model, loop["frame_a"], loop["frame_b"], loop.get("rows", "6d"),
                                loop.get("name")))
    return out


# ----------------------------------------------------------------------------- kernels
@njit(cache=_CACHE, inline="always")
def rotation_log(R, out):
    """out = log(R)^∨, the rotation vector of a row-major rotation matrix R."""
    c = 0.5 * (R[0] + R[4] + R[8] - 1.0)
    c = min(1.0, max(-1.0, c))
    th = np.arccos(c)
    wx, wy, wz = R[7] - R[5], R[2] - R[6], R[3] - R[1]
    s = np.sin(th)
    if s > 1e-6:
        f = 0.5 * th / s
    elif c > 0.0:
        f = 0.5 + th * th / 12.0  # θ/(2 sin θ) near θ = 0
    else:
        # near θ = π the antisymmetric part vanishes: take the axis from R + I
        d0, d1, d2 = R[0] + 1.0, R[4] + 1.0, R[8] + 1.0
        if d0 >= d1 and d0 >= d2:
            ax, ay, az = d0, R[1], R[2]
        elif d1 >= d2:
            ax, ay, az = R[3], d1, R[5]
        else:
            ax, ay, az = R[6], R[7], d2
        norm = np.sqrt(ax * ax + ay * ay + az * az)
        if ax * wx + ay * wy + az * wz < 0.0:
            norm = -norm  # the sign the antisymmetric part still carries
        out[0], out[1], out[2] = th * ax / norm, th * ay / norm, th * az / norm
        return
    out[0], out[1], out[2] = f * wx, f * wy, f * wz


@K.entry_point
def body_motion(P, q, qd, G):
    """World placements T_0i, body twists V_i, bias accelerations (q̈ = 0, g = 0) of all bodies."""
    n = P.shape[0]
    K.check_length(q, n)
    K.check_length(qd, n)
    Rl = G[0, G_TMP + 48 : G_TMP + 57]
    pl = G[0, G_TMP + 57 : G_TMP + 60]
    c = G[0, G_TMP + 60 : G_TMP + 66]
    for i in range(n):
        KW.world_pose(P, i, q, G, Rl, pl)  # T_0i into G's world columns; T_{λ(i),i} in Rl, pl
        KW.world_screw(P, i, G)  # ξ_i = Ad_{T_0i} S_i
        V = G[i, G_V : G_V + 6]
        A = G[i, G_A : G_A + 6]
        S = P[i, K.SCREW : K.SCREW + 6]
        lam = int(P[i, K.PARENT])
        if lam < 0:
            for k in range(6):
                V[k] = 0.0
                A[k] = 0.0
        else:
            K.motion_to_child(Rl, pl, G[lam, G_V : G_V + 6], V)
            K.motion_to_child(Rl, pl, G[lam, G_A : G_A + 6], A)
        for k in range(6):
            V[k] += S[k] * qd[i]
        K.ad_motion(V, S, c)
        for k in range(6):
            A[k] += c[k] * qd[i]  # V̇_i = Ad V̇_λ + ad_{V_i} S_i q̇_i  (Kim Table 2, q̈ = 0)


@njit(cache=_CACHE, inline="always")
def frame_state(G, body, Xr, Xp, R, p, acc):
    """World rotation R, origin p and classical acceleration (ω̇; p̈) at q̈ = 0 of a body frame."""
    if body < 0:
        for k in range(9):
            R[k] = Xr[k]
        for k in range(3):
            p[k] = Xp[k]
        for k in range(6):
            acc[k] = 0.0
        return
    Rb = G[body, G_R : G_R + 9]
    V = G[body, G_V : G_V + 6]
    A = G[body, G_A : G_A + 6]
    for r in range(3):
        for c in range(3):
            R[3 * r + c] = Rb[3 * r] * Xr[c] + Rb[3 * r + 1] * Xr[3 + c] + Rb[3 * r + 2] * Xr[6 + c]
        p[r] = Rb[3 * r] * Xp[0] + Rb[3 * r + 1] * Xp[1] + Rb[3 * r + 2] * Xp[2] + G[body, G_P + r]
    w0, w1, w2 = V[0], V[1], V[2]
    # point velocity in body a: v + ω × r; classical acceleration v̇ + ω̇ × r + ω × (v + ω × r)
    u0 = V[3] + w1 * Xp[2] - w2 * Xp[1]
    u1 = V[4] + w2 * Xp[0] - w0 * Xp[2]
    u2 = V[5] + w0 * Xp[1] - w1 * Xp[0]
    l0 = A[3] + A[1] * Xp[2] - A[2] * Xp[1] + w1 * u2 - w2 * u1
    l1 = A[4] + A[2] * Xp[0] - A[0] * Xp[2] + w2 * u0 - w0 * u2
    l2 = A[5] + A[0] * Xp[1] - A[1] * Xp[0] + w0 * u1 - w1 * u0
    for r in range(3):
        acc[r] = Rb[3 * r] * A[0] + Rb[3 * r + 1] * A[1] + Rb[3 * r + 2] * A[2]
        acc[3 + r] = Rb[3 * r] * l0 + Rb[3 * r + 1] * l1 + Rb[3 * r + 2] * l2


@njit(cache=_CACHE, inline="always")
def add_jacobian_rows(P, G, body, p, C, r0, r1, sign, A):
    """A[r] += sign · σ_rᵀ J_X for the rows r0 … r1−1 of C (one frame, their selections σ_r):
    world-aligned Jacobian of a frame at world point p on ``body``, walked once for all rows."""
    j = body
    while j >= 0:
        xi = G[j, G_S : G_S + 6]
        # the column (ω_j, v_j + ω_j × p) of J_X
        w0, w1, w2 = xi[0], xi[1], xi[2]
        v0 = xi[3] + xi[1] * p[2] - xi[2] * p[1]
        v1 = xi[4] + xi[2] * p[0] - xi[0] * p[2]
        v2 = xi[5] + xi[0] * p[1] - xi[1] * p[0]
        for r in range(r0, r1):
            sigma = C[r, C_SIG : C_SIG + 6]
            A[r, j] += sign * (sigma[0] * w0 + sigma[1] * w1 + sigma[2] * w2
                               + sigma[3] * v0 + sigma[4] * v1 + sigma[5] * v2)
        j = int(P[j, K.PARENT])


@K.entry_point
def constraint_rows(P, C, G, A, bias, phi):
    """A (m × n), Ȧq̇ and φ of the packed rows C, after ``body_motion`` has filled G."""
    m = C.shape[0]
    n = P.shape[0]
    buf = G[0, G_TMP : G_TMP + 48]
    Ra, pa, acca = buf[0:9], buf[9:12], buf[12:18]
    Rb, pb, accb = buf[18:27], buf[27:30], buf[30:36]
    Rrel, e = buf[36:45], buf[45:48]
    r0 = 0
    while r0 < m:
        row = C[r0]
        a = int(row[C_A])
        b = int(row[C_B])
        r1 = r0 + 1  # the rows of one constraint: the same bodies and frames, its own σ each
        while r1 < m:
            same = True
            for k in range(C_SIG):
                if C[r1, k] != row[k]:
                    same = False
                    break
            if not same:
                break
            r1 += 1
        frame_state(G, a, row[C_RA : C_RA + 9], row[C_PA : C_PA + 3], Ra, pa, acca)
        frame_state(G, b, row[C_RB : C_RB + 9], row[C_PB : C_PB + 3], Rb, pb, accb)
        # rotation error log(R_A R_Bᵀ) in world axes
        for x in range(3):
            for y in range(3):
                Rrel[3 * x + y] = Ra[3 * x] * Rb[3 * y] + Ra[3 * x + 1] * Rb[3 * y + 1] \
                    + Ra[3 * x + 2] * Rb[3 * y + 2]
        rotation_log(Rrel, e)
        for r in range(r0, r1):
            for j in range(n):
                A[r, j] = 0.0
        add_jacobian_rows(P, G, a, pa, C, r0, r1, 1.0, A)
        add_jacobian_rows(P, G, b, pb, C, r0, r1, -1.0, A)
        for r in range(r0, r1):
            sigma = C[r, C_SIG : C_SIG + 6]
            s = 0.0
            for k in range(6):
                s += sigma[k] * (acca[k] - accb[k])
            bias[r] = s
            # the rotation error's and the position error p_A − p_B's components along σ
            phi[r] = (sigma[0] * e[0] + sigma[1] * e[1] + sigma[2] * e[2]
                      + sigma[3] * (pa[0] - pb[0]) + sigma[4] * (pa[1] - pb[1])
                      + sigma[5] * (pa[2] - pb[2]))
        r0 = r1


# ----------------------------------------------------------------------------- Python API
def constraint_work(d: Data) -> Array:
    """The constraint-kinematics workspace G (n × GWORK) of a Data, allocated on first use."""
    return workspace(d, "kim_contact", lambda: np.zeros((d.n, GWORK)))


def constraint_terms(model, q, qd, constraints) -> tuple[Array, Array, Array]:
    """(A, Ȧq̇, φ) of the constraints at (q, q̇): Kim's A q̇ = 0, A q̈ + Ȧ q̇ = 0, and φ(q) = 0."""
    cs = as_constraint_set(constraints)
    cs.check(model)
    d = model_data(model)
    n = d.n
    G = constraint_work(d)
    body_motion(d.P, array(q), array(qd), G)
    A = np.empty((cs.m, n))
    bias = np.empty(cs.m)
    phi = np.empty(cs.m)
    constraint_rows(d.P, cs.packed, G, A, bias, phi)
    return A, bias, phi


def constraint_jacobian(model, q, constraints) -> Array:
    """A(q), the m × n constraint Jacobian (velocity constraint A q̇ = 0)."""
    return constraint_terms(model, q, np.zeros(model.nq), constraints)[0]


def constraint_error(model, q, constraints) -> Array:
    """φ(q): rotation vector and position offset of frame A from frame B along the rows."""
    return constraint_terms(model, q, np.zeros(model.nq), constraints)[2]


def frame_world_placement(model, q, body: int, X) -> Array:
    """World placement T_0X of a frame with placement X in ``body`` (−1: the base)."""
    if body < 0:
        return np.array(X, float)
    d = model_data(model)
    T = np.empty((d.n, 4, 4))
    K.placements(d.P, vector(q, d.n, "q"), T)
    return T[body] @ X


def project_to_constraints(model, q, constraints, fixed=None, tol: float = 1e-12,
                           max_iter: int = 50) -> Array:
    """Closest q* to q with φ(q*) = 0 by Gauss–Newton (min-norm steps), joints in ``fixed`` held.

    Used to assemble a cut loop (e.g. the five-bar from its two crank angles) and to clean up
    drift in simulation. Raises ValueError if it does not converge (no assembly nearby).
    """
    cs = as_constraint_set(constraints)
    q = vector(q, model.nq, "q").copy()
    free = np.ones(model.nq, dtype=bool)
    if fixed is not None:
        free[np.asarray(fixed, dtype=int)] = False
    for _ in range(max_iter):
        A, _, phi = constraint_terms(model, q, np.zeros(model.nq), cs)
        if np.abs(phi).max() < tol:
            return q
        step, *_ = np.linalg.lstsq(A[:, free], -phi, rcond=None)
        q[free] += step
    raise ValueError(
        f"constraints not satisfied after {max_iter} steps: |φ| = {np.abs(phi).max():.3g}"
    )
