"""The small bus interface every node is written against (its backends: bus/dds/, bus/ros/).

``create_node(default_name, argv)`` (robot_control.bus.backend) returns a :class:`Node` backed
by rclpy when a sourced ROS 2 installation makes it importable, else by Cyclone DDS speaking the
ROS 2 wire conventions (``robot_control.bus.dds.node``); ``ROBOT_CONTROL_BUS=rclpy|dds`` forces
the choice. Node code is the same under both: messages come from
``node.msg("sensor_msgs/msg/JointState")`` with the field names of the ``.msg`` (sequence fields
may arrive as lists or arrays), callbacks run one at a time in the thread that calls ``spin()``,
parameters are typed, ranged and validated by the node's validators, and ``--ros-args`` (``-p``,
``--params-file``, ``-r``, ``__node:=``, ``__ns:=``, ``--log-level``) work as in rclpy.

``create_container(argv)`` composes several nodes into one process, as ROS 2's component
containers do: ``container.create_node(name, managed=…)`` makes nodes that keep their own names,
parameters, services and lifecycle but share one executor (one thread runs all their callbacks),
and on Cyclone DDS pass same-process messages by reference (robot_control.bus.dds.intra_process).

``create_node(…, managed=True)`` makes a managed (lifecycle) node, as rclpy's LifecycleNode:
it starts unconfigured, serves the lifecycle_msgs services (``<node>/change_state``, …) and
publishes ``<node>/transition_event``; the node's code installs its hooks with
``set_lifecycle_hooks(on_configure=…, on_activate=…)`` and publishes what must stop while the
node is not active through ``create_lifecycle_publisher`` (robot_control.bus.lifecycle).
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from contextlib import contextmanager

from robot_control.bus.cdr_prefix import DeclaredMotion
from robot_control.bus.lifecycle import (
    TRANSITION_GRAPH,
    CallbackReturn,
    LifecycleError,
    LifecycleHooks,
    LifecycleState,
    ManagedPublisher,
    lifecycle_state,
)
from robot_control.bus.parameters import ParameterError, ParameterStore, load_params_file
from robot_control.bus.ros_args import (
    RosArgs,
    namespace_error,
    node_name_error,
    parse_ros_args,
    resolve_name,
)

__all__ = ["Container", "Logger", "Node", "ParameterError", "QosSpec", "ServiceCallError"]

QosSpec = str | int  # "default" | "sensor" | "transient_local" | a keep-last depth

SEVERITIES = {"debug": 10, "info": 20, "warn": 30, "warning": 30, "error": 40, "fatal": 50}
_SEVERITY_NAMES = {10: "DEBUG", 20: "INFO", 30: "WARN", 40: "ERROR", 50: "FATAL"}

LogSink = Callable[[int, str, str, str, int], None]  # (level, message, file, function, line)
Validator = Callable[[dict[str, object]], str | None]
Listener = Callable[[dict[str, object], dict[str, object]], None]


class ActionHandler(ABC):
    """What a node's action server asks the node's code (all in the spinning thread)."""

    @abstractmethod
    def accept(self, goal) -> str | None:
        """None to accept a goal request, else the reason to reject it (logged)."""

    @abstractmethod
    def accepted(self, goal_id: bytes, goal) -> None:
        """An accepted goal (``goal_id``: its UUID's 16 bytes) starts; the node ends it later
        with the server's ``finish`` (it may do so at once)."""

    @abstractmethod
    def cancel(self, goal_id: bytes) -> bool:
        """A client asks to cancel a goal: True if it is canceling (end it with ``finish``)."""

    def screen_goal(self, declared: DeclaredMotion) -> str | None:
        """Before a goal is decoded: why the sizes it declares (bus/cdr_prefix.py; on both
        routes for control_msgs/action/FollowJointTrajectory) refuse it, or None."""
        return None

    def refused(self, goal_id: bytes, reason: str) -> None:
        """A goal accepted undecoded because ``screen_goal`` refused it: end it with ``reason``."""
        raise NotImplementedError(f"{type(self).__name__} screens goals but ends none")


class ServiceCallError(RuntimeError):
    """A service call without an answer (no server, or no response in time)."""


class Logger:
    """An rclpy-style logger: a severity threshold, one line on stderr in rcutils' default
    format ``[INFO] [<sec>.<nsec>] [name]: message``, and an optional sink (/rosout)."""

    def __init__(self, name: str, level: str | int = "info", sink: LogSink | None = None):
        self.name = name
        self.level = 20
        self.set_level(level)
        self._sink = sink
        self._last: dict[tuple[str, int], float] = {}

    def set_level(self, level: str | int) -> None:
        if isinstance(level, str):
            if level.lower() not in SEVERITIES:
                raise ValueError(f"unknown log level {level!r}; use one of {sorted(SEVERITIES)}")
            level = SEVERITIES[level.lower()]
        self.level = int(level)

    def is_enabled_for(self, level: int) -> bool:
        return level >= self.level

    def log(self, level: int, message: str, *, once: bool = False,
            throttle_duration_sec: float | None = None, _depth: int = 1) -> bool:
        """Emit message at level (``once``, ``throttle_duration_sec`` as rclpy); True if emitted."""
        if level < self.level:
            return False
        caller = sys._getframe(_depth)
        site = (caller.f_code.co_filename, caller.f_lineno)
        if once or throttle_duration_sec is not None:
            now = time.monotonic()
            last = self._last.get(site)
            if last is not None and (once or now - last < throttle_duration_sec):
                return False
            self._last[site] = now
        stamp = time.time_ns()
        severity = _SEVERITY_NAMES.get(level, str(level))
        sys.stderr.write(f"[{severity}] [{stamp // 1_000_000_000}.{stamp % 1_000_000_000:09d}] "
                         f"[{self.name}]: {message}\n")
        sys.stderr.flush()
        if self._sink is not None:
            try:
                self._sink(level, str(message), caller.f_code.co_filename,
                           caller.f_code.co_name, caller.f_lineno)
            except Exception as exc:  # logging must never take the node down
                sys.stderr.write(f"[ERROR] [{self.name}]: cannot publish to /rosout: {exc}\n")
        return True

    def debug(self, message: str, **kw) -> bool:
        return self.log(10, message, _depth=2, **kw)

    def info(self, message: str, **kw) -> bool:
        return self.log(20, message, _depth=2, **kw)

    def warn(self, message: str, **kw) -> bool:
        return self.log(30, message, _depth=2, **kw)

    warning = warn

    def error(self, message: str, **kw) -> bool:
        return self.log(40, message, _depth=2, **kw)

    def fatal(self, message: str, **kw) -> bool:
        return self.log(50, message, _depth=2, **kw)


class Node(ABC):
    """What a node may do on the bus. Backends implement the abstract methods; the parameter
    store (values, descriptors, validators, listeners) is shared code."""

    backend = ""

    def __init__(self, name: str, namespace: str):
        self._name = name
        self._namespace = namespace if namespace.startswith("/") else "/" + namespace
        self._store = ParameterStore(self.fqn)
        self._hooks: LifecycleHooks | None = None  # set by the backend for a managed node

    # -- identity
    @property
    def name(self) -> str:
        return self._name

    @property
    def namespace(self) -> str:
        return self._namespace

    @property
    def fqn(self) -> str:
        """Fully qualified node name, e.g. ``/plant`` or ``/robot1/plant``."""
        return f"{self._namespace.rstrip('/')}/{self._name}"

    # -- messages and topics
    @abstractmethod
    def msg(self, ros_type: str) -> type:
        """The message class of a ROS type name, e.g. ``"sensor_msgs/msg/JointState"``."""

    @abstractmethod
    def create_publisher(self, ros_type: str, topic: str, qos: QosSpec = "default"):
        """A publisher with ``publish(msg)``; topic names resolve with namespace and remaps."""

    @abstractmethod
    def create_subscription(self, ros_type: str, topic: str, callback: Callable[[object], None],
                            qos: QosSpec = "default", urgent: bool = False,
                            screen: Callable[[bytes], bool] | None = None):
        """Call callback(msg) in the executor thread for every message received. ``urgent``: a
        message from a node of the same container is handled as soon as the callback that
        published it returns, ahead of the other messages waiting (where the executor orders
        same-process messages itself: the rclpy-free route; rclpy's executor ignores it).
        ``screen(serialised bytes)``: False if a message must not be decoded (it has dealt with
        it), asked before the decoding of every message that arrives serialised."""

    @abstractmethod
    def create_sender_subscription(self, ros_type: str, topic: str,
                                   callback: Callable[[object, bytes | None], None],
                                   qos: QosSpec = "default", urgent: bool = False):
        """Like create_subscription, but callback(msg, gid) also gets the GID of the publisher
        that sent msg (its DDS writer GUID, as the graph announces it), or None where the bus
        cannot tell (rclpy before MessageInfo had ``publisher_gid``)."""

    @abstractmethod
    def publishers_of(self, subscription) -> list[tuple[str | None, bytes]]:
        """(fully qualified node name, GID) of every publisher matched with a subscription (the
        node None where the graph names none yet), as ``ros2 topic info -v`` lists them."""

    def destroy_subscription(self, subscription) -> None:
        """End a subscription: no more callbacks, and its reader leaves the graph (so its
        publishers stop sending to this process)."""
        subscription.destroy()

    @abstractmethod
    def create_client(self, srv_type: str, service: str):
        """A client of a service (``"lifecycle_msgs/srv/GetState"``, name resolved like a topic):
        ``request(**fields)`` builds a request, ``wait_for_service(timeout_s)`` says whether a
        server is there, ``call(request, timeout_s)`` returns the response or raises
        ServiceCallError. ``call`` blocks: use it from a thread other than the one spinning."""

    def create_action_server(self, action_type: str, name: str, handler: ActionHandler):
        """A server of an action (``"control_msgs/action/FollowJointTrajectory"``, name resolved
        like a topic) driven by ``handler``. The server has the action's ``Feedback`` and
        ``Result`` classes, ``publish_feedback(goal_id, feedback)`` and ``finish(goal_id,
        status, result)`` with status ``succeeded``, ``aborted`` or ``canceled``."""
        raise NotImplementedError(f"the {self.backend} bus has no action server")

    @abstractmethod
    def create_timer(self, period_s: float, callback: Callable[[], None]):
        """A wall-clock periodic timer (``cancel()`` stops it; ``time_until_next_call()``: ns
        until its next call on its own period grid, None once cancelled)."""

    def when_idle(self, work: Callable[[], None]) -> None:
        """Run ``work`` after what this callback sent has been handled in this process — a
        control chain's bookkeeping (status messages, /tf, garbage collection) off its latency;
        a backend with no later place runs it at once."""
        work()

    @abstractmethod
    def now(self) -> float:
        """ROS time in seconds: /clock time when use_sim_time is true, else wall-clock time."""

    # -- parameters
    @abstractmethod
    def declare_parameter(self, name: str, default: object, description: str = "", *,
                          read_only: bool = False,
                          floating_point_range: Sequence[float] | None = None,
                          integer_range: Sequence[int] | None = None,
                          additional_constraints: str = "",
                          ptype: int | None = None) -> object:
        """Declare a typed parameter; a --params-file / -p override wins. Returns the value.

        The type is the default's, or ``ptype`` (bus.parameters' type ids) where the default
        cannot tell it (an empty list of strings)."""

    def get_parameter(self, name: str) -> object:
        return self._store.get(name)

    def has_parameter_override(self, name: str) -> bool:
        """Whether a --params-file / -p gives ``name`` its value (it wins over any default)."""
        return name in self._store.overrides

    def get_parameters(self, prefix: str = "") -> dict[str, object]:
        """All declared values, or those under ``prefix.`` (rclpy's get_parameters_by_prefix)."""
        if not prefix:
            return dict(self._store.values)
        return {n[len(prefix) + 1:]: v for n, v in self._store.values.items()
                if n.startswith(prefix + ".")}

    def describe_parameter(self, name: str):
        if name not in self._store.descriptors:
            raise ParameterError(f"parameter '{name}' is not declared")
        return self._store.descriptors[name]

    @abstractmethod
    def set_parameters(self, changes: dict[str, object]) -> None:
        """Set atomically; raises ParameterError with the reason when refused (nothing changes)."""

    def add_parameter_validator(self, fn: Validator) -> None:
        """fn(changes) -> None to accept or a reason string to refuse, before any set applies."""
        self._store.validators.append(fn)

    def add_parameter_listener(self, fn: Listener) -> None:
        """fn(new_values, old_values) after every accepted change."""
        self._store.listeners.append(fn)

    # -- managed (lifecycle) nodes
    @property
    def managed(self) -> bool:
        return self._hooks is not None

    def _lifecycle(self) -> LifecycleHooks:
        if self._hooks is None:
            raise LifecycleError(f"{self.fqn} is not a managed node (create_node(…, managed=True))")
        return self._hooks

    def set_lifecycle_hooks(self, **hooks) -> None:
        """Install transition hooks: ``on_configure``, ``on_cleanup``, ``on_activate``,
        ``on_deactivate``, ``on_shutdown``, ``on_error``; each is called with the state the
        transition started from (a LifecycleState) and returns a CallbackReturn."""
        self._lifecycle().set(**hooks)

    def create_lifecycle_publisher(self, ros_type: str, topic: str, qos: QosSpec = "default"):
        """A publisher whose ``publish`` only publishes while the node is active."""
        return ManagedPublisher(self.create_publisher(ros_type, topic, qos), self._lifecycle())

    @property
    def is_active(self) -> bool:
        """True while a managed node is active (an unmanaged node always is)."""
        return self._hooks is None or self._hooks.active

    @property
    def lifecycle_state(self) -> LifecycleState:
        self._lifecycle()
        return lifecycle_state(self._lifecycle_state_id())

    def trigger_transition(self, transition: str | int) -> CallbackReturn | None:
        """Run a transition by label (``"configure"``, ``"shutdown"``, …) or id from the current
        state, in the calling thread; the hook's result, None if the state has no such one."""
        self._lifecycle()
        current = self._lifecycle_state_id()
        edge = next((t for t in TRANSITION_GRAPH if t.start == current and t.id < 10
                     and transition in (t.label, t.id)), None)
        return None if edge is None else self._change_state(edge.id)

    def fail(self, reason: str) -> None:
        """A fault met while running (the caller logs it): take the node to errorprocessing
        (on_error decides what follows) by the path rcl's graph has
        (LifecycleHooks.fault_transition); the hooks see ``reason`` as ``hooks.fault``."""
        hooks = self._lifecycle()
        transition = hooks.fault_transition(self._lifecycle_state_id(), reason)
        if transition is not None:
            self._change_state(transition)

    def _finish_lifecycle(self) -> None:
        """Before a managed node is released: the shutdown transition, if it is not finalized."""
        if self._hooks is not None and self.lifecycle_state.label != "finalized":
            self.trigger_transition("shutdown")

    def _lifecycle_state_id(self) -> int:
        raise LifecycleError(f"the {self.backend} backend has no managed nodes")

    def _change_state(self, transition_id: int) -> CallbackReturn | None:
        raise LifecycleError(f"the {self.backend} backend has no managed nodes")

    # -- logging and life cycle
    @abstractmethod
    def get_logger(self):
        """A logger with debug/info/warn/error/fatal (``once=``, ``throttle_duration_sec=``)."""

    @abstractmethod
    def spin(self) -> None:
        """Run callbacks until shutdown() or SIGINT/SIGTERM, then release everything."""

    @abstractmethod
    def spin_once(self, timeout_s: float | None = None) -> None:
        """Run what is ready, waiting up to timeout_s for something to do."""

    @property
    @abstractmethod
    def ok(self) -> bool:
        """False once shutdown was requested (by shutdown(), SIGINT or SIGTERM)."""

    @abstractmethod
    def shutdown(self) -> None:
        """Stop spinning and release the node (safe to call from a callback or another thread)."""

    @abstractmethod
    def close(self) -> None:
        """Finish the lifecycle (shutdown transition) and release the node: what ``spin`` does
        once it stops, and a container does for its nodes."""


class Container(ABC):
    """Nodes composed into one process on one executor (ROS 2's component container).

    Each node made by ``create_node`` is a node of its own on the graph (name, parameters,
    services, lifecycle), created from the container's command line as if it were the node's
    (``node:``-prefixed rules apply to that node only; an unprefixed ``__node:=`` would rename
    them all, as in rcl). ``spin`` runs every node's callbacks in the calling thread until
    SIGINT / SIGTERM or ``shutdown``, then finishes each node's lifecycle and releases it. A node
    that shuts itself down shuts the container down: the process is one context, as a component
    calling ``rclcpp::shutdown()`` ends its container.
    """

    backend = ""

    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self._closed = False

    @abstractmethod
    def create_node(self, default_name: str, *, managed: bool = False) -> Node:
        """A node in this container (see the class docstring)."""

    @abstractmethod
    def spin(self) -> None:
        """Run the nodes' callbacks until shutdown, then release them."""

    @abstractmethod
    def shutdown(self) -> None:
        """Stop spinning and release every node (safe from a callback or another thread)."""

    @property
    @abstractmethod
    def ok(self) -> bool:
        """False once shutdown was requested."""

    def _close(self) -> None:
        """Once: each node's shutdown transition and release (last made, first released), then
        what the container holds."""
        if self._closed:
            return
        self._closed = True
        with interrupts_ignored():
            for node in reversed(self.nodes):
                node.close()
            self._release()

    @abstractmethod
    def _release(self) -> None:
        """Release the executor and the container's hold on the bus (after its nodes)."""


# --- helpers shared by the backends ------------------------------------------------------------


def stop_on_signals(stop: Callable[[], None]) -> list:
    """SIGINT and SIGTERM call ``stop`` (main thread only); the handlers to restore after.

    A signal that the handler before these recorded as a stop request (its ``requested``: a node
    executable's start-up handler, nodes/startup_stop.py) calls ``stop`` now: it came after the
    node last looked and before these took over, and would otherwise be lost — the node would
    spin on as if Ctrl-C had never been pressed."""
    if threading.current_thread() is not threading.main_thread():
        return []
    restore = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        restore.append((sig, signal.getsignal(sig)))
        signal.signal(sig, lambda *_: stop())
    if any(getattr(handler, "requested", False) for _, handler in restore):
        stop()
    return restore


def restore_signals(saved: list) -> None:
    for sig, handler in saved:
        signal.signal(sig, handler)


def node_identity(default_name: str, args: RosArgs) -> tuple[str, str]:
    """(name, namespace) after ``__node:=`` / ``__ns:=``; ValueError naming the ROS naming rule
    a name breaks, as rcl refuses it at node creation."""
    name, namespace = args.node_name or default_name, args.namespace or "/"
    problem = node_name_error(name) or namespace_error(namespace)
    if problem is not None:
        raise ValueError(f"invalid node name '{namespace.rstrip('/')}/{name}': {problem}")
    return name, namespace


def parameter_overrides(args: RosArgs, fqn: str) -> dict[str, object]:
    """Overrides for a node: its entries of every --params-file, then -p (later wins, as rcl)."""
    out: dict[str, object] = {}
    for path in args.params_files:
        out.update(load_params_file(path, fqn))
    out.update(args.params)
    return out


def resolve_topic(name: str, namespace: str, node_name: str, remaps: dict[str, str]) -> str:
    """Fully qualified topic name: namespace and ``~`` expanded, then the first matching -r rule."""
    fq = resolve_name(name, namespace, node_name)
    for src, dst in remaps.items():
        if resolve_name(src, namespace, node_name) == fq:
            return resolve_name(dst, namespace, node_name)
    return fq


def as_range(values: Sequence[float] | None, cast: type) -> tuple | None:
    """(from, to, step) from a 2- or 3-sequence (step 0 = continuous)."""
    if values is None:
        return None
    if len(values) not in (2, 3):
        raise ValueError(f"a range is (from, to) or (from, to, step), got {values!r}")
    lo, hi, *step = values
    return cast(lo), cast(hi), cast(step[0]) if step else cast(0)


@contextmanager
def interrupts_ignored():
    """Ignore SIGINT while a stopping node releases its entities (main thread only), then restore
    the handler: Ctrl-C under a launcher reaches a node twice (from the terminal and from the
    launcher), and the second one would otherwise kill the process (exit -2) or raise mid-release."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def parse_args_for(default_name: str, argv: Sequence[str]) -> RosArgs:
    """--ros-args of argv, with ``node:`` prefixed rules kept only for this node."""
    first = parse_ros_args(list(argv), node_name=default_name)
    if first.node_name and first.node_name != default_name:
        return parse_ros_args(list(argv), node_name=first.node_name)
    return first
