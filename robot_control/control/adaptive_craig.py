"""Adaptive computed torque of Craig, Hsu and Sastry (Huo C9, 3-72 … 3-76)."""

from __future__ import annotations

from typing import Any

import numpy as np

from robot_control.control import adaptive_kernels as KA
from robot_control.control import compiled as C
from robot_control.control import families as F
from robot_control.control.acceleration import AccelerationEstimator
from robot_control.control.adaptive import ESTIMATE_PARAMETERS, AdaptiveController
from robot_control.control.base import Config, Reference, State
from robot_control.control.gain_design import lyapunov_matrix
from robot_control.control.law_kernels import S_SINGULAR
from robot_control.control.parameters import ParamSpec
from robot_control.control.pd import PD_GAINS

Array = np.ndarray


@C.implements(C.ADAPTIVE_CRAIG)
def _craig(kind, law, q, qd, qr, qdr, qddr, tau):
    D, Dh, G, E, V, B, Z, Y, s, A = law
    KA.craig(D, Dh, G, E, V, B, Z, Y, s, q, qd, qr, qdr, qddr, tau)


class AdaptiveCraig(AdaptiveController):
    """τ = Ĥ(q̈_d + K_d ė + K_p e) + Ĉq̇ + Ĝ = Y_p(q, q̇, q̈*)p̂, p̂̇ = Γ⁻¹ΦᵀBᵀRx (Huo 3-72, 3-76).

    Φ = Ĥ⁻¹Y_p(q, q̇, q̈), x = [e; ė], B = [0; I], AᵀR + RA = −Q with A = [[0, I], [−K_p, −K_d]].
    The law needs q̈: the measured one (State.qdd) if the state carries it, else a low-pass
    filtered finite difference of q̇ (control.acceleration; cutoff ``acceleration_cutoff_hz``).
    Ĥ, Ĉ, Ĝ are those of the model with θ = B p̂ (Newton–Euler and composite-body M on it; the
    regressor only for Φ, and not at all while Γ⁻¹ = 0). While Ĥ(p̂) is singular the estimate is held.
    """

    name = "adaptive_craig"
    FAMILY = F.ADAPTIVE
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

    KIND = C.ADAPTIVE_CRAIG

    def _commit(self, cfg, changed, first) -> None:
        fresh = first or "parameter_basis" in changed
        super()._commit(cfg, changed, first)
        if fresh:
            self.acc = AccelerationEstimator(self.n, cfg.acceleration_cutoff_hz, self._k.errors,
                                             self._k.scalars)
        self.acc.cutoff_hz = cfg.acceleration_cutoff_hz
        C.gain_block(self._k)[:] = cfg.BtR

    def _reset(self, state) -> None:
        super()._reset(state)
        if state is not None:
            self.acc.reset(state.qd)

    @property
    def singular(self) -> bool:
        """Ĥ(p̂) was singular at the last update, so the estimate was held."""
        return bool(self._k.scalars[S_SINGULAR])

    def compute(self, t: float, state: State, reference: Reference) -> Array:
        self.acc.measured(state.qdd)
        return self._torque(KA.craig, state, reference)

    def _compiled(self):
        self.acc.measured(None)  # the offline loop senses no q̈
        return self._k

    def _diagnostics(self) -> dict[str, Any]:
        out = super()._diagnostics()
        out["acceleration"] = self.acc.qdd.tolist()
        out["estimate_held_singular_H"] = self.singular
        return out
