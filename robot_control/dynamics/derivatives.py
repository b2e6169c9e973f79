"""Analytic derivatives of the dynamics as full Jacobians, and linearisation.

- ``inverse_dynamics_derivatives``: ∂τ/∂q, ∂τ/∂q̇ and ∂τ/∂q̈ = M, by default in one forward and
  one backward pass in base coordinates (Carpentier & Mansard 2018, ``derivatives_world.py``,
  what Pinocchio's computeRNEADerivatives does), or with ``method="kim"`` by Kim Table 5, one
  tangent recursion per coordinate, and M by composite bodies;
- ``forward_dynamics_derivatives``: ∂q̈/∂q, ∂q̈/∂q̇ and ∂q̈/∂τ = M⁻¹, by default by the identity
  ∂FD/∂x = −M⁻¹ ∂ID/∂x at q̈ = FD (method "rnea", as Pinocchio's computeABADerivatives), with
  M⁻¹ applied by Cholesky solves; or by Kim Table 6 (corrected), method "kim";
- ``hybrid_dynamics_derivatives``: Kim Table 7 (corrected) for a prescribed set u;
- ``linearize``: the continuous-time A, B of ẋ = f(x, τ), x = [q; q̇].

Kim's tangent recursions live in ``derivatives_kernels.py``; the world-frame passes work in the
model's data array, Kim's in workspaces allocated once per model and cached on it.
"""

from __future__ import annotations

import numpy as np
from numba.core.errors import TypingError

from robot_control.dynamics import derivatives_kernels as DK
from robot_control.dynamics import derivatives_world as DW
from robot_control.dynamics import kernels as K
from robot_control.dynamics import world_kernels as KW
from robot_control.dynamics.hybrid import HWORK, ZWORK, prescribed_mask
from robot_control.dynamics.packing import Data, array, model_data, not_vectors, workspace, wrenches

Array = np.ndarray


class DerivativeWork:
    """Per-model workspaces: RNEA state W and M's, tangent scratch, the hybrid state H and its."""

    __slots__ = ("W", "Rw", "H", "Z", "Tw", "none", "Mw", "vec", "scratch")

    def __init__(self, n: int) -> None:
        self.W = np.zeros((n, K.WORK))
        self.Mw = np.zeros((n, K.WORK))
        self.Rw = np.zeros((n, DK.RWORK))
        self.H = np.zeros((n, HWORK))
        self.Z = np.zeros((n, ZWORK))
        self.Tw = np.zeros((n, DK.TWORK))
        self.none = np.zeros(n, dtype=np.bool_)
        self.vec = np.zeros((2, n))  # q̈ and τ of the passes
        self.scratch = np.zeros(n + DK.SCRATCH)


def derivative_work(d: Data) -> DerivativeWork:
    """The derivative workspaces of a Data, allocated on first use."""
    return workspace(d, "kim_derivatives", lambda: DerivativeWork(d.n))


@K.entry_point
def _inverse_dynamics_derivatives_kim(P, g, q, qd, qdd, fext, W, Mw, Rw, vec, scratch, J):
    KW.crba_world(P, q, Mw, J[2])  # ∂τ/∂q̈ = M by composite bodies
    DK.rnea_derivatives(P, g, q, qd, qdd, fext, W, Rw, vec[1], J[0], J[1], scratch)


def world_pass(kernel, model, q, qd, x, f_ext) -> tuple[Array, Array, Array]:
    """The three n × n results of a ``derivatives_world`` kernel on the model's data array."""
    try:  # model_data(model) inlined
        d = model._local.data
    except AttributeError:
        d = model_data(model)
    if d.source is not model.gravity or d.seen != d.own:
        d.sync_gravity(model)
    if not (type(q) is np.ndarray and type(qd) is np.ndarray and type(x) is np.ndarray):
        q, qd, x = array(q), array(qd), array(x)
    J = np.empty(d.three_square)
    try:
        kernel(d.D, q, qd, x, None if f_ext is None else wrenches(f_ext, d), J)
    except TypingError as exc:
        raise not_vectors(exc) from exc
    return J[0], J[1], J[2]


def inverse_dynamics_derivatives(model, q, qd, qdd, f_ext=None,
                                 method: str = "carpentier") -> tuple[Array, Array, Array]:
    """(∂τ/∂q, ∂τ/∂q̇, ∂τ/∂q̈ = M) of τ = RNEA(q, q̇, q̈).

    method "carpentier" (default): one forward and one backward pass in base coordinates
    (Carpentier & Mansard 2018); method "kim": Kim Table 5, and M by composite bodies.
    """
    if method == "carpentier":
        return world_pass(DW.inverse_dynamics_derivatives_kernel, model, q, qd, qdd, f_ext)
    if method != "kim":
        raise ValueError(f"method must be 'carpentier' or 'kim', got '{method}'")
    d = model_data(model)
    w = derivative_work(d)
    J = np.empty((3, d.n, d.n))
    _inverse_dynamics_derivatives_kim(d.P, model.gravity, array(q), array(qd), array(qdd),
                                      None if f_ext is None else wrenches(f_ext, d), w.W, w.Mw,
                                      w.Rw, w.vec, w.scratch, J)
    return J[0], J[1], J[2]


@K.entry_point
def _forward_dynamics_derivatives_kim(P, g, q, qd, tau, fext, H, Tw, none, vec, scratch, J):
    DK.hybrid_derivatives(P, g, q, qd, vec[0], tau, none, fext, H, Tw, scratch, J[0], J[1], J[2])


def forward_dynamics_derivatives(model, q, qd, tau, f_ext=None,
                                 method: str = "rnea") -> tuple[Array, Array, Array]:
    """(∂q̈/∂q, ∂q̈/∂q̇, ∂q̈/∂τ = M⁻¹) of q̈ = ABA(q, q̇, τ).

    method "rnea" (default): −M⁻¹ times the RNEA derivatives at q̈ (Carpentier & Mansard 2018,
    what Pinocchio's computeABADerivatives does), with M⁻¹ applied by Cholesky solves;
    method "kim": Kim Table 6 (corrected), the tangent recursion of the ABA itself.
    """
    if method == "rnea":
        return world_pass(DW.forward_dynamics_derivatives_kernel, model, q, qd, tau, f_ext)
    if method != "kim":
        raise ValueError(f"method must be 'kim' or 'rnea', got '{method}'")
    d = model_data(model)
    w = derivative_work(d)
    J = np.empty((3, d.n, d.n))
    _forward_dynamics_derivatives_kim(d.P, model.gravity, array(q), array(qd), array(tau),
                                      d.fext0 if f_ext is None else wrenches(f_ext, d), w.H,
                                      w.Tw, w.none, w.vec, w.scratch, J)
    return J[0], J[1], J[2]


def hybrid_dynamics_derivatives(model, q, qd, qdd_given, tau_given, prescribed,
                                f_ext=None) -> tuple[Array, Array, Array]:
    """Jacobians of y = hybrid_dynamics outputs w.r.t. q, q̇ and the given inputs x (Kim Table 7).

    y_i = τ_i for prescribed joints (i ∈ u) and q̈_i otherwise; x_i = q̈_i for i ∈ u and τ_i
    otherwise. Returns (∂y/∂q, ∂y/∂q̇, ∂y/∂x), each n × n. With u = all these are the RNEA
    derivatives (∂y/∂x = M); with u = ∅ the ABA ones (∂y/∂x = M⁻¹).
    """
    d = model_data(model)
    n = d.n
    w = derivative_work(d)
    u = prescribed_mask(prescribed, n)
    qdd = np.array(qdd_given, dtype=np.float64)
    tau = np.array(tau_given, dtype=np.float64)
    J = np.empty((3, n, n))
    DK.hybrid_derivatives(d.P, model.gravity, array(q), array(qd), qdd, tau, u,
                          d.fext0 if f_ext is None else wrenches(f_ext, d), w.H, w.Tw,
                          w.scratch, J[0], J[1], J[2])
    return J[0], J[1], J[2]


def linearize(model, q, qd, tau, f_ext=None, method: str = "rnea") -> tuple[Array, Array]:
    """Continuous-time (A, B) of ẋ = [q̇; FD(q, q̇, τ)] about (q, q̇, τ), x = [q; q̇].

    A = [[0, 1], [∂q̈/∂q, ∂q̈/∂q̇]], B = [[0], [M⁻¹]]: for LQR gains about a trajectory point.
    """
    n = model.nq
    dq, dqd, Minv = forward_dynamics_derivatives(model, q, qd, tau, f_ext, method)
    A = np.zeros((2 * n, 2 * n))
    A[:n, n:] = np.eye(n)
    A[n:, :n] = dq
    A[n:, n:] = dqd
    B = np.zeros((2 * n, n))
    B[n:] = Minv
    return A, B
