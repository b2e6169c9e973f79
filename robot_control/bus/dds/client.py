"""Client-side tools for ``robot-control node|topic|param|service`` over the DDS bus, without ROS.

They see the graph as ``ros2`` does (rmw_dds_common's ros_discovery_info plus DDS discovery), so
they list and drive ROS 2 nodes and ours alike, and they change parameters only through the
standard rcl_interfaces parameter services — there is no private protocol. Functions return
data; the ``format_*`` helpers turn it into the text ``ros2`` would print.
"""

from __future__ import annotations

import collections
import dataclasses
import math
import statistics
import threading
import time
import typing
from collections.abc import Iterator

import yaml
from cyclonedds.core import InstanceState, Policy, ReadCondition, SampleState, ViewState, WaitSet
from cyclonedds.idl import IdlStruct
from cyclonedds.internal import InvalidSample

from robot_control.bus import parameters
from robot_control.bus.dds import config as dds_config
from robot_control.bus.dds.config import QosProfile
from robot_control.bus.dds.context import acquire_context, delete_entity, release_context
from robot_control.bus.dds.graph import GraphView
from robot_control.bus.dds.messages import MESSAGE_TYPES, SERVICE_TYPES, dds_topic_name
from robot_control.bus.dds.msg import rcl_interfaces as rcl
from robot_control.bus.dds.parameters import from_descriptor_msg, from_value_msg, to_value_msg
from robot_control.bus.dds.services import ServiceClient, ServiceError
from robot_control.bus.parameters import Descriptor
from robot_control.bus.ros_args import parse_value
from robot_control.foundation.safe_yaml import load_text

__all__ = ["BusClient", "BusClientError", "format_descriptor", "format_hz", "format_message",
           "format_node_info", "format_node_list", "format_param_list", "format_param_value",
           "format_service_list", "format_topic_list", "message_from_dict", "message_to_dict",
           "parse_value"]


class BusClientError(RuntimeError):
    """A request the graph cannot answer (unknown node, topic, type, no service)."""


def _fq(name: str) -> str:
    return name if name.startswith("/") else "/" + name


class BusClient:
    """One tool participant on the ROS domain (ROS_DOMAIN_ID etc. as ROS 2 reads them)."""

    def __init__(self, discovery_s: float = 2.0):
        try:
            self.context = acquire_context()
        except ValueError as exc:  # the environment names no usable domain (ROS_DOMAIN_ID=abc)
            raise BusClientError(str(exc)) from None
        self.graph = GraphView(self.context)
        self.discovery_s = discovery_s
        self._clients: dict[tuple[str, str], ServiceClient] = {}
        self._settled = False

    def __enter__(self) -> BusClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        for client in self._clients.values():
            client.destroy()
        self._clients.clear()
        release_context(self.context)

    def _settle(self) -> None:
        if not self._settled:
            self.graph.settle(max_s=self.discovery_s)
            self._settled = True
        else:
            self.graph.update()

    # -- graph ---------------------------------------------------------------------------------
    def node_list(self) -> list[str]:
        """Fully qualified names of every node on the domain, a name as often as nodes have it
        (``ros2 node list``: two stacks on one domain show as duplicates)."""
        self._settle()
        return sorted(n.fqn for n in self.graph.nodes())

    def node_info(self, name: str) -> dict[str, object]:
        """A node's publishers, subscribers, service servers and clients (``ros2 node info``)."""
        self._settle()
        node = self.graph.find_node(name)
        if node is None:
            raise BusClientError(f"node {_fq(name)} not found")
        return {"name": node.fqn, **self.graph.node_endpoints(node)}

    def topic_list(self) -> dict[str, list[str]]:
        """Topic name -> types (``ros2 topic list -t``)."""
        self._settle()
        return self.graph.names_and_types("topic")

    def service_list(self) -> dict[str, list[str]]:
        """Service name -> types (``ros2 service list -t``)."""
        self._settle()
        return self.graph.names_and_types("request")

    # -- topics --------------------------------------------------------------------------------
    def topic_reader(self, topic: str, timeout_s: float):
        """A reader of a published topic, with its publishers' type and QoS (BusClientError if
        nobody publishes it within timeout_s); hidden from the graph, read with ``samples``."""
        topic = _fq(topic)
        deadline = time.monotonic() + timeout_s
        while not (pubs := self.graph.publications(topic)):
            if time.monotonic() > deadline:
                raise BusClientError(f"no publisher on {topic} within {timeout_s:g} s")
            self.graph.update()
            time.sleep(0.02)
        types = sorted({p.ros_type for p in pubs})
        if len(types) != 1:
            raise BusClientError(f"{topic} has publishers of several types: {types}")
        if types[0] not in MESSAGE_TYPES:
            raise BusClientError(f"{topic} carries {types[0]}, a type robot-control cannot decode")
        return self.typed_reader(topic, types[0], _profile_matching(pubs))

    def typed_reader(self, topic: str, ros_type: str, profile: QosProfile):
        """A reader of a topic whose type is known, made at once (it matches publishers as they
        appear); hidden from the graph, read with ``samples``."""
        reader = self.context.reader(dds_topic_name(_fq(topic)), ros_type, profile)
        self.graph.hide(reader)
        return reader

    def samples(self, reader, timeout_s: float | None = None,
                stop: threading.Event | None = None, idle: bool = False) -> Iterator[object]:
        """Messages of a ``topic_reader`` as they arrive, until timeout_s without one or ``stop``
        is set (checked every 0.1 s); with ``idle`` also None at each wake-up that brought none
        (so a caller can act on time while the topic is silent); the reader is deleted at the
        end."""
        condition = ReadCondition(reader, SampleState.Any | ViewState.Any | InstanceState.Any)
        waitset = WaitSet(self.context.participant)
        waitset.attach(condition)
        try:
            last = time.monotonic()
            while stop is None or not stop.is_set():
                got = False
                for sample in reader.take(N=256, condition=condition):
                    if not isinstance(sample, InvalidSample):
                        got = True
                        yield sample
                now = time.monotonic()
                if got:
                    last = now
                elif timeout_s is not None and now - last > timeout_s:
                    return
                elif idle:
                    yield None
                waitset.wait(int(0.1e9))
        finally:
            waitset.detach(condition)
            delete_entity(reader)

    def iter_topic(self, topic: str, timeout_s: float | None = None,
                   discovery_s: float = 5.0) -> Iterator[object]:
        """Messages of a topic as they arrive (forever, or until timeout_s without a message)."""
        yield from self.samples(self.topic_reader(topic, discovery_s), timeout_s)

    def topic_echo(self, topic: str, count: int = 1, timeout_s: float = 5.0) -> list[object]:
        """The next ``count`` messages of a topic (fewer if timeout_s passes without one)."""
        out: list[object] = []
        for msg in self.iter_topic(topic, timeout_s=timeout_s, discovery_s=timeout_s):
            out.append(msg)
            if len(out) >= count:
                break
        return out

    def topic_rates(self, topic: str, window: int = 10000, every_s: float = 1.0,
                    discovery_s: float = 5.0) -> Iterator[tuple[bool, dict[str, float]]]:
        """``ros2 topic hz``'s running report: every ``every_s`` seconds, whether messages came
        since the last report and the rate statistics (hz_statistics) of the last ``window``
        source timestamps; forever (BusClientError if nobody publishes the topic within
        discovery_s)."""
        stamps: collections.deque[int] = collections.deque(maxlen=window)
        fresh, due = False, None
        for sample in self.samples(self.topic_reader(topic, discovery_s), idle=True):
            now = time.monotonic()
            if sample is not None:
                stamps.append(sample.sample_info.source_timestamp)
                if not stamps or len(stamps) == 1:
                    due = now + every_s  # reports a second apart from the first message on
                fresh = True
            due = due or now + every_s
            if now >= due:
                due += every_s * (int((now - due) // every_s) + 1)
                yield fresh, hz_statistics(list(stamps))
                fresh = False

    def topic_hz(self, topic: str, duration_s: float = 2.0,
                 timeout_s: float = 5.0) -> dict[str, float]:
        """Publication rate of a topic from the samples' source timestamps (``ros2 topic hz``);
        BusClientError if nobody publishes it within timeout_s, fewer samples if it falls silent
        for timeout_s."""
        stamps: list[int] = []
        deadline = None
        for sample in self.iter_topic(topic, timeout_s=timeout_s, discovery_s=timeout_s):
            stamps.append(sample.sample_info.source_timestamp)
            deadline = deadline or time.monotonic() + duration_s
            if time.monotonic() >= deadline:
                break
        return hz_statistics(stamps)

    # -- parameters (only the standard rcl_interfaces services) --------------------------------
    def _call(self, node: str, service: str, request, timeout_s: float = 15.0):
        srv = f"{_fq(node).rstrip('/')}/{service}"
        srv_type = "rcl_interfaces/srv/" + "".join(w.capitalize() for w in service.split("_"))
        return self.service_call(srv, srv_type, request, timeout_s)

    def param_list(self, node: str, prefixes: list[str] | None = None, depth: int = 0) -> list[str]:
        response = self._call(node, "list_parameters",
                              rcl.ListParametersRequest(prefixes=list(prefixes or []), depth=depth))
        return sorted(response.result.names)

    def param_get(self, node: str, name: str) -> object:
        response = self._call(node, "get_parameters", rcl.GetParametersRequest(names=[name]))
        if not response.values:
            raise BusClientError(f"parameter {name} is not declared on {_fq(node)}")
        return from_value_msg(response.values[0])

    def param_types(self, node: str, names: list[str]) -> list[int]:
        response = self._call(node, "get_parameter_types",
                              rcl.GetParameterTypesRequest(names=list(names)))
        return list(response.types)

    def param_set(self, node: str, name: str, value: object) -> tuple[bool, str]:
        """(successful, reason) as the node's validators decide; a str value is parsed as YAML.

        A value of another type than the declared one is refused here, with ros2 param's
        reason, rather than sent (it could not be encoded as that type anyway).
        """
        if isinstance(value, str):
            value = parse_value(value)
        types = self.param_types(node, [name])
        ptype = types[0] if types and types[0] != parameters.NOT_SET else None
        try:
            if ptype is not None:
                value = parameters.coerce(_number_text(value, ptype), ptype, name)
            msg = to_value_msg(value, ptype)
        except (parameters.ParameterError, KeyError, TypeError):
            try:
                given = parameters.TYPE_NAMES[parameters.type_of(value)]
            except parameters.ParameterError:
                given = type(value).__name__
            return False, (f"Wrong parameter type, parameter {{{name}}} is of type "
                           f"{{{parameters.TYPE_NAMES.get(ptype, ptype)}}}, setting it to "
                           f"{{{given}}} is not allowed.")
        response = self._call(node, "set_parameters", rcl.SetParametersRequest(
            parameters=[rcl.Parameter(name=name, value=msg)]))
        result = response.results[0]
        return bool(result.successful), result.reason

    def param_describe(self, node: str, name: str) -> Descriptor:
        response = self._call(node, "describe_parameters",
                              rcl.DescribeParametersRequest(names=[name]))
        if not response.descriptors:
            raise BusClientError(f"parameter {name} is not declared on {_fq(node)}")
        return from_descriptor_msg(response.descriptors[0])

    # -- services ------------------------------------------------------------------------------
    def service_call(self, service: str, srv_type: str, request: object = None,
                     timeout_s: float = 5.0):
        """Call a service of a known type; request is a message, a dict or a YAML string."""
        if srv_type not in SERVICE_TYPES:
            raise BusClientError(f"unknown service type {srv_type}; known: {sorted(SERVICE_TYPES)}")
        request_type = SERVICE_TYPES[srv_type][0]
        if request is None or isinstance(request, str):
            request = load_text(request or "{}", "request", BusClientError) or {}
        if isinstance(request, dict):
            request = message_from_dict(request_type, request)
        key = (srv_type, _fq(service))
        if key not in self._clients:
            self._clients[key] = ServiceClient(self.context, srv_type, _fq(service),
                                               dds_config.PARAMETERS)
            self.graph.hide(self._clients[key].writer, self._clients[key].reader)
        try:
            return self._clients[key].call(request, timeout_s)
        except ServiceError as exc:
            raise BusClientError(str(exc)) from exc


def _number_text(value: object, ptype: int) -> object:
    """YAML reads ``1e9`` (no dot) as text; for a double (array) parameter it means the number."""
    def number(item: object) -> object:
        try:
            return float(item) if isinstance(item, str) else item
        except ValueError:
            return item

    if ptype == parameters.DOUBLE:
        return number(value)
    if ptype == parameters.DOUBLE_ARRAY and isinstance(value, list):
        return [number(v) for v in value]
    return value


def _profile_matching(pubs) -> QosProfile:
    """A reader profile every publisher can serve (ros2's "best available" for echo)."""
    def policy(qos, cls):
        try:
            return qos[cls]
        except (KeyError, TypeError):
            return None

    reliable = all(isinstance(policy(p.qos, Policy.Reliability), Policy.Reliability.Reliable)
                   for p in pubs)
    latched = all(policy(p.qos, Policy.Durability) == Policy.Durability.TransientLocal
                  for p in pubs)
    return QosProfile(depth=100, reliable=reliable, transient_local=latched)


def hz_statistics(stamps_ns: list[int]) -> dict[str, float]:
    """Rate and period statistics of a series of timestamps (ns)."""
    periods = [(b - a) * 1e-9 for a, b in zip(stamps_ns, stamps_ns[1:], strict=False) if b > a]
    if not periods:
        return {"count": len(stamps_ns), "rate_hz": 0.0, "min_s": math.nan, "max_s": math.nan,
                "std_dev_s": math.nan}
    mean = statistics.fmean(periods)
    return {"count": len(stamps_ns), "rate_hz": 1.0 / mean, "min_s": min(periods),
            "max_s": max(periods), "std_dev_s": statistics.pstdev(periods)}


# --- messages <-> plain data -------------------------------------------------------------------


def message_to_dict(msg: object) -> dict[str, object]:
    """A message as nested dicts and lists (fields in .msg order; the request header dropped)."""
    out = {}
    for f in dataclasses.fields(msg):
        if f.name in ("guid", "seq") and type(msg).__name__.endswith(("Request", "Response")):
            continue
        value = getattr(msg, f.name)
        if isinstance(value, IdlStruct):
            value = message_to_dict(value)
        elif isinstance(value, list | tuple):
            value = [message_to_dict(v) if isinstance(v, IdlStruct) else v for v in value]
        out[f.name] = value
    return out


def _struct_of(hint) -> type | None:
    """The IdlStruct a field hint holds (directly, or as the element of a sequence/array)."""
    if isinstance(hint, type) and issubclass(hint, IdlStruct):
        return hint
    for arg in typing.get_args(hint)[1:]:
        sub = getattr(arg, "subtype", None)
        if isinstance(sub, type) and issubclass(sub, IdlStruct):
            return sub
    return None


def message_from_dict(cls: type, data: dict[str, object]):
    """Build a message from nested dicts (e.g. a ``ros2 service call`` YAML request)."""
    if not isinstance(data, dict):
        raise BusClientError(f"{cls.__name__} expects a mapping, got {data!r}")
    hints = typing.get_type_hints(cls, include_extras=True)
    unknown = set(data) - set(hints)
    if unknown:
        raise BusClientError(f"{cls.__name__} has no field(s) {sorted(unknown)}")
    kwargs = {}
    for name, value in data.items():
        struct = _struct_of(hints[name])
        if struct is not None and isinstance(value, list):
            value = [message_from_dict(struct, v) for v in value]
        elif struct is not None:
            value = message_from_dict(struct, value)
        kwargs[name] = value
    return cls(**kwargs)


# --- formatting (what ros2 prints) -------------------------------------------------------------


def format_node_list(names: list[str]) -> str:
    return "\n".join(names)


def format_node_info(info: dict[str, object]) -> str:
    lines = [str(info["name"])]
    for key, title in (("subscribers", "Subscribers"), ("publishers", "Publishers"),
                       ("service_servers", "Service Servers"),
                       ("service_clients", "Service Clients")):
        lines.append(f"  {title}:")
        for name, types in info[key].items():
            lines.append(f"    {name}: {', '.join(types)}")
    return "\n".join(lines)


def format_topic_list(topics: dict[str, list[str]], show_types: bool = False) -> str:
    if show_types:
        return "\n".join(f"{n} [{', '.join(t)}]" for n, t in topics.items())
    return "\n".join(topics)


format_service_list = format_topic_list


def format_message(msg: object) -> str:
    """YAML as ``ros2 topic echo`` prints it, followed by the ``---`` separator."""
    return yaml.safe_dump(message_to_dict(msg), default_flow_style=False, sort_keys=False) + "---"


def format_hz(stats: dict[str, float]) -> str:
    return (f"average rate: {stats['rate_hz']:.3f}\n\tmin: {stats['min_s']:.6f}s "
            f"max: {stats['max_s']:.6f}s std dev: {stats['std_dev_s']:.6f}s "
            f"window: {int(stats['count'])}")


def format_param_list(node: str, names: list[str]) -> str:
    return "\n".join([f"{_fq(node)}:"] + [f"  {n}" for n in names])


_VALUE_WORDS = {bool: "Boolean value is", int: "Integer value is", float: "Double value is",
                str: "String value is", bytes: "Byte values are"}


def format_param_value(value: object) -> str:
    if isinstance(value, list):
        kind = parameters.TYPE_NAMES[parameters.type_of(value)].split()[0].capitalize()
        return f"{kind} values are: {value}"
    return f"{_VALUE_WORDS.get(type(value), 'Value is')}: {value}"


def format_descriptor(d: Descriptor) -> str:
    lines = [f"Parameter name: {d.name}", f"  Type: {parameters.TYPE_NAMES.get(d.type, d.type)}"]
    if d.description:
        lines.append(f"  Description: {d.description}")
    constraints = []
    if d.read_only:
        constraints.append("    Read only: true")
    for rng in (d.floating_point_range, d.integer_range):
        if rng:
            constraints += [f"    Min value: {rng[0]}", f"    Max value: {rng[1]}"]
            if rng[2]:
                constraints.append(f"    Step: {rng[2]}")
    if d.additional_constraints:
        constraints.append(f"    {d.additional_constraints}")
    if constraints:
        lines += ["  Constraints:"] + constraints
    return "\n".join(lines)


# --- one-shot functions (one tool participant per call) ----------------------------------------


def _once(method: str, *args, **kwargs):
    with BusClient() as client:
        return getattr(client, method)(*args, **kwargs)


def node_list() -> list[str]:
    return _once("node_list")


def node_info(name: str) -> dict[str, object]:
    return _once("node_info", name)


def topic_list() -> dict[str, list[str]]:
    return _once("topic_list")


def topic_echo(name: str, count: int = 1, timeout_s: float = 5.0) -> list[object]:
    return _once("topic_echo", name, count, timeout_s)


def topic_hz(name: str, duration_s: float = 2.0) -> dict[str, float]:
    return _once("topic_hz", name, duration_s)


def service_list() -> dict[str, list[str]]:
    return _once("service_list")


def service_call(name: str, srv_type: str, request_yaml: str = "{}", timeout_s: float = 5.0):
    return _once("service_call", name, srv_type, request_yaml, timeout_s)


def param_list(node: str) -> list[str]:
    return _once("param_list", node)


def param_get(node: str, name: str) -> object:
    return _once("param_get", node, name)


def param_set(node: str, name: str, value: object) -> tuple[bool, str]:
    return _once("param_set", node, name, value)


def param_describe(node: str, name: str) -> Descriptor:
    return _once("param_describe", node, name)
