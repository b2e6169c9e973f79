"""Linearity in the inertial parameters: regressors and parameter bases (Huo 2.5, 3-79).

M q̈ + C q̇ + g = Y(q, q̇, q̈) θ with θ the 10 standard parameters of every body,
[xx, xy, xz, yy, yz, zz, mx, my, mz, m] about the body frame origin (Huo 2-113;
``model.inertial_parameters()``). The Slotine–Li reference regressor gives
M q̈_r + C(q, q̇) q̇_r + g = Y(q, q̇, q̇_r, q̈_r) θ with the Christoffel-consistent C of
``coriolis_matrix``. Both, and the O(n) Slotine–Li torque, are compiled kernels
(``regressor_kernels.py``) meant to run every control tick.

A parameter basis re-expresses θ by fewer numbers p = G θ that the torques still determine:
the base (minimal) parameters found by numerical rank reduction, or a named group set
bundled with a robot (``model.parameter_groups``). Its regressor Y_p = Y · regressor_map
satisfies Y_p p = Y θ for every θ.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robot_control.dynamics import regressor_kernels as RK
from robot_control.dynamics.packing import array, model_data

Array = np.ndarray

#: names of a body's ten standard parameters, in the order of ``inertial_parameters``
STANDARD_PARAMETERS = ("xx", "xy", "xz", "yy", "yz", "zz", "mx", "my", "mz", "m")


# ------------------------------------------------------------------------ regressors
def regressor(model, q, qd, qdd) -> Array:
    """Y (n × 10n) with Y θ = inverse_dynamics, θ = model.inertial_parameters() (Huo 2-113)."""
    d = model_data(model)
    Y = np.empty((d.n, 10 * d.n))
    RK.regressor(d.P, model.gravity, array(q), array(qd), array(qdd), d.W, Y)
    return Y


def reference_regressor(model, q, qd, qd_r, qdd_r) -> Array:
    """Y (n × 10n) with Y θ = M q̈_r + C(q, q̇) q̇_r + g, C Christoffel-consistent (Huo 3-79)."""
    d = model_data(model)
    Y = np.empty((d.n, 10 * d.n))
    RK.reference_regressor(d.P, model.gravity, array(q), array(qd), array(qd_r), array(qdd_r),
                           d.W, Y)
    return Y


def slotine_li_torque(model, q, qd, qd_r, qdd_r) -> Array:
    """M q̈_r + C(q, q̇) q̇_r + g in O(n) without forming Y (Niemeyer–Slotine; ID_SlotineLi)."""
    d = model_data(model)
    tau = np.empty(d.n)
    RK.slotine_li(d.P, model.gravity, array(q), array(qd), array(qd_r), array(qdd_r), d.W, tau)
    return tau


# ------------------------------------------------------------------- parameter bases
@dataclass(frozen=True, eq=False)
class ParameterBasis:
    """Parameters p = matrix @ θ (k × 10n) and the map with (Y @ regressor_map) p = Y θ."""

    name: str
    names: tuple[str, ...]
    matrix: Array
    regressor_map: Array

    @property
    def size(self) -> int:
        return len(self.names)

    def parameters(self, theta) -> Array:
        """p = matrix @ θ; a model's own: ``basis.parameters(model.inertial_parameters())``."""
        return self.matrix @ np.asarray(theta, dtype=float)


def standard_parameter_names(model) -> list[str]:
    """'<body>.<parameter>' for every standard parameter, in the order of θ."""
    return [f"{body}.{p}" for body in model.body_names for p in STANDARD_PARAMETERS]


def _basis(name: str, names, matrix: Array, regressor_map: Array) -> ParameterBasis:
    matrix = np.array(matrix, dtype=float)
    regressor_map = np.array(regressor_map, dtype=float)
    matrix.setflags(write=False)
    regressor_map.setflags(write=False)
    return ParameterBasis(name, tuple(names), matrix, regressor_map)


def standard_basis(model) -> ParameterBasis:
    """The 10n standard parameters themselves (identity matrix and map)."""
    eye = np.eye(10 * model.nq)
    return _basis("standard", standard_parameter_names(model), eye, eye)


def random_states(model, samples: int, seed: int = 0) -> tuple[Array, Array, Array]:
    """``samples`` random (q, q̇, q̈): q uniform in finite limits (else ±π, ±1 m), q̇, q̈ ~ N(0, 1)."""
    rng = np.random.default_rng(seed)
    n = model.nq
    span = np.where(model.joint_type == 1, 1.0, np.pi)
    lo = np.where(np.isfinite(model.lower), model.lower, -span)
    hi = np.where(np.isfinite(model.upper), model.upper, span)
    q = rng.uniform(lo, hi, size=(samples, n))
    return q, rng.normal(size=(samples, n)), rng.normal(size=(samples, n))


def stacked_regressor(model, samples: int, seed: int = 0) -> Array:
    """Regressors of ``samples`` random states stacked row-wise ((samples·n) × 10n)."""
    q, qd, qdd = random_states(model, samples, seed)
    return np.vstack([regressor(model, *state) for state in zip(q, qd, qdd)])


def _independent_columns(W: Array, tol: float) -> Array:
    """Indices of a maximal independent set of W's columns, earliest columns first.

    The rank comes from QR with column pivoting on the column-normalised W. Among the bases of
    that size we prefer the one a plain QR picks greedily in θ order, which keeps proximal
    links' parameters and folds distal ones into them (Khalil's regrouping, Huo Theorem 2-1);
    pivoting's own choice is the fallback when the greedy pass disagrees on the rank.
    """
    from scipy.linalg import qr  # here: its import costs every node process a tenth of a second

    norms = np.linalg.norm(W, axis=0)
    scale = norms.max()
    if scale == 0.0:
        return np.zeros(0, dtype=int)
    Wn = W / np.where(norms > tol * scale, norms, np.inf)
    _, R, perm = qr(Wn, mode="economic", pivoting=True)
    d = np.abs(np.diag(R))
    rank = int(np.count_nonzero(d > tol * d[0]))
    _, R0 = qr(Wn, mode="economic")
    greedy = np.flatnonzero(np.abs(np.diag(R0)) > tol)
    if greedy.size == rank:
        return greedy
    return np.sort(perm[:rank])


def base_parameters(model, samples: int = 40, seed: int = 0, tol: float = 1e-8) -> ParameterBasis:
    """Base (minimal) parameters by numerical rank reduction of stacked regressors (Huo 2.5).

    With W = [W_b, W_d] split into independent and dependent columns, W_d = W_b β for every
    state, so Y θ = Y_b (θ_b + β θ_d): p = θ_b + β θ_d and Y_p = Y_b. A base parameter is named
    after its leading standard parameter, with "+…" when others are folded into it.
    """
    key = ("base", samples, seed, tol)
    cached = model._kernel_cache.get(key)
    if cached is not None:
        return cached
    if samples < 10:  # fewer rows than the 10n columns could not reveal the full rank
        raise ValueError(f"need at least 10 samples to identify base parameters, got {samples}")
    W = stacked_regressor(model, samples, seed)
    indep = _independent_columns(W, tol)
    dep = np.setdiff1d(np.arange(W.shape[1]), indep)
    beta = np.linalg.lstsq(W[:, indep], W[:, dep], rcond=None)[0]
    beta[np.abs(beta) < 1e-10 * max(1.0, np.abs(beta).max(initial=0.0))] = 0.0
    residual = np.linalg.norm(W[:, indep] @ beta - W[:, dep])
    if residual > 1e-6 * max(1.0, np.linalg.norm(W)):
        raise ValueError(
            f"model '{model.name}': base parameters not resolved (residual {residual:.3g}); "
            f"try more samples or a larger tol"
        )
    r, p = indep.size, W.shape[1]
    matrix = np.zeros((r, p))
    matrix[np.arange(r), indep] = 1.0
    matrix[:, dep] = beta
    regressor_map = np.zeros((p, r))
    regressor_map[indep, np.arange(r)] = 1.0
    std = standard_parameter_names(model)
    names = [std[c] + ("+…" if np.any(beta[a]) else "") for a, c in enumerate(indep)]
    basis = _basis("base", names, matrix, regressor_map)
    model._kernel_cache[key] = basis
    return basis


def _group_field(group, key: str, default=None):
    if isinstance(group, dict):
        return group.get(key, default)
    return getattr(group, key, default)


def group_basis(model, name: str, samples: int = 20, seed: int = 1,
                tol: float = 1e-8) -> ParameterBasis:
    """Basis of a bundled group set p = G θ, with regressor_map = G⁺ (Moore–Penrose).

    Y G⁺ G θ = Y θ for every θ exactly when Y (1 − G⁺G) = 0, i.e. the groups determine every
    combination of parameters the torques depend on; that is checked on random states. A set
    may name standard parameters it takes as zero (``assumed_zero``, like Huo's xy₂ = … = 0 for
    the DDArm): their columns are left out of the check, and the model must have them zero.
    """
    group = model.parameter_groups[name]
    names = list(_group_field(group, "names"))
    G = np.asarray(_group_field(group, "matrix"), dtype=float)
    if G.shape != (len(names), 10 * model.nq):
        raise ValueError(
            f"parameter groups '{name}': matrix has shape {G.shape}, "
            f"expected ({len(names)}, {10 * model.nq})"
        )
    std = standard_parameter_names(model)
    zero = []
    for key in _group_field(group, "assumed_zero", ()):
        if key not in std:
            raise ValueError(f"parameter groups '{name}': assumed_zero names unknown parameter "
                             f"'{key}'")
        zero.append(std.index(key))
    theta = model.inertial_parameters()
    nonzero = [std[z] for z in zero if abs(theta[z]) > tol * max(1.0, np.abs(theta).max())]
    if nonzero:
        raise ValueError(f"parameter groups '{name}' assume {', '.join(nonzero)} = 0, but model "
                         f"'{model.name}' has them non-zero")
    Gp = np.linalg.pinv(G)
    W = stacked_regressor(model, samples, seed)
    unseen = W @ (np.eye(G.shape[1]) - Gp @ G)
    unseen[:, zero] = 0.0
    if np.linalg.norm(unseen) > tol * max(1.0, np.linalg.norm(W)):
        col = np.linalg.norm(unseen, axis=0)
        worst = [std[c] for c in np.argsort(col)[::-1][:6] if col[c] > tol * np.linalg.norm(W)]
        raise ValueError(
            f"parameter groups '{name}' of model '{model.name}' do not determine the joint "
            f"torques: the regressor depends on parameters outside the span of the groups "
            f"(largest: {', '.join(worst)}); add groups for them, or list the ones the model "
            f"fixes at zero under 'assumed_zero'"
        )
    return _basis(name, names, G, Gp)


def parameter_basis(model, name: str) -> ParameterBasis:
    """'standard', 'base', or the name of one of ``model.parameter_groups`` (e.g. 'huo_p')."""
    if name == "standard":
        return standard_basis(model)
    if name == "base":
        return base_parameters(model)
    if name in model.parameter_groups:
        key = ("groups", name)
        basis = model._kernel_cache.get(key)
        if basis is None:
            basis = model._kernel_cache[key] = group_basis(model, name)
        return basis
    choices = ["standard", "base", *model.parameter_groups]
    raise ValueError(f"unknown parameter basis '{name}' for model '{model.name}' "
                     f"(choose from {', '.join(choices)})")


def _resolve(model, basis: ParameterBasis | str) -> ParameterBasis:
    return parameter_basis(model, basis) if isinstance(basis, str) else basis


def regressor_in_basis(model, basis: ParameterBasis | str, q, qd, qdd) -> Array:
    """Y_p = Y(q, q̇, q̈) · regressor_map, so Y_p p = M q̈ + C q̇ + g."""
    return regressor(model, q, qd, qdd) @ _resolve(model, basis).regressor_map


def reference_regressor_in_basis(model, basis: ParameterBasis | str, q, qd, qd_r,
                                 qdd_r) -> Array:
    """Y_p = Y(q, q̇, q̇_r, q̈_r) · regressor_map, so Y_p p = M q̈_r + C q̇_r + g."""
    return reference_regressor(model, q, qd, qd_r, qdd_r) @ _resolve(model, basis).regressor_map
