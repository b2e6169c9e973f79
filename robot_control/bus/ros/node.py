"""The rclpy backend of the bus: a thin adapter from the bus Node interface to rclpy's documented
API, used when a sourced ROS 2 installation makes rclpy importable.

rclpy then owns the wire, discovery, the parameter services and /rosout. Parameters stay
mirrored in the interface's ParameterStore so both backends decide a change the same way: the
override from ``-p`` / ``--params-file`` is applied (and an integer coerced to a double) by the
store, declared into rclpy with ``ignore_override``, and every later change — ``ros2 param
set`` or ``node.set_parameters`` — passes the store's checks and validators in rclpy's
on-set-parameters callback, whose SetParametersResult carries the reason of a refusal.
A managed node is an rclpy.lifecycle.LifecycleNode: rcl's state machine runs the transitions
and rclpy serves the lifecycle_msgs services and transition_event; its on_configure, … callbacks
run the hooks through robot_control.bus.lifecycle, as the DDS backend does.
An :class:`RclpyContainer` puts several such nodes on one executor (bus/ros/executor.py) in one process
(rclpy's manual composition; rclpy has no intra-process path, so their messages still pass
through the rmw, within the process). What one of them publishes to another is taken and handed
to its callback right after the publishing callback returns (bus/ros/chain.py), not a
whole executor round later: a control tick's state → command → applied chain costs one wait.
Importing this module imports rclpy; nothing else in robot_control.bus does.
"""

from __future__ import annotations

import array
import copy
import functools
import importlib
import threading
import time
import traceback
from collections.abc import Callable, Sequence

import rclpy
from rcl_interfaces.msg import (
    FloatingPointRange,
    IntegerRange,
    ParameterDescriptor,
    SetParametersResult,
)
from rclpy.clock import Clock, ClockType
from rclpy.event_handler import PublisherEventCallbacks, SubscriptionEventCallbacks
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node as RclNode
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data

from robot_control.bus.lifecycle import (
    ACTIVATING,
    CLEANINGUP,
    CONFIGURING,
    DEACTIVATING,
    ERRORPROCESSING,
    SHUTTINGDOWN,
    TRANSITION_GRAPH,
    CallbackReturn,
    LifecycleHooks,
    LifecycleState,
)
from robot_control.bus.node import (
    ActionHandler,
    Container,
    Node,
    QosSpec,
    ServiceCallError,
    as_range,
    interrupts_ignored,
    parameter_overrides,
    parse_args_for,
)
from robot_control.bus.parameters import ParameterError, coerce
from robot_control.bus.ros.chain import ChainPublisher, SameProcessChain
from robot_control.bus.ros.executor import LeanExecutor
from robot_control.bus.transport import ask_for_receive_buffer
from robot_control.security.keystore import check_process

SPIN_WAIT_S = 0.1  # longest wait of a spin: how soon it sees running() turn false
UNKNOWN_NODE_NAME = "_NODE_NAME_UNKNOWN_"  # rmw_dds_common's, until a node's graph data arrives


def no_publisher_events() -> PublisherEventCallbacks:
    """No QoS-event handlers for a publisher (see :func:`no_subscription_events`)."""
    return PublisherEventCallbacks(use_default_callbacks=False)


def no_subscription_events() -> SubscriptionEventCallbacks:
    """No QoS-event handlers for a subscription. rclpy's default gives every endpoint one (an
    "incompatible QoS" warning), a waitable the executor walks at every spin while it rebuilds
    its wait set: a 1 kHz composed stack missed 25 % of its deadlines with them, 11–14 % without
    (docs/architecture.md, "Speed discipline"). The rclpy-free route has none either."""
    return SubscriptionEventCallbacks(use_default_callbacks=False)


def rclpy_qos(qos: QosSpec):
    """rclpy QoS for a QosSpec: a depth, or the profiles "default", "sensor", "transient_local"."""
    if isinstance(qos, int) and not isinstance(qos, bool):
        return qos
    if qos == "default":
        return 10
    if qos == "sensor":
        return qos_profile_sensor_data
    if qos == "transient_local":
        return QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                          durability=DurabilityPolicy.TRANSIENT_LOCAL)
    raise ValueError(f"unknown qos {qos!r}: use 'default', 'sensor', 'transient_local' or a depth")


def message_gid(info) -> bytes | None:
    """The publisher GID of an rclpy MessageInfo (16 bytes, as the graph's endpoint GIDs), or
    None when this rclpy does not report it."""
    gid = info.get("publisher_gid") if isinstance(info, dict) else None
    if isinstance(gid, dict):
        gid = gid.get("data")
    return None if gid is None else bytes(gid)[:16]


def _plain(value: object) -> object:
    """rclpy hands arrays as array.array; the store wants lists."""
    return list(value) if isinstance(value, array.array | tuple) else value


@functools.cache
def _managed_node_class() -> type:
    """rclpy's LifecycleNode whose transition callbacks run the bus node's hooks (imported only
    when a managed node is made)."""
    from rclpy.lifecycle import LifecycleNode, TransitionCallbackReturn

    class ManagedRclNode(LifecycleNode):
        hooks: LifecycleHooks | None = None

        def _run(self, transition_state: int, previous) -> TransitionCallbackReturn:
            result = self.hooks.run(transition_state,
                                    LifecycleState(previous.label, previous.state_id))
            return getattr(TransitionCallbackReturn, result.name)

        def on_configure(self, state):
            return self._run(CONFIGURING, state)

        def on_cleanup(self, state):
            return self._run(CLEANINGUP, state)

        def on_activate(self, state):
            return self._run(ACTIVATING, state)

        def on_deactivate(self, state):
            return self._run(DEACTIVATING, state)

        def destroy_node(self) -> None:
            """rclpy's LifecycleNode leaves its state machine, which holds the rcl node: the
            node, and with it the process's DDS participant and its threads, would live until
            exit(). Under DDS Security those threads then encrypt and decrypt with an OpenSSL
            whose atexit cleanup already ran: SIGSEGV (core of a secure controller:
            crypto_calculate_session_key -> HMAC -> CRYPTO_THREAD_read_lock(NULL))."""
            super().destroy_node()
            self._state_machine.destroy_when_not_in_use()

        def on_shutdown(self, state):
            return self._run(SHUTTINGDOWN, state)

        def on_error(self, state):
            return self._run(ERRORPROCESSING, state)

    return ManagedRclNode


def guard_change_state(rcl_node) -> None:
    """Make the node's ``change_state`` service refuse, with a logged reason, a transition the
    current state does not have: rclpy's own raises RCLError inside the service and the
    executor dies with it (ros2/rclpy#1209; fixed on rolling by #1319, not in Jazzy's rclpy)."""
    from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy

    service = rcl_node._service_change_state
    serve = service.callback
    machine = rcl_node._state_machine
    log = rcl_node.get_logger()

    def guarded(request, response):
        wanted = request.transition.label or request.transition.id
        available = [(t[0], t[1]) for t in machine.available_transitions if t[0] < 10]
        if not any(wanted in pair for pair in available):
            log.warning(f"refused transition {wanted!r}: not available from state "
                        f"'{machine.current_state[1]}' (available: "
                        f"{', '.join(f'{label} ({i})' for i, label in available) or 'none'})")
            response.success = False
            return response
        try:
            return serve(request, response)
        except _rclpy.RCLError as exc:  # a race with another transition: refuse, stay alive
            if rcl_node.context.ok():  # (else Ctrl-C shut the context down under the
                log.error(f"transition {wanted!r} failed: {exc}")  # transition: it stops)
            response.success = False
            return response

    service.callback = guarded


_TRIGGERS = {"configure": "trigger_configure", "cleanup": "trigger_cleanup",
             "activate": "trigger_activate", "deactivate": "trigger_deactivate",
             "shutdown": "trigger_shutdown"}


class RclpyClient:
    """A node's rclpy client of one service, called synchronously from a non-spinning thread."""

    def __init__(self, rcl_node, srv_class, service: str):
        self._srv = srv_class
        self._context = rcl_node.context
        self._client = rcl_node.create_client(srv_class, service)
        self.srv_name = self._client.srv_name

    def request(self, **fields):
        return self._srv.Request(**fields)

    def wait_for_service(self, timeout_s: float) -> bool:
        return self._client.wait_for_service(timeout_sec=timeout_s)

    def call(self, request, timeout_s: float = 5.0):
        if not self._client.wait_for_service(timeout_sec=timeout_s):
            raise ServiceCallError(f"service {self.srv_name} is not available")
        done = threading.Event()
        future = self._client.call_async(request)
        future.add_done_callback(lambda _: done.set())
        deadline = time.monotonic() + timeout_s
        while not done.wait(min(0.1, max(0.0, deadline - time.monotonic()))):
            # in slices: after Ctrl-C no reply comes, and the caller must not wait the timeout out
            shut_down = not self._context.ok()
            if shut_down or time.monotonic() >= deadline:
                self._client.remove_pending_request(future)
                why = "shut down" if shut_down else f"within {timeout_s} s"
                raise ServiceCallError(f"no reply from {self.srv_name} {why}")
        return future.result()

    def destroy(self) -> None:
        self._client.destroy()


def _init_rclpy(argv: Sequence[str]) -> None:
    """rclpy.init for this process (once), asking Cyclone for the package's receive buffer
    (bus/transport.py), after the secure-start check: with ROS_SECURITY_ENABLE=true a node
    whose enclave the keystore cannot back refuses to start with the reason
    (security.keystore.check_process), not with an error from deep in the RMW."""
    if not rclpy.ok():
        check_process(argv)
        ask_for_receive_buffer()
        rclpy.init(args=list(argv))


class RclpyNode(Node):
    """The bus Node interface on an rclpy node."""

    backend = "rclpy"

    def __init__(self, default_name: str, argv: Sequence[str], *, managed: bool = False,
                 container: RclpyContainer | None = None):
        _init_rclpy(argv)
        # rclpy applies __node:=, __ns:= and -r itself
        self._node = _managed_node_class()(default_name) if managed else RclNode(default_name)
        super().__init__(self._node.get_name(), self._node.get_namespace())
        if managed:
            self._hooks = self._node.hooks = LifecycleHooks(self._node.get_logger())
            guard_change_state(self._node)
        self._store.overrides = parameter_overrides(parse_args_for(default_name, argv), self.fqn)
        self._store.declare("use_sim_time", self._node.get_parameter("use_sim_time").value)
        self._node.add_on_set_parameters_callback(self._on_set_parameters)
        self._container = container
        self._executor = LeanExecutor() if container is None else container.executor
        self._executor.add_node(self._node)
        self._running = True
        self._spinning = False
        self._released = False
        self._initialising: str | None = None
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)

    def msg(self, ros_type: str) -> type:
        package, kind, name = ros_type.split("/")
        module = importlib.import_module(f"{package}.{kind}")
        if kind == "action" and "_" in name:  # a part of an action: Name_Goal → Name.Goal
            action, part = name.split("_", 1)
            return getattr(getattr(module, action), part)
        return getattr(module, name)

    def _guarded(self, callback: Callable, what: str) -> Callable:
        """rclpy lets a callback's exception end spin(); log it and carry on instead."""
        def run(*args):
            try:
                callback(*args)
            except Exception as exc:
                if not self.ok:  # Ctrl-C shut rclpy down under a running callback: not its fault
                    return
                self._node.get_logger().error(
                    f"{what} raised: {exc!r}\n{traceback.format_exc()}",
                    throttle_duration_sec=1.0)
        return run

    def create_publisher(self, ros_type: str, topic: str, qos: QosSpec = "default"):
        pub = self._node.create_publisher(self.msg(ros_type), topic, rclpy_qos(qos),
                                          event_callbacks=no_publisher_events())
        return pub if self._container is None else ChainPublisher(pub, self._container.chain)

    def create_subscription(self, ros_type: str, topic: str, callback: Callable[[object], None],
                            qos: QosSpec = "default", urgent: bool = False,
                            screen: Callable[[bytes], bool] | None = None):
        msg_type = self.msg(ros_type)
        if screen is not None:  # taken serialised, screened, then decoded
            from rclpy.serialization import deserialize_message

            plain = callback

            def callback(raw: bytes) -> None:
                if screen(raw):
                    plain(deserialize_message(raw, msg_type))

        sub = self._node.create_subscription(
            msg_type, topic, self._guarded(callback, f"callback for {topic}"),
            rclpy_qos(qos), event_callbacks=no_subscription_events(), raw=screen is not None)
        if self._container is not None:
            self._container.chain.subscribed(sub)
        return sub

    def create_sender_subscription(self, ros_type: str, topic: str,
                                   callback: Callable[[object, bytes | None], None],
                                   qos: QosSpec = "default", urgent: bool = False):
        """callback(msg, publisher GID) from rclpy's MessageInfo: its ``publisher_gid`` where
        rclpy has it (ros2/rclpy#1466, rolling since 2025-06), else None (Jazzy's has none)."""
        guarded = self._guarded(lambda msg, info: callback(msg, message_gid(info)),
                                f"callback for {topic}")

        def with_info(msg, info) -> None:  # two parameters: rclpy then passes the MessageInfo
            guarded(msg, info)

        sub = self._node.create_subscription(self.msg(ros_type), topic, with_info,
                                             rclpy_qos(qos),
                                             event_callbacks=no_subscription_events())
        if self._container is not None:
            self._container.chain.subscribed(sub)
        return sub

    def publishers_of(self, subscription) -> list[tuple[str | None, bytes]]:
        """The topic's publishers by owning node (None: rmw cannot name it yet) and GID."""
        return [(None if i.node_name == UNKNOWN_NODE_NAME
                 else f"{i.node_namespace.rstrip('/')}/{i.node_name}", bytes(i.endpoint_gid)[:16])
                for i in self._node.get_publishers_info_by_topic(subscription.topic_name)]

    def destroy_subscription(self, subscription) -> None:
        if self._container is not None:
            self._container.chain.unsubscribed(subscription)
        self._node.destroy_subscription(subscription)

    def create_client(self, srv_type: str, service: str) -> RclpyClient:
        package, kind, name = srv_type.split("/")
        if kind == "action":  # an action's service: Name_SendGoal → Name.Impl.SendGoalService
            action, part = name.split("_", 1)
            srv_class = getattr(getattr(importlib.import_module(f"{package}.action"), action).Impl,
                                part + "Service")
        else:
            srv_class = getattr(importlib.import_module(f"{package}.srv"), name)
        return RclpyClient(self._node, srv_class, service)

    def create_action_server(self, action_type: str, name: str, handler: ActionHandler):
        from robot_control.bus.ros.action import RclpyActionServer

        return RclpyActionServer(self._node, self.msg(action_type), name, handler)

    def create_timer(self, period_s: float, callback: Callable[[], None]):
        return self._node.create_timer(period_s, self._guarded(callback, "timer callback"),
                                       clock=self._steady)

    def when_idle(self, work: Callable[[], None]) -> None:
        if self._container is None:  # what it sent is out already
            work()
        else:
            self._container.chain.defer(self._guarded(work, "idle work"))

    def now(self) -> float:
        return self._node.get_clock().now().nanoseconds * 1e-9

    # -- parameters: the store decides, rclpy serves
    def declare_parameter(self, name: str, default: object, description: str = "", *,
                          read_only: bool = False,
                          floating_point_range: Sequence[float] | None = None,
                          integer_range: Sequence[int] | None = None,
                          additional_constraints: str = "",
                          ptype: int | None = None) -> object:
        fp, ir = as_range(floating_point_range, float), as_range(integer_range, int)
        value = self._store.declare(name, default, description, read_only=read_only,
                                    floating_point_range=fp, integer_range=ir,
                                    additional_constraints=additional_constraints, ptype=ptype)
        ptype = Parameter.Type(self._store.descriptors[name].type)
        descriptor = ParameterDescriptor(
            name=name, type=ptype.value, description=description,
            additional_constraints=additional_constraints, read_only=read_only,
            floating_point_range=[FloatingPointRange(from_value=fp[0], to_value=fp[1],
                                                     step=fp[2])] if fp else [],
            integer_range=[IntegerRange(from_value=ir[0], to_value=ir[1], step=ir[2])]
            if ir else [])
        if ptype == Parameter.Type.NOT_SET:
            raise ParameterError(f"parameter '{name}' needs a typed default value")
        # Declaring calls the on-set callback: keep the store's validators and listeners out of
        # it (the store already holds this value). rclpy cannot infer a type from [], so an
        # empty list is declared by type, writable, then set, then made read-only if it is:
        # left unset, GetParameters of every listed name (rqt_reconfigure) would come back empty
        self._initialising = name
        try:
            if value == []:
                writable = copy.copy(descriptor)  # rclpy keeps the object it is given
                writable.read_only = False
                self._node.declare_parameter(name, ptype, writable, ignore_override=True)
                self._node.set_parameters([Parameter(name, ptype, [])])
                if read_only:
                    self._node.set_descriptor(name, descriptor)
            else:
                self._node.declare_parameter(name, value, descriptor, ignore_override=True)
        finally:
            self._initialising = None
        return value

    def set_parameters(self, changes: dict[str, object]) -> None:
        params = []
        for name, value in changes.items():
            if name not in self._store.descriptors:
                raise ParameterError(f"parameter '{name}' is not declared")
            ptype = self._store.descriptors[name].type
            params.append(Parameter(name, Parameter.Type(ptype), coerce(value, ptype, name)))
        result = self._node.set_parameters_atomically(params)
        if not result.successful:
            raise ParameterError(result.reason)

    def _on_set_parameters(self, params: list[Parameter]) -> SetParametersResult:
        changes = {p.name: _plain(p.value) for p in params
                   if p.name in self._store.descriptors and p.name != self._initialising}
        if changes:
            try:
                self._store.set(changes)
            except ParameterError as exc:
                return SetParametersResult(successful=False, reason=str(exc))
        return SetParametersResult(successful=True, reason="")

    # -- lifecycle: rcl's state machine, rclpy's services
    def _lifecycle_state_id(self) -> int:
        return self._node._state_machine.current_state[0]

    def _finish_lifecycle(self) -> None:
        """The shutdown transition; if Ctrl-C already shut rclpy down (rcl can no longer publish
        the transition events), the node's on_shutdown hook still runs."""
        if self._hooks is None or rclpy.ok():
            super()._finish_lifecycle()
        elif self.lifecycle_state.label in ("unconfigured", "inactive", "active"):
            self._hooks.run(SHUTTINGDOWN, self.lifecycle_state)

    def _change_state(self, transition_id: int) -> CallbackReturn | None:
        edge = next(t for t in TRANSITION_GRAPH if t.id == transition_id)
        result = getattr(self._node, _TRIGGERS[edge.label])()
        return CallbackReturn[result.name]

    # -- logging and life cycle
    def get_logger(self):
        return self._node.get_logger()

    def spin_once(self, timeout_s: float | None = None) -> None:
        self._executor.spin_once(timeout_sec=timeout_s)

    def spin(self) -> None:
        if self._container is not None:
            raise RuntimeError(f"{self.fqn} is in a container: spin the container")
        self._spinning = True
        try:
            spin_executor(self._executor, lambda: self._running)
        finally:
            self._spinning = False
            self.close()

    def close(self) -> None:
        """Finish the lifecycle (shutdown transition) and release the node (after spinning)."""
        with interrupts_ignored():
            self._finish_lifecycle()
            self._release()

    @property
    def ok(self) -> bool:
        return self._running and rclpy.ok()

    def shutdown(self) -> None:
        if self._container is not None:
            self._container.shutdown()  # one context for the process: the container ends
            return
        self._running = False
        if not self._spinning and not self._released:
            self._finish_lifecycle()
            self._release()

    def _release(self) -> None:
        if self._released:
            return
        self._released = True
        self._executor.remove_node(self._node)
        self._node.destroy_node()
        if self._container is None:
            rclpy.try_shutdown()


def spin_executor(executor, running: Callable[[], bool],
                  after: Callable[[], None] = lambda: None) -> None:
    """Spin until running() is false, rclpy is shut down or Ctrl-C arrives; each wait blocks at
    most SPIN_WAIT_S (a LeanExecutor wakes for its timers itself); after() runs after each
    callback."""
    try:
        while running() and rclpy.ok():
            try:
                executor.spin_once(timeout_sec=SPIN_WAIT_S)
                after()
            except Exception:
                if rclpy.ok():
                    raise
                break  # Ctrl-C shut rclpy down between the check and the wait: done
    except (KeyboardInterrupt, ExternalShutdownException):
        pass


class RclpyContainer(Container):
    """rclpy nodes of one process on one LeanExecutor (node.Container)."""

    backend = "rclpy"

    def __init__(self, argv: Sequence[str]) -> None:
        super().__init__()
        self._argv = list(argv)
        _init_rclpy(self._argv)
        self.executor = LeanExecutor()
        self.chain = SameProcessChain()
        self._running = True
        self._spinning = False

    def create_node(self, default_name: str, *, managed: bool = False) -> RclpyNode:
        node = RclpyNode(default_name, self._argv, managed=managed, container=self)
        self.nodes.append(node)
        return node

    def spin(self) -> None:
        self._spinning = True
        try:
            spin_executor(self.executor, lambda: self._running, after=self.chain.run)
        finally:
            self._spinning = False
            self._close()

    def shutdown(self) -> None:
        self._running = False
        for node in self.nodes:
            node._running = False
        if not self._spinning:
            self._close()

    @property
    def ok(self) -> bool:
        return self._running and rclpy.ok()

    def _release(self) -> None:
        self.executor.shutdown()
        rclpy.try_shutdown()
