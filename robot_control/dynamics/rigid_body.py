"""Joint-space rigid-body dynamics M(q) q̈ + C(q, q̇) q̇ + g(q) = τ + Σ Jᵢᵀ F_ext,i.

The wrappers are deliberately thin: array arguments go straight to the compiled kernels, which
check their lengths (a Python-side check per argument would cost more than the algorithm).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from robot_control.dynamics import kernels as K
from robot_control.dynamics import kernels_world as KW
from robot_control.dynamics.packing import array, kernel_data, wrenches

Array = np.ndarray


def inverse_dynamics(model, q, qd, qdd, f_ext=None) -> Array:
    """τ = M q̈ + C q̇ + g − Σ Jᵀ F_ext by recursive Newton–Euler (Kim Table 2)."""
    d = model._kernel or kernel_data(model)
    tau = np.empty(d.n)
    K.rnea(d.P, model.gravity, array(q), array(qd), array(qdd),
           d.fext0 if f_ext is None else wrenches(f_ext, d), d.W, tau)
    return tau


def bias_torques(model, q, qd, f_ext=None) -> Array:
    """h(q, q̇) = C q̇ + g (− Σ Jᵀ F_ext): inverse dynamics at zero acceleration."""
    d = model._kernel or kernel_data(model)
    return inverse_dynamics(model, q, qd, d.zeros, f_ext)


def gravity_torques(model, q) -> Array:
    """g(q) = ∂U/∂q: each joint carries its composite body's weight (base coordinates)."""
    d = model._kernel or kernel_data(model)
    tau = np.empty(d.n)
    KW.gravity_world(d.P, model.gravity, array(q), d.W, tau)
    return tau


def mass_matrix(model, q) -> Array:
    """M(q) by composite rigid bodies (Saha DeNOC eqs. 23b–24, Walker–Orin)."""
    d = model._kernel or kernel_data(model)
    M = np.empty((d.n, d.n))
    KW.mass_matrix_world(d.P, array(q), d.W, M)
    return M


def coriolis_matrix(model, q, qd) -> Array:
    """C(q, q̇) with C q̇ the Coriolis/centrifugal torque and Ṁ − 2C skew-symmetric."""
    d = model._kernel or kernel_data(model)
    C = np.empty((d.n, d.n))
    KW.coriolis_world(d.P, array(q), array(qd), d.W, C)
    return C


def forward_dynamics(model, q, qd, tau, f_ext=None) -> Array:
    """q̈ by the articulated-body algorithm, O(n) (Kim Table 3)."""
    d = model._kernel or kernel_data(model)
    qdd = np.empty(d.n)
    K.aba(d.P, model.gravity, array(q), array(qd), array(tau),
          d.fext0 if f_ext is None else wrenches(f_ext, d), d.W, qdd)
    return qdd


def forward_dynamics_cholesky(model, q, qd, tau, f_ext=None) -> Array:
    """q̈ = M⁻¹(τ − h) with M from composite bodies and a Cholesky solve (the O(n³) method)."""
    h = bias_torques(model, q, qd, f_ext)
    M = mass_matrix(model, q)
    return cho_solve(cho_factor(M), array(tau) - h)
