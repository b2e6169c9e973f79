"""Joint-space rigid-body dynamics M(q) q̈ + C(q, q̇) q̇ + g(q) = τ + Σ Jᵢᵀ F_ext,i."""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from robot_control.dynamics import kernels as K
from robot_control.dynamics.packing import kernel_data, vector, wrenches

Array = np.ndarray


def inverse_dynamics(model, q, qd, qdd, f_ext=None) -> Array:
    """τ = M q̈ + C q̇ + g − Σ Jᵀ F_ext by recursive Newton–Euler (Kim Table 2)."""
    d = kernel_data(model)
    n = d.n
    tau = np.empty(n)
    K.rnea(d.P, model.gravity, vector(q, n, "q"), vector(qd, n, "qd"), vector(qdd, n, "qdd"),
           wrenches(f_ext, d), d.W, tau)
    return tau


def bias_torques(model, q, qd, f_ext=None) -> Array:
    """h(q, q̇) = C q̇ + g (− Σ Jᵀ F_ext): inverse dynamics at zero acceleration."""
    d = kernel_data(model)
    return inverse_dynamics(model, q, qd, np.zeros(d.n), f_ext)


def gravity_torques(model, q) -> Array:
    """g(q) = ∂U/∂q by a Newton–Euler pass with only the base's gravity acceleration."""
    d = kernel_data(model)
    tau = np.empty(d.n)
    K.gravity(d.P, model.gravity, vector(q, d.n, "q"), d.W, tau)
    return tau


def mass_matrix(model, q) -> Array:
    """M(q) by composite rigid bodies (Saha DeNOC eqs. 23b–24, Walker–Orin)."""
    d = kernel_data(model)
    M = np.empty((d.n, d.n))
    K.crba(d.P, vector(q, d.n, "q"), d.W, M)
    return M


def coriolis_matrix(model, q, qd) -> Array:
    """C(q, q̇) with C q̇ the Coriolis/centrifugal torque and Ṁ − 2C skew-symmetric."""
    d = kernel_data(model)
    C = np.empty((d.n, d.n))
    K.coriolis(d.P, vector(q, d.n, "q"), vector(qd, d.n, "qd"), d.W, C)
    return C


def forward_dynamics(model, q, qd, tau, f_ext=None) -> Array:
    """q̈ by the articulated-body algorithm, O(n) (Kim Table 3)."""
    d = kernel_data(model)
    n = d.n
    qdd = np.empty(n)
    K.aba(d.P, model.gravity, vector(q, n, "q"), vector(qd, n, "qd"), vector(tau, n, "tau"),
          wrenches(f_ext, d), d.W, qdd)
    return qdd


def forward_dynamics_cholesky(model, q, qd, tau, f_ext=None) -> Array:
    """q̈ = M⁻¹(τ − h) with M from composite bodies and a Cholesky solve (the O(n³) method)."""
    h = bias_torques(model, q, qd, f_ext)
    M = mass_matrix(model, q)
    return cho_solve(cho_factor(M), vector(tau, model.nq, "tau") - h)
