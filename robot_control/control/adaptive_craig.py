"""Adaptive computed torque of Craig, Hsu and Sastry (Huo C9, 3-72 … 3-76)."""

from __future__ import annotations

from typing import Any

import numpy as np

from robot_control.control.acceleration import AccelerationEstimator
from robot_control.control.adaptive import ESTIMATE_PARAMETERS, AdaptiveController
from robot_control.control.base import Config, Reference, State
from robot_control.control.gain_design import lyapunov_matrix
from robot_control.control.parameters import ParamSpec
from robot_control.control.pd import PD_GAINS

Array = np.ndarray


class AdaptiveCraig(AdaptiveController):
    """τ = Ĥ(q̈_d + K_d ė + K_p e) + Ĉq̇ + Ĝ = Y_p(q, q̇, q̈*)p̂, p̂̇ = Γ⁻¹ΦᵀBᵀRx (Huo 3-72, 3-76).

    Φ = Ĥ⁻¹Y_p(q, q̇, q̈), x = [e; ė], B = [0; I], AᵀR + RA = −Q with A = [[0, I], [−K_p, −K_d]].
    The law needs q̈: the measured one (State.qdd) if the state carries it, else a low-pass
    filtered finite difference of q̇ (control.acceleration; cutoff ``acceleration_cutoff_hz``).
    Ĥ is assembled from regressor columns of p̂. While Ĥ(p̂) is singular the estimate is held.
    """

    name = "adaptive_craig"
    GAINS = "acceleration"
    formula = "Huo C9 (3-72 … 3-76), Craig–Hsu–Sastry"
    PARAMETERS = (
        *PD_GAINS,
        ParamSpec("lyapunov_q", "double_array", 1.0, "diagonal of Q in AᵀR + RA = −Q (2n)",
                  lower=0.0, strict=True, size="state"),
        *ESTIMATE_PARAMETERS,
        ParamSpec("acceleration_cutoff_hz", "double", 50.0,
                  "low-pass cutoff of the finite-difference q̈ (no measured q̈), Hz", lower=0.0),
    )

    def _prepare(self, model, values) -> Config:
        cfg = super()._prepare(model, values)
        n = model.nq
        R = lyapunov_matrix(values["kp"], values["kd"], values["lyapunov_q"])
        cfg.BtR = R[n:, :].copy()  # BᵀR with B = [0; I]
        return cfg

    def _commit(self, cfg, changed, first) -> None:
        super()._commit(cfg, changed, first)
        if first:
            self.acc = AccelerationEstimator(self.n, cfg.acceleration_cutoff_hz)
            self._x = np.zeros(2 * self.n)
        self.acc.cutoff_hz = cfg.acceleration_cutoff_hz

    def _reset(self, state) -> None:
        super()._reset(state)
        self.acc.reset(None if state is None else state.qd)
        self.singular = False

    def compute(self, t: float, state: State, reference: Reference) -> Array:
        cfg, n = self.cfg, self.n
        self.integrate_estimate()
        err = self.err.of(state, reference)
        q, qd = state.q, state.qd
        qdd = self.acc.update(qd, self.dt, state.qdd)
        qdd_cmd = reference.qdd + cfg.kd * err.ed + cfg.kp * err.e
        tau = cfg.regressor.regressor(q, qd, qdd_cmd) @ self.p_hat
        x = self._x
        x[:n], x[n:] = err.e, err.ed
        try:
            H_hat = cfg.regressor.mass_matrix(q, self.p_hat)
            Phi = np.linalg.solve(H_hat, cfg.regressor.regressor(q, qd, qdd))
            self.p_hat_rate = cfg.gamma_inv * (Phi.T @ (cfg.BtR @ x))
            self.singular = False
        except np.linalg.LinAlgError:
            self.p_hat_rate = np.zeros_like(self.p_hat)
            self.singular = True
        return tau

    def _diagnostics(self) -> dict[str, Any]:
        out = super()._diagnostics()
        out["acceleration"] = self.acc.qdd.tolist()
        out["estimate_held_singular_H"] = self.singular
        return out
