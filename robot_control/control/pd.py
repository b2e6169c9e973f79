"""The PD family: independent joint PD (C1), with real-time gravity (C2), with fixed gravity (C3)."""

from __future__ import annotations

from typing import Any

import numpy as np

from robot_control.control import compiled as C
from robot_control.control import families as F
from robot_control.control import law_kernels as L
from robot_control.control.base import Controller, Reference, State
from robot_control.control.errors import TrackingErrors
from robot_control.control.model_terms import LocalModelTerms
from robot_control.control.parameters import KD_MAX, KP_MAX, ParamSpec
from robot_control.dynamics import kernels as K

Array = np.ndarray

PD_GAINS = (
    ParamSpec("kp", "double_array", 100.0, "position gain K_p per joint (bounded by the "
              "bandwidth an arm can use, ω ≤ 1000 rad/s)", lower=0.0, upper=KP_MAX, strict=True,
              size="joint"),
    ParamSpec("kd", "double_array", 20.0, "velocity gain K_d per joint (bounded by the "
              "bandwidth an arm can use)", lower=0.0, upper=KD_MAX, strict=True, size="joint"),
)


@K.entry_point
def pd_family(kind, D, G, E, q, qd, qr, qdr, qddr, tau):
    """τ = [g(q) | g(q_d)] + K_d ė + K_p e (Huo C1, C2, C3), e = q_d − q: ``compute`` of the PD
    family operation for operation."""
    n = q.shape[0]
    kp, kd = G[L.G_KP], G[L.G_KD]
    L.tracking_errors(q, qd, qr, qdr, qddr, G[L.G_LAMBDA], E, False)
    e, ed, tmp = E[L.E_E], E[L.E_ED], E[L.E_TMP]
    for i in range(n):
        tau[i] = kd[i] * ed[i] + kp[i] * e[i]
    if kind == C.PD_GRAVITY:
        K.gravity_kernel(D, q, tmp)
    elif kind == C.PD_FIXED_GRAVITY:
        K.gravity_kernel(D, qr, tmp)
    if kind != C.PD:
        for i in range(n):
            tau[i] = tmp[i] + tau[i]


@C.implements(C.PD, C.PD_GRAVITY, C.PD_FIXED_GRAVITY)
def _pd_family(kind, law, q, qd, qr, qdr, qddr, tau):
    pd_family(kind, law[0], law[2], law[3], q, qd, qr, qdr, qddr, tau)


class PD(Controller):
    """Independent joint PD, τ = K_d ė + K_p e (Huo C1, 3-3).

    With gravity the set-point steady state satisfies K_p e = G(q), i.e. e = K_p⁻¹G(q).
    """

    name = "pd"
    FAMILY = F.PD
    KIND = C.PD
    GAINS = "torque"
    formula = "Huo C1 (3-3)"
    PARAMETERS = PD_GAINS

    def _commit(self, cfg, changed, first) -> None:
        if first:
            self.err = TrackingErrors(self.n)

    def pd_torque(self, state: State, reference: Reference) -> Array:
        """K_d ė + K_p e."""
        err = self.err.of(state, reference)
        return self.cfg.kd * err.ed + self.cfg.kp * err.e

    def compute(self, t: float, state: State, reference: Reference) -> Array:
        return self.pd_torque(state, reference)

    def _compiled(self):
        return C.compiled_law(self.KIND, self.model, self.cfg.kp, self.cfg.kd)

    def _diagnostics(self) -> dict[str, Any]:
        return {"e": self.err.e.tolist(), "ed": self.err.ed.tolist()}


class PDGravity(PD):
    """PD with real-time gravity compensation, τ = G(q) + K_d ė + K_p e (Huo C2)."""

    COMPENSATES_FRICTION = True
    name = "pd_gravity"
    FAMILY = F.PD_GRAVITY
    KIND = C.PD_GRAVITY
    formula = "Huo C2"
    USES_MODEL_TERMS = True

    def compute(self, t: float, state: State, reference: Reference) -> Array:
        return self.terms.gravity(state.q) + self.pd_torque(state, reference)

    def _compiled(self):
        if not isinstance(self.terms, LocalModelTerms):
            return None
        return C.compiled_law(self.KIND, self.terms.model, self.cfg.kp, self.cfg.kd)


class PDFixedGravity(PD):
    """PD with gravity at the set point, τ = G(q_d) + K_d ė + K_p e (Takegaki–Arimoto, Huo C3).

    Set-point stability needs ∂G/∂q + K_p > 0 (Huo 3-25). G(q_d) is evaluated on the controller's
    own model (it is a constant of the set point, not a measured term) and recomputed only when
    q_d changes.
    """

    COMPENSATES_FRICTION = True
    name = "pd_fixed_gravity"
    FAMILY = F.PD_GRAVITY
    KIND = C.PD_FIXED_GRAVITY
    formula = "Huo C3 (3-25)"
    USES_MODEL_TERMS = True

    def _commit(self, cfg, changed, first) -> None:
        super()._commit(cfg, changed, first)
        if first:
            self._gravity_source = (self.terms if isinstance(self.terms, LocalModelTerms)
                                    else LocalModelTerms(self.model))
            self._q_set = np.full(self.n, np.nan)
            self._g_set = np.zeros(self.n)

    def set_point_gravity(self, q_d: Array) -> Array:
        """G(q_d), cached while the set point stays the same."""
        if not np.array_equal(q_d, self._q_set):
            self._g_set = self._gravity_source.gravity(q_d)
            self._q_set = np.array(q_d, dtype=float)
        return self._g_set

    def compute(self, t: float, state: State, reference: Reference) -> Array:
        return self.set_point_gravity(reference.q) + self.pd_torque(state, reference)

    def _compiled(self):
        return C.compiled_law(self.KIND, self._gravity_source.model, self.cfg.kp, self.cfg.kd)
