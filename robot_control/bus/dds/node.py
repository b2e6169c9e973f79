"""The Cyclone DDS backend of the bus: a Node that is a full citizen of a ROS 2 graph with no ROS 2
installed (rmw_cyclonedds' topic names, type hashes, QoS and ros_discovery_info).

Each node: topics ``rt/<fully qualified name>`` with rmw_cyclonedds' types and QoS and the type
hash in USER_DATA; its readers and writers announced on ``ros_discovery_info`` (via the
process's DdsContext); the six standard parameter services and /parameter_events
(dds_parameters); for a managed node the lifecycle_msgs services and transition_event
(dds_lifecycle); a logger that also publishes rcl_interfaces/Log on /rosout; and one
executor thread for all its callbacks (dds_executor). Like ``ros2 node list``, a node warns when
another participant announces a node with its exact name (two stacks on one domain).

A node made by a container (dds_container) shares the container's executor and passes messages
to the other nodes of the process by reference (intra_process): its volatile topics' writers
ignore local readers and write to DDS only while a reader of another process is matched.
"""

from __future__ import annotations

import functools
import math
import threading
import time
import traceback
import typing
from collections.abc import Callable, Sequence

import numpy as np
from cyclonedds.idl import IdlStruct

from robot_control.bus.dds import config as dds_config
from robot_control.bus.dds import messages
from robot_control.bus.dds.config import QosProfile
from robot_control.bus.dds.context import (
    DISCOVERY_TYPE,
    acquire_context,
    delete_entity,
    gid_of,
    release_context,
)
from robot_control.bus.dds.executor import Executor
from robot_control.bus.dds.graph import DISCOVERY_READER, participant_names
from robot_control.bus.dds.intra_process import LocalSubscription
from robot_control.bus.dds.lifecycle import LifecycleServer
from robot_control.bus.dds.messages import ROS_DISCOVERY_TOPIC
from robot_control.bus.dds.msg import rcl_interfaces as rcl
from robot_control.bus.dds.parameters import ParameterServer
from robot_control.bus.dds.services import ServiceClient, ServiceError, ServiceServer
from robot_control.bus.lifecycle import CallbackReturn, LifecycleHooks
from robot_control.bus.node import (
    Logger,
    Node,
    QosSpec,
    ServiceCallError,
    as_range,
    interrupts_ignored,
    node_identity,
    parameter_overrides,
    parse_args_for,
    resolve_topic,
    restore_signals,
    stop_on_signals,
)
from robot_control.bus.param_table import ClockParams, declare
from robot_control.bus.parameters import BOOL

QOS_PROFILES: dict[str, QosProfile] = {
    "default": dds_config.DEFAULT,
    "sensor": dds_config.SENSOR_DATA,
    "transient_local": dds_config.LATCHED,
}


def qos_profile(qos: QosSpec | QosProfile) -> QosProfile:
    """The rmw profile named by a QosSpec ("default", "sensor", "transient_local" or a depth)."""
    if isinstance(qos, QosProfile):
        return qos
    if isinstance(qos, bool) or not isinstance(qos, int | str):
        raise ValueError(f"qos must be a profile name or a depth, got {qos!r}")
    if isinstance(qos, int):
        if qos < 1:
            raise ValueError(f"qos depth must be >= 1, got {qos}")
        return QosProfile(depth=qos)
    if qos not in QOS_PROFILES:
        raise ValueError(f"unknown qos profile {qos!r}; use one of {sorted(QOS_PROFILES)} "
                         "or a depth")
    return QOS_PROFILES[qos]


@functools.cache
def _wire_plan(cls: type) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(sequence fields, nested-struct fields, sequence-of-struct fields) of a message class."""
    seqs, structs, struct_seqs = [], [], []
    for name, hint in typing.get_type_hints(cls, include_extras=True).items():
        if isinstance(hint, type) and issubclass(hint, IdlStruct):
            structs.append(name)
            continue
        meta = typing.get_args(hint)[1:] if typing.get_origin(hint) is typing.Annotated else ()
        sub = next((getattr(m, "subtype", None) for m in meta if hasattr(m, "subtype")), None)
        if sub is None:
            continue
        (struct_seqs if isinstance(sub, type) and issubclass(sub, IdlStruct) else seqs).append(name)
    return tuple(seqs), tuple(structs), tuple(struct_seqs)


def as_wire_lists(msg: object) -> None:
    """Replace numpy arrays in a message (and its nested messages) by lists, in place: Cyclone's
    serialiser takes lists, while rclpy accepts arrays, and node code must not care."""
    seqs, structs, struct_seqs = _wire_plan(type(msg))
    for name in seqs:
        value = getattr(msg, name)
        if isinstance(value, np.ndarray):
            setattr(msg, name, value.tolist())
    for name in structs:
        as_wire_lists(getattr(msg, name))
    for name in struct_seqs:
        for item in getattr(msg, name):
            as_wire_lists(item)


class DdsPublisher:
    """``publish(msg)`` on one DDS writer; in a container, first to the topic's same-process
    subscriptions by reference (``local``), then to DDS only while a remote reader is matched."""

    def __init__(self, node: DdsNode, writer, topic: str, ros_type: str,
                 local: list[LocalSubscription] | None = None):
        self._node = node
        self.writer = writer
        self.topic_name = topic
        self.ros_type = ros_type
        self._cls = messages.message_type(ros_type)
        self._local = local
        self.gid = gid_of(writer)

    def publish(self, msg) -> None:
        if not isinstance(msg, self._cls):
            raise TypeError(f"{self.topic_name} carries {self.ros_type}, not {type(msg).__name__}")
        if self._local is not None:
            msg.sender_gid = self.gid  # what a same-process sender subscription reports
            for sub in self._local:
                sub.deliver(msg)
            if not self.writer.get_publication_matched_status().current_count:
                return  # nobody outside the process listens: no serialisation at all
        as_wire_lists(msg)
        self.writer.write(msg)

    def get_subscription_count(self) -> int:
        local = len(self._local) if self._local is not None else 0
        return local + len(self.writer.get_matched_subscriptions())

    def destroy(self) -> None:
        if self._local is not None and (self.topic_name, self.gid) in self._node._local_pubs:
            self._node._local_pubs.remove((self.topic_name, self.gid))
            self._node._intra.remove_publisher(self.topic_name, self.gid)
        self._node._drop_endpoint(writer=self.writer)


class DdsSubscription:
    def __init__(self, node: DdsNode, reader, key: int, topic: str,
                 local: LocalSubscription | None = None):
        self._node = node
        self.reader = reader
        self.key = key
        self.topic_name = topic
        self.local = local  # its same-process buffer, in a container

    def get_publisher_count(self) -> int:
        local = self._node._intra.publisher_count(self.topic_name) if self.local else 0
        return local + len(self.reader.get_matched_publications())

    def set_sender_filter(self, admit: Callable[[int], bool] | None) -> None:
        """Decode a sample only if admit(its publication handle) is true (None: every sample);
        the handle is ``msg.sample_info.publication_handle`` of the samples received."""
        self._node._executor.set_sender_filter(self.key, admit)

    def destroy(self) -> None:
        if self.local is not None:
            self._node._intra.unsubscribe(self.local)
        self._node._executor.remove_reader(self.key)
        self._node._drop_endpoint(reader=self.reader)


class DdsClient:
    """A node's client of one service (dds_services.ServiceClient, announced as the node's)."""

    def __init__(self, node: DdsNode, srv_type: str, service: str):
        self._node = node
        self.srv_name = service
        self._client = ServiceClient(node._context, srv_type, service, dds_config.SERVICES_DEFAULT)
        node._context.associate(node._node_key, reader=self._client.reader,
                                writer=self._client.writer)

    def request(self, **fields):
        return self._client.request_type(**fields)

    def wait_for_service(self, timeout_s: float) -> bool:
        return self._client.wait_for_service(timeout_s)

    def call(self, request, timeout_s: float = 5.0):
        try:
            return self._client.call(request, timeout_s)
        except ServiceError as exc:
            raise ServiceCallError(str(exc)) from None

    def destroy(self) -> None:
        self._node._context.dissociate(self._node._node_key, reader=self._client.reader,
                                       writer=self._client.writer)
        self._client.destroy()


class DdsNode(Node):
    """A ROS 2 node on plain Cyclone DDS (see the module docstring)."""

    backend = "dds"

    def __init__(self, default_name: str, argv: Sequence[str], *, managed: bool = False,
                 container=None):
        args = parse_args_for(default_name, argv)
        name, namespace = node_identity(default_name, args)
        super().__init__(name, namespace)
        self._args = args
        self._store.overrides = parameter_overrides(args, self.fqn)
        self._context = acquire_context()
        self._node_key = self._context.add_node(self.namespace, self.name)
        self._endpoints: list[tuple[object, str]] = []
        self._clients: list[DdsClient] = []
        self._shutdown = threading.Event()
        self._spinning = False
        self._destroyed = False
        self._sim_time: float | None = None
        self._clock_sub: DdsSubscription | None = None
        self._error_times: dict[str, float] = {}
        logger_name = self.fqn.lstrip("/").replace("/", ".")
        self._logger = Logger(logger_name, args.log_level or "info", sink=self._to_rosout)
        self._container = container  # a DdsContainer: its executor, same-process delivery
        self._intra = None if container is None else container.intra
        self._local_subs: list[LocalSubscription] = []
        # (topic, writer GID) of what it publishes to the container's nodes
        self._local_pubs: list[tuple[str, bytes]] = []
        self._graph_writers: dict[bytes, str] = {}  # writer GID -> node, from the graph
        self._handle_gids: dict[int, bytes] = {}  # publication handle -> writer GID
        self._executor = Executor(self._context.participant, self._report_error) \
            if container is None else container.executor_view(self._report_error)
        self._rosout = self._make_writer("/rosout", "rcl_interfaces/msg/Log", dds_config.ROSOUT)
        self._params = ParameterServer(self._context, self._executor, self._node_key, self.fqn,
                                       self._store, self.now)
        self.add_parameter_listener(self._on_parameters_changed)
        declare(self, ClockParams)
        self.name_clashes: set[bytes] = set()  # participants that announce a node of our name
        self._graph_reader = self._context.reader(ROS_DISCOVERY_TOPIC, DISCOVERY_TYPE,
                                                  DISCOVERY_READER)
        self._executor.add_reader(self._graph_reader, self._on_graph_info, "ros_discovery_info")
        self._lifecycle_server: LifecycleServer | None = None
        if managed:
            self._hooks = LifecycleHooks(self._logger)
            self._lifecycle_server = LifecycleServer(self._context, self._executor,
                                                     self._node_key, self.fqn, self._hooks,
                                                     self._logger)

    # -- messages and topics
    def msg(self, ros_type: str) -> type:
        return messages.message_type(ros_type)

    def resolve(self, topic: str) -> str:
        return resolve_topic(topic, self.namespace, self.name, self._args.remaps)

    def _make_writer(self, topic: str, ros_type: str, profile: QosProfile,
                     ignore_local: bool = False):
        writer = self._context.writer(messages.dds_topic_name(topic), ros_type, profile,
                                      ignore_local=ignore_local)
        self._context.associate(self._node_key, writer=writer)
        self._endpoints.append((writer, "writer"))
        return writer

    def _drop_endpoint(self, *, reader=None, writer=None) -> None:
        entity = reader if reader is not None else writer
        self._context.dissociate(self._node_key, reader=reader, writer=writer)
        self._endpoints = [(e, kind) for e, kind in self._endpoints if e is not entity]
        delete_entity(entity)

    def _same_process(self, profile: QosProfile) -> bool:
        """Whether a topic of this profile goes by reference to the container's other nodes
        (volatile ones: a latched sample must stay in DDS's history for late joiners)."""
        return self._intra is not None and not profile.transient_local

    def create_publisher(self, ros_type: str, topic: str, qos: QosSpec = "default") -> DdsPublisher:
        fq, profile = self.resolve(topic), qos_profile(qos)
        local = self._same_process(profile)
        writer = self._make_writer(fq, ros_type, profile, ignore_local=local)
        if not local:
            return DdsPublisher(self, writer, fq, ros_type)
        pub = DdsPublisher(self, writer, fq, ros_type, self._intra.subscriptions(fq))
        self._intra.add_publisher(fq, self.fqn, pub.gid)
        self._local_pubs.append((fq, pub.gid))
        return pub

    def create_subscription(self, ros_type: str, topic: str, callback: Callable[[object], None],
                            qos: QosSpec = "default", urgent: bool = False,
                            screen: Callable[[bytes], bool] | None = None) -> DdsSubscription:
        fq, profile = self.resolve(topic), qos_profile(qos)
        reader = self._context.reader(messages.dds_topic_name(fq), ros_type, profile)
        self._context.associate(self._node_key, reader=reader)
        self._endpoints.append((reader, "reader"))
        label = f"subscription {fq}"
        key = self._executor.add_reader(reader, callback, label)
        if screen is not None:  # same-process messages are objects already: nothing to screen
            self._executor.set_screen(key, lambda data, info: screen(data))
        local = None
        if self._same_process(profile):
            # the shared executor itself delivers (the node's view has nothing to add)
            local = self._intra.subscribe(fq, callback, profile.depth, self._executor.executor,
                                          label, self._report_error, urgent)
            self._local_subs.append(local)
        return DdsSubscription(self, reader, key, fq, local)

    def _serve(self, srv_type: str, service: str, handler: Callable[[object], object],
                profile: QosProfile = dds_config.SERVICES_DEFAULT):
        """A server of a (fully qualified) service in this node's executor."""
        return ServiceServer(self._context, self._executor, self._node_key, srv_type, service,
                             handler, profile)

    def create_action_server(self, action_type: str, name: str, handler):
        from robot_control.bus.dds.action import DdsActionServer

        return DdsActionServer(self, action_type, name, handler)
    def create_sender_subscription(self, ros_type: str, topic: str,
                                   callback: Callable[[object, bytes | None], None],
                                   qos: QosSpec = "default", urgent: bool = False) -> DdsSubscription:
        """callback(msg, writer GID): a same-process message carries its publisher's GID, a DDS
        sample's publication handle is resolved through the reader's matched publications."""
        holder: list[DdsSubscription] = []

        def with_sender(msg) -> None:
            gid = getattr(msg, "sender_gid", None)
            info = getattr(msg, "sample_info", None)
            if gid is None and info is not None:
                gid = self._writer_gid(holder[0].reader, info.publication_handle)
            callback(msg, gid)

        holder.append(self.create_subscription(ros_type, topic, with_sender, qos, urgent))
        return holder[0]

    def _writer_gid(self, reader, handle: int) -> bytes | None:
        """The GUID of the matched writer with that publication handle (None: not matched)."""
        gid = self._handle_gids.get(handle)
        if gid is None:
            data = reader.get_matched_publication_data(handle)
            if data is None:
                return None
            gid = self._handle_gids[handle] = data.key.bytes
        return gid

    def publishers_of(self, subscription: DdsSubscription) -> list[tuple[str | None, bytes]]:
        """The reader's matched writers named by ros_discovery_info (this process's nodes by
        its own records), and the container's same-process publishers of the topic."""
        owners = {**self._graph_writers, **self._context.writer_owners()}
        out = []
        for handle in subscription.reader.get_matched_publications():
            gid = self._writer_gid(subscription.reader, handle)
            if gid is not None:
                out.append((owners.get(gid), gid))
        if subscription.local is not None:
            out += self._intra.publishers(subscription.topic_name)
        return out

    def create_client(self, srv_type: str, service: str) -> DdsClient:
        client = DdsClient(self, srv_type, self.resolve(service))
        self._clients.append(client)
        return client

    def create_serialized_reader(self, ros_type: str, topic: str, profile: QosProfile):
        """A reader owned by this node (it shows in the graph) that the caller takes serialized
        samples from itself, outside the executor: rosbag2's recorder keeps the CDR as received."""
        fq = self.resolve(topic)
        reader = self._context.reader(messages.dds_topic_name(fq), ros_type, profile)
        self._context.associate(self._node_key, reader=reader)
        self._endpoints.append((reader, "reader"))
        return reader

    def create_serialized_writer(self, ros_type: str, topic: str, profile: QosProfile):
        """A writer owned by this node for already serialized samples (rosbag2's player)."""
        return self._make_writer(self.resolve(topic), ros_type, profile)

    def create_timer(self, period_s: float, callback: Callable[[], None]):
        return self._executor.create_timer(period_s, callback)

    def when_idle(self, work: Callable[[], None]) -> None:
        self._executor.call_when_idle(work)

    # -- time
    def now(self) -> float:
        if self._sim_time is not None or self._clock_sub is not None:
            return self._sim_time or 0.0  # rclpy reads 0 until the first /clock arrives
        return time.time()

    def _on_graph_info(self, info) -> None:
        """Learn which node owns which writer; warn (once per participant) when another
        participant has a node of our exact name."""
        for entry in info.node_entities_info_seq:
            fqn = f"{entry.node_namespace.rstrip('/')}/{entry.node_name}"
            for writer in entry.writer_gid_seq:
                self._graph_writers[bytes(writer.data)[:16]] = fqn
        gid, names = participant_names(info)
        if gid == self._context.gid or gid in self.name_clashes or self.fqn not in names:
            return
        self.name_clashes.add(gid)
        self._logger.warn(f"another node named {self.fqn} is on ROS domain "
                          f"{self._context.domain_id} (participant {gid.hex()}): nodes that share "
                          "an exact name can have unintended side effects")

    def _on_clock(self, msg) -> None:
        self._sim_time = messages.seconds(msg.clock)

    def _use_sim_time(self, enabled: bool) -> None:
        if enabled and self._clock_sub is None:
            self._clock_sub = self.create_subscription("rosgraph_msgs/msg/Clock", "/clock",
                                                       self._on_clock, dds_config.CLOCK)
        elif not enabled and self._clock_sub is not None:
            self._clock_sub.destroy()
            self._clock_sub, self._sim_time = None, None

    # -- parameters
    def declare_parameter(self, name: str, default: object, description: str = "", *,
                          read_only: bool = False,
                          floating_point_range: Sequence[float] | None = None,
                          integer_range: Sequence[int] | None = None,
                          additional_constraints: str = "",
                          ptype: int | None = None) -> object:
        value = self._store.declare(
            name, default, description, read_only=read_only,
            floating_point_range=as_range(floating_point_range, float),
            integer_range=as_range(integer_range, int),
            additional_constraints=additional_constraints, ptype=ptype)
        self._params.publish_event(new={name: value})
        if name == "use_sim_time" and self._store.descriptors[name].type == BOOL:
            self._use_sim_time(bool(value))
        return value

    def set_parameters(self, changes: dict[str, object]) -> None:
        self._store.set(dict(changes))

    def _on_parameters_changed(self, new: dict[str, object], old: dict[str, object]) -> None:
        self._params.publish_event(changed=new)
        if "use_sim_time" in new:
            self._use_sim_time(bool(new["use_sim_time"]))

    # -- lifecycle: robot_control.bus.lifecycle's state machine behind dds_lifecycle's services
    def _lifecycle_state_id(self) -> int:
        return self._lifecycle_server.machine.current

    def _change_state(self, transition_id: int) -> CallbackReturn | None:
        return self._lifecycle_server.machine.change_state(transition_id)

    # -- logging
    def get_logger(self) -> Logger:
        return self._logger

    def _to_rosout(self, level: int, message: str, file: str, function: str, line: int) -> None:
        if self._destroyed:
            return
        self._rosout.write(rcl.Log(stamp=messages.time_from_nanoseconds(time.time_ns()), level=level,
                               name=self._logger.name, msg=message, file=file,
                               function=function, line=line))

    def _report_error(self, what: str, exc: BaseException) -> None:
        """Log a failed callback or take: at most once a second for each kind of failure."""
        now = time.monotonic()
        if now - self._error_times.get(what, -math.inf) < 1.0:
            return
        self._error_times[what] = now
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        self._logger.error(f"{what}: {detail}")
        self._logger.debug("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))

    # -- life cycle
    def spin_once(self, timeout_s: float | None = None) -> None:
        if not self._destroyed:
            self._executor.spin_once(timeout_s)

    def spin(self) -> None:
        if self._container is not None:
            raise RuntimeError(f"{self.fqn} is in a container: spin the container")
        restore = stop_on_signals(self.shutdown)
        self._spinning = True
        try:
            while not self._shutdown.is_set():
                self._executor.spin_once(None)
        finally:
            self._spinning = False
            restore_signals(restore)
            self.close()

    def close(self) -> None:
        """Finish the lifecycle (shutdown transition) and release the node (after spinning)."""
        with interrupts_ignored():
            self._finish_lifecycle()
            self._destroy()

    def shutdown(self) -> None:
        if self._destroyed:
            return
        if self._container is not None:
            self._container.shutdown()  # one process, one context: the container ends
            return
        self._shutdown.set()
        self._executor.wake()
        if not self._spinning:
            self._finish_lifecycle()
            self._destroy()

    @property
    def ok(self) -> bool:
        return not self._shutdown.is_set()

    @property
    def executor_stats(self):
        """Counters of the executor: callback_errors, take_errors, invalid_samples."""
        return self._executor.stats

    def _destroy(self) -> None:
        if self._destroyed:
            return
        self._destroyed = True
        self._executor.close()
        for sub in self._local_subs:
            self._intra.unsubscribe(sub)
        for topic, gid in self._local_pubs:
            self._intra.remove_publisher(topic, gid)
        delete_entity(self._graph_reader)
        self._params.destroy()
        if self._lifecycle_server is not None:
            self._lifecycle_server.destroy()
        for client in self._clients:
            client.destroy()
        for entity, _kind in self._endpoints:
            delete_entity(entity)
        self._endpoints.clear()
        self._context.remove_node(self._node_key)
        release_context(self._context)
