"""Resolved-acceleration control in task space (Luh–Walker–Paul, Huo C5, 3-40)."""

from __future__ import annotations

from typing import Any

import numpy as np

from robot_control.control.base import Config, Controller, Reference, State, refuse
from robot_control.control.parameters import KD_MAX, KP_MAX, ParamSpec
from robot_control.control.task_space import TASKS, TaskSpace, resolve

Array = np.ndarray

TASK_PARAMETERS = (
    ParamSpec("frame", "string", "", "task frame (body or named frame; empty: the end effector)"),
    ParamSpec("task", "string", "pose", "task coordinates: pose [p; orientation] or position",
              choices=tuple(TASKS)),
)


class TaskSpaceController(Controller):
    """Common configuration of the task-space laws: the frame, the task and its kinematics."""

    USES_MODEL_TERMS = True

    def task_dimension(self, values: dict[str, Any]) -> int | None:
        return len(TASKS[values["task"]])

    def _prepare(self, model, values) -> Config:
        cfg = super()._prepare(model, values)
        try:
            cfg.space = TaskSpace(model, values["frame"] or None, values["task"])
        except KeyError as exc:
            raise refuse("frame", str(exc.args[0])) from None
        return cfg

    def null_space_damping(self, J: Array, qd: Array) -> Array:
        """(I − J⁺J)(−k_null q̇): damps self-motion a redundant arm's task does not see."""
        k = self.params.get("null_damping", 0.0)
        if k == 0.0 or J.shape[0] >= J.shape[1]:
            return np.zeros(self.n)
        Jp = np.linalg.pinv(J)
        return -k * (qd - Jp @ (J @ qd))


class ResolvedAcceleration(TaskSpaceController):
    """q̈* = J⁺{ẍ_d + K_d(ẋ_d − ẋ) + K_p[e_p; e_o] − J̇q̇}, τ = M q̈* + C q̇ + g (Huo C5, 3-40).

    Huo's scalar gains become per-coordinate gains (the same value everywhere reproduces 3-40,
    where k_d J⁻¹ẋ_d − k_d q̇ = J⁻¹k_d(ẋ_d − ẋ)). J⁺ is J⁻¹ for a square Jacobian and the
    pseudo-inverse otherwise; ``null_damping`` adds damping of the self-motion of redundant arms.
    Without a Cartesian reference, (T_d, ẋ_d, ẍ_d) follow from the joint reference.
    """

    name = "resolved_acceleration"
    formula = "Huo C5 (3-40)"
    PARAMETERS = (
        *TASK_PARAMETERS,
        ParamSpec("kp", "double_array", 100.0, "task position gain per task coordinate",
                  lower=0.0, upper=KP_MAX, strict=True, size="task"),
        ParamSpec("kd", "double_array", 20.0, "task velocity gain per task coordinate",
                  lower=0.0, upper=KD_MAX, strict=True, size="task"),
        ParamSpec("null_damping", "double", 0.0, "damping of null-space joint motion, 1/s",
                  lower=0.0),
    )

    def compute(self, t: float, state: State, reference: Reference) -> Array:
        space = self.cfg.space
        T, J, xd, Jd_qd = space.kinematics(state.q, state.qd)
        T_d, xd_d, xdd_d = space.desired(reference)
        self.task_error = space.error(T, T_d)
        a = xdd_d + self.cfg.kd * (xd_d - xd) + self.cfg.kp * self.task_error - Jd_qd
        qdd = resolve(J, a) + self.null_space_damping(J, state.qd)
        return self.terms.inverse_dynamics(state.q, state.qd, qdd)

    def _reset(self, state) -> None:
        self.task_error = np.zeros(self.cfg.space.m)

    def _diagnostics(self) -> dict[str, Any]:
        return {"task_error": self.task_error.tolist()}
