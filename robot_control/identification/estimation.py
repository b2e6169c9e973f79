"""Least-squares identification of inertial and friction parameters (Huo 2.5, 2-113, 2.6).

Stacking Y_p(q_k, q̇_k, q̈_k) p = τ_k over the samples gives W p = y; Huo's estimate is
p' = (ŶᵀŶ)⁻¹Ŷᵀτ. Here it is weighted (Gautier): each joint's rows are scaled by 1/σ_j, σ_j
the standard deviation of that joint's ordinary least-squares residual, so a noisy joint does not
dominate; the covariance of the estimate is s²(WᵀΣ⁻¹W)⁻¹. Friction adds per joint the columns of
Huo's R(q̇) = diag(d̂ + μ)q̇ + diag(b)sgn(q̇) (2.6): viscous q̇_j and Coulomb sgn(q̇_j).

Optionally the estimate is constrained to be physically consistent: every body's 4×4
pseudo-inertia J = [[Σ, h], [hᵀ, m]] (Huo's J_i of 2.1, Σ = ½tr(I)1 − I) positive definite,
which is exactly "a mass distribution exists" (Wensing et al. 2017). J = UUᵀ with U upper
triangular and exponentiated diagonal (the log-Cholesky parameters of Rucker & Wensing 2022)
covers all such J without constraints, so the fit is an unconstrained nonlinear least squares in
the standard parameters, with a small pull towards the nominal model along directions the data
do not see.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import qr
from scipy.optimize import least_squares

from robot_control.dynamics.reference.lagrange_euler import pseudo_inertia
from robot_control.dynamics.regressor import parameter_basis, regressor

Array = np.ndarray


@dataclass
class Estimate:
    """Parameters p̂ (basis, then friction), their standard deviations and the fit's quality."""

    basis: str
    names: list[str]
    values: Array
    std: Array
    condition_number: float       # of W with unit-norm columns
    condition_number_raw: float   # of W as is
    joint_sigma: Array            # σ_j, N·m: residual standard deviation per joint
    rows: int
    inertial_size: int
    theta: Array                  # a full standard parameter set with these dynamics
    physical: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def inertial(self) -> Array:
        return self.values[: self.inertial_size]

    @property
    def friction(self) -> Array | None:
        """(n, 2): viscous, Coulomb per joint, or None."""
        rest = self.values[self.inertial_size:]
        return rest.reshape(-1, 2) if rest.size else None

    @property
    def relative_std(self) -> Array:
        """σ(p̂_k)/|p̂_k| in percent."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return 100.0 * self.std / np.abs(self.values)


def friction_columns(qd: Array, sign_qd: Array | None = None) -> Array:
    """(k·n × 2n) columns [q̇_j, sgn q̇_j] per joint of Huo 2.6's R(q̇), stacked like W.

    ``sign_qd``: the sgn q̇ signal to use (e.g. filtered like τ); default np.sign(q̇).
    """
    k, n = qd.shape
    sign_qd = np.sign(qd) if sign_qd is None else sign_qd
    F = np.zeros((k, n, 2 * n))
    for j in range(n):
        F[:, j, 2 * j] = qd[:, j]
        F[:, j, 2 * j + 1] = sign_qd[:, j]
    return F.reshape(k * n, 2 * n)


def observation_matrix(model, mapping: Array, q: Array, qd: Array, qdd: Array,
                       friction: bool, sign_qd: Array | None = None) -> Array:
    """W = [Y(q_k, q̇_k, q̈_k)·mapping; …] (k·n rows, sample-major), friction columns appended (2-113)."""
    Y = np.vstack([regressor(model, q[k], qd[k], qdd[k]) for k in range(q.shape[0])]) @ mapping
    return np.hstack([Y, friction_columns(qd, sign_qd)]) if friction else Y


def condition_number(W: Array, scaled: bool = True) -> float:
    """σ_max/σ_min of W, with its columns first scaled to unit norm when ``scaled``."""
    if scaled:
        W = W / np.maximum(np.linalg.norm(W, axis=0), 1e-300)
    s = np.linalg.svd(W, compute_uv=False)
    return float(s[0] / s[-1]) if s[-1] > 0.0 else float("inf")


def joint_weights(W: Array, y: Array, n: int) -> tuple[Array, Array]:
    """(1/σ_j per row, σ_j per joint) from each joint's ordinary least-squares residual (Gautier)."""
    p = np.linalg.lstsq(W, y, rcond=None)[0]
    r = (y - W @ p).reshape(-1, n)
    dof = max(r.shape[0] - W.shape[1] / n, 1.0)
    sigma = np.sqrt((r**2).sum(axis=0) / dof)
    sigma = np.maximum(sigma, 1e-12 * max(float(sigma.max()), 1e-300))
    return np.tile(1.0 / sigma, r.shape[0]), sigma


def weighted_least_squares(W: Array, y: Array, n: int) -> tuple[Array, Array, Array]:
    """(p̂, covariance, σ_j) of Huo's p' = (ŶᵀŶ)⁻¹Ŷᵀτ with rows weighted by 1/σ_j (Gautier)."""
    w, sigma = joint_weights(W, y, n)
    Ww, yw = W * w[:, None], y * w
    p = np.linalg.lstsq(Ww, yw, rcond=None)[0]
    dof = max(Ww.shape[0] - Ww.shape[1], 1)
    s2 = float(((yw - Ww @ p) ** 2).sum()) / dof
    cov = s2 * np.linalg.pinv(Ww.T @ Ww)
    return p, cov, sigma


# ------------------------------------------------------------------ physical consistency
def parameters_of_pseudo_inertia(J: Array) -> Array:
    """The 10 standard parameters of a pseudo-inertia (I = tr(Σ)1 − Σ)."""
    S = J[:3, :3]
    inertia = np.trace(S) * np.eye(3) - S
    return np.array([inertia[0, 0], inertia[0, 1], inertia[0, 2], inertia[1, 1], inertia[1, 2],
                     inertia[2, 2], J[0, 3], J[1, 3], J[2, 3], J[3, 3]])


_UPPER = np.triu_indices(4)


def pseudo_inertia_of_log_cholesky(x: Array) -> Array:
    """J = UUᵀ, U upper triangular with diagonal exp(x_ii): positive definite for every x."""
    U = np.zeros((4, 4))
    U[_UPPER] = x
    U[np.diag_indices(4)] = np.exp(np.diag(U))
    return U @ U.T


def log_cholesky_of_pseudo_inertia(J: Array) -> Array:
    """The x with pseudo_inertia_of_log_cholesky(x) = J (J made definite by a tiny ridge)."""
    J = 0.5 * (J + J.T) + 1e-9 * max(float(np.trace(J)), 1e-9) * np.eye(4)
    P = np.eye(4)[::-1]
    L = np.linalg.cholesky(P @ J @ P)  # J = (PLP)(PLP)ᵀ with PLP upper triangular
    U = P @ L @ P
    U[np.diag_indices(4)] = np.log(np.diag(U))
    return U[_UPPER]


def physically_consistent_fit(Ws: Array, y: Array, weights: Array, theta0: Array,
                              n_extra: int, extra0: Array, prior: float = 1e-6,
                              pinned: Array | None = None) -> tuple[Array, Array]:
    """(θ, extra) minimising ‖w(W_s[θ; extra] − y)‖² + ε‖θ − θ₀‖² over consistent θ (Wensing).

    ``Ws``: observation matrix in the standard parameters (10 per body) followed by ``n_extra``
    unconstrained columns (friction); ε = ``prior`` × mean of diag(WᵀW) keeps directions the
    data do not determine at the nominal θ₀. Indices in ``pinned`` (parameters a group basis
    assumes zero) are held at θ₀ by a weight 10⁶ times larger.
    """
    Ww, yw = Ws * weights[:, None], y * weights
    Q, R = qr(Ww, mode="economic")
    c = Q.T @ yw
    bodies = (Ws.shape[1] - n_extra) // 10
    eps = np.full(theta0.size, np.sqrt(prior * float(np.mean(np.sum(Ww**2, axis=0)))))
    if pinned is not None:
        eps[pinned] *= 1e6

    def theta_of(x: Array) -> Array:
        return np.concatenate([parameters_of_pseudo_inertia(
            pseudo_inertia_of_log_cholesky(x[10 * i:10 * i + 10])) for i in range(bodies)])

    def residual(x: Array) -> Array:
        theta = theta_of(x[:10 * bodies])
        full = np.concatenate([theta, x[10 * bodies:]])
        return np.concatenate([R @ full - c, eps * (theta - theta0)])

    x0 = np.concatenate([*(log_cholesky_of_pseudo_inertia(pseudo_inertia(theta0[10 * i:10 * i + 10]))
                           for i in range(bodies)), extra0])
    sol = least_squares(residual, x0, method="trf", x_scale="jac", max_nfev=200 * x0.size)
    return theta_of(sol.x[:10 * bodies]), sol.x[10 * bodies:]


def assumed_zero(model, basis_name: str) -> Array:
    """Indices in θ of the parameters a bundled group set takes as zero (e.g. the DDArm's xy₂)."""
    from robot_control.dynamics.regressor import standard_parameter_names

    group = model.parameter_groups.get(basis_name)
    if isinstance(group, dict):
        zero = group.get("assumed_zero", ())
    else:
        zero = getattr(group, "assumed_zero", ())
    names = standard_parameter_names(model)
    return np.array([names.index(k) for k in zero], dtype=int)


# ------------------------------------------------------------------------------- driver
def identify(model, basis_name: str, samples, friction: bool = False,
             physical: bool = False) -> Estimate:
    """Estimate the parameters of ``basis_name`` (and friction) from filtered samples (Huo 2.5).

    ``samples``: robot_control.identification.signals.Samples (q, q̇, q̈, τ, filtered sgn q̇).
    """
    from robot_control.control.model_terms import estimated_model

    basis = parameter_basis(model, basis_name)
    n = model.nq
    q, qd, qdd, sgn = samples.q, samples.qd, samples.qdd, samples.sign_qd
    W = observation_matrix(model, basis.regressor_map, q, qd, qdd, friction, sgn)
    y = samples.tau.reshape(-1)
    p, cov, sigma = weighted_least_squares(W, y, n)
    b = basis.size
    names = list(basis.names)
    if friction:
        names += [f"{j}.{kind}" for j in model.joint_names for kind in ("viscous", "coulomb")]
    theta = estimated_model(model, basis, p[:b]).inertial_parameters()
    est = Estimate(basis.name, names, p, np.sqrt(np.maximum(np.diag(cov), 0.0)),
                   condition_number(W), condition_number(W, scaled=False), sigma, W.shape[0],
                   b, theta)
    if physical:
        Ws = observation_matrix(model, np.eye(10 * n), q, qd, qdd, friction, sgn)
        weights = np.tile(1.0 / sigma, q.shape[0])
        theta, extra = physically_consistent_fit(Ws, y, weights, model.inertial_parameters(),
                                                 W.shape[1] - b, p[b:],
                                                 pinned=assumed_zero(model, basis.name))
        est.theta, est.physical = theta, True
        est.values = np.concatenate([basis.matrix @ theta, extra])
        est.notes.append("estimates constrained to a physically consistent model (pseudo-"
                         "inertias positive definite); standard deviations are those of the "
                         "unconstrained weighted fit")
    return est
