"""Variable-structure (sliding-mode) control VS-1, VS-2, VS-3 (Huo C11, 3.10) with boundary layers.

Sliding variable s = ė + Λe (= r). The switching functions sgn(s_i) become sat(s_i/ε_i) with a
boundary layer ε_i > 0 (Huo 3.10 III; ε_i = 0 keeps sgn). The book's bounds |Y_ij| ≤ Ȳ_ij are
taken pointwise, Ȳ = |Y_p| at the current state (the tightest bound the reaching condition
allows; Ex 3-5 instead replaces every trigonometric factor by 1). All parameter vectors (p̂, a,
p̄) are in ``parameter_basis``; p̂ defaults to the controller model's own parameters. The
arithmetic is compiled (control.robust_kernels); the offline loop runs it many periods a call.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from robot_control.control import compiled as C
from robot_control.control import families as F
from robot_control.control import robust_kernels as KR
from robot_control.control.base import Config, Controller, Reference, State, refuse
from robot_control.control.basis import BasisRegressor
from robot_control.control.errors import TrackingErrors
from robot_control.control.law_kernels import (
    E_GAIN,
    G_ETA,
    G_KD,
    G_LAMBDA,
    G_LAYER,
    S_SCHEME,
    V_A,
    V_P,
    V_PBAR,
)
from robot_control.control.model_terms import LocalModelTerms, estimated_model
from robot_control.control.parameters import KD_MAX, ParamSpec
from robot_control.control.passivity import LAMBDA

Array = np.ndarray
#: scheme name → code of the compiled kernel
SCHEMES = {"vs1": KR.VS1, "vs2": KR.VS2, "vs3": KR.VS3}


@C.implements(C.SLIDING_MODE)
def _sliding_mode(kind, law, q, qd, qr, qdr, qddr, tau):
    D, Dh, G, E, V, B, Z, Y, s, A = law
    KR.sliding_mode(D, Dh, G, E, V, B, Z, Y, s, q, qd, qr, qdr, qddr, tau)


class SlidingMode(Controller):
    """VS-1 (3-103), VS-2 (3-105/3-106) or VS-3 (3-107), selected by ``scheme``.

    - vs1: τ = Ĥ[q̈_d + Λė + sat(s/ε)∘(d̄ + η)] + Ĉq̇ + Ĝ, d̄ = |Ĥ⁻¹Y_p(q, q̇, q̈_r)| a;
    - vs2: τ = Y_p(q, q̇, q̇_r, q̈_r)p̂ + sat(s/ε)∘k + K s, k = |Y_p| a;
    - vs3: τ = sat(s/ε)∘k̄ + K s, k̄ = |Y_p| p̄ (no model, the largest torques).
    Huo's "+ s" is K s with K = ``kd`` (1 by default).

    VS-1 needs a bound A_ij ≥ |(Ĥ⁻¹Y(q, q̇, q̈))_ij| along the motion. Evaluating it at the
    measured q̈ closes an algebraic loop (the switching term drives q̈, q̈ raises d̄) that diverges
    once |Ĥ⁻¹Y_q̈| a ≥ 1 per unit acceleration, so it is evaluated at q̈_r = q̈_d + Λė, the
    acceleration the law commands besides the switching term; η covers the inertia error acting on
    the switching term itself (small when ‖Ĥ⁻¹H̃‖ is, cf. α of the robust law). Only VS-2 and VS-3
    guarantee V = ½sᵀHs decreasing outside the layer; only VS-1 (through η) makes every |s_i|
    reach its layer in finite time.
    """

    COMPENSATES_FRICTION = True
    name = "sliding_mode"
    VARIANTS = (("vs1", {"scheme": "vs1"}, F.SLIDING), ("vs2", {"scheme": "vs2"}, F.SLIDING),
                ("vs3", {"scheme": "vs3"}, F.MODEL_FREE))
    KIND = C.SLIDING_MODE
    GAINS = "reference"
    formula = "Huo C11 (3-103, 3-105, 3-106, 3-107)"
    PARAMETERS = (
        ParamSpec("scheme", "string", "vs2", "vs1 (3-103), vs2 (3-105/106) or vs3 (3-107)",
                  choices=("vs1", "vs2", "vs3")),
        LAMBDA,
        ParamSpec("boundary_layer", "double_array", 0.0,
                  "boundary layer ε per joint (0: sgn, chattering)", lower=0.0, size="joint"),
        ParamSpec("kd", "double_array", 1.0, "gain K on s in vs2/vs3 (Huo: 1)", lower=0.0,
                  upper=KD_MAX, size="joint"),
        ParamSpec("eta", "double_array", 0.1, "reaching margin η per joint (vs1), rad/s²",
                  lower=0.0, size="joint"),
        ParamSpec("parameter_basis", "string", "base",
                  "basis of estimate / bounds (base, standard or a bundled group set)"),
        ParamSpec("estimate", "double_array", [],
                  "p̂ in parameter_basis (empty: the controller model's own)", size="any"),
        ParamSpec("uncertainty_bound", "double_array", [],
                  "a_j ≥ |p_j − p̂_j| (vs1, vs2; empty: zeros)", lower=0.0, size="any"),
        ParamSpec("parameter_bound", "double_array", [], "p̄_j ≥ |p_j| (vs3)", lower=0.0,
                  size="any"),
    )

    def compensates_friction(self) -> bool:
        """vs3 holds no model (Huo 3-107): nothing to feed forward."""
        return self.params.get("scheme") != "vs3"

    def _prepare(self, model, values) -> Config:
        cfg = super()._prepare(model, values)
        reg = BasisRegressor(model, values["parameter_basis"])
        cfg.regressor = reg
        cfg.p_hat = reg.vector(values["estimate"], "estimate", reg.parameters_of(model))
        cfg.a = reg.vector(values["uncertainty_bound"], "uncertainty_bound", np.zeros(reg.size))
        if values["scheme"] == "vs3" and values["parameter_bound"].size == 0:
            raise refuse("parameter_bound", "vs3 needs bounds p̄_j ≥ |p_j| (one per parameter)")
        cfg.p_bar = reg.vector(values["parameter_bound"], "parameter_bound", np.zeros(reg.size))
        cfg.terms_hat = None
        if values["scheme"] == "vs1":
            hat = model if values["estimate"].size == 0 else estimated_model(
                model, reg.basis, cfg.p_hat)
            cfg.terms_hat = LocalModelTerms(hat)
        return cfg

    def _commit(self, cfg, changed, first) -> None:
        hat = None if cfg.terms_hat is None else cfg.terms_hat.model
        k = C.law_arrays(self.KIND, self.model, hat, cfg.regressor.regressor_map)
        for row, value in ((G_LAMBDA, cfg.lam), (G_LAYER, cfg.boundary_layer), (G_KD, cfg.kd),
                           (G_ETA, cfg.eta)):
            k.gains[row] = value
        for row, value in ((V_P, cfg.p_hat), (V_A, cfg.a), (V_PBAR, cfg.p_bar)):
            k.vectors[row] = value
        k.scalars[S_SCHEME] = SCHEMES[cfg.scheme]
        self._k = k
        self.err = TrackingErrors.on(k.errors)

    @property
    def switching_gain(self) -> Array:
        """The last switching gain d̄ + η (vs1), |Y_p|a (vs2) or |Y_p|p̄ (vs3)."""
        return self._k.errors[E_GAIN]

    def _reset(self, state) -> None:
        C.reset(self.KIND, self._k.arrays)

    def compute(self, t: float, state: State, reference: Reference) -> Array:
        k = self._k
        tau = np.empty(self.n)
        KR.sliding_mode(k.data, k.hat, k.gains, k.errors, k.vectors, k.basis, k.scratch,
                        k.regressor, k.scalars, C.vector(state.q), C.vector(state.qd),
                        C.vector(reference.q), C.vector(reference.qd), C.vector(reference.qdd),
                        tau)
        return tau

    def _compiled(self):
        return self._k

    def in_boundary_layer(self) -> Array:
        """Per joint: |s_i| ≤ ε_i (for ε_i = 0: s_i = 0 exactly, which sgn never reaches)."""
        return np.abs(self.err.r) <= self.cfg.boundary_layer

    def _diagnostics(self) -> dict[str, Any]:
        return {"s": self.err.r.tolist(), "switching_gain": self.switching_gain.tolist(),
                "in_boundary_layer": self.in_boundary_layer().tolist()}
