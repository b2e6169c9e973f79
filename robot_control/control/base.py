"""The one interface every control law implements (ros2_controllers' lifecycle, minus the bus).

Life of a law: ``configure(model, params, terms)`` validates and stores parameters and the model
terms source; ``reset(state, last_tau)`` re-initialises the law's own state before it takes over;
``update(t, state, reference)`` returns τ once per control period. ``set_parameters`` validates a
change against the whole parameter set and applies it only if every value passes.

Bumpless transfer: no law of Huo's chapter has an integrator whose state could absorb the jump
between the previous law's last torque and this law's first one, so ``reset(..., last_tau)``
records that jump and ``update`` adds it back with exponential decay (time constant
``bumpless_time_constant``); the first torque equals ``last_tau`` and the law's own torque takes
over within a few time constants. The decaying term is a bounded, vanishing disturbance, so it
does not change any law's stability argument.

Non-finite numbers: ``update`` refuses a non-finite state or reference (ValueError) before the law
sees it. If the law's torque or its evolving state (the attributes named in ``STATE``: estimates,
filters, integrators) turns non-finite anyway (an overflow), the law resets to its safe initial
state (``reset()``: the initial estimate), counts it in ``recoveries``, says why in
``last_recovery`` and answers from that state; only if that answer is non-finite too does
``update`` raise :class:`NonFiniteOutput`.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, ClassVar

import numpy as np

from robot_control.control.families import Family
from robot_control.control.law_kernels import (
    G_STRIBECK,
    G_VISCOUS,
    GROWS,
    S_CULPRIT,
    S_RECOVERIES,
    S_T_RECOVERY,
    S_TPREV,
    add_friction_feedforward,
)
from robot_control.control.model_terms import LocalModelTerms, ModelTerms
from robot_control.control.parameters import (
    ParameterError,
    ParamSpec,
    as_plain,
    validate_parameters,
)

Array = np.ndarray


class ConfigurationError(ValueError):
    """A law cannot run with the given model or model-terms source (not a parameter value)."""


class NonFiniteOutput(ValueError):
    """A law's torque is non-finite even from its safe initial state."""


@dataclass
class State:
    """Measured robot state at time t.

    ``qdd`` is a measured joint acceleration if a sensor provides one. ``wrench`` is what a
    force/torque sensor at the contact frame reports: the wrench (n, f) the environment exerts on
    the robot, base-frame axes, about the contact frame's origin (as the plant publishes it).
    """

    t: float
    q: Array
    qd: Array
    qdd: Array | None = None
    wrench: Array | None = None


@dataclass
class Reference:
    """Desired motion at time t: joint q_d, q̇_d, q̈_d (velocities/accelerations default to zero).

    Task-space laws may also take a Cartesian reference for their task frame: ``pose`` (4×4 world
    placement), ``twist`` (ω, v) and ``accel`` (ω̇, a: the classical acceleration of the frame
    origin), all in base-frame axes, angular first like the rest of the package. When absent they
    are derived from the joint reference by forward kinematics (when present, those laws ignore
    the joint reference). ``wrench`` is the desired wrench
    (n, f) the robot should exert on the environment (Huo's f_eᵈ), base-frame axes.
    """

    q: Array
    qd: Array | None = None
    qdd: Array | None = None
    pose: Array | None = None
    twist: Array | None = None
    accel: Array | None = None
    wrench: Array | None = None

    def __post_init__(self) -> None:
        self.q = np.asarray(self.q, dtype=float)
        self.qd = np.zeros_like(self.q) if self.qd is None else np.asarray(self.qd, dtype=float)
        self.qdd = np.zeros_like(self.q) if self.qdd is None else np.asarray(self.qdd, dtype=float)


class Config(SimpleNamespace):
    """A law's validated parameters plus the quantities derived from them (gains, P, bases…)."""


COMMON_PARAMETERS: tuple[ParamSpec, ...] = (
    ParamSpec("bumpless_time_constant", "double", 0.02,
              "decay time of the torque offset that makes a swap bumpless, s (0: no blending)",
              lower=0.0),
)


class Controller(ABC):
    """Base of every control law: parameters, model terms, bumpless reset, time bookkeeping.

    A law is one class in one module: it declares its ``name`` (the registry's: a class defined in
    a module of robot_control.control is built in; docs/laws.md), ``formula``, ``PARAMETERS``,
    its ``FAMILY`` (or ``VARIANTS``) in the robot × law matrix and the ``KIND`` of its compiled
    kernel, and implements ``compute`` (with ``_compiled`` beside it when it has a kernel). It may
    extend ``_prepare`` (derive gains from parameters, raising ParameterError), ``_commit`` (react
    to an accepted change), ``_reset`` and ``_diagnostics``.
    """

    name: ClassVar[str] = ""
    #: the seed formula implemented, e.g. "Huo C4 (3-31)"
    formula: ClassVar[str] = ""
    PARAMETERS: ClassVar[tuple[ParamSpec, ...]] = ()
    #: the law evaluates M, C, g through a ModelTerms source
    USES_MODEL_TERMS: ClassVar[bool] = False
    #: model terms beyond M, Cq̇, g that the law needs (e.g. {"coriolis_matrix"})
    REQUIRED_TERMS: ClassVar[frozenset[str]] = frozenset()
    #: attributes holding the law's evolving state (estimates, filters), checked to stay finite
    STATE: ClassVar[tuple[str, ...]] = ()
    #: units of the per-joint gains, for gains derived from the model (control/tuning.py):
    #: "torque" (K_p, K_d in N·m/rad), "acceleration" (on ë), "reference" (Λ, K_d on r), None
    GAINS: ClassVar[str | None] = None
    #: the law presses on the environment: it needs a desired wrench (control/requirements.py)
    NEEDS_FORCE_REFERENCE: ClassVar[bool] = False
    #: the law holds a nominal model, so it feeds that model's joint friction forward
    #: (law_kernels.add_friction_feedforward); a description's friction left to the feedback of a
    #: light joint (a wrist of 10⁻³ kg·m² against 1 N·m of Coulomb friction) is an error of radians
    COMPENSATES_FRICTION: ClassVar[bool] = False
    #: the family the robot × law matrix judges the law in (control/families.py); None: not in
    #: the matrix (the law needs what the stack does not give it: a force reference, a cell)
    FAMILY: ClassVar[Family | None] = None
    #: a law judged per variant instead: (label suffix, parameters, family) of each matrix row
    VARIANTS: ClassVar[tuple[tuple[str, dict, Family], ...]] = ()
    #: the kind code of the law's compiled kernel (control/compiled.py ``law_update``, returned
    #: by ``_compiled``); None: the law runs in Python only
    KIND: ClassVar[int | None] = None

    def __init__(self) -> None:
        self.model = None
        self.n = 0
        self.terms: ModelTerms | None = None
        self.params: dict[str, Any] = {}
        self.cfg = Config()
        self.dt = 0.0
        self._t_prev: float | None = None
        self._jump: Array | None = None
        self._offset: Array | None = None
        self._t_offset = 0.0
        self.recoveries = 0
        self.last_recovery = ""
        self._friction: Array | None = None

    @classmethod
    def matrix_rows(cls) -> list[tuple[str, dict, Family]]:
        """(label, extra parameters, family) of each row of this law in the robot × law matrix."""
        if cls.VARIANTS:
            return [(f"{cls.name}.{suffix}", dict(params), family)
                    for suffix, params, family in cls.VARIANTS]
        return [] if cls.FAMILY is None else [(cls.name, {}, cls.FAMILY)]

    # ------------------------------------------------------------------ parameters
    @classmethod
    def parameter_specs(cls) -> tuple[ParamSpec, ...]:
        return cls.PARAMETERS + COMMON_PARAMETERS

    def declared_parameters(self) -> list[ParamSpec]:
        """Parameter specs to declare (name, type, default, description, range, size)."""
        return list(self.parameter_specs())

    def default_parameters(self, n: int) -> dict[str, Any]:
        """Every parameter's default expanded for an n-joint model (what a node declares)."""
        return {k: as_plain(v) for k, v in
                validate_parameters(self.parameter_specs(), {}, n, self.task_dimension).items()}

    def task_dimension(self, values: dict[str, Any]) -> int | None:
        """Length of "task"-sized parameters for these values (task-space laws override)."""
        return None

    @property
    def configured(self) -> bool:
        return self.model is not None

    def configure(self, model, params: Mapping[str, Any] | None = None,
                  terms: ModelTerms | None = None) -> None:
        """Validate ``params`` (missing names take defaults) for ``model`` and make the law ready.

        ``terms`` is where M, C, g come from: by default the law's own copy of ``model`` through
        robot_control.dynamics; a node in ``dynamics_source: server`` mode passes an
        ExternalModelTerms fed from /dynamics/terms.
        """
        if terms is None and self.USES_MODEL_TERMS:
            terms = LocalModelTerms(model)
        if terms is not None:
            if terms.n != model.nq:
                raise ConfigurationError(
                    f"{self.name}: model terms are for {terms.n} joints, the model has {model.nq}"
                )
            missing = self.REQUIRED_TERMS - terms.provides
            if missing:
                raise ConfigurationError(
                    f"{self.name} needs {', '.join(sorted(missing))}, which the model terms "
                    f"source ({type(terms).__name__}) does not provide"
                )
        values = validate_parameters(
            self.parameter_specs(), dict(params or {}), model.nq, self.task_dimension
        )
        cfg = self._prepare(model, values)
        self.model, self.n, self.terms = model, model.nq, terms
        self.params = values
        self.cfg = cfg
        self._commit(cfg, set(values), first=True)
        self._friction = self._friction_rows()
        self.reset()

    def set_parameters(self, updates: Mapping[str, Any]) -> None:
        """Apply a change atomically: all of ``updates`` is validated first; on error nothing changes."""
        self._require_configured()
        merged = {**self.params, **dict(updates)}
        values = validate_parameters(self.parameter_specs(), merged, self.n, self.task_dimension)
        cfg = self._prepare(self.model, values)
        self.params = values
        self.cfg = cfg
        self._commit(cfg, set(updates), first=False)
        self._friction = self._friction_rows()

    def get_parameters(self) -> dict[str, Any]:
        """Current parameter values as plain Python values."""
        return {k: as_plain(v) for k, v in self.params.items()}

    def _prepare(self, model, values: dict[str, Any]) -> Config:
        """Derived configuration for ``values``; raise ParameterError to refuse. Must not mutate self."""
        cfg = Config(**values)
        if "lambda" in values:
            cfg.lam = values["lambda"]  # Λ; "lambda" is a Python keyword
        return cfg

    def _commit(self, cfg: Config, changed: set[str], first: bool) -> None:
        """React to an accepted configuration (e.g. resize an estimate when the basis changed)."""
        return None

    def compensates_friction(self) -> bool:
        """Whether this law, as configured, feeds its model's friction forward."""
        return self.COMPENSATES_FRICTION

    def _friction_rows(self) -> Array | None:
        """The gains layout with the model's friction in its rows (law_kernels.G_VISCOUS …), or
        None when the law does not compensate friction or the model has none."""
        friction = np.asarray(self.model.friction, dtype=float)
        if not self.compensates_friction() or not np.any(friction[:, :3]):
            return None
        rows = np.zeros((GROWS, self.n))
        rows[G_VISCOUS : G_STRIBECK + 1] = friction.T
        return rows

    # ---------------------------------------------------------------------- running
    def reset(self, state: State | None = None, last_tau=None) -> None:
        """Re-initialise the law's state; with ``last_tau`` the first torque will equal it."""
        self._require_configured()
        self._t_prev = None
        self.dt = 0.0
        self._offset = None
        self._jump = None if last_tau is None else np.array(last_tau, dtype=float).reshape(self.n)
        self._reset(state)

    def _reset(self, state: State | None) -> None:
        """Law-specific re-initialisation (estimates, filters)."""
        return None

    def continue_from(self, last_tau) -> None:
        """Make the next torque equal ``last_tau``, decaying into the law's own as after a
        bumpless reset, but keep the law's state (estimates, filters): for a gain change."""
        self._require_configured()
        self._jump = np.array(last_tau, dtype=float).reshape(self.n)

    def update(self, t: float, state: State, reference: Reference) -> Array:
        """τ for the measured ``state`` and desired ``reference`` at time ``t``."""
        self._require_configured()
        n = self.n
        if np.shape(state.q) != (n,) or np.shape(state.qd) != (n,) or np.shape(reference.q) != (n,):
            raise ValueError(
                f"{self.name}: state q, q̇ and reference q must have length {n}, got "
                f"{np.shape(state.q)}, {np.shape(state.qd)}, {np.shape(reference.q)}"
            )
        if not (_finite(state.q) and _finite(state.qd) and _finite(reference.q)
                and _finite(reference.qd) and _finite(reference.qdd)):
            raise ValueError(f"{self.name}: non-finite state or reference refused")
        t = float(t)
        self.dt = 0.0 if self._t_prev is None else max(0.0, t - self._t_prev)
        self._t_prev = t
        tau = self._finite_torque(t, state, reference)
        if self._jump is not None:  # first update after a bumpless reset: the torque applied,
            # returned as is (law + (jump − law) can miss it by an ulp)
            jump = self._jump
            self._offset, self._t_offset, self._jump = jump - tau, t, None
            if self.params["bumpless_time_constant"] > 0.0:
                return jump.copy()
        if self._offset is not None:
            T = self.params["bumpless_time_constant"]
            decay = 0.0 if T <= 0.0 else math.exp(-(t - self._t_offset) / T)
            if decay < 1e-9:
                self._offset = None
            else:
                tau = tau + decay * self._offset
        return tau

    def _finite_torque(self, t: float, state: State, reference: Reference) -> Array:
        """The law's torque; if it or the law's state is non-finite, reset and answer again."""
        tau = self._with_friction(self.compute(t, state, reference), reference)
        culprit = self._non_finite(tau)
        if culprit is None:
            return tau
        self.recoveries += 1
        self.last_recovery = self._recovery_note(culprit, t)
        self.reset()
        self._t_prev = t
        tau = self._with_friction(self.compute(t, state, reference), reference)
        if self._non_finite(tau) is not None:
            raise NonFiniteOutput(f"{self.name}: torque is non-finite even from the initial "
                                  "state")
        return tau

    def _with_friction(self, tau, reference: Reference) -> Array:
        """The law's τ plus the model's friction at the reference velocity (a new array)."""
        tau = np.asarray(tau, dtype=float)
        if self._friction is None:
            return tau
        tau = np.array(tau, dtype=float)  # compute may return the law's own buffer
        add_friction_feedforward(self._friction, np.ascontiguousarray(reference.qd, dtype=float),
                                 tau)
        return tau

    def _recovery_note(self, culprit: str, t: float) -> str:
        """What ``last_recovery`` says after a reset from a non-finite quantity."""
        return f"{self.name}: {culprit} turned non-finite at t = {t:.6g} s; reset to the initial state"

    def _non_finite(self, tau: Array) -> str | None:
        """Name of the first non-finite quantity among τ and the ``STATE`` attributes, or None."""
        if not _finite(tau):
            return "the torque"
        for name in self.STATE:
            value = getattr(self, name)
            if not _finite(np.ravel(value)):
                return name
        return None

    @abstractmethod
    def compute(self, t: float, state: State, reference: Reference) -> Array:
        """The law's torque (without the bumpless offset)."""

    # ------------------------------------------------------------- compiled form
    def compiled(self):
        """This law's update as a ``control.compiled.CompiledLaw`` for the offline simulation, or
        None when it must run in Python (no compiled form, external model terms, a bumpless
        offset pending)."""
        self._require_configured()
        if self._jump is not None or self._offset is not None:
            return None
        # a subclass that changes compute() must not inherit its parent's compiled form
        owner = next(c for c in type(self).__mro__ if "_compiled" in vars(c))
        if owner is Controller or vars(owner).get("compute") is not type(self).compute:
            return None
        spec = self._compiled()
        if spec is not None and self._friction is not None:
            spec.gains[G_VISCOUS : G_STRIBECK + 1] = self._friction[G_VISCOUS : G_STRIBECK + 1]
        if spec is not None:  # where update() left off: the previous time and the recoveries
            spec.scalars[S_TPREV] = math.nan if self._t_prev is None else self._t_prev
            spec.scalars[S_RECOVERIES] = self.recoveries
        return spec

    def _compiled(self):
        """The law's CompiledLaw, if its torque is pure math over its own model."""
        return None

    def finish_compiled(self, spec, t_last: float, t_before: float | None) -> None:
        """After a compiled run: take the last errors and time as if ``update`` had run."""
        self._t_prev = float(t_last)
        self.dt = 0.0 if t_before is None else max(0.0, t_last - t_before)
        err = getattr(self, "err", None)
        if err is not None:
            for name, row in (("e", 0), ("ed", 1), ("r", 2), ("qd_r", 3), ("qdd_r", 4)):
                getattr(err, name)[:] = spec.errors[row]
        s = spec.scalars
        if s[S_RECOVERIES] > self.recoveries:
            self.recoveries = int(s[S_RECOVERIES])
            culprit = (("the torque",) + self.STATE)[int(s[S_CULPRIT])]
            self.last_recovery = self._recovery_note(culprit, float(s[S_T_RECOVERY]))
        self._finish_compiled(spec)

    def _finish_compiled(self, spec) -> None:
        """Take law-specific results of a compiled run (state kept outside its arrays)."""
        return None

    def diagnostics(self) -> dict[str, Any]:
        """Values worth publishing on /diagnostics (estimates, sliding variables, …)."""
        out: dict[str, Any] = {"controller": self.name, "formula": self.formula}
        out["bumpless_offset"] = 0.0 if self._offset is None else float(
            np.linalg.norm(self._offset))
        out["recoveries"] = self.recoveries
        out.update(self._diagnostics())
        return out

    def _diagnostics(self) -> dict[str, Any]:
        return {}

    def integrators(self) -> list[Array]:
        """Views of the state the law integrates (estimates, force integrals): what anti-windup
        holds still while the torque it asks is beyond the actuators' limits."""
        return []

    def _require_configured(self) -> None:
        if self.model is None:
            raise RuntimeError(f"controller '{self.name}' used before configure()")


def _finite(vector: Array) -> bool:
    """Every element of a 1-D array is finite: NaN and ±inf survive a sum (a sum that overflows,
    from values beyond ~1e307, counts as non-finite too). For the few values of a control step
    a Python sum is several times cheaper than numpy's per-call overhead."""
    return math.isfinite(sum(vector.tolist()))


def refuse(parameter: str, reason: str) -> ParameterError:
    """Shorthand for the error a law's ``_prepare`` raises for a cross-parameter check."""
    return ParameterError(parameter, reason)
