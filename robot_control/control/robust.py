"""Spong's robust control (Huo C12, 3-108 … 3-121) with the sign of Δv corrected."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from robot_control.control import compiled as C
from robot_control.control import families as F
from robot_control.control import robust_kernels as KR
from robot_control.control.base import Config, Controller, Reference, State, refuse
from robot_control.control.basis import BasisRegressor
from robot_control.control.errors import TrackingErrors
from robot_control.control.gain_design import lyapunov_matrix
from robot_control.control.law_kernels import (
    E_GAIN,
    E_V,
    G_KD,
    G_KP,
    S_ALPHA,
    S_BOUNDED,
    S_EPSILON,
    S_INV_INERTIA,
    S_K_NORM,
    S_PHI,
    S_QDD_MAX,
    S_RHO,
    S_SCHEME,
    V_A,
)
from robot_control.control.model_terms import LocalModelTerms
from robot_control.control.parameters import ParamSpec
from robot_control.control.pd import PD_GAINS
from robot_control.dynamics import kernels as K

Array = np.ndarray


@C.implements(C.ROBUST)
def _robust(kind, law, q, qd, qr, qdr, qddr, tau):
    D, Dh, G, E, V, B, Z, Y, s, A = law
    v = E[E_V]
    KR.robust_acceleration(D, G, E, V, B, Z, Y, s, q, qd, qr, qdr, qddr, v)
    K.inverse_dynamics_kernel(Dh, q, qd, v, None, tau)  # Ĥv + Ĉq̇ + Ĝ


class Robust(Controller):
    """τ = Ĥv + Ĉq̇ + Ĝ, v = q̈_d + K_d ė + K_p e + Δv (Huo 3-108, 3-110; printed −Ĝ is OCR).

    With x = [e; ė], ẋ = Ax + B(Δv + η̄), B = [0; −I] (3-111) and AᵀP + PA = −Q (3-120),
    V = xᵀPx decreases for Δv = −ρ BᵀPx/‖BᵀPx‖ (3-121). Since BᵀPx = −(P₂ᵀe + P₃ė),
        Δv = +ρ w/‖w‖ (‖w‖ ≥ ε), ρ w/ε (‖w‖ < ε),  w = P₂ᵀe + P₃ė;
    Ex 3-6 prints −ρ[P₂, P₃]x/‖·‖, which drops B's sign and makes the loop diverge.
    ρ = [α(q̈_M + ‖K‖‖x‖) + α₂Φ]/(1 − α) (3-119) with ‖H⁻¹Ĥ − I‖ ≤ α < 1, ‖H⁻¹‖ ≤ α₂,
    K = [K_p, K_d], q̈_M ≥ ‖q̈_d‖ (the larger of the parameter and the current ‖q̈_d‖ is used) and
    Φ ≥ ‖C̃q̇ + G̃‖: ``phi_bound`` plus, given parameter-error bounds a in ``parameter_basis``,
    ‖|Y_p(q, q̇, q̇, 0)| a‖ (Ex 3-6 with the trigonometric factors kept). Ĥ, Ĉ, Ĝ are the
    controller model's (see control.model_terms.estimated_model for a p̂ such as Ex 3-5's).
    v is computed by a compiled kernel (control.robust_kernels), which the offline loop runs too.
    """

    COMPENSATES_FRICTION = True
    name = "robust"
    FAMILY = F.MODEL
    KIND = C.ROBUST
    GAINS = "acceleration"
    formula = "Huo C12 (3-108 … 3-121), corrected sign of Δv"
    USES_MODEL_TERMS = True
    PARAMETERS = (
        *PD_GAINS,
        ParamSpec("lyapunov_q", "double_array", 0.1, "diagonal of Q in AᵀP + PA = −Q (2n)",
                  lower=0.0, strict=True, size="state"),
        ParamSpec("alpha", "double", 0.2, "bound α on ‖H⁻¹Ĥ − I‖, must be < 1 (3-114)",
                  lower=0.0, upper=1.0),
        ParamSpec("inverse_inertia_bound", "double", 1.0, "bound α₂ on ‖H⁻¹(q)‖ (3-118)",
                  lower=0.0, strict=True),
        ParamSpec("qdd_max", "double", 0.0, "bound q̈_M on ‖q̈_d‖ over the task, rad/s²",
                  lower=0.0),
        ParamSpec("phi_bound", "double", 0.0, "constant part of Φ ≥ ‖C̃q̇ + G̃‖, N·m", lower=0.0),
        ParamSpec("parameter_basis", "string", "base",
                  "basis of uncertainty_bound (base, standard or a bundled group set)"),
        ParamSpec("uncertainty_bound", "double_array", [],
                  "bounds a_j ≥ |p̃_j| in parameter_basis (empty: Φ = phi_bound)", size="any",
                  lower=0.0),
        ParamSpec("epsilon", "double", 0.1, "boundary ε of Δv (3-121)", lower=0.0, strict=True),
    )

    def _prepare(self, model, values) -> Config:
        cfg = super()._prepare(model, values)
        if values["alpha"] >= 1.0:
            raise refuse("alpha", f"value {values['alpha']:g} must be < 1 (Lemma 3-3)")
        n = model.nq
        P = lyapunov_matrix(values["kp"], values["kd"], values["lyapunov_q"])
        cfg.W = P[n:, :].copy()  # w = [P₂ᵀ, P₃] x
        cfg.K_norm = float(np.linalg.norm(np.hstack([np.diag(values["kp"]),
                                                     np.diag(values["kd"])]), 2))
        cfg.regressor = None
        if values["uncertainty_bound"].size:
            cfg.regressor = BasisRegressor(model, values["parameter_basis"])
            cfg.a = cfg.regressor.vector(values["uncertainty_bound"], "uncertainty_bound")
        return cfg

    #: sign of Δv against the corrected law (−1 reproduces Ex 3-6 as printed, which diverges)
    DELTA_V_SIGN: ClassVar[float] = 1.0

    def _commit(self, cfg, changed, first) -> None:
        hat = self.terms.model if isinstance(self.terms, LocalModelTerms) else None
        reg = cfg.regressor
        k = C.law_arrays(self.KIND, self.model, hat, None if reg is None else reg.regressor_map)
        k.gains[G_KP], k.gains[G_KD] = cfg.kp, cfg.kd
        if reg is not None:
            k.vectors[V_A] = cfg.a
        C.gain_block(k)[:] = cfg.W
        for slot, value in ((S_ALPHA, cfg.alpha), (S_INV_INERTIA, cfg.inverse_inertia_bound),
                            (S_QDD_MAX, cfg.qdd_max), (S_PHI, cfg.phi_bound),
                            (S_K_NORM, cfg.K_norm), (S_EPSILON, cfg.epsilon),
                            (S_BOUNDED, float(reg is not None)), (S_SCHEME, self.DELTA_V_SIGN)):
            k.scalars[slot] = value
        self._k = k
        self.err = TrackingErrors.on(k.errors)

    def _reset(self, state) -> None:
        C.reset(self.KIND, self._k.arrays)

    @property
    def rho(self) -> float:
        """ρ of the last update (3-119)."""
        return float(self._k.scalars[S_RHO])

    @property
    def delta_v(self) -> Array:
        """Δv of the last update (3-121)."""
        return self._k.errors[E_GAIN]

    def compute(self, t: float, state: State, reference: Reference) -> Array:
        k = self._k
        q, qd = C.vector(state.q), C.vector(state.qd)
        v = k.errors[E_V]
        KR.robust_acceleration(k.data, k.gains, k.errors, k.vectors, k.basis, k.scratch,
                               k.regressor, k.scalars, q, qd, C.vector(reference.q),
                               C.vector(reference.qd), C.vector(reference.qdd), v)
        return self.terms.inverse_dynamics(q, qd, v)

    def _compiled(self):
        if not isinstance(self.terms, LocalModelTerms):
            return None
        return self._k

    def _diagnostics(self) -> dict[str, Any]:
        return {"rho": self.rho, "delta_v": self.delta_v.tolist(), "e": self.err.e.tolist()}
