"""Forward kinematics, geometric Jacobians, J̇q̇ and task-space dynamics (Craig §6.12).

Twists are angular-first (ω, v) like the rest of the package; v is the velocity of the
frame's origin. ``reference="world"`` expresses both in the base axes (Pinocchio's
LOCAL_WORLD_ALIGNED), ``"local"`` in the frame's own axes.
"""

from __future__ import annotations

import numpy as np

from robot_control.dynamics import kernels as K
from robot_control.dynamics import world_kernels as KW
from robot_control.dynamics.packing import array, model_data, vector
from robot_control.dynamics.rigid_body import coriolis_matrix, gravity_torques, mass_matrix
from robot_control.foundation.spatial import Ad, screw_exp

Array = np.ndarray
_REFERENCES = ("world", "local")


def forward_kinematics(model, q) -> Array:
    """World placement T_{0,i} of every body, shape (n, 4, 4) (product of exponentials, Kim eq. 2.8)."""
    d = model_data(model)
    T = np.empty((d.n, 4, 4))
    K.placements(d.P, vector(q, d.n, "q"), T)
    return T


def _frame(model, frame: str | None) -> tuple[int, Array]:
    return model.frame_placement(model.end_effector if frame is None else frame)


def frame_placement(model, q, frame: str | None = None) -> Array:
    """World placement (4×4) of a body or named frame; the end effector by default."""
    body, X = _frame(model, frame)
    if body < 0:
        return X.copy()
    return forward_kinematics(model, q)[body] @ X


def frame_placement_once(model, q, frame: str | None = None) -> Array:
    """``frame_placement`` by the interpreter: T_{0,b} = Π M_j exp([S_j] q_j) along the body's
    chain, times X (Kim eq. 2.8 with spatial.screw_exp). For a one-off placement ahead of any
    kernel (a scenario's Cartesian start): ~0.1 ms, where loading the compiled kernel costs a fresh
    process ~1.5 ms. The same placement as the kernel's up to rounding."""
    body, X = _frame(model, frame)
    q = vector(q, model.nq, "q")
    chain = []
    while body >= 0:
        chain.append(body)
        body = model.bodies[body].parent
    T = np.eye(4)
    for j in reversed(chain):
        joint = model.bodies[j].joint
        T = T @ joint.origin @ screw_exp(joint.screw, q[j])
    return T @ X


def _check_reference(reference: str) -> None:
    if reference not in _REFERENCES:
        raise ValueError(f"reference must be one of {_REFERENCES}, got '{reference}'")


def jacobian(model, q, frame: str | None = None, reference: str = "world") -> Array:
    """Geometric Jacobian J (6×n; rows ω, then v of the frame origin): column j = Ad_{T_0j} S_j (Kim 2.13)."""
    _check_reference(reference)
    body, X = _frame(model, frame)
    J = np.zeros((6, model.nq))
    if body < 0:
        return J
    d = model_data(model)
    KW.frame_jacobian_world(d.P, array(q), body, X, d.W, J)
    if reference == "local":
        R = d.W[body, KW.O_R : KW.O_R + 9].reshape(3, 3) @ X[:3, :3]
        J[:3] = R.T @ J[:3]
        J[3:] = R.T @ J[3:]
    return J


def _body_motion(model, q, qd) -> tuple[Array, Array]:
    """Body-frame twists V_i and accelerations V̇_i at q̈ = 0 without gravity (RNEA forward pass)."""
    d = model_data(model)
    n = d.n
    tau = np.empty(n)
    K.rnea(d.P, np.zeros(3), vector(q, n, "q"), vector(qd, n, "qd"), np.zeros(n), d.fext0, d.W,
           tau)
    return d.W[:, K.W_V : K.W_V + 6].copy(), d.W[:, K.W_A : K.W_A + 6].copy()


def jacobian_dot_qd(model, q, qd, frame: str | None = None, reference: str = "world") -> Array:
    """J̇q̇: the frame origin's classical acceleration (ω̇, a) when q̈ = 0 (Craig's J̇Θ̇ term)."""
    _check_reference(reference)
    body, X = _frame(model, frame)
    if body < 0:
        return np.zeros(6)
    V, A = _body_motion(model, q, qd)
    Xinv = np.linalg.inv(X)
    Vf = Ad(Xinv) @ V[body]
    Af = Ad(Xinv) @ A[body]
    # spatial (body-fixed) acceleration → classical acceleration of the origin: a = v̇ + ω × v
    out = np.concatenate([Af[:3], Af[3:] + np.cross(Vf[:3], Vf[3:])])
    if reference == "world":
        R = frame_placement(model, q, frame)[:3, :3]
        out = np.concatenate([R @ out[:3], R @ out[3:]])
    return out


def task_space_dynamics(
    model, q, qd, frame: str | None = None, rows=None
) -> tuple[Array, Array, Array]:
    """Craig's Cartesian dynamics F = Mx ẍ + Vx + Gx (Craig eq. 6.98) for the selected Jacobian rows.

    Mx = (J M⁻¹ Jᵀ)⁻¹ equals J⁻ᵀ M J⁻¹ when J is square; with fewer task rows than joints it is the
    operational-space inertia, so the same call serves a 3-DOF arm's position task.
    """
    J = jacobian(model, q, frame)
    Jd_qd = jacobian_dot_qd(model, q, qd, frame)
    if rows is not None:
        J, Jd_qd = J[list(rows)], Jd_qd[list(rows)]
    M = mass_matrix(model, q)
    Minv_JT = np.linalg.solve(M, J.T)
    Mx = np.linalg.inv(J @ Minv_JT)
    Jbar = Minv_JT @ Mx  # dynamically consistent inverse: J̄ = M⁻¹ Jᵀ Mx
    Vx = Jbar.T @ (coriolis_matrix(model, q, qd) @ vector(qd, model.nq, "qd")) - Mx @ Jd_qd
    Gx = Jbar.T @ gravity_torques(model, q)
    return Mx, Vx, Gx

