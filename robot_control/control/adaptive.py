"""Adaptive control with on-line parameter estimates; Slotine–Li (Huo C10, 3-79/3-81).

The estimate p̂ lives in a parameter basis (``parameter_basis``: ``base``, ``standard`` or a group
set bundled with the robot, e.g. the DDArm's ``huo_p`` = P1…P9). ``adaptation_gain`` is the
diagonal of Huo's Γ⁻¹; a zero entry freezes that parameter at its initial value (Huo's split
Y = [Y₁, Y₂] into known and adapted parameters). The update law is integrated by explicit Euler
over the control period: p̂(t_k) = p̂(t_{k−1}) + (t_k − t_{k−1}) p̂̇(t_{k−1}). The arithmetic is
compiled (control.adaptive_kernels); the offline loop runs the same kernels many periods a call.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from robot_control.control import adaptive_kernels as KA
from robot_control.control import compiled as C
from robot_control.control import families as F
from robot_control.control.base import Config, Controller, Reference, State
from robot_control.control.basis import BasisRegressor
from robot_control.control.errors import TrackingErrors
from robot_control.control.law_kernels import G_KD, G_KP, G_LAMBDA, S_DT, V_GAMMA, V_P, V_P0, V_RATE
from robot_control.control.parameters import ParamSpec
from robot_control.control.passivity import KD_R, LAMBDA

Array = np.ndarray

ESTIMATE_PARAMETERS = (
    ParamSpec("parameter_basis", "string", "base",
              "basis of the estimate: base, standard or a group set bundled with the robot"),
    ParamSpec("adaptation_gain", "double_array", [],
              "diagonal of Γ⁻¹, one per basis parameter (0 freezes one; empty: all 1)",
              lower=0.0, size="any"),
    ParamSpec("initial_estimate", "double_array", [],
              "p̂(0) in parameter_basis (empty: the controller model's own); used from the next reset",
              size="any"),
)


class AdaptiveController(Controller):
    """Estimate bookkeeping shared by the adaptive laws: basis, Γ⁻¹, p̂(0), p̂ and its rate."""

    COMPENSATES_FRICTION = True
    STATE = ("p_hat", "p_hat_rate")

    def _prepare(self, model, values) -> Config:
        cfg = super()._prepare(model, values)
        reg = BasisRegressor(model, values["parameter_basis"])
        cfg.regressor = reg
        cfg.gamma_inv = reg.vector(values["adaptation_gain"], "adaptation_gain", np.ones(reg.size))
        cfg.p0 = reg.vector(values["initial_estimate"], "initial_estimate",
                            reg.parameters_of(model))
        return cfg

    #: the law's kind code in control.compiled

    def _commit(self, cfg, changed, first) -> None:
        if first or "parameter_basis" in changed:
            # a new basis means a new parameter vector: restart from its initial estimate
            self._k = C.law_arrays(self.KIND, self.model, basis=cfg.regressor.regressor_map)
            self.err = TrackingErrors.on(self._k.errors)
            self.p_hat, self.p_hat_rate = self._k.vectors[V_P], self._k.vectors[V_RATE]
            self.p_hat[:] = cfg.p0
        self._k.vectors[V_GAMMA] = cfg.gamma_inv
        self._k.vectors[V_P0] = cfg.p0
        self._pack(cfg)

    def _pack(self, cfg: Config) -> None:
        """Copy the law's gains into its compiled arrays."""
        gains = self._k.gains
        for row, name in ((G_KP, "kp"), (G_KD, "kd"), (G_LAMBDA, "lam")):
            if hasattr(cfg, name):
                gains[row] = getattr(cfg, name)

    def _reset(self, state) -> None:
        C.reset(self.KIND, self._k.arrays)

    def _torque(self, kernel, state: State, reference: Reference) -> Array:
        """τ of this period by the law's compiled kernel (p̂ integrated over dt first; the model of
        θ = B p̂ written into its terms array when the kernel needs it)."""
        k = self._k
        k.scalars[S_DT] = self.dt
        tau = np.empty(self.n)
        kernel(k.data, k.hat, k.gains, k.errors, k.vectors, k.basis, k.scratch, k.regressor, k.scalars,
               C.vector(state.q), C.vector(state.qd), C.vector(reference.q), C.vector(reference.qd),
               C.vector(reference.qdd),
               tau)
        return tau

    def integrators(self) -> list[Array]:
        return [self.p_hat]

    @property
    def estimate(self) -> Array:
        """Current p̂ (a copy), in ``estimate_names`` order."""
        return self.p_hat.copy()

    @property
    def estimate_names(self) -> list[str]:
        return list(self.cfg.regressor.names)

    def _diagnostics(self) -> dict[str, Any]:
        return {"estimate": dict(zip(self.estimate_names, self.p_hat.tolist())),
                "e": self.err.e.tolist()}


@C.implements(C.ADAPTIVE)
def _slotine_li(kind, law, q, qd, qr, qdr, qddr, tau):
    D, Dh, G, E, V, B, Z, Y, s, A = law
    KA.slotine_li(D, Dh, G, E, V, B, Z, Y, s, q, qd, qr, qdr, qddr, tau)


class SlotineLi(AdaptiveController):
    """τ = Y_p(q, q̇, q̇_r, q̈_r)p̂ + K_d r, p̂̇ = Γ⁻¹Y_pᵀr (Huo C10, 3-79, 3-81).

    r = ė + Λe, q̇_r = q̇_d + Λe (Ex 3-4 erratum: r = (q̇_d − q̇) + Λ(q_d − q)). With a
    Christoffel-consistent C, V = ½(rᵀHr + p̃ᵀΓp̃) has V̇ = −rᵀK_d r ≤ 0; no q̈ and no Ĥ⁻¹ needed.
    """

    name = "adaptive"
    FAMILY = F.ADAPTIVE
    GAINS = "reference"
    formula = "Huo C10 (3-79, 3-81), Slotine–Li"
    PARAMETERS = (LAMBDA, KD_R, *ESTIMATE_PARAMETERS)

    KIND = C.ADAPTIVE

    def compute(self, t: float, state: State, reference: Reference) -> Array:
        return self._torque(KA.slotine_li, state, reference)

    def _compiled(self):
        return self._k
