"""Adaptive control with on-line parameter estimates; Slotine–Li (Huo C10, 3-79/3-81).

The estimate p̂ lives in a parameter basis (``parameter_basis``: ``base``, ``standard`` or a group
set bundled with the robot, e.g. the DDArm's ``huo_p`` = P1…P9). ``adaptation_gain`` is the
diagonal of Huo's Γ⁻¹; a zero entry freezes that parameter at its initial value (Huo's split
Y = [Y₁, Y₂] into known and adapted parameters). The update law is integrated by explicit Euler
over the control period: p̂(t_k) = p̂(t_{k−1}) + (t_k − t_{k−1}) p̂̇(t_{k−1}).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from robot_control.control.base import Config, Controller, Reference, State
from robot_control.control.basis import BasisRegressor
from robot_control.control.errors import TrackingErrors
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

    STATE = ("p_hat", "p_hat_rate")

    def _prepare(self, model, values) -> Config:
        cfg = super()._prepare(model, values)
        reg = BasisRegressor(model, values["parameter_basis"])
        cfg.regressor = reg
        cfg.gamma_inv = reg.vector(values["adaptation_gain"], "adaptation_gain", np.ones(reg.size))
        cfg.p0 = reg.vector(values["initial_estimate"], "initial_estimate",
                            reg.parameters_of(model))
        return cfg

    def _commit(self, cfg, changed, first) -> None:
        if first:
            self.err = TrackingErrors(self.n)
        if first or "parameter_basis" in changed:
            # a new basis means a new parameter vector: restart from its initial estimate
            self.p_hat = cfg.p0.copy()
            self.p_hat_rate = np.zeros(cfg.regressor.size)

    def _reset(self, state) -> None:
        self.p_hat = self.cfg.p0.copy()
        self.p_hat_rate = np.zeros(self.cfg.regressor.size)

    def integrate_estimate(self) -> None:
        """Explicit Euler step of the update law over the period since the previous update."""
        if self.dt > 0.0:
            self.p_hat += self.dt * self.p_hat_rate

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


class SlotineLi(AdaptiveController):
    """τ = Y_p(q, q̇, q̇_r, q̈_r)p̂ + K_d r, p̂̇ = Γ⁻¹Y_pᵀr (Huo C10, 3-79, 3-81).

    r = ė + Λe, q̇_r = q̇_d + Λe (Ex 3-4 erratum: r = (q̇_d − q̇) + Λ(q_d − q)). With a
    Christoffel-consistent C, V = ½(rᵀHr + p̃ᵀΓp̃) has V̇ = −rᵀK_d r ≤ 0; no q̈ and no Ĥ⁻¹ needed.
    """

    name = "adaptive"
    GAINS = "reference"
    formula = "Huo C10 (3-79, 3-81), Slotine–Li"
    PARAMETERS = (LAMBDA, KD_R, *ESTIMATE_PARAMETERS)

    def compute(self, t: float, state: State, reference: Reference) -> Array:
        self.integrate_estimate()
        err = self.err.of(state, reference, self.cfg.lam)
        Y = self.cfg.regressor.reference(state.q, state.qd, err.qd_r, err.qdd_r)
        self.p_hat_rate = self.cfg.gamma_inv * (Y.T @ err.r)
        return Y @ self.p_hat + self.cfg.kd * err.r
