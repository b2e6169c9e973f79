"""Compiled updates of the laws that are pure math over their own model (for the offline run).

PD (Huo C1), PD + gravity (C2), PD + set-point gravity (C3), computed torque (C4/C6/C7) and the
passivity law (C8) compute τ from (q, q̇, q_d, q̇_d, q̈_d) and their model alone. Each also
exposes that formula here, selected by a kind code, so ``sim.simulate`` can run whole control
periods in one compiled call. The arithmetic is the laws' own, operation for operation (their
``compute`` and this kernel give the same bits; test_simulate_compiled checks it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from robot_control.dynamics import kernels as K
from robot_control.dynamics import regressor_kernels as RK
from robot_control.dynamics.packing import kernel_data

PD, PD_GRAVITY, PD_FIXED_GRAVITY, COMPUTED_TORQUE, PASSIVITY = 1, 2, 3, 4, 5
# rows of the gains G: K_p, K_d, Λ
G_KP, G_KD, G_LAMBDA = 0, 1, 2
# rows of the errors E (TrackingErrors' e, ė, r, q̇_r, q̈_r) and a scratch row
E_E, E_ED, E_R, E_QDR, E_QDDR, E_TMP = 0, 1, 2, 3, 4, 5
EROWS = 6


@dataclass
class CompiledLaw:
    """A law's compiled form: kind, its model's data array, gains, and the errors it updates."""

    kind: int
    data: np.ndarray
    gains: np.ndarray
    errors: np.ndarray


def compiled_law(kind: int, model, kp=None, kd=None, lam=None) -> CompiledLaw:
    """Pack a law's gains for ``law_torque`` on ``model`` (the law's own model)."""
    n = model.nq
    G = np.zeros((3, n))
    for row, value in ((G_KP, kp), (G_KD, kd), (G_LAMBDA, lam)):
        if value is not None:
            G[row] = value
    return CompiledLaw(kind, kernel_data(model).D, G, np.zeros((EROWS, n)))


@njit(cache=True)
def law_torque(kind, D, G, E, q, qd, qr, qdr, qddr, tau):
    """τ of the law ``kind`` for measured (q, q̇) and reference (q_d, q̇_d, q̈_d), e = q_d − q."""
    n = q.shape[0]
    kp, kd, lam = G[G_KP], G[G_KD], G[G_LAMBDA]
    e, ed, tmp = E[E_E], E[E_ED], E[E_TMP]
    for i in range(n):
        e[i] = qr[i] - q[i]
        ed[i] = qdr[i] - qd[i]
    if kind == PASSIVITY:
        # τ = M q̈_r + C q̇_r + g + K_d r, q̇_r = q̇_d + Λe, q̈_r = q̈_d + Λė, r = ė + Λe (Huo 3-67)
        r, qd_r, qdd_r = E[E_R], E[E_QDR], E[E_QDDR]
        for i in range(n):
            r[i] = lam[i] * e[i]
            qd_r[i] = qdr[i] + r[i]
            r[i] = r[i] + ed[i]
            qdd_r[i] = lam[i] * ed[i]
            qdd_r[i] = qdd_r[i] + qddr[i]
        RK.slotine_li(D, D[0, K.GRAVITY : K.GRAVITY + 3], q, qd, qd_r, qdd_r, D, tau)
        for i in range(n):
            tau[i] = tau[i] + kd[i] * r[i]
    elif kind == COMPUTED_TORQUE:
        # τ = M(q̈_d + K_d ė + K_p e) + C q̇ + g (Huo 3-31)
        for i in range(n):
            tmp[i] = kd[i] * ed[i]
            tmp[i] = tmp[i] + kp[i] * e[i]
            tmp[i] = tmp[i] + qddr[i]
        K.inverse_dynamics_kernel(D, q, qd, tmp, None, tau)
    else:
        # τ = [g(q) | g(q_d)] + K_d ė + K_p e (Huo C1, C2, C3)
        for i in range(n):
            tau[i] = kd[i] * ed[i] + kp[i] * e[i]
        if kind == PD_GRAVITY:
            K.gravity_kernel(D, q, tmp)
        elif kind == PD_FIXED_GRAVITY:
            K.gravity_kernel(D, qr, tmp)
        if kind != PD:
            for i in range(n):
                tau[i] = tmp[i] + tau[i]
