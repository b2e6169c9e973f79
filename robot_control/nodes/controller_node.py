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
the last torque; nodes/law_host.py). In lockstep the node answers the state at t_k only once it also holds the
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
mid-motion (after a deactivation) resumes without a jump in error or torque — a motion still
running, that is: one that ended before the activation (an aborted or cancelled goal's target
the arm never reached while the node was inactive) is forgotten, and the node holds the measured
position. The same take-over
follows a stall of the loop (states answered more than a period + RESUME_AFTER_S apart: a law that
had to compile, a starved process), during which the plant held on its own. A gain change is
bumpless too: the torque continues from the last one and decays into the law's new one.
"""

from __future__ import annotations

import sys

import numpy as np

from robot_control.bus.cdr_prefix import CdrMotion
from robot_control.bus.lifecycle import CallbackReturn
from robot_control.bus.param_table import declare
from robot_control.control.base import Reference, State
from robot_control.control.model_terms import ExternalModelTerms
from robot_control.control.registry import available
from robot_control.nodes.common import (
    ErrorStatistics,
    LoopTimerHooks,
    configure_failure,
    run_node,
    warm_up,
)
from robot_control.nodes.controller_parameters import ControllerParams, LawHostParams
from robot_control.nodes.convert import (
    TRAJECTORY_TOPIC,
    Messages,
    period_ns,
    read_terms,
    read_wrench,
    seconds,
    stamp_ns,
)
from robot_control.nodes.health import NodeHealth
from robot_control.nodes.law_host import CONFIGURE_ERRORS, LawHost
from robot_control.nodes.motion_feasibility import check_feasible
from robot_control.nodes.node_parameters import AutostartParams, RobotParams, TimingParams, declare_common
from robot_control.nodes.realtime import LoopDiscipline, RealtimeParams
from robot_control.nodes.state_history import RecentPositions
from robot_control.nodes.validation import (
    MAX_MOTION_POINTS,
    DropLog,
    JointVectors,
    Rejected,
    check_motion,
    check_terms,
    check_wrench,
    refuse_sizes,
)
from robot_control.trajectory import Hold, JointTrajectory, Quintic, feasibility
from robot_control.trajectory.jtc_goal import START_TOLERANCE
from robot_control.trajectory.schedule import TrajectorySchedule

#: a motion starting later than this after its receipt is taken in the slack after the next
#: command rather than at once (checking it takes about a millisecond of Python), s
AHEAD_S = 0.01


#: states this far apart (s) mean the loop stalled: longer than the plant's default command
#: timeout, after which it applies its safe behaviour instead of this node's torque
RESUME_AFTER_S = 0.05


class ControllerNode(LoopTimerHooks):
    """Holds the active law and feeds it states, references, wrenches and model terms."""

    #: its parameter tables, in declaration order (docs/parameters.md)
    PARAMETER_TABLES = (RobotParams, TimingParams, ControllerParams, LawHostParams, RealtimeParams,
                        AutostartParams)

    def __init__(self, node) -> None:
        self.node = node
        self.log = node.get_logger()
        common = declare_common(node)
        sc = common.scenario
        self.model = sc.controller_model if sc is not None else common.model
        self.robot = common.model  # the arm itself: what a motion must be feasible on
        self.n = self.model.nq
        self.names = self.model.joint_names
        self.joints = JointVectors(self.model)
        self.drops = DropLog(self.log)
        self.lockstep = common.timing.lockstep
        default_law = sc.controller_type if sc is not None else "computed_torque"
        scenario_params = dict(sc.controller_params) if sc is not None else {}
        self.settings = declare(node, ControllerParams, on_change=self._settings_changed)
        self.source, self.trigger = self.settings.dynamics_source, self.settings.trigger
        self.terms = ExternalModelTerms(self.n, with_coriolis_matrix=True) \
            if self.source == "server" else None
        # without a scenario (whose laws take their own defaults, as offline) the gains not in
        # a params file are derived from the model (control/tuning.py)
        self.laws = LawHost(node, self.model, available(), default_law, scenario_params,
                            self.terms, self.lockstep, None if sc is not None else common.timing.rate)
        self.loop = LoopDiscipline(node)
        self.m = Messages(node)
        self.pub_cmd = node.create_lifecycle_publisher("sensor_msgs/msg/JointState",
                                                       "joint_command")
        self.pub_state = node.create_lifecycle_publisher("sensor_msgs/msg/JointState",
                                                         "controller/state")
        self.pub_jtc_state = node.create_lifecycle_publisher(
            "control_msgs/msg/JointTrajectoryControllerState", "~/controller_state")
        rate = self.settings.state_publish_rate
        self.jtc_period_ns = period_ns(rate) if rate > 0 else 0
        self.next_jtc_ns = 0
        node.create_subscription("sensor_msgs/msg/JointState", "joint_states", self._on_state)
        if self.lockstep:  # the reference of each t_k, sampled by the trajectory generator
            node.create_subscription("trajectory_msgs/msg/JointTrajectory", "joint_reference",
                                     self._on_reference)
        else:  # the motion as quintic knots, sampled here at each state's stamp
            node.create_subscription("trajectory_msgs/msg/JointTrajectory", TRAJECTORY_TOPIC,
                                     self._on_trajectory, qos="transient_local",
                                     screen=self._screen_trajectory)
        node.create_subscription("geometry_msgs/msg/WrenchStamped", "wrench", self._on_wrench)
        node.create_subscription("geometry_msgs/msg/WrenchStamped", "force_reference",
                                 self._on_force_reference)
        if self.source == "server":
            node.create_subscription("std_msgs/msg/Float64MultiArray", "dynamics/terms",
                                     self._on_terms)
        self.force_reference = sc.force_reference if sc is not None else None
        self.laws.force_reference = self.force_reference
        self.wrench = np.zeros(6)
        self.pending: tuple[int, np.ndarray, np.ndarray] | None = None
        self.references: dict[int, Reference] = {}  # lockstep: by stamp
        self.schedule = TrajectorySchedule(self.n)  # real time: the motions received
        self.ahead: list[tuple[int, object]] = []  # (start, message) of motions not yet taken
        self.hold_reference: Reference | None = None  # until there is one: hold
        self.errors = ErrorStatistics()  # while tracking the generator's reference
        monitor_rate = self.settings.monitor_rate
        self.monitor_period_ns = period_ns(monitor_rate) if monitor_rate > 0 else 0
        self.next_monitor_ns = 0
        self.terms_stamp = -1
        self.answer_from = 0  # real time: stamp of the activation; earlier states go unanswered
        self.last_state: State | None = None
        self.measured_tau: np.ndarray | None = None  # the plant's applied τ (JointState effort)
        self.anchor: Quintic | None = None  # reference offset decaying after an activation
        self.anchor_pending = False
        self.rate = common.timing.rate
        self.recent = RecentPositions(self.n, self.rate)  # what a motion's start stamp saw
        self.timer = None
        self.health = NodeHealth(node, "controller", self._status, self.drops)

    def _settings_changed(self, settings: ControllerParams) -> None:
        """An accepted change of the node's settings (``reference_blend_time``)."""
        self.settings = settings

    # -------------------------------------------------------------- lifecycle
    def on_configure(self, previous) -> CallbackReturn:
        """Make the law and compile what its update needs."""
        try:
            # beside a loop on the normal scheduler the other laws compile once it stops
            self.laws.configure(background_now=self.lockstep or self.loop.priority > 0)
        except CONFIGURE_ERRORS as exc:
            return configure_failure(self.log, f"'{self.laws.name}'", exc)
        if not self.lockstep:  # the first motion must not stall a tick loading the sampler
            warm_up(self.log, "motion_check", self._warm_up_motions)
        self.errors = ErrorStatistics()
        self.loop.prepare()
        self.health.clear()
        self.log.info(f"controller '{self.laws.name}' on '{self.model.name}' "
                      f"(terms: {self.source}, trigger: {self.trigger}): configured")
        return CallbackReturn.SUCCESS

    def on_activate(self, previous) -> CallbackReturn:
        """Take over bumplessly from the torque the plant applies now (see the module doc)."""
        self.laws.activate()
        self.anchor, self.anchor_pending = None, not self.lockstep
        # real time: the motion received (re-anchored at the measured state), else hold the
        # measured position until one comes
        self.hold_reference = None
        self.pending = None
        if not self.lockstep:
            self._forget_stale_motion()
            self.loop.start()
        if self.trigger == "timer":
            self.timer = self.node.create_timer(1.0 / self.rate, self._on_timer)
        # answer only states measured from now on, not those queued while this ran
        self.answer_from = 0 if self.lockstep else int(self.node.now() * 1e9)
        return CallbackReturn.SUCCESS

    def _forget_stale_motion(self) -> None:
        """A motion that ended before this activation is a stale target (an aborted or cancelled
        goal's end the arm never reached while this node was inactive): hold the measured
        position instead of moving the arm to it. A motion still running is resumed."""
        now = int(self.node.now() * 1e9)
        self._take_ahead()
        if len(self.schedule) and self.schedule.ended(now):
            self.schedule.clear()
            self.log.info("activated: the last motion received ended before; holding the "
                          "measured position")

    def on_cleanup(self, previous) -> CallbackReturn:
        self.laws.clear()
        return CallbackReturn.SUCCESS

    def _stop_timer(self) -> None:
        super()._stop_timer()
        self.loop.stop()
        self._take_ahead()  # no command will make room for them now
        self.laws.compile_rest()  # what configure left for after the loop

    def _warm_up_motions(self) -> None:
        """A motion taken (re-anchored, checked) and sampled once: their first calls load
        kernels and numpy's linear algebra, milliseconds a first motion would cost the loop."""
        q = np.clip(np.zeros(self.n), self.model.lower, self.model.upper)
        motion = JointTrajectory([0.0, 1.0], [q, np.clip(q + 1e-3, self.model.lower,
                                                          self.model.upper)])
        check_motion(motion.starting_from(q, np.zeros(self.n), np.zeros(self.n), 0.0), self.model)
        feasibility.warm_up(self.robot)  # (never refuses: an arm too weak to hold q still loads)
        trial = TrajectorySchedule(self.n)
        trial.add(0, motion)
        trial.sample(500_000_000)

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
        (0: on receipt), re-anchored as the trajectory generator re-anchors a goal: a first
        point after time 0 starts from the reference at that stamp (as joint_trajectory_controller
        does), a first point at time 0 must lie on it and is replaced by it (no step; see
        _continued). It is checked as a goal is:
        at most MAX_MOTION_POINTS points and MAX_MOTION_S long, within the position and velocity
        limits (validation.check_motion) and the arm's effort limits along it
        (motion_feasibility.check_feasible: refused only, never time-scaled, here); anything else
        is dropped and counted. While the loop
        runs, a motion that starts more than AHEAD_S after now is taken in the slack after the
        next command (Node.when_idle), so its checks delay no tick; at the latest before the
        state it is due at."""
        now = int(self.node.now() * 1e9)
        start = stamp_ns(msg.header.stamp) or now
        if not self.lockstep and self.node.is_active and start > now + AHEAD_S * 1e9:
            self.ahead.append((start, msg))  # checked once the next command is out
            return
        self._take_motion(start, msg)

    def _screen_trajectory(self, data: bytes) -> bool:
        """A motion refused by the sizes it declares is dropped before it is decoded."""
        reason = refuse_sizes(CdrMotion(data), self.n, MAX_MOTION_POINTS)
        if reason is not None:
            self.drops.drop("/" + TRAJECTORY_TOPIC, reason + " (before decoding)")
        return reason is None

    def _take_ahead(self) -> None:
        """The motions received ahead of their start, in order of receipt."""
        ahead, self.ahead = self.ahead, []
        for start, msg in ahead:
            self._take_motion(start, msg)

    def _take_motion(self, start: int, msg) -> None:
        """Check a motion and schedule it from ``start`` on (see _on_trajectory)."""
        try:
            times, q, qd, qdd = self.joints.points(msg)
            reference = self._reference_at(start)
            if reference is None:  # no state yet: the activation's re-anchoring blends it in
                if times[0] > 0.0:
                    raise Rejected("a trajectory whose first point is ahead needs a state to "
                                   "start from")
                if len(times) == 1:
                    raise Rejected("a single point at time_from_start 0 would jump the "
                                   "reference")
                motion = check_motion(JointTrajectory(times, q, qd, qdd), self.model)
            elif times[0] > 0.0:  # as the generator does: it starts from the reference
                motion = check_motion(JointTrajectory(times, q, qd, qdd).starting_from(
                    *reference, 0.0), self.model)
            else:  # a first point "now" must be on the reference: no step
                reference = self._continued(q[0], reference, start)
                motion = Hold(reference[0]) if len(times) == 1 else check_motion(
                    JointTrajectory(times, q, qd, qdd).starting_from(*reference, 0.0),
                    self.model)
            if not isinstance(motion, Hold):
                check_feasible(motion, self.robot)
        except ValueError as exc:  # Rejected, or knots that make no trajectory
            self.drops.drop("/" + TRAJECTORY_TOPIC, str(exc))  # the label of the empty namespace
            return
        self.schedule.add(start, motion)

    def _continued(self, first: np.ndarray, reference: tuple, start: int) -> tuple:
        """What a motion whose first point is at time_from_start 0 starts from: the reference at
        its start if that point is on it (within START_TOLERANCE, as a goal's must be,
        trajectory/jtc_goal.py), else — when this node only holds (its last motion ended) or is
        inactive (an activation re-anchors anyway) — the measured position if the point is
        there: measured at the motion's stamp when that state is still known (the generator
        anchors its motion at one state and stamps it so; a settling arm has moved on since),
        else now. Anything else would step the reference (the arm would swing to it): Rejected,
        naming the joint and the gap. A single such point is a hold there."""
        gap = np.abs(first - reference[0])
        if gap.max() <= START_TOLERANCE:
            return reference
        measured = self.recent.at(start)
        if measured is None:
            measured = self._latest_measured()
        idle = self.schedule.ended(start) or not self.node.is_active
        if measured is not None and idle and np.abs(first - measured).max() <= START_TOLERANCE:
            return measured.copy(), np.zeros(self.n), np.zeros(self.n)
        j = int(np.argmax(gap))
        raise Rejected(f"point 0 is at time_from_start 0 but joint '{self.names[j]}' is "
                       f"{gap[j]:.4g} away from the reference (> {START_TOLERANCE:g}): it would "
                       "jump; give it a time_from_start > 0")

    def _reference_at(self, ns: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(q_d, q̇_d, q̈_d) at stamp ns: the motion's, or at rest where the arm was measured;
        None before any state (a latched motion received before activation: the activation's
        re-anchoring blends it in)."""
        sample = self.schedule.sample(ns)
        if sample is not None:
            return sample[0].copy(), sample[1].copy(), sample[2].copy()
        measured = self._latest_measured()
        if measured is None:
            return None
        return measured.copy(), np.zeros(self.n), np.zeros(self.n)

    def _latest_measured(self) -> np.ndarray | None:
        """The newest measured position: the state waiting for its command, else the last one
        answered; None before any."""
        if self.pending is not None:
            return self.pending[1]
        return self.last_state.q if self.last_state is not None else None

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
            return
        self.laws.force_reference = self.force_reference

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
            q, qd, tau = self.joints.measured(msg)
        except Rejected as exc:
            self.drops.drop("/joint_states", str(exc))
            return
        ns = stamp_ns(msg.header.stamp)
        self.recent.add(ns, q)
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
        if self.ahead and min(start for start, _ in self.ahead) <= ns:  # due (after a stall)
            self._take_ahead()
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
        if not self.lockstep and self.last_state is not None and \
                t - self.last_state.t > RESUME_AFTER_S + 1.0 / self.rate:
            # the loop stalled (a swap compiling, a starved process): the plant has held on its
            # own meanwhile while the motion went on, so take over as after an activation
            self.anchor_pending = True
            self.laws.stalled()
        if tracking and (self.anchor_pending or self.anchor is not None):
            ref = self._anchored(t, ref, q, qd)
        if not self.laws.checked and (why := self.laws.first_state_refusal(q)) is not None:
            self.health.fault(why)  # the arm would drift under this law: stop, say why
            return
        state = State(t, q, qd, wrench=self.wrench.copy())
        tau = self.laws.update(t, state, ref, self.measured_tau)
        if tau is None:
            return
        self.pending = None
        self.references.pop(ns, None)
        self.last_state = state
        self.pub_cmd.publish(self.m.joint_state(ns, self.names, tau=tau))
        # the rest waits until the plant has the command (the chain's slack); what it needs of
        # the reference is copied now, as a motion's samples reuse their arrays
        ref = Reference(ref.q.copy(), ref.qd.copy(), ref.qdd.copy())
        self.node.when_idle(lambda: self._after_command(ns, ref, q, qd, tau, tracking))
        if self.ahead:
            self.node.when_idle(self._take_ahead)

    def _after_command(self, ns: int, ref: Reference, q: np.ndarray, qd: np.ndarray,
                       tau: np.ndarray, tracking: bool) -> None:
        """A tick's bookkeeping once its command is out: the tracking error, the status
        topics when due, garbage collection, diagnostics."""
        e = ref.q - q
        if tracking:
            self.errors.add(self.names, e)
        if self.lockstep or (self.monitor_period_ns and ns >= self.next_monitor_ns):
            self.next_monitor_ns = (ns // self.monitor_period_ns + 1) * self.monitor_period_ns \
                if self.monitor_period_ns else 0
            self.pub_state.publish(self.m.joint_state(ns, self.names, e, ref.qd - qd, tau))
        if self.jtc_period_ns and ns >= self.next_jtc_ns:
            self.next_jtc_ns = (ns // self.jtc_period_ns + 1) * self.jtc_period_ns
            self.pub_jtc_state.publish(self.m.controller_state(ns, self.names, ref, q, qd, tau))
        self.loop.after_tick()
        self.health.publish_if_due()

    def _scheduled(self, ns: int) -> Reference | None:
        """The received motion at stamp ns (arrays this node reuses), None before it starts."""
        sample = self.schedule.sample(ns)
        if sample is None:
            return None
        return Reference(sample[0], sample[1], sample[2], wrench=self.force_reference)

    def _anchored(self, t: float, ref: Reference, q: np.ndarray, qd: np.ndarray) -> Reference:
        """The reference minus an offset that starts at (q_d − q, q̇_d − q̇) at the first state
        after an activation and goes to rest along a quintic over ``reference_blend_time``."""
        zero = np.zeros(self.n)
        if self.anchor_pending:
            qd_d = zero if ref.qd is None else ref.qd
            self.anchor = Quintic(ref.q - q, zero, self.settings.reference_blend_time,
                             qd0=qd_d - qd, start_time=t)
            self.anchor_pending = False
        o, od, odd = self.anchor.sample(t)
        if t >= self.anchor.end_time:
            self.anchor = None
        return Reference(ref.q - o, (zero if ref.qd is None else ref.qd) - od,
                         (zero if ref.qdd is None else ref.qdd) - odd, wrench=ref.wrench)

    def _status(self):
        """The law host's status and the tracking error over every tick that tracked the
        generator's motion."""
        level, message, d = self.laws.status()
        return level, message, {**d, **self.errors.status(self.names)}


def main(argv: list[str] | None = None) -> int:
    return run_node("controller", ControllerNode, argv)


if __name__ == "__main__":
    sys.exit(main())
