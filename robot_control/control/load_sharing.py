"""Several robots holding one object: hybrid position/force control with load sharing (Huo C15).

Huo §3.13: m arms on a common base hold a rigid object whose point E slides on a rigid smooth
surface. Giving each arm's last link the share M_iᴼ/Mᴼ of the object (3-148, 3-154) splits the
cell's model in object coordinates into per-arm terms, H̲ = ΣH̲ⁱ, N̲ = ΣN̲ⁱ (3-156) and, in the
compliant frame, H_c = ΣH_cⁱ, N_c = ΣN_cⁱ (3-157). The hybrid law of C13 (3-158) then splits too:
arm i supplies u_cⁱ = H_cⁱ[ẍ_cᵈ + K_v(ẋ_cᵈ − ẋ_c) + K_p(x_cᵈ − x_c)] + N_cⁱ + f_cᵈ'ⁱ, and the
desired contact force is divided by minimising FᵀWF: f_cᵈ'ⁱ = W_i⁻¹(ΣW_j⁻¹)⁻¹f_cᵈ (3-161).

Each arm's u_cⁱ is C13's torque (task_kernels's hybrid pieces, in compiled code:
control.load_sharing_kernels) on the arm's augmented model
(robot_control.model.cell.augmented_arm_model) with task frame E, so the law reuses C13 as is.
All arms use one estimate of the object's pose and twist, the mean of what each arm's forward
kinematics says (Huo's remark ③: measurement errors would otherwise make the arms disagree).
The law drives the cell's ``arms_model``: q = [q¹; …; qᵐ], τ = [τ¹; …; τᵐ].
"""

from __future__ import annotations

from typing import Any

import numpy as np

from robot_control.control import load_sharing_kernels as LS
from robot_control.control import task_kernels as KT
from robot_control.control.base import Config, ConfigurationError, Controller, Reference, State, refuse
from robot_control.control.compiled import task_inputs, vector
from robot_control.control.force import PLANE_PARAMETERS, unit_normal
from robot_control.control.parameters import KD_MAX, KP_MAX, ParamSpec
from robot_control.dynamics.packing import Data

Array = np.ndarray


def force_split(weights, f_d) -> list[Array]:
    """f_cᵈ'ⁱ = W_i⁻¹(Σ_j W_j⁻¹)⁻¹ f_cᵈ, the split minimising FᵀWF with Σ_i f_cᵈ'ⁱ = f_cᵈ (Huo 3-161)."""
    f_d = np.atleast_1d(np.asarray(f_d, dtype=float))
    k = f_d.size
    inverses = []
    for i, W in enumerate(weights):
        W = np.atleast_2d(np.asarray(W, dtype=float))
        if W.shape != (k, k) or not np.allclose(W, W.T) or np.linalg.eigvalsh(W)[0] <= 0.0:
            raise ValueError(f"W_{i + 1} must be a symmetric positive definite {k}×{k} matrix")
        inverses.append(np.linalg.inv(W))
    total = np.linalg.solve(sum(inverses), f_d)  # (Σ W_j⁻¹)⁻¹ f_cᵈ
    return [Wi_inv @ total for Wi_inv in inverses]


def cell_of(model, name: str):
    """The cell ``name`` names: the one ``model`` was built from (``arms_model`` keeps it) when it
    was read from that file — the cell the model drives, without reading it again — else read now."""
    from robot_control.model.cell import load_cell, resolve_cell_path

    cell = getattr(model, "cell", None)
    if cell is not None and cell.source and cell.source == str(resolve_cell_path(name).resolve()):
        return cell
    return load_cell(name)


def average_pose(poses) -> Array:
    """One pose from the arms' estimates: mean position, rotation nearest the mean (Huo 3.13 ③)."""
    As = tuple(np.zeros((KT.TK_T + 4, 4)) for _ in poses)
    for A, T in zip(As, poses):
        A[KT.TK_T : KT.TK_T + 4] = T
    out = np.empty((4, 4))
    LS.average_pose(As, out, np.empty((2, 9)))
    return out


class LoadSharing(Controller):
    """Hybrid position/force control of m arms holding one object, load sharing (Huo C15, 3-158).

    Task: the pose of the contact frame E (position and orientation, Huo's X), common to all arms.
    The normal acceleration of E is zero (the surface is rigid and smooth), the tangential motion
    and the orientation follow the reference with gains K_p, K_d, and the pressing force
    f_nᵈ (``force_setpoint`` or the reference wrench) is split by W_i = w_i I (``force_weights``)
    into f_nᵈ'ⁱ = w_i⁻¹(Σw_j⁻¹)⁻¹ f_nᵈ. Open loop in force, as in the book: with an exact model
    the contact force equals f_nᵈ and arm i supplies its share.
    """

    name = "load_sharing"
    formula = "Huo C15 (3-156 … 3-161)"
    PARAMETERS = (
        ParamSpec("cell", "string", "",
                  "the cell: bundled name (config/cells/) or path of a cell file"),
        ParamSpec("kp", "double_array", 100.0, "pose gain per task coordinate (v; ω of E)",
                  lower=0.0, upper=KP_MAX, strict=True, size="task"),
        ParamSpec("kd", "double_array", 20.0, "velocity gain per task coordinate",
                  lower=0.0, upper=KD_MAX, strict=True, size="task"),
        *PLANE_PARAMETERS,
        ParamSpec("force_weights", "double_array", [],
                  "w_i of W_i = w_i I per arm: arm i presses w_i⁻¹(Σw_j⁻¹)⁻¹ f_nᵈ (empty: equal)",
                  lower=0.0, strict=True, size="any"),
        ParamSpec("load_shares", "double_array", [],
                  "M_iᴼ/Mᴼ: share of the object's inertia each arm carries (empty: equal)",
                  lower=0.0, size="any"),
    )

    def task_dimension(self, values: dict[str, Any]) -> int | None:
        return 6

    def _prepare(self, model, values) -> Config:
        from robot_control.model.cell import arms_model, augmented_arm_model, share_vector

        cfg = super()._prepare(model, values)
        if not values["cell"]:
            raise refuse("cell", "name the cell the law drives (a bundled cell or a cell file)")
        try:
            cell = cell_of(model, values["cell"])
        except (OSError, ValueError) as exc:
            raise refuse("cell", str(exc)) from None
        # a model arms_model built from this very cell has its joints by construction
        built_here = getattr(model, "cell", None) is cell
        expected = list(model.joint_names) if built_here else arms_model(cell).joint_names
        if list(model.joint_names) != expected:
            raise ConfigurationError(
                f"load_sharing: the model's joints {model.joint_names} are not those of cell "
                f"'{cell.name}' ({expected}); configure it on the cell's arms_model"
            )
        m = cell.m
        try:
            shares = share_vector(values["load_shares"], m)
        except ValueError as exc:
            raise refuse("load_shares", str(exc)) from None
        w = values["force_weights"]
        if w.size == 0:
            w = np.ones(m)
        elif w.shape != (m,):
            raise refuse("force_weights", f"wrong length {w.size}: expected {m}, one per arm "
                         f"({', '.join(cell.arm_names)})")
        cfg.cell = cell
        cfg.slices = cell.joint_slices()
        cfg.shares = shares
        cfg.force_fractions = np.array([f[0] for f in force_split([[[x]] for x in w], 1.0)])
        cfg.arm_models = [augmented_arm_model(cell, i, s) for i, s in enumerate(shares)]
        cfg.normal = unit_normal(values["plane_normal"])
        # the compiled law's arrays (control.load_sharing_kernels)
        cfg.data = tuple(Data(mi).D for mi in cfg.arm_models)
        cfg.tasks = tuple(LS.task_array(mi, "contact") for mi in cfg.arm_models)
        cfg.object = LS.task_array(cfg.arm_models[0], "contact")
        cfg.object[KT.TK_GAIN, :6], cfg.object[KT.TK_GAIN, 6:12] = cfg.kp, cfg.kd
        cfg.object[KT.TK_STIFF, 6:9] = cfg.normal
        cfg.starts = np.array([s.start for s in cfg.slices] + [cfg.slices[-1].stop])
        return cfg

    def _reset(self, state) -> None:
        self.task_error = np.zeros(6)
        self.arm_forces = np.zeros(self.cfg.cell.m)

    def desired_normal_force(self, reference: Reference) -> float:
        """f_nᵈ: pressing force from the reference wrench if any, else the set point."""
        if reference.wrench is not None:
            return -float(self.cfg.normal @ np.asarray(reference.wrench, dtype=float)[3:])
        return self.params["force_setpoint"]

    def object_state(self, state: State) -> tuple[Array, Array]:
        """(T_E, ẋ_E) averaged over the arms' forward kinematics (Huo 3.13 ③)."""
        cfg = self.cfg
        for D, A, s in zip(cfg.data, cfg.tasks, cfg.slices):
            LS.arm_kinematics(D, A, vector(state.q[s]), vector(state.qd[s]))
        T = np.empty((4, 4))
        LS.average_pose(cfg.tasks, T, np.empty((2, 9)))
        return T, np.mean([A[KT.TK_X, :6] for A in cfg.tasks], axis=0)

    def compute(self, t: float, state: State, reference: Reference) -> Array:
        cfg = self.cfg
        task_inputs(cfg.object, reference, None)
        f_d = self.desired_normal_force(reference)
        tau = np.empty(self.n)
        LS.load_sharing_torque(cfg.data, cfg.tasks, cfg.object, cfg.starts, cfg.force_fractions,
                               f_d, vector(state.q), vector(state.qd), vector(reference.q),
                               vector(reference.qd), vector(reference.qdd), tau)
        self.task_error = cfg.object[KT.TK_OUT, :6].copy()
        self.arm_forces = cfg.force_fractions * f_d
        return tau

    def _diagnostics(self) -> dict[str, Any]:
        return {"task_error": self.task_error.tolist(),
                "arm_normal_forces": self.arm_forces.tolist(),
                "force_fractions": self.cfg.force_fractions.tolist(),
                "load_shares": self.cfg.shares.tolist()}
