"""Joint-space rigid-body dynamics M(q) q̈ + C(q, q̇) q̇ + g(q) = τ + Σ Jᵢᵀ F_ext,i.

The wrappers are deliberately thin: ndarrays go straight to the compiled kernels, which check
their lengths and refuse other than 1-D ones when they compile (a Python-side check per argument
costs more than the algorithm); anything else goes through ``packing.array`` first.
"""

from __future__ import annotations

import numpy as np
from numba.core.errors import TypingError

from robot_control.dynamics import kernels as K
from robot_control.dynamics import world_kernels as KW
from robot_control.dynamics.packing import array, model_data, not_vectors, wrenches

Array = np.ndarray
_ND = np.ndarray
_empty = np.empty


def inverse_dynamics(model, q, qd, qdd, f_ext=None) -> Array:
    """τ = M q̈ + C q̇ + g − Σ Jᵀ F_ext by recursive Newton–Euler (Kim Table 2)."""
    try:  # model_data(model) inlined: one Python call less per call
        d = model._local.data
    except AttributeError:
        d = model_data(model)
    if d.source is not model.gravity or d.seen != d.own:
        d.sync_gravity(model)
    if not (type(q) is _ND and type(qd) is _ND and type(qdd) is _ND):
        q, qd, qdd = array(q), array(qd), array(qdd)
    tau = _empty(d.n)
    try:
        K.inverse_dynamics_kernel(d.D, q, qd, qdd, None if f_ext is None else wrenches(f_ext, d),
                                  tau)
    except TypingError as exc:
        raise not_vectors(exc) from exc
    return tau


def bias_torques(model, q, qd, f_ext=None) -> Array:
    """h(q, q̇) = C q̇ + g (− Σ Jᵀ F_ext): inverse dynamics at zero acceleration."""
    return inverse_dynamics(model, q, qd, model_data(model).zeros, f_ext)


def gravity_torques(model, q) -> Array:
    """g(q) = ∂U/∂q by a gravity-only Newton–Euler pass (Kim Table 2 at rest)."""
    try:  # model_data(model) inlined: one Python call less per call
        d = model._local.data
    except AttributeError:
        d = model_data(model)
    if d.source is not model.gravity or d.seen != d.own:
        d.sync_gravity(model)
    if type(q) is not _ND:
        q = array(q)
    tau = _empty(d.n)
    try:
        K.gravity_kernel(d.D, q, tau)
    except TypingError as exc:
        raise not_vectors(exc) from exc
    return tau


def mass_matrix(model, q) -> Array:
    """M(q) by the composite-rigid-body algorithm in body frames (Featherstone RBDA Table 6.2)."""
    try:  # model_data(model) inlined; M and C do not depend on gravity
        d = model._local.data
    except AttributeError:
        d = model_data(model)
    if type(q) is not _ND:
        q = array(q)
    M = _empty(d.square)
    try:
        K.mass_matrix_kernel(d.D, q, M)
    except TypingError as exc:
        raise not_vectors(exc) from exc
    return M


def coriolis_matrix(model, q, qd) -> Array:
    """C(q, q̇) with C q̇ the Coriolis/centrifugal torque and Ṁ − 2C skew-symmetric."""
    try:  # model_data(model) inlined; M and C do not depend on gravity
        d = model._local.data
    except AttributeError:
        d = model_data(model)
    if not (type(q) is _ND and type(qd) is _ND):
        q, qd = array(q), array(qd)
    C = _empty(d.square)
    try:
        KW.coriolis_kernel(d.D, q, qd, C)
    except TypingError as exc:
        raise not_vectors(exc) from exc
    return C


def forward_dynamics(model, q, qd, tau, f_ext=None) -> Array:
    """q̈ by the articulated-body algorithm, O(n) (Kim Table 3)."""
    try:  # model_data(model) inlined: one Python call less per call
        d = model._local.data
    except AttributeError:
        d = model_data(model)
    if d.source is not model.gravity or d.seen != d.own:
        d.sync_gravity(model)
    if not (type(q) is _ND and type(qd) is _ND and type(tau) is _ND):
        q, qd, tau = array(q), array(qd), array(tau)
    qdd = _empty(d.n)
    try:
        K.forward_dynamics_kernel(d.D, q, qd, tau, None if f_ext is None else wrenches(f_ext, d),
                                  qdd)
    except TypingError as exc:
        raise not_vectors(exc) from exc
    return qdd


def forward_dynamics_cholesky(model, q, qd, tau, f_ext=None) -> Array:
    """q̈ = M⁻¹(τ − h) with M from composite bodies and a Cholesky solve (the O(n³) method)."""
    # imported here: scipy.linalg costs every node process a tenth of a second or more to import
    from scipy.linalg import cho_factor, cho_solve

    h = bias_torques(model, q, qd, f_ext)
    M = mass_matrix(model, q)
    return cho_solve(cho_factor(M), array(tau) - h)
