"""Computed torque (Huo C4) with gains given directly, by LQR (C6) or by pole placement (C7)."""

from __future__ import annotations

from typing import Any

import numpy as np

from robot_control.control import compiled as C
from robot_control.control import families as F
from robot_control.control import law_kernels as L
from robot_control.control.base import Config, Controller, Reference, State, refuse
from robot_control.control.errors import TrackingErrors
from robot_control.control.gain_design import check_pole_pairs, lqr_gains, pole_placement_gains
from robot_control.control.model_terms import LocalModelTerms
from robot_control.control.parameters import ParamSpec
from robot_control.control.pd import PD_GAINS
from robot_control.dynamics import kernels as K

Array = np.ndarray


@K.entry_point
def computed_torque(D, G, E, q, qd, qr, qdr, qddr, tau):
    """τ = M(q̈_d + K_d ė + K_p e) + C q̇ + g (Huo 3-31) in one inverse-dynamics call: ``compute``
    operation for operation."""
    n = q.shape[0]
    kp, kd = G[L.G_KP], G[L.G_KD]
    L.tracking_errors(q, qd, qr, qdr, qddr, G[L.G_LAMBDA], E, False)
    e, ed, tmp = E[L.E_E], E[L.E_ED], E[L.E_TMP]
    for i in range(n):
        tmp[i] = kd[i] * ed[i]
        tmp[i] = tmp[i] + kp[i] * e[i]
        tmp[i] = tmp[i] + qddr[i]
    K.inverse_dynamics_kernel(D, q, qd, tmp, None, tau)


@C.implements(C.COMPUTED_TORQUE)
def _computed_torque(kind, law, q, qd, qr, qdr, qddr, tau):
    computed_torque(law[0], law[2], law[3], q, qd, qr, qdr, qddr, tau)


class ComputedTorque(Controller):
    """τ = M(q)(q̈_d + K_d ė + K_p e) + C(q, q̇)q̇ + g(q) → ë + K_d ė + K_p e = 0 (Huo C4, 3-31).

    ``gain_design`` picks where K_p, K_d come from: ``direct`` (kp, kd), ``lqr`` (Huo C6: per
    joint Q = diag(q₁, q₂), R₀ = r) or ``pole_placement`` (Huo C7, Freund: the two closed-loop
    poles of each joint). The law evaluates M q̈* + C q̇ + g in one inverse-dynamics call.
    """

    COMPENSATES_FRICTION = True
    name = "computed_torque"
    FAMILY = F.MODEL
    KIND = C.COMPUTED_TORQUE
    GAINS = "acceleration"
    formula = "Huo C4 (3-31), C6 (3-49…3-54), C7 (3-66)"
    USES_MODEL_TERMS = True
    PARAMETERS = (
        ParamSpec("gain_design", "string", "direct", "where K_p, K_d come from",
                  choices=("direct", "lqr", "pole_placement")),
        *PD_GAINS,
        ParamSpec("lqr_q1", "double_array", 100.0, "LQR weight q₁ on e per joint (C6)",
                  lower=0.0, strict=True, size="joint"),
        ParamSpec("lqr_q2", "double_array", 1.0, "LQR weight q₂ on ė per joint (C6)",
                  lower=0.0, size="joint"),
        ParamSpec("lqr_r", "double_array", 1.0, "LQR weight r on the input per joint (C6)",
                  lower=0.0, strict=True, size="joint"),
        ParamSpec("poles_real", "double_array", -10.0,
                  "real parts of the two closed-loop poles of each joint (C7), 2 per joint",
                  size="state"),
        ParamSpec("poles_imag", "double_array", 0.0,
                  "imaginary parts of the poles (C7); a complex pole needs its conjugate",
                  size="state"),
    )

    def _prepare(self, model, values) -> Config:
        cfg = super()._prepare(model, values)
        if values["gain_design"] == "lqr":
            cfg.kp, cfg.kd = lqr_gains(values["lqr_q1"], values["lqr_q2"], values["lqr_r"])
        elif values["gain_design"] == "pole_placement":
            why = check_pole_pairs(values["poles_real"], values["poles_imag"])
            if why is not None:
                raise refuse("poles_real", why)
            cfg.kp, cfg.kd = pole_placement_gains(values["poles_real"], values["poles_imag"])
        return cfg

    def _commit(self, cfg, changed, first) -> None:
        if first:
            self.err = TrackingErrors(self.n)
            self._qdd_cmd = np.zeros(self.n)

    def compute(self, t: float, state: State, reference: Reference) -> Array:
        err = self.err.of(state, reference)
        a = self._qdd_cmd
        np.multiply(self.cfg.kd, err.ed, out=a)
        a += self.cfg.kp * err.e
        a += reference.qdd  # q̈* = q̈_d + K_d ė + K_p e
        return self.terms.inverse_dynamics(state.q, state.qd, a)

    def _compiled(self):
        if not isinstance(self.terms, LocalModelTerms):
            return None
        return C.compiled_law(self.KIND, self.terms.model, self.cfg.kp, self.cfg.kd)

    def _diagnostics(self) -> dict[str, Any]:
        return {"kp": self.cfg.kp.tolist(), "kd": self.cfg.kd.tolist(),
                "e": self.err.e.tolist(), "ed": self.err.ed.tolist()}
