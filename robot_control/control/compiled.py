"""Compiled updates of the laws that are pure math over their own models (for the offline run).

PD (Huo C1), PD + gravity (C2), PD + set-point gravity (C3), computed torque (C4/C6/C7),
passivity (C8), the adaptive laws (C9 Craig, C10 Slotine–Li), sliding mode (C11), Spong's
robust law (C12) and the task-space laws (C5 resolved acceleration, C13 hybrid force, C14
impedance) compute τ from (q, q̇, q_d, q̇_d, q̈_d) — the task-space laws also from the Cartesian
reference and the sensed wrench written into their task array — their models and their own state. Each
registers that formula here from its own module, beside its ``compute`` (:func:`implements`),
selected by a kind code, so ``sim.simulate`` can run whole control periods in one compiled call.
The PD family, computed torque and passivity repeat their ``compute`` operation for operation;
the other laws' ``compute`` call the very kernels used here (control.adaptive_kernels,
control.robust_kernels, control.task_kernels) on the same arrays. test_compiled_laws checks
that both routes give the same bits for every law, test_simulate_compiled for whole runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numba import errors, literally, njit, types
from numba.extending import overload

from robot_control.control import law_kernels as L
from robot_control.control import task_kernels as KT
from robot_control.control.law_kernels import (  # noqa: F401  (the layout, re-exported)
    E_E,
    E_ED,
    E_QDDR,
    E_QDR,
    E_R,
    E_TMP,
    EROWS,
    G_KD,
    G_KP,
    G_LAMBDA,
    GROWS,
)
from robot_control.dynamics.packing import Data

PD, PD_GRAVITY, PD_FIXED_GRAVITY, COMPUTED_TORQUE, PASSIVITY = 1, 2, 3, 4, 5
ADAPTIVE, ADAPTIVE_CRAIG, SLIDING_MODE, ROBUST = 6, 7, 8, 9
RESOLVED_ACCELERATION, HYBRID_FORCE, IMPEDANCE = (KT.RESOLVED_ACCELERATION, KT.HYBRID_FORCE,
                                                  KT.IMPEDANCE)


@dataclass
class CompiledLaw:
    """A law's compiled form: kind, model data arrays, gains, per-joint and per-parameter state,
    regressor map, scratch, scalars (layout: control.law_kernels) and the task-space array
    (control.task_kernels; unused by the joint-space laws).

    ``data`` is the law's own model (its regressor, its kinematics), ``hat`` the model of its
    terms M̂, Ĉ, Ĝ.
    """

    kind: int
    data: np.ndarray
    hat: np.ndarray
    gains: np.ndarray
    errors: np.ndarray
    vectors: np.ndarray
    basis: np.ndarray
    scratch: np.ndarray
    regressor: np.ndarray
    scalars: np.ndarray
    task: np.ndarray

    @property
    def arrays(self) -> tuple:
        """The arrays in the order ``law_torque`` and ``law_update`` take them."""
        return (self.data, self.hat, self.gains, self.errors, self.vectors, self.basis,
                self.scratch, self.regressor, self.scalars, self.task)


def vector(x) -> np.ndarray:
    """x as a C-contiguous float64 vector: itself when it already is one (the hot path), so a
    kernel sees one argument type and compiles once."""
    if type(x) is np.ndarray and x.dtype == np.float64 and x.flags.c_contiguous:
        return x
    return np.ascontiguousarray(x, dtype=np.float64)


def law_arrays(kind: int, model, hat=None, basis=None) -> CompiledLaw:
    """Zeroed arrays of a law ``kind`` on ``model`` (terms from ``hat``, default the same model)
    with parameter vectors in ``basis`` (a regressor map, 10n × m; none: m = 1, unused)."""
    n = model.nq
    B = np.zeros((10 * n, 1)) if basis is None else np.array(basis, dtype=float, order="C")
    m = B.shape[1]
    s = np.zeros(L.SSLOTS)
    s[L.S_TPREV] = math.nan
    # the law's own data arrays (no other user writes them); the adaptive laws write the model of
    # their estimate, θ = B p̂, into a terms array of their own
    data = Data(model).D
    terms = (Data(model).D if kind == ADAPTIVE_CRAIG or kind == ADAPTIVE
             else data if hat is None else Data(hat).D)
    return CompiledLaw(kind, data, terms,
                       np.zeros((GROWS, n)), np.zeros((EROWS, n)), np.zeros((L.VROWS, m)), B,
                       np.zeros(L.scratch_shape(n, m)), np.zeros((n, 10 * n)), s,
                       np.zeros(KT.task_shape(n)))


def task_inputs(A: np.ndarray, reference, wrench) -> None:
    """Write a task-space law's inputs into its task array: the Cartesian reference (pose,
    twist, acceleration, each optional), the desired wrench and the sensed ``wrench`` (or None)."""
    s = A[KT.TK_SCALAR]
    s[KT.TS_HAS_POSE] = reference.pose is not None
    if reference.pose is not None:
        A[KT.TK_POSE : KT.TK_POSE + 4, :4] = reference.pose
    for slot, value, cols in ((KT.TS_HAS_TWIST, reference.twist, slice(0, 6)),
                              (KT.TS_HAS_ACCEL, reference.accel, slice(6, 12))):
        s[slot] = value is not None
        if value is not None:
            A[KT.TK_RATES, cols] = value
    s[KT.TS_HAS_DESIRED] = reference.wrench is not None
    if reference.wrench is not None:
        A[KT.TK_WRENCH, 6:12] = reference.wrench
    s[KT.TS_HAS_WRENCH] = wrench is not None
    A[KT.TK_WRENCH, :6] = 0.0 if wrench is None else wrench


def gain_block(law: CompiledLaw) -> np.ndarray:
    """The n × 2n gain block of the scratch (BᵀR of Craig's law, [P₂ᵀ, P₃] of Spong's)."""
    n = law.gains.shape[1]
    return law.scratch[4 * n : 5 * n, : 2 * n]


def compiled_law(kind: int, model, kp=None, kd=None, lam=None) -> CompiledLaw:
    """Pack a joint law's gains for ``law_torque`` on ``model`` (the law's own model)."""
    law = law_arrays(kind, model)
    for row, value in ((G_KP, kp), (G_KD, kd), (G_LAMBDA, lam)):
        if value is not None:
            law.gains[row] = value
    return law


def law_torque(kind, law, q, qd, qr, qdr, qddr, tau):
    """τ of the law ``kind`` (its arrays ``law`` = CompiledLaw.arrays, Δt in s[S_DT]).

    Compiled code only, for a literal ``kind`` (``law_update`` makes it one): each kind compiles
    and caches its own code, so a run compiles and loads only the law it uses.
    """
    raise TypeError("law_torque runs inside compiled code; call law_update from Python")


#: the implementation of each kind (``law_torque``'s body): each law module registers its own,
#: beside the law's ``compute`` (:func:`implements`)
_IMPLEMENTATIONS: dict[int, Callable] = {}


def implements(*kinds: int) -> Callable:
    """Register the decorated ``f(kind, law, q, qd, qr, qdr, qddr, tau)`` as ``law_torque`` of
    ``kinds`` (a kind has one implementation)."""
    def register(fn: Callable) -> Callable:
        for kind in kinds:
            if kind in _IMPLEMENTATIONS:
                raise ValueError(f"law kind {kind} has an implementation already: "
                                 f"{_IMPLEMENTATIONS[kind].__module__}")
            _IMPLEMENTATIONS[kind] = fn
        return fn
    return register


@overload(law_torque, jit_options={"cache": True})
def _law_torque(kind, law, q, qd, qr, qdr, qddr, tau):
    if not isinstance(kind, types.IntegerLiteral):
        raise errors.TypingError("law_torque needs a literal kind (numba.literally)")
    if kind.literal_value not in _IMPLEMENTATIONS:
        raise errors.TypingError(f"no law implements kind {kind.literal_value} (its module "
                                 "registers it: compiled.implements)")
    return _IMPLEMENTATIONS[kind.literal_value]


@njit(cache=True)
def law_reset(kind, law):
    """The law's safe initial state (``Controller.reset``): p̂ = p̂(0), rates, filters, gains zero,
    force integral zero and no task outputs yet."""
    E, V, s, A = law[3], law[4], law[8], law[9]
    if kind == ADAPTIVE or kind == ADAPTIVE_CRAIG:
        for j in range(V.shape[1]):
            V[L.V_P, j] = V[L.V_P0, j]
            V[L.V_RATE, j] = 0.0
    if kind == ADAPTIVE_CRAIG:
        E[L.E_ACC, :] = 0.0
        s[L.S_PRIMED] = 0.0
        s[L.S_SINGULAR] = 0.0
    elif kind == SLIDING_MODE or kind == ROBUST:
        E[L.E_GAIN, :] = 0.0
        s[L.S_RHO] = 0.0
    elif kind >= RESOLVED_ACCELERATION:
        A[KT.TK_OUT, :] = 0.0
        A[KT.TK_SCALAR, KT.TS_INTEGRAL] = 0.0
        A[KT.TK_SCALAR, KT.TS_NORMAL_FORCE] = 0.0
        A[KT.TK_SCALAR, KT.TS_MEASURED_FORCE] = np.nan


def reset(kind: int, law: tuple) -> None:
    """``law_reset`` for ``Controller.reset``: the same statements run by the interpreter. They are
    a few assignments, and loading their compiled form cost a fresh process ~1.5 ms before its
    first period; compiled code (``law_update``'s recovery) calls the compiled form."""
    law_reset.py_func(kind, law)


@njit(cache=True)
def non_finite(kind, law, tau):
    """Which quantity is non-finite: −1 none, 0 τ, then the law's STATE in order (p̂, p̂̇; the
    hybrid law's force integral)."""
    if not L.all_finite(tau):
        return 0
    if kind == ADAPTIVE or kind == ADAPTIVE_CRAIG:
        V = law[4]
        if not L.all_finite(V[L.V_P]):
            return 1
        if not L.all_finite(V[L.V_RATE]):
            return 2
    if kind == HYBRID_FORCE and not math.isfinite(law[9][KT.TK_SCALAR, KT.TS_INTEGRAL]):
        return 1
    return -1


@njit(cache=True)
def law_update(kind, law, t, q, qd, qr, qdr, qddr, tau):
    """``Controller.update`` of a compiled law at time t (Δt from s[S_TPREV]); if τ or the law's
    state turns non-finite, reset and answer again. False if τ is non-finite even then."""
    kind = literally(kind)
    s = law[8]
    s[L.S_DT] = 0.0 if math.isnan(s[L.S_TPREV]) else max(0.0, t - s[L.S_TPREV])
    s[L.S_TPREV] = t
    law_torque(kind, law, q, qd, qr, qdr, qddr, tau)
    L.add_friction_feedforward(law[2], qdr, tau)
    culprit = non_finite(kind, law, tau)
    if culprit < 0:
        return True
    s[L.S_RECOVERIES] += 1.0
    s[L.S_T_RECOVERY] = t
    s[L.S_CULPRIT] = culprit
    law_reset(kind, law)
    s[L.S_DT] = 0.0
    law_torque(kind, law, q, qd, qr, qdr, qddr, tau)
    L.add_friction_feedforward(law[2], qdr, tau)
    return non_finite(kind, law, tau) < 0
