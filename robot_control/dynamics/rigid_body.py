"""Joint-space rigid-body dynamics M(q) q̈ + C(q, q̇) q̇ + g(q) = τ + Σ Jᵢᵀ F_ext,i.

The wrappers are deliberately thin: 1-D ndarrays go straight to the compiled kernels, which
check their lengths (a Python-side check per argument would cost more than the algorithm);
anything else goes through ``packing.array`` (conversion, or a ValueError).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from robot_control.dynamics import kernels as K
from robot_control.dynamics import kernels_world as KW
from robot_control.dynamics.packing import array, kernel_data, wrenches

Array = np.ndarray
_ND = np.ndarray
_empty = np.empty


def inverse_dynamics(model, q, qd, qdd, f_ext=None) -> Array:
    """τ = M q̈ + C q̇ + g − Σ Jᵀ F_ext by recursive Newton–Euler (Kim Table 2)."""
    d = model._kernel
    if d is None or model.gravity is not d.gravity:
        d = kernel_data(model)
    if not (type(q) is _ND and type(qd) is _ND and type(qdd) is _ND
            and q.ndim == 1 and qd.ndim == 1 and qdd.ndim == 1):
        q, qd, qdd = array(q), array(qd), array(qdd)
    tau = _empty(d.n)
    K.inverse_dynamics_kernel(d.D, q, qd, qdd, None if f_ext is None else wrenches(f_ext, d), tau)
    return tau


def bias_torques(model, q, qd, f_ext=None) -> Array:
    """h(q, q̇) = C q̇ + g (− Σ Jᵀ F_ext): inverse dynamics at zero acceleration."""
    d = model._kernel or kernel_data(model)
    return inverse_dynamics(model, q, qd, d.zeros, f_ext)


def gravity_torques(model, q) -> Array:
    """g(q) = ∂U/∂q by a gravity-only Newton–Euler pass (Kim Table 2 at rest)."""
    d = model._kernel
    if d is None or model.gravity is not d.gravity:
        d = kernel_data(model)
    if type(q) is not _ND or q.ndim != 1:
        q = array(q)
    tau = _empty(d.n)
    K.gravity_kernel(d.D, q, tau)
    return tau


def mass_matrix(model, q) -> Array:
    """M(q) by composite rigid bodies (Saha DeNOC eqs. 23b–24, Walker–Orin)."""
    d = model._kernel or kernel_data(model)
    if type(q) is not _ND or q.ndim != 1:
        q = array(q)
    M = _empty((d.n, d.n))
    KW.mass_matrix_kernel(d.D, q, M)
    return M


def coriolis_matrix(model, q, qd) -> Array:
    """C(q, q̇) with C q̇ the Coriolis/centrifugal torque and Ṁ − 2C skew-symmetric."""
    d = model._kernel or kernel_data(model)
    if not (type(q) is _ND and type(qd) is _ND and q.ndim == 1 and qd.ndim == 1):
        q, qd = array(q), array(qd)
    C = _empty((d.n, d.n))
    KW.coriolis_kernel(d.D, q, qd, C)
    return C


def forward_dynamics(model, q, qd, tau, f_ext=None) -> Array:
    """q̈ by the articulated-body algorithm, O(n) (Kim Table 3)."""
    d = model._kernel
    if d is None or model.gravity is not d.gravity:
        d = kernel_data(model)
    if not (type(q) is _ND and type(qd) is _ND and type(tau) is _ND
            and q.ndim == 1 and qd.ndim == 1 and tau.ndim == 1):
        q, qd, tau = array(q), array(qd), array(tau)
    qdd = _empty(d.n)
    K.forward_dynamics_kernel(d.D, q, qd, tau, None if f_ext is None else wrenches(f_ext, d), qdd)
    return qdd


def forward_dynamics_cholesky(model, q, qd, tau, f_ext=None) -> Array:
    """q̈ = M⁻¹(τ − h) with M from composite bodies and a Cholesky solve (the O(n³) method)."""
    h = bias_torques(model, q, qd, f_ext)
    M = mass_matrix(model, q)
    return cho_solve(cho_factor(M), array(tau) - h)
