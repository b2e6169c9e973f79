"""The DDS backend's per-process state: one participant shared by every node of the process (as
an rcl context shares one), the endpoints made on it, and the node graph it announces.

rmw_cyclonedds tells other ROS 2 processes which node owns which reader and writer by
publishing ``rmw_dds_common/ParticipantEntitiesInfo`` on the DDS topic ``ros_discovery_info``
(reliable, transient local, keep last 1): the participant's GID and, per node, its namespace,
name and the GIDs (16-byte DDS GUIDs) of its readers and writers. ``ros2 node list`` and
``ros2 node info`` are built from it. rmw_cyclonedds republishes it at every endpoint that comes
or goes; as each message carries every GID of the process, a composed stack's start-up (≈ 150
endpoints) then sends ≈ 300 kB to every peer that is already up (bench/fleet_hosts.py). Endpoints
come in bursts (a node makes dozens at once), so this context announces once a burst is over:
ANNOUNCE_DELAY_S after a change, with every change made meanwhile.
"""

from __future__ import annotations

import itertools
import os
import threading
from dataclasses import dataclass, field

from cyclonedds.domain import Domain, DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic

from robot_control.bus.dds import config as dds_config
from robot_control.bus.dds.config import QosProfile
from robot_control.bus.dds.messages import ROS_DISCOVERY_TOPIC, message_type
from robot_control.bus.dds.msg import rmw_dds_common as rmw
from robot_control.security.keystore import check_process

DISCOVERY_TYPE = "rmw_dds_common/msg/ParticipantEntitiesInfo"
#: the graph is announced this long after a change (the rest of its burst rides along), s
ANNOUNCE_DELAY_S = 0.02


def gid_of(entity) -> bytes:
    """An entity's GID as rmw_cyclonedds makes it: the 16 bytes of its DDS GUID."""
    return entity.guid.bytes


def delete_entity(entity) -> None:
    """Delete a Cyclone entity now rather than when Python collects it (peers see it go)."""
    entity.__del__()


@dataclass
class NodeRecord:
    """What ros_discovery_info says about one node."""

    namespace: str
    name: str
    readers: list[bytes] = field(default_factory=list)
    writers: list[bytes] = field(default_factory=list)


class DdsContext:
    """The process's participant on the ROS domain, with topic and endpoint factories."""

    def __init__(self, env=None):
        domain_id, config = dds_config.domain_config_from_env(env)
        self.domain_id = domain_id
        self._domain = Domain(domain_id, config)
        self.participant = DomainParticipant(domain_id)
        self.gid = gid_of(self.participant)
        self._lock = threading.RLock()
        self._topics: dict[str, Topic] = {}
        self._csid = itertools.count(1)
        self._nodes: dict[int, NodeRecord] = {}
        self._node_ids = itertools.count(1)
        self._discovery_writer: DataWriter | None = None
        self._announcement: threading.Timer | None = None  # the pending announcement
        self._closed = False
        self.users = 0

    # -- entities
    def topic(self, dds_topic: str, ros_type: str) -> Topic:
        """The participant's topic of that name (one Topic entity per name, as rmw shares them)."""
        with self._lock:
            topic = self._topics.get(dds_topic)
            if topic is None:
                topic = Topic(self.participant, dds_topic, message_type(ros_type))
                self._topics[dds_topic] = topic
            elif topic.data_type is not message_type(ros_type):
                raise ValueError(f"DDS topic {dds_topic} already has type "
                                 f"{topic.data_type.__name__}, not {ros_type}")
            return topic

    def writer(self, dds_topic: str, ros_type: str, profile: QosProfile,
               extra_user_data: str = "", ignore_local: bool = False) -> DataWriter:
        """A writer with rmw's QoS for the profile and ``typehash=…;`` in USER_DATA;
        ``ignore_local``: it matches no reader of this participant (intra_process.py)."""
        qos = dds_config.endpoint_qos(profile, ros_type, extra_user_data, ignore_local)
        return DataWriter(self.participant, self.topic(dds_topic, ros_type), qos)

    def reader(self, dds_topic: str, ros_type: str, profile: QosProfile,
               extra_user_data: str = "") -> DataReader:
        qos = dds_config.endpoint_qos(profile, ros_type, extra_user_data)
        return DataReader(self.participant, self.topic(dds_topic, ros_type), qos)

    def client_service_id(self) -> str:
        """A unique client/service id as rmw_cyclonedds' get_unique_csid/csid_to_string make it:
        the participant's 12-byte GUID prefix and a big-endian counter, hex, dot-separated."""
        with self._lock:
            counter = next(self._csid)
        data = self.gid[:12] + counter.to_bytes(4, "big")
        return f"{data[0]:2x}" + "".join(f".{b:x}" for b in data[1:])

    # -- the node graph (ros_discovery_info)
    def add_node(self, namespace: str, name: str) -> int:
        with self._lock:
            key = next(self._node_ids)
            self._nodes[key] = NodeRecord(namespace, name)
            self._announce()
            return key

    def remove_node(self, key: int) -> None:
        with self._lock:
            if self._nodes.pop(key, None) is not None:
                self._announce()

    def associate(self, node_key: int, *, reader=None, writer=None) -> None:
        """Record that a node owns a reader or writer, and tell the graph."""
        with self._lock:
            record = self._nodes.get(node_key)
            if record is None:
                return
            if reader is not None:
                record.readers.append(gid_of(reader))
            if writer is not None:
                record.writers.append(gid_of(writer))
            self._announce()

    def dissociate(self, node_key: int, *, reader=None, writer=None) -> None:
        with self._lock:
            record = self._nodes.get(node_key)
            if record is None:
                return
            for gids, entity in ((record.readers, reader), (record.writers, writer)):
                if entity is not None:
                    gid = gid_of(entity)
                    if gid in gids:
                        gids.remove(gid)
            self._announce()

    def writer_owners(self) -> dict[bytes, str]:
        """Writer GID -> fully qualified name of the node of this process that owns it."""
        with self._lock:
            return {gid: f"{r.namespace.rstrip('/')}/{r.name}"
                    for r in self._nodes.values() for gid in r.writers}

    def entities_info(self) -> rmw.ParticipantEntitiesInfo:
        """This participant's ParticipantEntitiesInfo (rmw_dds_common GraphCache's message)."""
        with self._lock:
            nodes = [
                rmw.NodeEntitiesInfo(
                    node_namespace=r.namespace,
                    node_name=r.name,
                    reader_gid_seq=[rmw.Gid(data=list(g)) for g in r.readers],
                    writer_gid_seq=[rmw.Gid(data=list(g)) for g in r.writers],
                )
                for r in self._nodes.values()
            ]
        return rmw.ParticipantEntitiesInfo(gid=rmw.Gid(data=list(self.gid)), node_entities_info_seq=nodes)

    def _announce(self) -> None:
        """The graph changed: announce it ANNOUNCE_DELAY_S from now (called under the lock)."""
        if self._announcement is None and not self._closed:
            self._announcement = threading.Timer(ANNOUNCE_DELAY_S, self._publish_graph)
            self._announcement.daemon = True
            self._announcement.start()

    def _publish_graph(self) -> None:
        """Publish this participant's ParticipantEntitiesInfo as it is now."""
        with self._lock:
            self._announcement = None
            if self._closed:
                return
            if self._discovery_writer is None:
                self._discovery_writer = self.writer(ROS_DISCOVERY_TOPIC, DISCOVERY_TYPE,
                                                     dds_config.DISCOVERY_INFO)
            self._discovery_writer.write(self.entities_info())

    def close(self) -> None:
        """Delete the participant and everything on it: peers see this process leave."""
        with self._lock:
            self._closed = True
            if self._announcement is not None:
                self._announcement.cancel()
            self._topics.clear()
            self._discovery_writer = None
            delete_entity(self.participant)
            delete_entity(self._domain)


_context: DdsContext | None = None
_context_lock = threading.Lock()


def acquire_context() -> DdsContext:
    """The process's context, created on first use (from ROS_DOMAIN_ID etc.); release when done."""
    global _context
    with _context_lock:
        if _context is None:
            # never a plain participant where security was asked for: this Cyclone has none
            check_process([], os.environ, backend="dds")
            _context = DdsContext()
        _context.users += 1
        return _context


def release_context(context: DdsContext) -> None:
    """Drop one user; the last one closes the participant."""
    global _context
    with _context_lock:
        context.users -= 1
        if context.users <= 0 and context is _context:
            _context = None
            context.close()
