"""The ``controller`` node: runs the law named by parameter ``controller`` on each joint state.

The reference, real time: the motion arrives once as quintic knots on
/controller/joint_trajectory (trajectory_msgs/JointTrajectory, header stamp = its start; read
reliable and transient local, so a controller started late gets the motion under way — a
publisher must offer transient local to reach it) and is evaluated at each state's stamp
(trajectory/schedule.py), as joint_trajectory_controller samples its trajectory; a motion takes
over at its start, and one whose first point is after time 0 starts from the reference then.
Until one has started the node holds the measured position. /controller/state (e, ė, τ) is
published at ``monitor_rate``; the tracking error of every tick goes into the /diagnostics
status (``rms_error``, ``max_error``, ``final_error``: JSON lists per joint).

Gains are parameters namespaced by law (``computed_torque.kp``); every change is validated by the
law itself before it applies, so a refused value comes back with the law's reason and leaves the
running law untouched. Changing ``controller`` swaps the law bumplessly (the new law starts from
the last torque). In lockstep the node answers the state at t_k only once it also holds the
reference (and, with ``dynamics_source: server``, the model terms) stamped t_k.

Every input is checked before it touches the node's state (nodes/validation.py): a joint state,
reference, wrench or model-terms message of the wrong size or names, with a non-finite or
implausible value, is dropped and counted (``dropped <topic>`` on /diagnostics) and the last good
one is kept. If the law's own state turns non-finite it resets to its initial estimate (the law
does that, control/base.py); the node logs it as an error and counts it (``recoveries``).

A managed node: configuring makes the law and compiles what its update needs; only while active
does it command (/joint_command and /controller/state are lifecycle publishers). Activation is
bumpless: the law starts from the torque the plant reports applying (its hold), and in real time
the reference is re-anchored at the measured state — the tracked reference starts at (q, q̇) and
joins the published one along a quintic over ``reference_blend_time`` — so a controller activated
mid-motion (after a deactivation) resumes without a jump in error or torque. A gain change is
bumpless too: the torque continues from the last one and decays into the law's new one.
"""

from __future__ import annotations

import json
import sys

import numpy as np

from robot_control.bus import ParameterError
from robot_control.bus.lifecycle import CallbackReturn
from robot_control.control.base import Reference, State
from robot_control.control.model_terms import ExternalModelTerms
from robot_control.control.parameters import MAGNITUDE_MAX
from robot_control.control.parameters import ParameterError as LawParameterError
from robot_control.control.registry import available, create
from robot_control.nodes.common import (
    ErrorStatistics,
    configure_failure,
    declare_common,
    run_node,
    warm_up,
)
from robot_control.nodes.convert import (
    TRAJECTORY_TOPIC,
    Messages,
    period_ns,
    read_terms,
    read_wrench,
    seconds,
    stamp_ns,
)
from robot_control.nodes.health import OK, NodeHealth
from robot_control.nodes.realtime import LoopDiscipline
from robot_control.nodes.validation import (
    DropLog,
    JointVectors,
    Rejected,
    check_terms,
    check_wrench,
)
from robot_control.trajectory import JointTrajectory, Quintic
from robot_control.trajectory.schedule import TrajectorySchedule

SOURCES = ("local", "server")
TRIGGERS = ("state", "timer")


def _declared_value(spec, value):
    """A law parameter's value in the ROS type its spec names (1 → 1.0 for a double)."""
    if spec.type == "double":
        return float(value)
    if spec.type == "double_array":
        return [float(v) for v in value]
    if spec.type == "integer":
        return int(value)
    return value


class ControllerNode:
    """Holds the active law and feeds it states, references, wrenches and model terms."""

    def __init__(self, node) -> None:
        self.node = node
        self.log = node.get_logger()
        common = declare_common(node)
        sc = common["scenario_obj"]
        self.model = sc.controller_model if sc is not None else common["model"]
        self.n = self.model.nq
        self.names = self.model.joint_names
        self.joints = JointVectors(self.model)
        self.drops = DropLog(self.log)
        self.lockstep = bool(common["lockstep"])
        default_law = sc.controller_type if sc is not None else "computed_torque"
        scenario_params = dict(sc.controller_params) if sc is not None else {}
        self.law_name = node.declare_parameter(
            "controller", default_law, "control law by registry name: " + ", ".join(available()),
            additional_constraints="one of: " + ", ".join(available()))
        self.source = node.declare_parameter(
            "dynamics_source", "local", "model terms from this node's model ('local') or from "
            "/dynamics/terms ('server')", read_only=True, additional_constraints="local | server")
        self.trigger = node.declare_parameter(
            "trigger", "state", "compute on each joint state ('state') or on a timer at rate "
            "('timer')", read_only=True, additional_constraints="state | timer")
        if self.source not in SOURCES or self.trigger not in TRIGGERS:
            raise ParameterError(f"dynamics_source must be one of {SOURCES} and trigger one of "
                                 f"{TRIGGERS}")
        self.specs: dict[str, dict] = {}
        for law in available():
            self._declare_law(law, scenario_params if law == default_law else {})
        if self.law_name not in self.specs:
            raise ParameterError(f"unknown controller '{self.law_name}'; available: "
                                 + ", ".join(available()))
        self.terms = ExternalModelTerms(self.n, with_coriolis_matrix=True) \
            if self.source == "server" else None
        self.blend_time = node.declare_parameter(
            "reference_blend_time", 1.0, "on activation (real time) the tracked reference starts "
            "at the measured state and joins the published one over this time, s",
            floating_point_range=(1e-3, 60.0))
        self.law = None  # made by on_configure
        self.loop = LoopDiscipline(node)
        node.add_parameter_validator(self._validate)
        node.add_parameter_listener(self._changed)
        self.m = Messages(node)
        self.pub_cmd = node.create_lifecycle_publisher("sensor_msgs/msg/JointState",
                                                       "/joint_command")
        self.pub_state = node.create_lifecycle_publisher("sensor_msgs/msg/JointState",
                                                         "/controller/state")
        self.monitor_rate = node.declare_parameter(
            "monitor_rate", 100.0, "real time: rate of /controller/state (for rqt, bags), Hz; "
            "0: none", floating_point_range=(0.0, 10000.0), read_only=True)
        node.create_subscription("sensor_msgs/msg/JointState", "/joint_states", self._on_state)
        if self.lockstep:  # the reference of each t_k, sampled by the trajectory generator
            node.create_subscription("trajectory_msgs/msg/JointTrajectory", "/joint_reference",
                                     self._on_reference)
        else:  # the motion as quintic knots, sampled here at each state's stamp
            node.create_subscription("trajectory_msgs/msg/JointTrajectory", TRAJECTORY_TOPIC,
                                     self._on_trajectory, qos="transient_local")
        node.create_subscription("geometry_msgs/msg/WrenchStamped", "/wrench", self._on_wrench)
        node.create_subscription("geometry_msgs/msg/WrenchStamped", "/force_reference",
                                 self._on_force_reference)
        if self.source == "server":
            node.create_subscription("std_msgs/msg/Float64MultiArray", "/dynamics/terms",
                                     self._on_terms)
        self.force_reference = sc.force_reference if sc is not None else None
        self.wrench = np.zeros(6)
        self.pending: tuple[int, np.ndarray, np.ndarray] | None = None
        self.references: dict[int, Reference] = {}  # lockstep: by stamp
        self.schedule = TrajectorySchedule(self.n)  # real time: the motions received
        self.hold_reference: Reference | None = None  # until there is one: hold
        self.errors = ErrorStatistics()  # while tracking the generator's reference
        self.monitor_period_ns = period_ns(self.monitor_rate) if self.monitor_rate > 0 else 0
        self.next_monitor_ns = 0
        self.terms_stamp = -1
        self.answer_from = 0  # real time: stamp of the activation; earlier states go unanswered
        self.last_tau = np.zeros(self.n)
        self.last_state: State | None = None
        self.measured_tau: np.ndarray | None = None  # the plant's applied τ (JointState effort)
        self.takeover: str | None = None  # "activate", "swap" or "gains": see _take_over
        self.anchor: Quintic | None = None  # reference offset decaying after an activation
        self.anchor_pending = False
        self.rate = common["rate"]
        self.timer = None
        self.updates = 0
        self.recoveries = 0
        self.health = NodeHealth(node, "controller", self._status, self.drops)

    # -------------------------------------------------------------- lifecycle
    def on_configure(self, previous) -> CallbackReturn:
        """Make the law and compile what its update needs."""
        try:
            self.law = self._make_law(self.law_name, self._law_params(self.law_name))
        except (LawParameterError, ValueError) as exc:
            return configure_failure(self.log, f"'{self.law_name}'", exc)
        self._warm_up(self.law, self.law_name)
        if not self.lockstep:  # the first motion must not stall a tick loading the sampler
            warm_up(self.log, "trajectory_sample", self._warm_up_sampling)
        self.errors = ErrorStatistics()
        self.loop.prepare()
        self.health.clear()
        self.log.info(f"controller '{self.law_name}' on '{self.model.name}' "
                      f"(terms: {self.source}, trigger: {self.trigger}): configured")
        return CallbackReturn.SUCCESS

    def on_activate(self, previous) -> CallbackReturn:
        """Take over bumplessly from the torque the plant applies now (see the module doc)."""
        self.takeover = "activate"
        self.anchor, self.anchor_pending = None, not self.lockstep
        # real time: the motion received (re-anchored at the measured state), else hold the
        # measured position until one comes
        self.hold_reference = None
        self.pending = None
        if not self.lockstep:
            self.loop.start()
        if self.trigger == "timer":
            self.timer = self.node.create_timer(1.0 / self.rate, self._on_timer)
        # answer only states measured from now on, not those queued while this ran
        self.answer_from = 0 if self.lockstep else int(self.node.now() * 1e9)
        return CallbackReturn.SUCCESS

    def on_deactivate(self, previous) -> CallbackReturn:
        """Stop commanding: the plant's safe behaviour takes over once commands stop."""
        self._stop_timer()
        return CallbackReturn.SUCCESS

    def on_cleanup(self, previous) -> CallbackReturn:
        self.law = None
        return CallbackReturn.SUCCESS

    def on_shutdown(self, previous) -> CallbackReturn:
        self._stop_timer()
        return CallbackReturn.SUCCESS

    def on_error(self, previous) -> CallbackReturn:
        self._stop_timer()
        return CallbackReturn.SUCCESS

    def _stop_timer(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self.loop.stop()

    # ------------------------------------------------------------- parameters
    def _declare_law(self, law: str, overrides: dict) -> None:
        instance = create(law)
        defaults = instance.default_parameters(self.n)
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
            self.node.declare_parameter(f"{law}.{spec.name}", _declared_value(spec, value),
                                        spec.full_description, floating_point_range=rng)
            self.specs[law][spec.name] = spec

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

    def _warm_up(self, law, name: str) -> None:
        """One throw-away update: loading compiled kernels must not stall the first real tick
        (Newton–Euler first, under its shared lock: the plant's hold needs it too)."""
        if self.source == "server":
            return  # terms arrive from the bus; nothing to compile here
        from robot_control import dynamics as dyn

        q = np.clip(np.zeros(self.n), self.model.lower, self.model.upper)
        zeros = np.zeros(self.n)
        warm_up(self.log, "inverse_dynamics",
                lambda: dyn.inverse_dynamics(self.model, q, zeros, zeros))

        def update() -> None:
            try:
                law.update(0.0, State(0.0, q, zeros, wrench=np.zeros(6)), Reference(q))
            except (ValueError, np.linalg.LinAlgError) as exc:
                self.log.debug(f"warm-up skipped: {exc}")

        warm_up(self.log, f"law.{name}", update)
        law.reset()

    def _warm_up_sampling(self) -> None:
        q = np.clip(np.zeros(self.n), self.model.lower, self.model.upper)
        trial = TrajectorySchedule(self.n)
        trial.add(0, JointTrajectory([0.0, 1.0], [q, q]))
        trial.sample(500_000_000)

    def _validate(self, changes: dict) -> str | None:
        """Let the law(s) touched by a change decide; a refusal names the law's reason."""
        law = changes.get("controller", self.law_name)
        if law not in self.specs:
            return f"unknown controller '{law}'; available: {', '.join(sorted(self.specs))}"
        touched = {name.split(".", 1)[0] for name in changes if "." in name} | {law}
        for name in touched:
            if name not in self.specs:
                continue
            try:
                self._make_law(name, self._law_params(name, changes))
            except (LawParameterError, ValueError) as exc:
                return f"{name}: {exc}"
        return None

    def _changed(self, new: dict, old: dict) -> None:
        law = new.get("controller", self.law_name)
        if self.law is None:  # unconfigured: configure makes the law from the parameters
            self.law_name = law
            return
        if law != self.law_name:
            fresh = self._make_law(law, self._law_params(law))
            self._warm_up(fresh, law)  # compile before it takes over, not in its first tick
            self.log.info(f"controller swapped: {self.law_name} → {law}")
            self.law, self.law_name, self.takeover = fresh, law, "swap"
            return
        gains = {k[len(law) + 1:]: v for k, v in new.items() if k.startswith(law + ".")}
        if gains:  # the running law keeps its state (estimates, filters)
            self.law.set_parameters(gains)
            self.takeover = self.takeover or "gains"
            self.log.info(f"{law}: parameters updated {sorted(gains)}")

    # ----------------------------------------------------------------- inputs
    def _on_reference(self, msg) -> None:
        try:
            q, qd, qdd = self._read_reference(msg)
        except Rejected as exc:
            self.drops.drop("/joint_reference", str(exc))
            return
        self.references[stamp_ns(msg.header.stamp)] = Reference(q, qd, qdd,
                                                                 wrench=self.force_reference)
        if len(self.references) > 100:
            for key in sorted(self.references)[:50]:
                del self.references[key]
        self._try_compute()

    def _read_reference(self, msg):
        """(q_d, q̇_d or None, q̈_d or None) of a one-point JointTrajectory, checked."""
        if not msg.points:
            raise Rejected("no point")
        p, order = msg.points[0], self.joints.order(msg.joint_names)
        return (self.joints.vector(p.positions, order, "position"),
                self.joints.optional(p.velocities, order, "velocity"),
                self.joints.optional(p.accelerations, order, "acceleration"))

    def _on_trajectory(self, msg) -> None:
        """A motion as quintic knots (trajectory/schedule.py): it runs from its header stamp on
        (0: on receipt); a first point after time 0 starts from the reference at that stamp,
        as joint_trajectory_controller does."""
        start = stamp_ns(msg.header.stamp) or int(self.node.now() * 1e9)
        try:
            times, q, qd, qdd = self.joints.points(msg)
            motion = JointTrajectory(times, q, qd, qdd)
            if times[0] > 0.0:
                motion = motion.starting_from(*self._reference_at(start), 0.0)
        except ValueError as exc:  # Rejected, or knots that make no trajectory
            self.drops.drop(TRAJECTORY_TOPIC, str(exc))
            return
        self.schedule.add(start, motion)

    def _reference_at(self, ns: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q_d, q̇_d, q̈_d) at stamp ns: the motion's, or at rest where the arm was measured."""
        sample = self.schedule.sample(ns)
        if sample is not None:
            return sample[0].copy(), sample[1].copy(), sample[2].copy()
        measured = self.pending[1] if self.pending is not None else \
            (self.last_state.q if self.last_state is not None else None)
        if measured is None:
            raise Rejected("a trajectory whose first point is ahead needs a state to start from")
        return measured.copy(), np.zeros(self.n), np.zeros(self.n)

    def _on_wrench(self, msg) -> None:
        try:
            self.wrench = check_wrench(read_wrench(msg))
        except Rejected as exc:
            self.drops.drop("/wrench", str(exc))

    def _on_force_reference(self, msg) -> None:
        try:
            self.force_reference = check_wrench(read_wrench(msg))
        except Rejected as exc:
            self.drops.drop("/force_reference", str(exc))

    def _on_terms(self, msg) -> None:
        try:
            ns, M, c, g, C = check_terms(*read_terms(msg), self.n)
            self.terms.push(M, c, g, C, stamp=seconds(ns))
        except ValueError as exc:  # Rejected, or a layout that is not ours
            self.drops.drop("/dynamics/terms", str(exc))
            return
        self.terms_stamp = ns
        self._try_compute()

    def _on_state(self, msg) -> None:
        try:
            q, qd = self.joints.state(msg)
            tau = self.joints.optional(msg.effort, self.joints.order(msg.name), "effort")
        except Rejected as exc:
            self.drops.drop("/joint_states", str(exc))
            return
        ns = stamp_ns(msg.header.stamp)
        if ns < self.answer_from:
            return  # measured before this activation (queued while it ran): not ours to answer
        self.pending = (ns, q, qd)
        if tau is not None:
            self.measured_tau = tau
        if self.trigger == "state":
            self._try_compute()

    def _on_timer(self) -> None:
        self._try_compute()

    # ---------------------------------------------------------------- compute
    def _try_compute(self) -> None:
        if self.pending is None or not self.node.is_active:
            return
        ns, q, qd = self.pending
        if self.source == "server" and self.terms_stamp != ns:
            return
        if self.lockstep:
            ref = self.references.get(ns)
            if ref is None:
                return
        else:
            ref = self._scheduled(ns)
            if ref is None:  # nothing to track yet: hold where the robot was at activation
                if self.hold_reference is None:
                    self.hold_reference = Reference(q.copy(), wrench=self.force_reference)
                ref = self.hold_reference
        tracking = ref is not self.hold_reference
        if self.force_reference is not None:
            ref.wrench = self.force_reference
        t = seconds(ns)
        if tracking and (self.anchor_pending or self.anchor is not None):
            ref = self._anchored(t, ref, q, qd)
        state = State(t, q, qd, wrench=self.wrench.copy())
        if self.takeover is not None:
            self._take_over(state)
        try:
            tau = self.law.update(t, state, ref)
        except (ValueError, np.linalg.LinAlgError) as exc:
            self.log.error(f"{self.law_name} failed: {exc}", throttle_duration_sec=1.0)
            return
        finally:
            self._report_recovery()
        self.pending = None
        self.references.pop(ns, None)
        self.last_state, self.last_tau = state, tau
        self.updates += 1
        self.pub_cmd.publish(self.m.joint_state(ns, self.names, tau=tau))
        e = ref.q - q
        if tracking:
            self.errors.add(self.names, e)
        if self.lockstep or (self.monitor_period_ns and ns >= self.next_monitor_ns):
            self.next_monitor_ns = (ns // self.monitor_period_ns + 1) * self.monitor_period_ns \
                if self.monitor_period_ns else 0
            self.pub_state.publish(self.m.joint_state(ns, self.names, e, ref.qd - qd, tau))
        self.loop.after_tick()
        self.health.publish_if_due()  # the loop's slack: the command is out

    def _scheduled(self, ns: int) -> Reference | None:
        """The received motion at stamp ns (arrays this node reuses), None before it starts."""
        sample = self.schedule.sample(ns)
        if sample is None:
            return None
        return Reference(sample[0], sample[1], sample[2], wrench=self.force_reference)

    def _take_over(self, state: State) -> None:
        """Make the law's first torque (after an activation, a swap, a gain change) the one the
        plant is applying now (the effort of this joint state), decaying into the law's own.

        In lockstep a first activation leaves the law as configured (the offline simulation's
        start), and a swap or gain change continues from this node's last command."""
        kind, self.takeover = self.takeover, None
        if self.lockstep:
            tau = None if kind == "activate" else self.last_tau
        else:
            tau = self.measured_tau if self.measured_tau is not None else \
                (self.last_tau if self.updates else None)
        if kind == "gains":
            if tau is not None:
                self.law.continue_from(tau)
        else:
            self.law.reset(state, tau)

    def _anchored(self, t: float, ref: Reference, q: np.ndarray, qd: np.ndarray) -> Reference:
        """The reference minus an offset that starts at (q_d − q, q̇_d − q̇) at the first state
        after an activation and goes to rest along a quintic over ``reference_blend_time``."""
        zero = np.zeros(self.n)
        if self.anchor_pending:
            qd_d = zero if ref.qd is None else ref.qd
            self.anchor = Quintic(ref.q - q, zero, self.blend_time, qd0=qd_d - qd, start_time=t)
            self.anchor_pending = False
        o, od, odd = self.anchor.sample(t)
        if t >= self.anchor.end_time:
            self.anchor = None
        return Reference(ref.q - o, (zero if ref.qd is None else ref.qd) - od,
                         (zero if ref.qdd is None else ref.qdd) - odd, wrench=ref.wrench)

    def _report_recovery(self) -> None:
        """Log (as an error) and count a reset the law made because its state turned non-finite."""
        if self.law.recoveries:
            self.recoveries += self.law.recoveries
            self.law.recoveries = 0
            self.log.error(self.law.last_recovery, throttle_duration_sec=1.0)

    def _status(self):
        d = {"law": self.law_name, "updates": self.updates, "recoveries": self.recoveries,
             **self._tracking_status()}
        if self.law is None or not self.node.is_active:
            return OK, self.node.lifecycle_state.label, d
        try:
            d.update({k: v for k, v in self.law.diagnostics().items()
                      if isinstance(v, int | float | str | bool)})
        except Exception as exc:  # noqa: BLE001 - diagnostics must never stop control
            d["diagnostics_error"] = str(exc)
        d["recoveries"] = self.recoveries
        return OK, f"running {self.law_name}", d


    def _tracking_status(self) -> dict[str, object]:
        """The tracking error over every tick that tracked the generator's motion (JSON lists
        per joint: what ``robot-control launch`` reports)."""
        summary = self.errors.summary()
        out: dict[str, object] = {"tracking_samples": self.errors.count,
                                  "joint_names": json.dumps(self.names)}
        for key, value in summary.items():
            if value is not None:
                out[key] = json.dumps(value) if isinstance(value, list) else value
        return out


def main(argv: list[str] | None = None) -> int:
    return run_node("controller", ControllerNode, argv)


if __name__ == "__main__":
    sys.exit(main())
