"""The ROS 2 graph as one DDS participant sees it: every participant's ros_discovery_info (which
node owns which endpoint — ours and ROS 2's alike) joined with the DDS built-in topics
DCPSPublication / DCPSSubscription (what each endpoint is: topic, type, QoS), as rmw_dds_common's
GraphCache joins them for ``ros2 node|topic|service``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from cyclonedds.builtin import (
    BuiltinDataReader,
    BuiltinTopicDcpsParticipant,
    BuiltinTopicDcpsPublication,
    BuiltinTopicDcpsSubscription,
)
from cyclonedds.core import InstanceState
from cyclonedds.internal import InvalidSample

from robot_control.bus.dds.config import QosProfile
from robot_control.bus.dds.context import DISCOVERY_TYPE
from robot_control.bus.dds.messages import ROS_DISCOVERY_TOPIC, ros_topic_name, ros_type_name

# keyless topic: one instance shared by all writers, so the reader keeps room for a burst of them
DISCOVERY_READER = QosProfile(depth=256, transient_local=True)


@dataclass(frozen=True)
class Endpoint:
    """A discovered reader or writer, with its ROS meaning when it has one."""

    gid: bytes
    participant: bytes
    is_writer: bool
    dds_topic: str
    dds_type: str
    qos: object

    @property
    def ros_kind(self) -> str | None:
        """"topic", "request" or "reply" for rt/, rq/, rr/ topics; None for non-ROS topics."""
        named = ros_topic_name(self.dds_topic)
        return named[0] if named else None

    @property
    def ros_name(self) -> str | None:
        named = ros_topic_name(self.dds_topic)
        return named[1] if named else None

    @property
    def ros_type(self) -> str:
        """``pkg/msg/Type``; for service endpoints the service type ``pkg/srv/Srv``."""
        try:
            name = ros_type_name(self.dds_type)
        except ValueError:
            return self.dds_type
        for suffix in ("_Request", "_Response"):
            if name.endswith(suffix) and "/srv/" in name:
                return name[: -len(suffix)]
        return name


def participant_names(info) -> tuple[bytes, list[str]]:
    """(participant GID, fully qualified names of its nodes) of a ParticipantEntitiesInfo."""
    return bytes(info.gid.data), [f"{n.node_namespace.rstrip('/')}/{n.node_name}"
                                  for n in info.node_entities_info_seq]


def duplicates(names: list[str]) -> list[str]:
    """Names that occur more than once, each once, sorted."""
    seen: set[str] = set()
    return sorted({n for n in names if n in seen or seen.add(n)})


@dataclass
class NodeEntry:
    namespace: str
    name: str
    participant: bytes
    readers: list[bytes] = field(default_factory=list)
    writers: list[bytes] = field(default_factory=list)

    @property
    def fqn(self) -> str:
        return f"{self.namespace.rstrip('/')}/{self.name}"


class GraphView:
    """Discovery data of one participant, refreshed by ``update()`` / ``settle()``."""

    def __init__(self, context):
        self._context = context
        participant = context.participant
        self._own = context.gid
        self._participants_reader = BuiltinDataReader(participant, BuiltinTopicDcpsParticipant)
        self._pub_reader = BuiltinDataReader(participant, BuiltinTopicDcpsPublication)
        self._sub_reader = BuiltinDataReader(participant, BuiltinTopicDcpsSubscription)
        self._info_reader = context.reader(ROS_DISCOVERY_TOPIC, DISCOVERY_TYPE, DISCOVERY_READER)
        self.hidden: set[bytes] = set()  # the tool's own endpoints, not part of the graph shown
        self.participants: set[bytes] = set()
        self.endpoints: dict[bytes, Endpoint] = {}
        self._infos: dict[bytes, object] = {}

    # -- refreshing
    def update(self) -> bool:
        """Take all pending discovery data; True if anything changed."""
        changed = False
        for sample in self._participants_reader.take(N=1000):
            key = sample.key.bytes
            if sample.sample_info.instance_state == InstanceState.Alive:
                changed |= key not in self.participants
                self.participants.add(key)
            elif key in self.participants:
                self.participants.discard(key)
                self._infos.pop(key, None)
                changed = True
        for reader, is_writer in ((self._pub_reader, True), (self._sub_reader, False)):
            for sample in reader.take(N=1000):
                gid = sample.key.bytes
                if sample.sample_info.instance_state != InstanceState.Alive:
                    changed |= self.endpoints.pop(gid, None) is not None
                elif gid not in self.endpoints:
                    self.endpoints[gid] = Endpoint(gid, sample.participant_key.bytes, is_writer,
                                                   sample.topic_name, sample.type_name, sample.qos)
                    changed = True
        for info in self._info_reader.take(N=1000):
            if isinstance(info, InvalidSample):
                continue
            self._infos[bytes(info.gid.data)] = info
            changed = True
        return changed

    def settle(self, min_s: float = 0.3, quiet_s: float = 0.2, max_s: float = 2.0) -> None:
        """Gather discovery data for at least min_s, until nothing changed for quiet_s (≤ max_s)."""
        start = last_change = time.monotonic()
        while True:
            if self.update():
                last_change = time.monotonic()
            now = time.monotonic()
            if now - start >= max_s or (now - start >= min_s and now - last_change >= quiet_s):
                return
            time.sleep(0.02)

    # -- queries
    def nodes(self) -> list[NodeEntry]:
        """Every node announced by a live participant (our own tool participant has none)."""
        out = []
        for gid, info in self._infos.items():
            if gid not in self.participants and gid != self._own:
                continue
            for n in info.node_entities_info_seq:
                out.append(NodeEntry(n.node_namespace, n.node_name, gid,
                                     [bytes(g.data) for g in n.reader_gid_seq],
                                     [bytes(g.data) for g in n.writer_gid_seq]))
        return sorted(out, key=lambda n: n.fqn)

    def find_node(self, fqn: str) -> NodeEntry | None:
        fqn = fqn if fqn.startswith("/") else "/" + fqn
        return next((n for n in self.nodes() if n.fqn == fqn), None)

    def hide(self, *entities) -> None:
        """Leave these endpoints (the tool's own echo readers, service clients) out of queries."""
        self.hidden.update(e.guid.bytes for e in entities)

    def visible_endpoints(self) -> list[Endpoint]:
        return [e for e in self.endpoints.values() if e.gid not in self.hidden]

    def names_and_types(self, kind: str) -> dict[str, list[str]]:
        """ROS names of topics ("topic") or services ("request") with their types."""
        out: dict[str, set[str]] = {}
        for e in self.visible_endpoints():
            if e.ros_kind == kind:
                out.setdefault(e.ros_name, set()).add(e.ros_type)
        return {name: sorted(types) for name, types in sorted(out.items())}

    def node_endpoints(self, node: NodeEntry) -> dict[str, dict[str, list[str]]]:
        """A node's publishers, subscribers, service servers and clients (name -> types)."""
        groups: dict[str, dict[str, set[str]]] = {
            "subscribers": {}, "publishers": {}, "service_servers": {}, "service_clients": {}}
        for gids, is_writer in ((node.readers, False), (node.writers, True)):
            for gid in gids:
                e = self.endpoints.get(gid)
                if e is None:
                    continue
                if e.ros_kind == "topic":
                    group = "publishers" if is_writer else "subscribers"
                elif e.ros_kind == "request":
                    group = "service_clients" if is_writer else "service_servers"
                else:
                    continue
                groups[group].setdefault(e.ros_name, set()).add(e.ros_type)
        return {g: {n: sorted(t) for n, t in sorted(d.items())} for g, d in groups.items()}

    def publications(self, topic: str) -> list[Endpoint]:
        """The writers on a ROS topic."""
        return [e for e in self.visible_endpoints()
                if e.is_writer and e.ros_kind == "topic" and e.ros_name == topic]
