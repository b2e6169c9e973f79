"""The law a controller node runs: chosen by parameter, retuned and swapped bumplessly.

Shared by the ``controller`` and ``cell_controller`` nodes. The ``controller`` parameter selects
the law by registry name among the laws the node offers; each law's parameters are declared
namespaced by its name (``computed_torque.kp``). Every change is validated by the law itself
before it applies, so a refused value comes back with the law's reason and leaves the running law
untouched. A swap's law is made once, by the validation that accepts it, then compiled on a
worker thread while the running law keeps the loop, and it takes over at the next tick after it
is ready (nodes/law_swap.py: the one owner of the current law, its states and transitions); the
new law, like a law after an activation or a gain change, starts from the torque the plant
applies (see :meth:`LawHost.update`). A swap to a law that cannot hold the robot from what the stack gives it
(a force law without a force reference, a task that leaves joints uncontrolled at the measured
pose: control/requirements.py) is refused with that reason; the law a node starts with is
checked at its first state, and the node faults with the reason instead of letting the arm drift.
A torque beyond a joint's effort limit is saturated at the limit here, with the law's
integrators (adaptive estimates, force integrals) held still meanwhile (anti-windup), counted
and reported (WARN while it lasts; nodes/saturation.py); the status is ERROR ("gains too high
for the actuators?") only when the gains are judged the cause — saturation while the reference
is at rest and its gravity torque within the limits (real time; lockstep leaves saturation to
the plant, as the offline simulation does). Commands the plant would reject (beyond
IMPLAUSIBLE_FACTOR × a limit: only a joint without an effort limit can still send one) make the
status ERROR while they last.
"""

from __future__ import annotations

import pickle
import time

import numpy as np

from robot_control.bus import ParameterError
from robot_control.bus.param_table import declare
from robot_control.control.base import Reference, State
from robot_control.control.parameters import MAGNITUDE_MAX
from robot_control.control.parameters import ParameterError as LawParameterError
from robot_control.control.registry import create
from robot_control.control.requirements import refusal
from robot_control.control.tuning import derived_law_parameters
from robot_control.dynamics.compile_cache import CACHE_DIR, is_compiled
from robot_control.nodes.controller_parameters import LawHostParams
from robot_control.nodes.health import ERROR, OK, WARN
from robot_control.nodes.law_compiler import compile_law, kernel_name, refused, start_background
from robot_control.nodes.law_swap import LawSwap, Takeover
from robot_control.nodes.saturation import Saturation
from robot_control.nodes.validation import IMPLAUSIBLE_FACTOR, Plausible

#: the status is ERROR this long (s) after a command the plant rejects
REFUSED_WINDOW_S = 1.0
#: what a law refuses to configure with (bad parameters, a model it cannot drive)
CONFIGURE_ERRORS = (LawParameterError, ValueError)


def _declared_value(spec, value):
    """A law parameter's value in the ROS type its spec names (1 → 1.0 for a double)."""
    if spec.type == "double":
        return float(value)
    if spec.type == "double_array":
        return [float(v) for v in value]
    if spec.type == "integer":
        return int(value)
    return value


class LawHost:
    """Declares the laws' parameters on a node and holds the active law."""

    def __init__(self, node, model, laws: list[str], default_law: str, overrides: dict,
                 terms=None, lockstep: bool = False, rate: float | None = None) -> None:
        self.node = node
        self.log = node.get_logger()
        self.model = model
        self.n = model.nq
        self.terms = terms  # ExternalModelTerms fed from the bus, or None: the law's own model
        self.lockstep = lockstep
        self.rate = rate  # None: the laws' generic defaults (a scenario's run), else derived
        self.params = declare(node, LawHostParams, controller=default_law,
                              constraints={"controller": "one of: " + ", ".join(laws)})
        name = self.params.controller
        self.specs: dict[str, dict] = {}
        for law in laws:
            self._declare_law(law, overrides if law == default_law else {})
        if name not in self.specs:
            raise ParameterError(f"unknown controller '{name}'; available: " + ", ".join(laws))
        self.swap = LawSwap(self.log, name, self._warm_up)
        self.warmed: set[str] = set()  # laws whose update is compiled in this process
        self.compiler = None  # the background process compiling the other laws (law_compiler)
        self.uncompiled: dict[str, dict] = {}  # law -> parameters, for the background compile
        self.last_tau = np.zeros(self.n)
        self.updates = 0
        self.recoveries = 0
        #: what a new law would start from (control/requirements.py): the last measured q, and the
        #: desired wrench the node was given (it sets this attribute)
        self.measured_q: np.ndarray | None = None
        self.force_reference: np.ndarray | None = None
        self._made: tuple[dict, dict] | None = None  # (changes, laws made) of the last validation
        # the plant refuses a command beyond this (validation.Plausible): count the ones sent,
        # so the status says so rather than "running" while the plant holds
        self.plant_refuses = Plausible.of(model).effort
        self.saturation = Saturation(model)
        self.refused = 0  # commands the plant refuses, in all
        self.last_refused = -np.inf  # monotonic time of the last one
        node.add_parameter_validator(self._validate)
        node.add_parameter_listener(self._changed)

    # ------------------------------------------------------------------ making
    def _declare_law(self, law: str, overrides: dict) -> None:
        instance = create(law)
        defaults = instance.default_parameters(self.n)
        if self.rate is not None:  # gains that fit this robot (a params file may override)
            given = {name for name in (s.name for s in instance.declared_parameters())
                     if name in overrides or self.node.has_parameter_override(f"{law}.{name}")}
            defaults.update(derived_law_parameters(instance, self.model, self.rate,
                                                   given=given))
        self.specs[law] = {}
        for spec in instance.declared_parameters():
            value = overrides.get(spec.name, defaults.get(spec.name, spec.default))
            if value is None:
                continue
            rng = None
            if spec.type in ("double", "double_array"):
                rng = (-MAGNITUDE_MAX if spec.lower is None else spec.lower,
                       MAGNITUDE_MAX if spec.upper is None else spec.upper, 0.0)
            if spec.type == "double_array" and len(value) == 0:
                rng = None
            if rng is not None and spec.name not in overrides:
                value = self._within(law, spec.name, value, rng)
            self.node.declare_parameter(f"{law}.{spec.name}", _declared_value(spec, value),
                                        spec.full_description, floating_point_range=rng)
            self.specs[law][spec.name] = spec

    def _within(self, law: str, name: str, value, rng: tuple):
        """A derived default clipped into its parameter's range (a huge model's joint inertia can
        ask more than the range allows), with a warning naming it."""
        clipped = np.clip(np.asarray(value, dtype=float), rng[0], rng[1])
        if np.array_equal(clipped, np.asarray(value, dtype=float)):
            return value
        self.log.warning(f"derived {law}.{name} clipped to [{rng[0]:g}, {rng[1]:g}] for "
                         f"'{self.model.name}'")
        return clipped.tolist() if np.ndim(clipped) else float(clipped)

    def _law_params(self, law: str, changes: dict | None = None) -> dict:
        values = self.node.get_parameters(law)
        for name, value in (changes or {}).items():
            if name.startswith(law + "."):
                values[name[len(law) + 1:]] = value
        return values

    def _make_law(self, law: str, params: dict):
        instance = create(law)
        instance.configure(self.model, params, self.terms)
        return instance

    @property
    def law(self):
        """The current law (None before configure)."""
        return self.swap.law

    @property
    def name(self) -> str:
        """The current law's name."""
        return self.swap.name

    @property
    def selected(self) -> str:
        """The law the ``controller`` parameter names: the one running or the one being made."""
        return self.swap.selected

    @property
    def checked(self) -> bool:
        """The current law was checked against the first state."""
        return self.swap.checked

    def activate(self) -> None:
        """An activation: the law takes over from the torque the plant applies now."""
        self.swap.activate()

    def stalled(self) -> None:
        """The loop stood still (the plant held meanwhile): take over as after an activation."""
        self.swap.stalled()

    def configure(self, background_now: bool = True) -> None:
        """Make the selected law from the parameters and compile its update (CONFIGURE_ERRORS
        if the law refuses them); with ``precompile_laws`` load the other laws the cache holds
        too, so that a swap (a parameter callback, in the loop's thread) never waits for a
        compiler, and compile the rest in a background process (nodes/law_compiler.py): now, or
        (``background_now`` false: the loop will run on the normal scheduler, which a compile
        beside it costs deadlines) when ``compile_rest`` is called as the loop stops."""
        name = self.selected
        law = self._make_law(name, self._law_params(name))
        self.swap.install(law, name)
        self._warm_up(law, name)
        if not self.lockstep:
            self.saturation.warm_up()
        if not self.params.precompile_laws or self.terms is not None:
            return  # model terms from the bus: the laws compile nothing of their own
        until = time.monotonic() + self.params.precompile_budget
        uncompiled: dict[str, dict] = {}
        for law in self.specs:
            if law in self.warmed:
                continue
            params = self._law_params(law)
            if CACHE_DIR is not None and not is_compiled(kernel_name(law)):
                # not made here: making a law may compile too (an adaptive law's basis needs the
                # regressor), which would hold this configure for a law that is not running
                if not refused(law):
                    uncompiled[law] = params
                continue
            try:
                made = self._make_law(law, params)
            except CONFIGURE_ERRORS as exc:  # its parameters need setting first: at its swap
                self.log.debug(f"{law} not precompiled: {exc}")
                continue
            if time.monotonic() > until:
                self.log.info(f"precompile_budget of {self.params.precompile_budget:g} s spent: "
                              f"{law} and the laws after it are made at their swap")
                break
            else:
                self._warm_up(made, law)
        self.uncompiled = uncompiled
        if not uncompiled:
            return
        if background_now:
            self.compile_rest()
        else:
            self.log.info(f"{sorted(uncompiled)} compile in the background once the loop "
                          "stops (beside a loop on the normal scheduler a compile costs it "
                          "deadlines); a swap to one of them before compiles on the swap's "
                          "worker thread")

    def compile_rest(self) -> None:
        """Start the background compile of the laws configure left uncompiled (those the cache
        still lacks), unless one runs; it steps aside while a loop runs on the normal scheduler
        (nodes/loop_presence.py)."""
        left = {law: params for law, params in self.uncompiled.items()
                if not is_compiled(kernel_name(law))}
        self.uncompiled = left
        if not left or (self.compiler is not None and self.compiler.poll() is None):
            return
        try:
            self.compiler = start_background(self.model, left)
        except (OSError, pickle.PicklingError) as exc:  # the swaps will compile them
            self.log.warning(f"no background compile of {sorted(left)}: {exc}")
            return
        if self.compiler is not None:
            self.log.info(f"compiling {sorted(left)} in the background (pid "
                          f"{self.compiler.pid}, lowest priority); a swap to one of them before "
                          "it is done compiles on the swap's worker thread")

    def clear(self) -> None:
        """Cleanup: no law (configure makes the selected one again)."""
        self.swap.clear()

    def _warm_up(self, law, name: str) -> None:
        """One throw-away update: loading compiled kernels must not stall the first real tick."""
        if self.terms is not None or name in self.warmed:
            return  # terms arrive from the bus, or compiled already: nothing to compile here
        compile_law(self.log, self.model, name, law)
        self.warmed.add(name)

    # ------------------------------------------------------------- parameters
    def _validate(self, changes: dict) -> str | None:
        """Let the law(s) touched by a change decide; a refusal names the law's reason."""
        law = changes.get("controller", self.selected)
        if law not in self.specs:
            return f"unknown controller '{law}'; available: {', '.join(sorted(self.specs))}"
        touched = {name.split(".", 1)[0] for name in changes if "." in name} | {law}
        made = {}
        for name in touched:
            if name not in self.specs:
                continue
            try:
                made[name] = self._make_law(name, self._law_params(name, changes))
            except CONFIGURE_ERRORS as exc:
                return f"{name}: {exc}"
        self._made = (changes, made)  # the swap takes the law made here (_changed)
        if self.law is not None and (law != self.selected or any(k.startswith(law + ".")
                                                                 for k in changes)):
            # the law that would drive next
            return refusal(made[law], self.measured_q, self.force_reference)
        return None

    def first_state_refusal(self, q: np.ndarray) -> str | None:
        """Once per configuration, at the first state: why the configured law cannot drive
        from it (control/requirements.py), or None."""
        self.swap.checked = True
        return refusal(self.law, q, self.force_reference)

    def _changed(self, new: dict, old: dict) -> None:
        made, self._made = self._made, None
        law = new.get("controller", self.selected)
        if self.law is None:  # unconfigured: configure makes the law from the parameters
            self.swap.select(law)
            return
        if law != self.selected or (self.swap.next_name and any(k.startswith(law + ".")
                                                                for k in new)):
            # a swap (or new parameters of the law being made): to the law the validation of
            # these very changes made (else, a change no validation saw, made now); back to
            # the running law cancels the swap
            fresh = None
            if law != self.name:
                fresh = made[1].get(law) if made is not None and made[0] is new else None
                fresh = fresh or self._make_law(law, self._law_params(law))
            self.swap.swap(fresh, law)
            return
        gains = {k[len(law) + 1:]: v for k, v in new.items() if k.startswith(law + ".")}
        if gains:  # the running law keeps its state (estimates, filters)
            self.law.set_parameters(gains)
            self.swap.gains()
            self.log.info(f"{law}: parameters updated {sorted(gains)}")

    # ---------------------------------------------------------------- running
    def update(self, t: float, state: State, ref: Reference,
               measured_tau: np.ndarray | None) -> np.ndarray | None:
        """The law's torque for this state (after a pending take-over); None if the law failed
        (logged, throttled). ``measured_tau``: the torque the plant reports applying."""
        takeover = self.swap.tick()
        if takeover is not None:
            self._take_over(takeover, state, measured_tau)
        # lockstep reproduces the offline simulation, where the plant alone saturates
        integrators = [] if self.lockstep else self.law.integrators()
        before = [x.copy() for x in integrators]
        try:
            tau = self.law.update(t, state, ref)
        except (ValueError, np.linalg.LinAlgError) as exc:
            self.log.error(f"{self.name} failed: {exc}", throttle_duration_sec=1.0)
            return None
        finally:
            self._report_recovery()
        saturated = None if self.lockstep else self.saturation.clip(tau, ref)
        if saturated is not None:
            for x, x0 in zip(integrators, before, strict=True):
                x[...] = x0  # anti-windup: no integration on a tick the actuators cannot follow
            tau = saturated
        self.last_tau = tau
        self.measured_q = state.q
        self.updates += 1
        if not np.all(np.abs(tau) <= self.plant_refuses):
            self.refused += 1
            self.last_refused = time.monotonic()
        return tau

    def _take_over(self, kind: Takeover, state: State, measured_tau: np.ndarray | None) -> None:
        """Make the law's first torque (after an activation, a swap, a gain change) the one the
        plant is applying now (the effort of this joint state), decaying into the law's own.

        In lockstep a first activation leaves the law as configured (the offline simulation's
        start), and a swap or gain change continues from this node's last command."""
        if self.lockstep:
            tau = None if kind is Takeover.ACTIVATE else self.last_tau
        else:
            tau = measured_tau if measured_tau is not None else \
                (self.last_tau if self.updates else None)
        if kind is Takeover.GAINS:
            if tau is not None:
                self.law.continue_from(tau)
        else:
            self.law.reset(state, tau)

    def _report_recovery(self) -> None:
        """Log (as an error) and count a reset the law made because its state turned non-finite."""
        if self.law.recoveries:
            self.recoveries += self.law.recoveries
            self.law.recoveries = 0
            self.log.error(self.law.last_recovery, throttle_duration_sec=1.0)

    @property
    def running(self) -> bool:
        """A law is configured and the node is active."""
        return self.law is not None and self.node.is_active

    def status(self) -> tuple[int, str, dict]:
        """The node's /diagnostics status: the law, its updates and recoveries and, while it
        runs, its own scalar figures."""
        d = {"law": self.name, "updates": self.updates, "recoveries": self.recoveries}
        if self.swap.failed:
            d["swap_failed"] = self.swap.failed
        if not self.running:
            return OK, self.node.lifecycle_state.label, d
        try:
            d.update({k: v for k, v in self.law.diagnostics().items()
                      if isinstance(v, int | float | str | bool)})
        except Exception as exc:  # noqa: BLE001 - diagnostics must never stop control
            d["diagnostics_error"] = str(exc)
        d["recoveries"] = self.recoveries
        d["commands_beyond_plant_limit"] = self.refused
        d.update(self.saturation.diagnostics())
        if time.monotonic() - self.last_refused < REFUSED_WINDOW_S:
            # the truth: the plant holds instead of applying this law's commands
            return ERROR, (f"{self.name}: commands beyond {IMPLAUSIBLE_FACTOR:g}× the effort "
                           f"limit within the last {REFUSED_WINDOW_S:g} s, which the plant "
                           "rejects"), d
        if self.saturation.gains_blamed:
            return ERROR, (f"{self.name}: {self.saturation.gains_note}: gains too high for the "
                           "actuators?"), d
        if self.saturation.recent:
            return WARN, (f"running {self.name}, saturating at the effort limits "
                          f"({self.saturation.last_note})"), d
        return OK, f"running {self.name}", d
