"""The ``lifecycle_manager`` node: brings the managed nodes of the stack up in order.

Real-time bring-up: every node of ``node_names`` is configured (all at once: each loads its model
and compiles its kernels); then they are activated in that order, except those listed in
``start_after_loop_closed``, which are activated once the loop is closed — the first message on
``loop_topic`` (the controller's /controller/state), and ``loop_node``'s status on /diagnostics
saying ``commanded`` (the plant applies the controller's commands: it may refuse them for a while,
until the ROS graph names their publisher, nodes/command_source.py) — so the trajectory generator
starts its motion from the measured position of an arm its controller holds. In lockstep the
``clock_node`` (the plant, whose first state starts the clock) is activated last and nothing
waits: the reference must exist from t = 0, as in the offline simulation.

It is a client of the standard lifecycle_msgs services, like nav2's lifecycle_manager (with
``autostart``) and ros2_control's spawners, so the same node brings the stack up under
``ros2 launch`` (rclpy nodes) and ``robot-control launch`` (DDS nodes). If a transition fails, it
says which and exits with status 1.

Afterwards it watches the stack, and shuts it down rather than respawning a node: a managed node
that faults (active → errorprocessing), or whose heartbeat on /diagnostics is
silent for ``heartbeat_timeout`` (it died, or hangs), makes it log the reason and exit with
status 1; both launchers then stop every node (``on_exit: shutdown`` in the launch files;
``robot-control launch`` stops the stack when a node fails). Its last status on /diagnostics
names the node it stopped the stack for (``stopped_for``, ``stop_reason``), so the run's verdict
blames that node, not the manager's exit status. A deliberate deactivation is the
operator's (the plant holds) and is only logged. The same on both routes: a stack with a dead or
faulted member does not go on pretending to run.
"""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass

from robot_control.bus.node import ServiceCallError
from robot_control.bus.param_table import GIVEN, declare, param
from robot_control.bus.ros_args import resolve_name
from robot_control.nodes.common import run_node
from robot_control.nodes.health import OK, WARN, NodeHealth, Status

STACK = ["dynamics_server", "plant", "controller", "trajectory_generator"]
#: what starts only once the loop is closed, by default: the motion
AFTER_LOOP = ("trajectory_generator",)


@dataclass(frozen=True)
class ManagedNodes:
    """The nodes the manager brings up."""

    node_names: tuple[str, ...] = param(tuple(STACK), "managed nodes, in activation order",
                                        read_only=True)


@dataclass(frozen=True)
class LifecycleManagerParams:
    """When each node is activated, and how long the manager waits."""

    start_after_loop_closed: tuple[str, ...] = param(
        GIVEN, "nodes activated only once loop_topic carries a message (real-time mode; "
        "default: the trajectory generator, if node_names has it)", read_only=True,
        default_doc="[trajectory_generator] if node_names has it, else []")
    loop_topic: str = param("controller/state", "the topic whose first message says the loop "
                            "is closed", read_only=True)
    loop_topic_type: str = param("sensor_msgs/msg/JointState", "its message type",
                                 read_only=True)
    loop_node: str = param(
        GIVEN, "the loop is closed only once this node's status on /diagnostics says "
        "commanded: true (the plant, if node_names has it; '': loop_topic alone)",
        read_only=True, default_doc="plant if node_names has it, else ''")
    lockstep: bool = param(False, "lockstep: clock_node is activated last, nothing waits for "
                           "the loop", read_only=True)
    clock_node: str = param("plant", "lockstep: the node whose first state starts the clock",
                            read_only=True)
    transition_timeout: float = param(120.0, "s a transition may take (configure compiles)",
                                      range=(1.0, 3600.0), read_only=True)
    autostart: bool = param(True, "bring the nodes up at start", read_only=True)
    heartbeat_timeout: float = param(
        5.0, "once up, a managed node silent this long on /diagnostics (dead or hung) shuts the "
        "stack down, s", range=(0.5, 3600.0), read_only=True)


class BringUpError(RuntimeError):
    """A node that did not come up, with the reason."""


class LifecycleManager:
    """Drives the managed nodes' transitions from a worker thread (calls block)."""

    #: its parameter tables, in declaration order (docs/parameters.md)
    PARAMETER_TABLES = (ManagedNodes, LifecycleManagerParams)

    def __init__(self, node) -> None:
        self.node = node
        self.log = node.get_logger()
        self.started = time.monotonic()
        self.names = declare(node, ManagedNodes).node_names
        self.settings = declare(
            node, LifecycleManagerParams,
            start_after_loop_closed=[n for n in AFTER_LOOP if n in self.names],
            loop_node="plant" if "plant" in self.names else "")
        self.after_loop = self.settings.start_after_loop_closed
        self.loop_topic, loop_type = self.settings.loop_topic, self.settings.loop_topic_type
        self.loop_node = self.settings.loop_node
        self.loop_obeyed = threading.Event()
        if not self.loop_node:
            self.loop_obeyed.set()
        self.loop_fqn = self._fqn(self.loop_node)  # (whose status says it; resolved once)
        self.lockstep, self.clock_node = self.settings.lockstep, self.settings.clock_node
        self.timeout = self.settings.transition_timeout
        self.autostart = self.settings.autostart
        self.heartbeat_timeout = self.settings.heartbeat_timeout
        self.beats: dict[str, float] = {}  # managed node fqn -> monotonic time of its last status
        node.create_subscription("diagnostic_msgs/msg/DiagnosticArray", "diagnostics",
                                 self._on_diagnostics)
        node.create_timer(0.5, self._watch)
        unknown = set(self.after_loop) - set(self.names) | ({self.loop_node} - {"", *self.names})
        if unknown:
            raise ValueError(f"start_after_loop_closed or loop_node name nodes not in node_names: "
                             f"{sorted(unknown)}")
        self.loop_closed = threading.Event()
        self.loop_sub = node.create_subscription(loop_type, self.loop_topic, self._on_loop)
        self.clients = {name: node.create_client("lifecycle_msgs/srv/ChangeState",
                                                 f"{name}/change_state")
                        for name in self.names}
        self.Transition = node.msg("lifecycle_msgs/msg/Transition")
        for name in self.names:
            node.create_subscription("lifecycle_msgs/msg/TransitionEvent",
                                     f"{name}/transition_event",
                                     lambda msg, name=name: self._on_event(name, msg))
        self.up, self.up_since = False, 0.0
        self.phase = "waiting for the nodes"
        self.stopped_for: tuple[str, str] | None = None  # (node fqn, why) the stack stopped
        self.health = NodeHealth(node, "lifecycle_manager", self._status)
        self.exit_code = 0
        # the transitions block on service calls: a worker makes them while the node spins
        threading.Thread(target=self.run, daemon=True, name="bring-up").start()

    def _status(self) -> Status:
        values = {"nodes": ", ".join(self.names)}
        if self.stopped_for is None:
            return OK, self.phase, values
        fqn, why = self.stopped_for
        return WARN, self.phase, {**values, "stopped_for": fqn, "stop_reason": why}

    # ------------------------------------------------------------ transitions
    def change(self, name: str, label: str) -> None:
        """Run one transition of one node; BringUpError if it is refused or fails."""
        client = self.clients[name]
        deadline = time.monotonic() + self.timeout
        while not client.wait_for_service(0.1):  # in slices: Ctrl-C must not wait for the timeout
            if not self.node.ok:
                raise BringUpError(f"{name}: stopped before its lifecycle services appeared")
            if time.monotonic() >= deadline:
                raise BringUpError(f"{name}: no lifecycle services within {self.timeout:g} s")
        t = time.monotonic()
        try:
            response = client.call(client.request(transition=self.Transition(label=label)),
                                   self.timeout)
        except ServiceCallError as exc:
            raise BringUpError(f"{name}: {label}: {exc}") from None
        if not response.success:
            raise BringUpError(f"{name}: {label} failed (see its log)")
        self.log.info(f"{name}: {label}d in {time.monotonic() - t:.2f} s")

    def bring_up(self) -> None:
        """Configure all, then activate in order (see the module docstring)."""
        self.phase = "configuring"
        self._configure_all()
        self.log.info(f"all configured ({self._elapsed()})")
        self.phase = "activating"
        if self.lockstep:
            order = [n for n in self.names if n != self.clock_node] + \
                [n for n in self.names if n == self.clock_node]
            for name in order:
                self.change(name, "activate")
        else:
            for name in self.names:
                if name not in self.after_loop:
                    self.change(name, "activate")
            if self.after_loop:
                if not self.loop_closed.wait(self.timeout):
                    raise BringUpError(f"nothing on {self.loop_topic} within {self.timeout:g} s "
                                       "of activation: the loop did not close")
                if not self.loop_obeyed.wait(self.timeout):
                    raise BringUpError(f"{self.loop_node} applied no command within "
                                       f"{self.timeout:g} s of activation (see its log: refused?)")
                self.log.info(f"loop closed ({self._elapsed()})")
                for name in self.after_loop:
                    self.change(name, "activate")
        self.up, self.up_since = True, time.monotonic()
        self.phase = "stack active"
        self.log.info(f"stack active: {', '.join(self.names)} ({self._elapsed()})")

    def _configure_all(self) -> None:
        """Configure every node at once, each call from its own daemon thread (a pool's workers
        are joined at exit: after Ctrl-C the process would wait for replies that never come);
        the first failure, in node order, is raised."""
        failures: dict[str, Exception] = {}

        def configure(name: str) -> None:
            try:
                self.change(name, "configure")
            except Exception as exc:  # re-raised below, from the worker
                failures[name] = exc

        threads = [threading.Thread(target=configure, args=(n,), daemon=True,
                                    name=f"configure {n}") for n in self.names]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for name in self.names:
            if name in failures:
                raise failures[name]

    def _on_loop(self, _msg) -> None:
        """The loop is closed; the topic runs at the control rate, so stop listening."""
        if not self.loop_closed.is_set():
            self.loop_closed.set()
            self.node.when_idle(self._stop_listening_to_loop)

    def _stop_listening_to_loop(self) -> None:
        if self.loop_sub is not None:
            self.node.destroy_subscription(self.loop_sub)
            self.loop_sub = None

    def run(self) -> None:
        """The worker: bring up (if autostart); on failure exit_code 1 and shut the node down."""
        if not self.autostart:
            return
        try:
            self.bring_up()
        except Exception as exc:
            if not self.node.ok:
                return  # shut down (Ctrl-C) under a transition: its entities are gone, not a fault
            if not isinstance(exc, BringUpError):
                raise
            self.phase = f"bring-up failed: {exc}"
            self.log.error(f"bring-up failed: {exc}")
            self.exit_code = 1
            self.node.shutdown()

    def _on_event(self, name: str, msg) -> None:
        """A node of the stack leaving the active state: by a fault, the stack stops; otherwise
        (a deactivation, the operator's; a shutdown, the launch ending) it is logged."""
        if self.up and msg.start_state.label == "active":
            goal = msg.goal_state.label
            if goal == "errorprocessing":
                self._stop_stack(self._fqn(name), f"left the active state: {goal}")
            else:
                self.log.info(f"{name} left the active state: {goal}")

    def _on_diagnostics(self, msg) -> None:
        now = time.monotonic()
        for status in msg.status:
            fqn = str(status.name).split(":", 1)[0]
            self.beats[fqn] = now
            if not self.loop_obeyed.is_set() and fqn == self.loop_fqn and any(
                    kv.key == "commanded" and kv.value == "True" for kv in status.values):
                self.loop_obeyed.set()

    def _fqn(self, name: str) -> str:
        """A managed node's fully qualified name (node_names are relative to our namespace)."""
        return resolve_name(name, self.node.namespace, self.node.name)

    def _watch(self) -> None:
        """Once up: a managed node whose heartbeat went silent stops the stack."""
        if not self.up or self.exit_code:
            return
        now = time.monotonic()
        for name in self.names:
            fqn = self._fqn(name)
            quiet = now - max(self.beats.get(fqn, self.up_since), self.up_since)
            if quiet > self.heartbeat_timeout:
                self._stop_stack(fqn, f"silent on /diagnostics for {quiet:.1f} s (died or hung)")
                return

    def _stop_stack(self, fqn: str, why: str) -> None:
        """Shut the stack down for node ``fqn`` and why: said on /diagnostics at once (the
        launcher's verdict names that node), then exit status 1 (the launchers stop every
        node)."""
        if self.exit_code or not self.node.ok:
            return  # already stopping, or the launch is ending (Ctrl-C)
        self.phase = f"stopping the stack: {fqn} {why}"
        self.log.error(self.phase)
        self.stopped_for = (fqn, why)
        self.health.publish()
        self.exit_code = 1
        self.node.shutdown()

    def _elapsed(self) -> str:
        return f"{time.monotonic() - self.started:.1f} s after start"


def main(argv: list[str] | None = None) -> int:
    return run_node("lifecycle_manager", LifecycleManager, argv, managed=False)


if __name__ == "__main__":
    sys.exit(main())
