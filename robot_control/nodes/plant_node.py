"""The ``plant`` node: simulates the robot, publishes /joint_states, applies /joint_command.

A managed node: configuring builds the plant and compiles its step and hold; only while active does
it step, publish states and apply commands. Real time: at each deadline (a timer at ``rate``,
absolute: k periods after activation) it publishes its state stamped with the deadline; a valid
command applies when it arrives, as a drive applies a setpoint (from the next physics step of the
period on), and is held until the next one (nodes/realtime.py: garbage collection,
``realtime_priority`` …). A deadline is missed when the answer to the previous state had not
arrived by it, or when a late tick had to integrate several periods (``missed_deadlines`` of the
``commanded_deadlines``; ``tick_late_*_us``). Lockstep: the plant publishes /clock and the state
for t_k, then waits; the command stamped t_k steps it to t_{k+1}. When commands stop for
``command_timeout`` the plant holds (gravity compensation plus damping) or applies zero torque
(``safe_behaviour``), blending from the last torque over ``safe_blend_time``, says so on
/diagnostics and in the log, and resumes when commands return. /tf: nodes/tf_publisher.py.

It behaves as a drive, not a punching bag:

- a command applies only if its publisher is its own controller's (nodes/command_source.py),
  it passes nodes/validation.py (joint names and count, finite, at most IMPLAUSIBLE_FACTOR × the
  effort limit) and answers a state published within the last ANSWER_WINDOW_S (its stamp is
  that state's; a late answer still applies if newer than the last applied); what is rejected
  is counted and logged (throttled); a publisher sending only rejected commands is ignored for
  a while (validation.SenderGate), so a flood cannot crowd out the controller's;
- a torque beyond the effort limit is saturated, counted and logged (throttled);
- its velocity protections (nodes/velocity_guard.py): a command the model says would take a
  joint past its overspeed trip within the steps it is held is replaced by the hold; a joint
  past the trip anyway stops the drive (the hold, whatever ``safe_behaviour`` says); the safety
  parameters (nodes/drive_safety.py) are read-only while the plant is active;
- a state that diverges (non-finite or implausible: a numerical failure) is a fault
  (``NodeHealth.fault``): the plant stops stepping, reports ERROR on /diagnostics
  (``robot-control launch`` then stops and exits non-zero), and goes through ErrorProcessing to
  unconfigured (configure again to restart from the initial state).
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np

from robot_control import dynamics as dyn
from robot_control.bus import ParameterError
from robot_control.bus.lifecycle import CallbackReturn
from robot_control.bus.param_table import declare
from robot_control.control.tuning import default_initial_pose
from robot_control.nodes import plant_compiler
from robot_control.nodes.command_source import CommandSource, resolve_node
from robot_control.nodes.common import LatencyStats, configure_failure, run_node, warm_up
from robot_control.nodes.convert import Messages, period_ns, seconds, stamp_ns
from robot_control.nodes.drive_safety import DriveSafety
from robot_control.nodes.health import OK, WARN, NodeHealth
from robot_control.nodes.node_parameters import (
    AutostartParams,
    EngineParams,
    FrameParams,
    RobotParams,
    TimingParams,
    declare_common,
    declare_engine,
    declare_frame_prefix,
)
from robot_control.nodes.plant_parameters import (
    CommandSourceParams,
    PlantLockstepStart,
    PlantStart,
    PlantStep,
)
from robot_control.nodes.realtime import LoopDiscipline, RealtimeParams
from robot_control.nodes.tf_publisher import TfParams, TfPublisher
from robot_control.nodes.validation import (
    DropLog,
    JointVectors,
    Rejected,
    SenderGate,
    check_values,
    sender_of,
)
from robot_control.nodes.velocity_guard import VelocityGuard, predicted_velocity, step_and_predict
from robot_control.sim.arm_check import description_problems
from robot_control.sim.engine import make_plant
from robot_control.sim.step_size import DEFAULT_PHYSICS_DT, default_physics_dt

#: /joint_command reader depth: room for a burst, so valid commands survive until taken
COMMAND_DEPTH = 100
#: a command must answer a state published this recently: older stamps are another stack's, or
#: an answer so late (a controller that was stopped) that it must not be applied
ANSWER_WINDOW_S = 1.0


class PlantNode:
    """Wires a :class:`~robot_control.sim.plant.Plant` to the bus as a drive would.

    The drive's behaviour (which commands apply, the safe behaviour, the safety stop, lockstep,
    the figures) is this class's; what it drives is told by the methods a subclass for another
    simulated mechanism overrides (nodes/cell_plant_node.py): ``_declare_plant``, ``_new_plant``,
    ``_driven_state``, ``_hold_torque``, ``_step``, ``_publish_extras``, ``_on_new_plant``.
    """

    #: its parameter tables, in declaration order (docs/parameters.md)
    PARAMETER_TABLES = (RobotParams, TimingParams, PlantStart, PlantStep, EngineParams, DriveSafety,
                        RealtimeParams, FrameParams, TfParams, PlantLockstepStart, CommandSourceParams,
                        AutostartParams)

    #: the node whose commands it obeys by default (parameter ``command_source``)
    COMMAND_SOURCE = "controller"
    #: lockstep: the table of the /joint_states readers to wait for (how many, who)
    LOCKSTEP_START = PlantLockstepStart

    def __init__(self, node) -> None:
        self.node = node
        self.log = node.get_logger()
        self._declare_plant(node)
        self.safety = declare(node, DriveSafety, on_change=self._safety_changed)
        self.loop = LoopDiscipline(node)
        self.substeps = max(1, round(seconds(self.period_ns) / self.dt))  # physics steps a period
        self.plant = None
        self.names = self.model.joint_names
        self.joints = JointVectors(self.model)
        self.guard = VelocityGuard(self.log, self.names, self.model.velocity_limit,
                                   self.safety.overspeed_factor)
        self.drops = DropLog(self.log)
        self.gate = SenderGate(self.log, "/joint_command")
        self.m = Messages(node, declare_frame_prefix(node))
        self.pub_state = node.create_lifecycle_publisher("sensor_msgs/msg/JointState",
                                                         "joint_states")
        self.pub_wrench = self.pub_clock = None  # made when needed (an environment, lockstep)
        self.tf = TfPublisher(node, self.model, self.m.frame_prefix)
        if self.lockstep:
            self.pub_clock = node.create_lifecycle_publisher("rosgraph_msgs/msg/Clock", "clock")
            # start only when the state has listeners: a lost first sample would stall the loop
            self.start_subscribers = declare(
                node, self.LOCKSTEP_START).lockstep_start_subscribers
        source = declare(node, CommandSourceParams, command_source=self.COMMAND_SOURCE
                         ).command_source
        self.source = CommandSource(node, source and resolve_node(source, node.namespace))
        # urgent: composed, taken when the controller sent it, not after the state's other readers
        sub = self.source.subscription = node.create_sender_subscription(
            "sensor_msgs/msg/JointState", "joint_command", self._on_command, qos=COMMAND_DEPTH, urgent=True)
        if hasattr(sub, "set_sender_filter"):  # DDS backend: drop a quarantined sender undecoded
            sub.set_sender_filter(self.gate.admit)
        self._reset_bookkeeping()
        self.timers: list = []
        self.health = NodeHealth(node, "plant", self._status, self.drops)

    def _reset_bookkeeping(self) -> None:
        """Counters and command state of a fresh configuration."""
        self.k, self.stamp = 0, 0  # periods stepped; ns stamp of the last published state
        self.recent: dict[int, float] = {}  # stamps published within ANSWER_WINDOW_S -> wall time
        self.answered = -1  # stamp of the last state a command was applied for
        self.command: np.ndarray | None = None
        self.command_stamp, self.last_command_wall = -1, -np.inf
        self.applied = 0  # periods stepped (ticks)
        self.commanded = 0  # of those, the ones that applied a command
        self.rejected = self.foreign = self.unconfirmed = self.duplicates = self.stale = 0
        self.missed = 0
        self.commanded_deadlines = 0  # deadlines passed while commands flowed (missed's base)
        self.in_safe_mode = False
        self.blend: tuple[float, np.ndarray] | None = None  # (start, τ offset) into the safe torque
        self.latency = LatencyStats()
        self.started_wall = time.perf_counter()
        self.activated_at = self.started_wall
        self.active_wall = 0.0  # seconds spent active before the current activation
        # perf_counter time of deadline 0 (the state at activation) and its stamp, ns; deadlines
        # passed since activation; physics steps of the current period already integrated
        self.tick_origin, self.stamp_origin, self.deadlines, self.done_steps = 0.0, 0, 0, 0
        self.held: np.ndarray | None = None  # the torque in effect (real time)
        self.held_command = False  # ... and whether it is a controller's command
        self.period_command = self.period_saturated = self.period_limited = False
        self.answer_wall = -np.inf  # when the answer to the latest state arrived
        self.tick_lateness = LatencyStats()  # how late after its deadline a tick ran
        self.late_ticks = self.limit_events = self.saturation_events = 0
        self.guard.reset()
        self.started = False  # lockstep: the first state went out

    # ------------------------------------------------------ what is simulated
    def _declare_plant(self, node) -> None:
        """Declare what the plant is (robot or scenario, rate, mode, step, initial state) and set
        model, lockstep, period_ns, dt, q0, qd0 and plant_cfg."""
        common = declare_common(node)
        sc = common.scenario
        self.model = common.model
        self.lockstep = common.timing.lockstep
        self.period_ns = period_ns(common.timing.rate)
        if sc is not None:
            q0 = sc.q0.tolist()
        elif node.has_parameter_override("initial_q"):  # no pose search (a cold compile)
            q0 = [0.0] * self.model.nq
        else:
            q0 = default_initial_pose(self.model).tolist()
        q0 = declare(node, PlantStart, joints=self.model.joint_names, initial_q=q0).initial_q
        self.q0 = np.asarray(q0, dtype=float)
        self.plant_cfg = declare_engine(node, sc.plant if sc is not None else {})
        # cold: the step compiles in another process while this one checks the description
        dt = sc.physics_dt if sc is not None else min(DEFAULT_PHYSICS_DT, seconds(self.period_ns))
        self.step_compiler = plant_compiler.start_background(
            self.model, self.plant_cfg, dt, seconds(self.period_ns))
        problems = description_problems(self.model, self.q0) if sc is None else []
        if problems:
            raise ParameterError("the description cannot run: " + "; ".join(problems))
        default_dt = (sc.physics_dt if sc is not None
                      else default_physics_dt(self.model, self.q0, 1e9 / self.period_ns))
        self.dt = declare(node, PlantStep, physics_dt=default_dt).physics_dt
        self.qd0 = sc.qd0 if sc is not None else None

    def _new_plant(self):
        """A simulated plant in its initial state (ValueError if the configuration is invalid)."""
        plant = make_plant(self.model, self.plant_cfg, self.dt)
        plant.reset(self.q0, self.qd0)
        return plant

    def _driven_state(self) -> tuple[np.ndarray, np.ndarray]:
        """True (q, q̇) of the joints this node drives (those of ``model``)."""
        return self.plant.q, self.plant.qd

    def _step(self, tau: np.ndarray, steps: int, answers_state: bool) -> np.ndarray:
        """Hold τ over ``steps`` physics steps; the torque applied. ``answers_state``: these
        steps start at the state last published."""
        return self.plant.step(tau, steps * self.dt)

    def _publish_extras(self, stamp: int, q: np.ndarray, qd: np.ndarray) -> None:
        """Besides /joint_states: the contact wrench (a law's input), /tf once the chain is through."""
        if self.pub_wrench is not None:
            self.pub_wrench.publish(self.m.wrench(stamp, self.plant.wrench, "world"))
        if self.tf.due(stamp):
            self.node.when_idle(lambda: self.tf.publish_if_due(stamp, q))

    def _on_new_plant(self) -> None:
        """Outputs a fresh plant needs (the contact wrench); load its kernels before a tick."""
        if self.plant.environment is not None and self.pub_wrench is None:
            self.pub_wrench = self.node.create_lifecycle_publisher(
                "geometry_msgs/msg/WrenchStamped", "wrench")
        zeros = np.zeros(self.model.nq)
        if self.tf.pub is not None:  # first (cold: the step compiles in plant_compiler meanwhile)
            warm_up(self.log, "forward_kinematics", lambda: self.tf.message(0, self.q0))
        warm_up(self.log, "inverse_dynamics", lambda: self._hold_torque(self.q0, zeros))
        warm_up(self.log, plant_compiler.kernel_name(self.model), lambda: step_and_predict(
            make_plant(self.model, self.plant_cfg, self.dt), seconds(self.period_ns)))
        plant_compiler.reap(self.step_compiler)

    # -------------------------------------------------------------- lifecycle
    def on_configure(self, previous) -> CallbackReturn:
        """Build the plant at its initial state; compile its step and its hold torque."""
        try:
            self.plant = self._new_plant()
        except ValueError as exc:
            return configure_failure(self.log, "the plant", exc)
        self.effort_limit = self.plant.model.effort_limit
        self._on_new_plant()
        self._reset_bookkeeping()
        self.loop.prepare()
        self.health.clear()
        self.log.info(f"plant '{self.model.name}' ({self.model.nq} joints) at "
                      f"{1e9 / self.period_ns:.0f} Hz, "
                      f"{'lockstep' if self.lockstep else 'real-time'}: configured")
        return CallbackReturn.SUCCESS

    def on_activate(self, previous) -> CallbackReturn:
        """Start stepping (real time: publish the state now, then every period)."""
        self.command, self.blend = None, None
        self.activated_at = time.perf_counter()
        if self.lockstep:
            self.started = False  # (re)publish the state that awaits its command
            self.timers = [self.node.create_timer(0.05, self._lockstep_start),
                           self.node.create_timer(0.2, self._lockstep_watchdog)]
        else:
            self.loop.start()
            self.deadlines, self.done_steps = 0, 0
            self.held, self.held_command = self._safe_torque(), False
            self.timers = [self.node.create_timer(seconds(self.period_ns), self._tick)]
            # deadline k at tick_origin + k·period, stamped stamp_origin + k·period, on the
            # timer's own grid (rclpy takes tens of µs to make one: late in every tick else)
            wall, stamp = time.perf_counter(), int(self.node.now() * 1e9)
            ago = self.period_ns - self.timers[0].time_until_next_call()  # when it started
            self.tick_origin, self.stamp_origin = wall - ago * 1e-9, stamp - ago
            self._publish_state()
        return CallbackReturn.SUCCESS

    def on_deactivate(self, previous) -> CallbackReturn:
        """Freeze the simulation: no more steps or states until activated again."""
        self._stop_timers()
        self.active_wall += time.perf_counter() - self.activated_at
        return CallbackReturn.SUCCESS

    def on_cleanup(self, previous) -> CallbackReturn:
        self.plant = None
        return CallbackReturn.SUCCESS

    def on_shutdown(self, previous) -> CallbackReturn:
        self._stop_timers()
        return CallbackReturn.SUCCESS

    def on_error(self, previous) -> CallbackReturn:
        """After a fault: stopped (no timers); unconfigured until configured again."""
        self._stop_timers()
        return CallbackReturn.SUCCESS

    def _stop_timers(self) -> None:
        for timer in self.timers:
            timer.cancel()
        self.timers = []
        self.loop.stop()

    # ------------------------------------------------------------- parameters
    def _safety_changed(self, safety: DriveSafety) -> None:
        """An accepted change of the safety parameters (only while inactive)."""
        self.safety = safety
        self.guard.factor = safety.overspeed_factor

    # --------------------------------------------------------------- commands
    def _read_command(self, msg) -> tuple[int, np.ndarray]:
        """(stamp, τ in model joint order) of a usable command; Rejected says why not."""
        tau = self.joints.effort(msg)
        stamp = stamp_ns(msg.header.stamp)
        if stamp not in self.recent:
            self.foreign += 1
            raise Rejected(f"its stamp {stamp} ns answers no state this plant published in the "
                           f"last {ANSWER_WINDOW_S:g} s (another stack's, or a stopped controller's)")
        return stamp, tau

    def _on_command(self, msg, gid: bytes | None) -> None:
        if self.health.faulted or not self.node.is_active:
            return  # inactive, a drive applies nothing
        sender = sender_of(msg)
        try:
            if not self.source.admits(gid):
                if self.source.undecided(gid):  # perhaps ours, its node data trailing: no strike
                    self.unconfirmed += 1
                    return self.drops.drop("/joint_command", "the graph names no node for its "
                                           f"publisher {gid.hex()} yet: not applied")
                self.foreign += 1
                raise Rejected(f"not from {self.source.controller} (publisher "
                               f"{gid.hex() if gid else 'unknown'})")
            stamp, tau = self._read_command(msg)
        except Rejected as exc:
            self.rejected += 1
            self.gate.rejected(sender)
            self.drops.drop("/joint_command", f"rejected: {exc}")
            return
        self.gate.accepted(sender)
        if not self.lockstep and stamp <= self.answered:
            if stamp == self.answered:
                self.duplicates += 1  # a second answer to the same state: the first one stands
            else:
                self.stale += 1  # overtaken by the answer to a later state
            return
        if self.answered < stamp:
            self.answer_wall = time.perf_counter()
            self.latency.add(self.answer_wall - self.recent[stamp])
            self.answered = stamp
        first = self.command is None  # since activation: the loop is closed (status says so)
        self.command, self.command_stamp = tau, stamp
        self.last_command_wall = time.perf_counter()
        if self.in_safe_mode:
            self.in_safe_mode = False
            self.log.info("commands are back: leaving the safe behaviour")
        if self.lockstep:
            if stamp != self.stamp:
                self.stale += 1  # an answer to an earlier state: already stepped past it
                return
            self._advance(tau)
        else:
            self._apply_now(tau, answers_last_state=stamp == self.stamp)
            # the period's slack, its command in: the status, at once if the loop just closed
            (self.health.publish if first else self.health.publish_if_due)()

    # ------------------------------------------------------------------ steps
    def _hold_torque(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """τ = g(q) − d M(q) q̇: one Newton–Euler pass at zero velocity with q̈ = −d q̇ (Kim
        Table 2), so the hold needs the same compiled kernel as the controller's laws."""
        return dyn.inverse_dynamics(self.model, q, np.zeros_like(qd), -self.safety.hold_damping * qd)

    def _safe_torque(self) -> np.ndarray:
        return np.zeros(self.model.nq) if self.safety.safe_behaviour == "zero_torque" else \
            self._hold_torque(*self._driven_state())

    def _blended_safe_torque(self, now: float) -> np.ndarray:
        """The safe torque, plus what is left of the offset from the last applied torque."""
        tau = self._safe_torque()
        if self.blend is None:
            if self.command is None or self.safety.safe_blend_time <= 0.0:
                return tau
            self.blend = (now, self.plant.applied - tau)  # from the torque applied so far
        start, offset = self.blend
        return tau + offset * np.exp(-(now - start) / self.safety.safe_blend_time) \
            if self.safety.safe_blend_time > 0.0 else tau

    def _tick(self) -> None:
        """Real-time deadline: finish the period under the torque in effect, publish the state,
        then hold the latest command (or the safe behaviour) until a fresh one arrives.

        The tick serves the latest deadline passed (the timer fires on the period grid); a
        tick later than a whole period integrates every period that passed, so plant time keeps
        up with the wall clock, and counts the skipped ones as missed deadlines and late ticks.
        While commands flow, a deadline is also missed when the answer to the previous state had
        not arrived by it (the period ran on an older command).
        """
        if self.health.faulted:
            return
        now = time.perf_counter()
        period = seconds(self.period_ns)
        # the latest deadline passed: normally the next one (the timer fires on the grid just
        # after it); none if a late tick already served it (the state never runs ahead of the
        # wall clock)
        due = math.floor((now - self.tick_origin) / period + 1e-6)
        if due <= self.deadlines:
            return
        periods = due - self.deadlines
        deadline = self.tick_origin + due * period
        self.tick_lateness.add(max(0.0, now - deadline))
        self.late_ticks += periods - 1
        # a command answers the previous state: at 1 Hz it is a period old, not lost, by now
        commanded = not (self.command is None
                         or now - self.last_command_wall > self.safety.command_timeout + period)
        if commanded:
            on_time = self.command_stamp == self.stamp and self.answer_wall <= deadline
            self.missed += (not on_time) + periods - 1
            self.commanded_deadlines += periods
        if not self._hold(self.held, periods * self.substeps - self.done_steps,
                          self.held_command):
            return
        self.deadlines, self.done_steps = due, 0
        self._end_periods(periods)
        if commanded:
            self.blend = None
            self.held, self.held_command = self.command, True
        else:
            if not self.in_safe_mode and self.command is not None:
                self.log.warn(f"no valid /joint_command for {self.safety.command_timeout:.3f} s: "
                              f"safe behaviour '{self.safety.safe_behaviour}'")
            self.in_safe_mode = self.command is not None or self.in_safe_mode
            # the blend runs on the states' clock (deadlines), as the stamps do: a late tick
            # must not look like a jump
            self.held, self.held_command = self._blended_safe_torque(deadline), False
            if self.command is None:
                self.in_safe_mode = False  # not yet started: waiting is not a fault
        self.loop.after_tick()

    def _apply_now(self, tau: np.ndarray, answers_last_state: bool) -> None:
        """Real time: a drive applies a command when it arrives. The period's physics steps that
        began before now run under the torque held so far, the rest under τ: at once if τ answers
        the last state (no other command can come before the deadline: the tick only publishes)."""
        period_start = self.tick_origin + self.deadlines * seconds(self.period_ns)
        by_now = min(self.substeps, max(0, round((time.perf_counter() - period_start)
                                                 / self.dt)))
        if by_now > self.done_steps:
            if not self._hold(self.held, by_now - self.done_steps, self.held_command):
                return
            self.done_steps = by_now
        self.held, self.held_command = tau, True
        if answers_last_state and self._hold(tau, self.substeps - self.done_steps, True):
            self.done_steps = self.substeps

    def _advance(self, tau: np.ndarray) -> None:
        """Lockstep: one period under the command, then the state."""
        if self._hold(tau, self.substeps, True):
            self._end_periods(1)

    def _hold(self, tau: np.ndarray, steps: int, command: bool) -> bool:
        """Integrate ``steps`` physics steps under τ (the safe torque while a safety stop
        lasts), checked as a drive would at least every period; False if the plant faulted.
        ``command``: τ is a controller's command (counted in commands_applied)."""
        first = self.done_steps == 0  # these steps start at the state last published
        while steps > 0:
            chunk = min(steps, self.substeps)
            commanded = command and not self.guard.stopping
            self.period_command |= commanded
            if self.guard.stopping or (commanded and self.guard.refuses(
                    tau, self._predicted_velocity(tau, chunk), chunk)):
                tau = self._hold_torque(*self._driven_state())
            try:
                self._step(tau, chunk, answers_state=first)
                first = False
                q, qd = self._driven_state()
                check_values(q, self.joints.bounds.position, "position")
                check_values(qd, self.joints.bounds.velocity, "velocity")
            except (FloatingPointError, np.linalg.LinAlgError, Rejected) as exc:
                self.health.fault(f"plant state diverged: {exc}")  # the error state
                return False
            saturated = bool(np.any(self.plant.saturated))
            if commanded and saturated and not self.period_saturated:
                self._report_saturation(tau)
            self.period_saturated |= saturated
            self.period_limited |= bool(np.any(self.plant.at_limit()))
            self.guard.watch(self._driven_state()[1])
            steps -= chunk
        return True

    def _predicted_velocity(self, tau: np.ndarray, steps: int) -> np.ndarray | None:
        """q̇ after ``steps`` physics steps under τ (None where no prediction is made)."""
        return predicted_velocity(self.plant, tau, steps * self.dt)

    def _end_periods(self, periods: int) -> None:
        """Count the periods stepped since the last state (one tick) and publish the state."""
        self.k += periods
        self.applied += 1
        self.commanded += self.period_command
        self.saturation_events += self.period_saturated
        self.limit_events += self.period_limited
        self.period_command = self.period_saturated = self.period_limited = False
        self._publish_state()

    def _report_saturation(self, tau: np.ndarray) -> None:  # throttled
        i = int(np.flatnonzero(self.plant.saturated)[0])
        self.log.warn(f"saturated: {self.names[i]} commanded {tau[i]:.4g}, effort limit "
                      f"{self.effort_limit[i]:.4g} ({self.saturation_events + 1} steps so far)",
                      throttle_duration_sec=1.0)

    def _publish_state(self) -> None:
        if self.lockstep:
            self.stamp = self.k * self.period_ns
            self.pub_clock.publish(self.m.clock(self.stamp))
            measured_at = time.perf_counter()
        else:  # stamped with its deadline: the instant the state describes
            self.stamp = self.stamp_origin + self.deadlines * self.period_ns
            measured_at = self.tick_origin + self.deadlines * seconds(self.period_ns)
        q, qd = self.last_measured = self.plant.measure()
        self._remember(self.stamp, measured_at)
        self.pub_state.publish(self.m.joint_state(self.stamp, self.names, q, qd,
                                                  self.plant.applied))
        self._publish_extras(self.stamp, q, qd)

    def _remember(self, stamp: int, measured_at: float) -> None:
        """Record a published state's stamp and when (perf_counter) it was measured; forget
        those older than ANSWER_WINDOW_S."""
        now = time.perf_counter()
        self.recent[stamp] = measured_at
        cutoff = now - ANSWER_WINDOW_S
        while len(self.recent) > 1 and next(iter(self.recent.values())) < cutoff:
            del self.recent[next(iter(self.recent))]

    def _lockstep_start(self) -> None:
        if self.started or self.pub_state.get_subscription_count() < self.start_subscribers \
                or not self.source.ready():
            return
        self.started = True
        self.started_wall = time.perf_counter()
        self._publish_state()

    def _lockstep_watchdog(self) -> None:
        """Lockstep waits for commands; if none came for a while, re-send the state (lost sample)."""
        if not self.started or self.health.faulted:
            return
        if time.perf_counter() - max(self.last_command_wall, self.started_wall) > 1.0:
            self.recent.pop(self.stamp, None)
            self._remember(self.stamp, time.perf_counter())  # its answer is a fresh one
            q, qd = self.last_measured
            self.pub_clock.publish(self.m.clock(self.stamp))
            self.pub_state.publish(self.m.joint_state(self.stamp, self.names, q, qd,
                                                      self.plant.applied))

    # ------------------------------------------------------------ diagnostics
    def stats(self) -> dict:
        elapsed = self.active_wall + (time.perf_counter() - self.activated_at
                                      if self.node.is_active and self.timers else 0.0)
        lat, late = self.latency.summary(), self.tick_lateness.summary()
        return {
            # control ticks executed while active; sim_periods also counts periods a late tick
            # caught up on; commands_applied only the ticks that applied a command
            "steps": self.applied, "sim_periods": self.k, "commands_applied": self.commanded,
            "commands_rejected": self.rejected, "commands_foreign": self.foreign,
            "commands_unconfirmed": self.unconfirmed,
            "commands_ignored": self.gate.ignored, "duplicate_answers": self.duplicates,
            "stale_commands": self.stale, "missed_deadlines": self.missed,
            "commanded_deadlines": self.commanded_deadlines, "late_ticks": self.late_ticks,
            "achieved_rate_hz": self.applied / elapsed if elapsed > 0 else 0.0,
            "latency_p50_us": lat["p50"], "latency_p99_us": lat["p99"],
            "latency_max_us": lat["max"], "safe_mode": self.in_safe_mode,
            "commanded": self.command is not None,
            "saturation_events": self.saturation_events, "limit_events": self.limit_events,
            "velocity_stops": self.guard.stops, "safety_stop": self.guard.stopping,
            "commands_limited": self.guard.limited, "sim_time_s": seconds(self.k * self.period_ns),
            "tick_late_p50_us": late["p50"], "tick_late_p99_us": late["p99"],
            "tick_late_max_us": late["max"], **self.loop.status(), **self.source.diagnostics(),
        }

    def _status(self):
        s = self.stats()
        level, message = OK, "running"
        if not self.node.is_active:
            message = self.node.lifecycle_state.label  # not stepping
        elif self.guard.stopping:
            level, message = WARN, "safety stop (overspeed): holding"
        elif self.in_safe_mode:
            level, message = WARN, f"no commands: safe behaviour '{self.safety.safe_behaviour}'"
        elif self.source.refused:
            level, message = WARN, f"commands refused from {len(self.source.refused)} foreign publishers"
        elif self.rejected:
            level, message = WARN, f"{self.rejected} commands rejected"
        return level, message, s


def main(argv: list[str] | None = None) -> int:
    plant_compiler.fork_ahead()  # before the bus's threads: the step's compiler, imported
    return run_node("plant", PlantNode, argv)


if __name__ == "__main__":
    sys.exit(main())
