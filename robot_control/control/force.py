"""Force control on a surface: hybrid position/force (Yoshikawa, Huo C13) and impedance (Huo C14).

Forces follow Huo: f_e is the force the robot exerts on the environment. A force/torque sensor
(``State.wrench``) reports the opposite, the environment's wrench on the robot, so f_e = −wrench.
The surface of the hybrid law is a plane {x : n·x = offset} in the base frame with the unit normal
n pointing to the free side (the plant's convention); a pressing force is positive.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from robot_control.control import families as F
from robot_control.control import task_kernels as KT
from robot_control.control.base import Config, State, refuse
from robot_control.control.parameters import KD_MAX, KP_MAX, ParamSpec
from robot_control.control.resolved_acceleration import TASK_PARAMETERS, TaskSpaceController

Array = np.ndarray


PLANE_PARAMETERS = (
    ParamSpec("plane_normal", "double_array", [0.0, 0.0, 1.0],
              "normal n of the contact plane n·x = offset (base frame, towards free space)",
              size="any"),
    ParamSpec("plane_offset", "double", 0.0, "offset of the contact plane, m"),
    ParamSpec("force_setpoint", "double", 10.0, "desired normal pressing force f_nᵈ, N",
              lower=0.0),
)


def unit_normal(n: Array, parameter: str = "plane_normal") -> Array:
    """The plane's unit normal from a parameter value, refused unless a non-zero 3-vector."""
    n = np.asarray(n, dtype=float)
    if n.shape != (3,):
        raise refuse(parameter, f"wrong length {n.size}: expected 3 (x, y, z)")
    norm = float(np.linalg.norm(n))
    if norm == 0.0:
        raise refuse(parameter, "must be a non-zero vector")
    return n / norm


def tangent_projector(normal: Array, m: int) -> Array:
    """E_pᵀE_p of a plane's constant compliant frame on an m-row task vector (linear rows first)."""
    N = np.zeros(m)
    N[:3] = normal
    return np.eye(m) - np.outer(N, N)


class HybridForce(TaskSpaceController):
    """Hybrid position/force control on a plane (Huo C13, 3-143/3-144).

    The compliant frame of a plane is constant: E_f = nᵀ on the position rows, E_p its orthogonal
    complement (Ė = 0). Huo's u_c = N_c + [H₁₁; H₂₁](ẍ_pᵈ + K_dė_p + K_pe_p) + [0; f_c2ᵈ],
    τ = J̃ᵀEᵀu_c, written back in joint space, is
        q̈* = J⁻¹(E_pᵀE_p a − J̇q̇),  a = ẍ_d + K_d ė + K_p e,
        τ = M q̈* + C q̇ + g + J_vᵀ f_x,  f_x = −f_n n,
    so the normal acceleration is zero and, on a rigid surface with an exact model, the contact
    force equals f_n (open loop in force, as in the book). For compliant surfaces an optional
    force feedback f_n = f_nᵈ + k_f(f_nᵈ − f_m) + k_i∫(f_nᵈ − f_m) + d_n (n·v) uses the measured
    normal force f_m = n·f_sensor (the integral runs only while in contact, so it does not wind
    up during the approach). The desired f_nᵈ is ``force_setpoint`` unless the reference carries
    a wrench, whose normal component −n·f then counts.
    """

    name = "hybrid_force"
    NEEDS_FORCE_REFERENCE = True
    formula = "Huo C13 (3-143, 3-144)"
    PARAMETERS = (
        *TASK_PARAMETERS[:1],
        ParamSpec("task", "string", "position", "task coordinates: position or pose",
                  choices=("position", "pose")),
        ParamSpec("kp", "double_array", 100.0, "position gain per task coordinate",
                  lower=0.0, upper=KP_MAX, strict=True, size="task"),
        ParamSpec("kd", "double_array", 20.0, "velocity gain per task coordinate",
                  lower=0.0, upper=KD_MAX, strict=True, size="task"),
        *PLANE_PARAMETERS,
        ParamSpec("force_kp", "double", 0.0, "proportional force feedback k_f (0: open loop)",
                  lower=0.0),
        ParamSpec("force_ki", "double", 0.0, "integral force feedback k_i, 1/s", lower=0.0),
        ParamSpec("force_damping", "double", 0.0, "normal velocity damping d_n, N·s/m",
                  lower=0.0),
        ParamSpec("null_damping", "double", 0.0, "damping of null-space joint motion, 1/s",
                  lower=0.0),
    )

    STATE = ("force_integral",)
    KIND = KT.HYBRID_FORCE

    def _prepare(self, model, values) -> Config:
        cfg = super()._prepare(model, values)
        cfg.normal = unit_normal(values["plane_normal"])
        return cfg

    def _pack(self, cfg: Config, A) -> None:
        super()._pack(cfg, A)
        A[KT.TK_STIFF, 6:9] = cfg.normal
        s = A[KT.TK_SCALAR]
        s[KT.TS_FORCE_KP], s[KT.TS_FORCE_KI] = cfg.force_kp, cfg.force_ki
        s[KT.TS_FORCE_DAMPING], s[KT.TS_FORCE_SETPOINT] = cfg.force_damping, cfg.force_setpoint

    def _check_inputs(self, state: State) -> None:
        p = self.params
        if (p["force_kp"] != 0.0 or p["force_ki"] != 0.0) and state.wrench is None:
            raise ValueError("hybrid_force with force feedback needs State.wrench (F/T sensor)")

    def _scalar(self, slot: int) -> float:
        return float(self._k.task[KT.TK_SCALAR, slot])

    def integrators(self) -> list[Array]:
        return [self._k.task[KT.TK_SCALAR, KT.TS_INTEGRAL : KT.TS_INTEGRAL + 1]]

    @property
    def force_integral(self) -> float:
        """∫(f_nᵈ − f_m) dt while in contact."""
        return self._scalar(KT.TS_INTEGRAL)

    @property
    def normal_force(self) -> float:
        """The commanded pressing force f_n of the last period."""
        return self._scalar(KT.TS_NORMAL_FORCE)

    @property
    def measured_force(self) -> float:
        """The measured normal force f_m of the last period (NaN without force feedback)."""
        return self._scalar(KT.TS_MEASURED_FORCE)

    def _diagnostics(self) -> dict[str, Any]:
        return {"commanded_normal_force": self.normal_force,
                "measured_normal_force": self.measured_force,
                "task_error": self.task_error.tolist()}


class Impedance(TaskSpaceController):
    """Impedance control M_d ẍ̃ + B_d ẋ̃ + K_d x̃ = −(f_e − f_eᵈ), x̃ = X − X_d (Huo C14, 3.12 VI).

    u = H̲[ẍ_d − M_d⁻¹(B_d ẋ̃ + K_d x̃ + f_e − f_eᵈ)] + N̲ + f_e, τ = J̃ᵀu, written in joint space
    as q̈* = J⁺(ẍ_cmd − J̇q̇), τ = M q̈* + C q̇ + g + Jᵀf_e. The measured f_e inside the target is
    what makes X and −f_e obey the impedance relation the text asks for; the printed bracket
    holds only f_eᵈ, which cancels the contact force and leaves no compliance at all. In free
    space (f_e = f_eᵈ = 0, M_d = I) both reduce to task-space computed torque, as Huo notes.
    Needs the measured wrench (``State.wrench``).
    """

    name = "impedance"
    FAMILY = F.MODEL
    formula = "Huo C14 (3.12 VI)"
    PARAMETERS = (
        *TASK_PARAMETERS[:1],
        ParamSpec("task", "string", "position", "task coordinates: position or pose",
                  choices=("position", "pose")),
        ParamSpec("inertia", "double_array", 1.0, "desired inertia M_d per task coordinate",
                  lower=0.0, strict=True, size="task"),
        ParamSpec("damping", "double_array", 60.0, "desired damping B_d per task coordinate",
                  lower=0.0, size="task"),
        ParamSpec("stiffness", "double_array", 900.0, "desired stiffness K_d per task coordinate",
                  lower=0.0, size="task"),
        ParamSpec("null_damping", "double", 0.0, "damping of null-space joint motion, 1/s",
                  lower=0.0),
    )

    KIND = KT.IMPEDANCE

    def _pack(self, cfg: Config, A) -> None:
        super()._pack(cfg, A)
        m = cfg.space.m
        A[KT.TK_TARGET, :m], A[KT.TK_TARGET, 6 : 6 + m] = cfg.inertia, cfg.damping
        A[KT.TK_STIFF, :m] = cfg.stiffness

    def _check_inputs(self, state: State) -> None:
        if state.wrench is None:
            raise ValueError("impedance control needs the measured wrench (State.wrench)")

    @property
    def contact_force(self) -> Array:
        """f_e, the force the robot exerted on the environment in the last period (task rows)."""
        return self._k.task[KT.TK_OUT, 6 : 6 + self.cfg.space.m].copy()

    def _diagnostics(self) -> dict[str, Any]:
        return {"contact_force": self.contact_force.tolist(),
                "task_error": self.task_error.tolist()}
