"""Resolved-acceleration control in task space (Luh–Walker–Paul, Huo C5, 3-40)."""

from __future__ import annotations

from typing import Any

import numpy as np

from robot_control.control import compiled as C
from robot_control.control import families as F
from robot_control.control import task_kernels as KT
from robot_control.control.base import Config, Controller, Reference, State, refuse
from robot_control.control.law_kernels import S_DT
from robot_control.control.model_terms import LocalModelTerms
from robot_control.control.parameters import KD_MAX, KP_MAX, ParamSpec
from robot_control.control.task_space import TASKS, TaskSpace

Array = np.ndarray

TASK_PARAMETERS = (
    ParamSpec("frame", "string", "", "task frame (body or named frame; empty: the end effector)"),
    ParamSpec("task", "string", "pose", "task coordinates: pose [p; orientation] or position",
              choices=tuple(TASKS)),
)


@C.implements(KT.RESOLVED_ACCELERATION, KT.HYBRID_FORCE, KT.IMPEDANCE)
def _task_space(kind, law, q, qd, qr, qdr, qddr, tau):
    D, Dh, G, E, V, B, Z, Y, s, A = law
    KT.task_torque(kind, D, Dh, A, q, qd, qr, qdr, qddr, s[S_DT], tau)


class TaskSpaceController(Controller):
    """Common configuration of the task-space laws: the frame, the task and its kinematics.

    The arithmetic is compiled (control.task_kernels): ``compute`` writes the Cartesian reference
    and the sensed wrench into the law's task array and calls the kernel of its ``KIND``; the
    offline loop runs the same kernel many periods a call.
    """

    USES_MODEL_TERMS = True
    #: the law's kind code in control.compiled

    def task_dimension(self, values: dict[str, Any]) -> int | None:
        return len(TASKS[values["task"]])

    def _prepare(self, model, values) -> Config:
        cfg = super()._prepare(model, values)
        try:
            cfg.space = TaskSpace(model, values["frame"] or None, values["task"])
        except KeyError as exc:
            raise refuse("frame", str(exc.args[0])) from None
        return cfg

    def _commit(self, cfg, changed, first) -> None:
        if first:
            local = isinstance(self.terms, LocalModelTerms)
            self._k = C.law_arrays(self.KIND, self.model, self.terms.model if local else None)
        A, space = self._k.task, cfg.space
        body, X = self.model.frame_placement(space.frame)
        A[KT.TK_FRAME : KT.TK_FRAME + 4, :4] = X
        s = A[KT.TK_SCALAR]
        s[KT.TS_BODY], s[KT.TS_M] = body, space.m
        A[KT.TK_ROWS, : space.m] = space.rows
        self._pack(cfg, A)

    def _pack(self, cfg: Config, A: Array) -> None:
        """Copy the law's gains into its task array (control.task_kernels layout)."""
        s = A[KT.TK_SCALAR]
        s[KT.TS_NULL] = cfg.null_damping
        m = cfg.space.m
        if hasattr(cfg, "kp"):
            A[KT.TK_GAIN, :m], A[KT.TK_GAIN, 6 : 6 + m] = cfg.kp, cfg.kd

    def _reset(self, state) -> None:
        C.reset(self.KIND, self._k.arrays)

    def _check_inputs(self, state: State) -> None:
        """Refuse a state the law cannot work with (e.g. no wrench for a force law)."""
        return None

    def compute(self, t: float, state: State, reference: Reference) -> Array:
        self._check_inputs(state)
        k = self._k
        C.task_inputs(k.task, reference, state.wrench)
        q, qd = C.vector(state.q), C.vector(state.qd)
        qr, qdr, qddr = C.vector(reference.q), C.vector(reference.qd), C.vector(reference.qdd)
        if isinstance(self.terms, LocalModelTerms):
            tau = np.empty(self.n)
            KT.task_torque(self.KIND, k.data, k.hat, k.task, q, qd, qr, qdr, qddr, self.dt, tau)
            return tau
        KT.task_acceleration(self.KIND, k.data, k.task, q, qd, qr, qdr, qddr, self.dt)
        n = self.n
        return (self.terms.inverse_dynamics(q, qd, k.task[KT.TK_QDD, :n].copy())
                + k.task[KT.TK_EXTRA, :n])

    def _compiled(self):
        if not isinstance(self.terms, LocalModelTerms):
            return None
        return self._k

    @property
    def task_error(self) -> Array:
        """[e_p; e_o] of the last period (p_d − p first)."""
        return self._k.task[KT.TK_OUT, : self.cfg.space.m].copy()

    def _diagnostics(self) -> dict[str, Any]:
        return {"task_error": self.task_error.tolist()}


class ResolvedAcceleration(TaskSpaceController):
    """q̈* = J⁺{ẍ_d + K_d(ẋ_d − ẋ) + K_p[e_p; e_o] − J̇q̇}, τ = M q̈* + C q̇ + g (Huo C5, 3-40).

    Huo's scalar gains become per-coordinate gains (the same value everywhere reproduces 3-40,
    where k_d J⁻¹ẋ_d − k_d q̇ = J⁻¹k_d(ẋ_d − ẋ)). J⁺ is J⁻¹ for a square Jacobian and the
    pseudo-inverse otherwise; ``null_damping`` adds damping of the self-motion of redundant arms.
    Without a Cartesian reference, (T_d, ẋ_d, ẍ_d) follow from the joint reference.
    """

    name = "resolved_acceleration"
    FAMILY = F.MODEL
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

    KIND = KT.RESOLVED_ACCELERATION
