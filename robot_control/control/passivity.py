"""Passivity-based tracking control (Huo C8, 3-67; Slotine–Li with known parameters)."""

from __future__ import annotations

from typing import Any

import numpy as np

from robot_control.control import compiled as C
from robot_control.control import families as F
from robot_control.control import law_kernels as L
from robot_control.control.base import Controller, Reference, State
from robot_control.control.errors import TrackingErrors
from robot_control.control.model_terms import LocalModelTerms
from robot_control.control.parameters import KD_MAX, LAMBDA_MAX, ParamSpec
from robot_control.dynamics import kernels as K
from robot_control.dynamics import regressor_kernels as RK

Array = np.ndarray

LAMBDA = ParamSpec("lambda", "double_array", 5.0, "Λ of r = ė + Λe per joint, 1/s (at most the "
                   "bandwidth an arm can use, 1000 rad/s)", lower=0.0, upper=LAMBDA_MAX,
                   strict=True, size="joint")
KD_R = ParamSpec("kd", "double_array", 20.0, "gain K_d on r = ė + Λe per joint (bounded by the "
                 "bandwidth an arm can use)", lower=0.0, upper=KD_MAX, strict=True, size="joint")


@K.entry_point
def passivity(D, G, E, q, qd, qr, qdr, qddr, tau):
    """τ = M q̈_r + C q̇_r + g + K_d r, q̇_r = q̇_d + Λe, q̈_r = q̈_d + Λė, r = ė + Λe (Huo 3-67):
    ``compute`` operation for operation."""
    kd = G[L.G_KD]
    L.tracking_errors(q, qd, qr, qdr, qddr, G[L.G_LAMBDA], E, True)
    r = E[L.E_R]
    RK.slotine_li(D, D[0, K.GRAVITY : K.GRAVITY + 3], q, qd, E[L.E_QDR], E[L.E_QDDR], D, tau)
    for i in range(q.shape[0]):
        tau[i] = tau[i] + kd[i] * r[i]


@C.implements(C.PASSIVITY)
def _passivity(kind, law, q, qd, qr, qdr, qddr, tau):
    passivity(law[0], law[2], law[3], q, qd, qr, qdr, qddr, tau)


class Passivity(Controller):
    """τ = M(q)q̈_r + C(q, q̇)q̇_r + g(q) + K_d r with q̇_r = q̇_d + Λe, r = ė + Λe (Huo C8, 3-67).

    Needs the Coriolis matrix itself (not only Cq̇), with Ṁ − 2C skew-symmetric.
    """

    COMPENSATES_FRICTION = True
    name = "passivity"
    FAMILY = F.MODEL
    KIND = C.PASSIVITY
    GAINS = "reference"
    formula = "Huo C8 (3-67)"
    USES_MODEL_TERMS = True
    REQUIRED_TERMS = frozenset({"coriolis_matrix"})
    PARAMETERS = (LAMBDA, KD_R)

    def _commit(self, cfg, changed, first) -> None:
        if first:
            self.err = TrackingErrors(self.n)

    def compute(self, t: float, state: State, reference: Reference) -> Array:
        err = self.err.of(state, reference, self.cfg.lam)
        tau = self.terms.reference_torque(state.q, state.qd, err.qd_r, err.qdd_r)
        return tau + self.cfg.kd * err.r

    def _compiled(self):
        if not isinstance(self.terms, LocalModelTerms):
            return None
        return C.compiled_law(self.KIND, self.terms.model, kd=self.cfg.kd, lam=self.cfg.lam)

    def _diagnostics(self) -> dict[str, Any]:
        return {"e": self.err.e.tolist(), "r": self.err.r.tolist()}
