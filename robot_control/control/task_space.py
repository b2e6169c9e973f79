"""Task-space pieces shared by resolved acceleration (C5), hybrid force (C13) and impedance (C14).

Task vectors are Huo's ẋ = [v; ω] (linear first, base-frame axes): 3 rows for a ``position``
task, 6 for a ``pose`` task. Angular motion is described by ω itself (a geometric Jacobian), not
by Euler-angle rates, and the orientation error is Huo's e_o = ½(n×n_d + o×o_d + a×a_d) (3-40).
"""

from __future__ import annotations

import numpy as np

from robot_control import dynamics as dyn

Array = np.ndarray

TASKS = {"position": (3, 4, 5), "pose": (3, 4, 5, 0, 1, 2)}  # rows of the (ω; v) Jacobian


def orientation_error(R: Array, R_d: Array) -> Array:
    """e_o = ½(n×n_d + o×o_d + a×a_d) with n, o, a the columns of R (Huo 3-40).

    Since b aᵀ − a bᵀ = [a × b]ₓ, the sum of the three cross products is vee(R_d Rᵀ − R R_dᵀ).
    """
    S = R_d @ R.T
    return 0.5 * np.array([S[2, 1] - S[1, 2], S[0, 2] - S[2, 0], S[1, 0] - S[0, 1]])


def resolve(J: Array, a: Array) -> Array:
    """A joint vector q with J q = a: J⁻¹a if J is square and regular, else J⁺a (pseudo-inverse)."""
    if J.shape[0] == J.shape[1]:
        try:
            return np.linalg.solve(J, a)
        except np.linalg.LinAlgError:  # exactly singular: the least-squares answer of J⁺
            pass
    return np.linalg.pinv(J) @ a


class TaskSpace:
    """Kinematics of one frame's task coordinates (position or pose) on a model."""

    def __init__(self, model, frame: str | None, task: str) -> None:
        if task not in TASKS:
            raise ValueError(f"task must be one of {', '.join(TASKS)}, got '{task}'")
        self.model = model
        self.frame = frame or model.end_effector
        model.frame_placement(self.frame)  # KeyError for an unknown frame
        self.task = task
        self.rows = list(TASKS[task])
        self.m = len(self.rows)

    def kinematics(self, q: Array, qd: Array) -> tuple[Array, Array, Array, Array]:
        """(T 4×4, J m×n, ẋ = Jq̇, J̇q̇) of the task frame at (q, q̇)."""
        T = dyn.frame_placement(self.model, q, self.frame)
        J = dyn.jacobian(self.model, q, self.frame)[self.rows]
        Jd_qd = dyn.jacobian_dot_qd(self.model, q, qd, self.frame)[self.rows]
        return T, J, J @ qd, Jd_qd

    def error(self, T: Array, T_d: Array) -> Array:
        """[e_p; e_o] with e_p = p_d − p (the task analogue of e = q_d − q)."""
        e_p = T_d[:3, 3] - T[:3, 3]
        if self.m == 3:
            return e_p
        return np.concatenate([e_p, orientation_error(T[:3, :3], T_d[:3, :3])])

    def to_task(self, six: Array) -> Array:
        """A package-ordered 6-vector (angular, linear) as a task vector (linear [, angular])."""
        return np.asarray(six, dtype=float)[self.rows]

    def desired(self, reference) -> tuple[Array, Array, Array]:
        """(T_d, ẋ_d, ẍ_d): the Cartesian reference if given, else forward kinematics of q_d."""
        if reference.pose is not None:
            T_d = np.asarray(reference.pose, dtype=float)
            xd = np.zeros(self.m) if reference.twist is None else self.to_task(reference.twist)
            xdd = np.zeros(self.m) if reference.accel is None else self.to_task(reference.accel)
            return T_d, xd, xdd
        q_d, qd_d, qdd_d = reference.q, reference.qd, reference.qdd
        T_d, J_d, xd, Jd_qd = self.kinematics(q_d, qd_d)
        return T_d, xd, J_d @ qdd_d + Jd_qd  # ẍ_d = J q̈_d + J̇ q̇_d
