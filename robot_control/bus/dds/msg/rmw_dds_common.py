"""rmw_dds_common (Jazzy): the node-graph messages every ROS 2 participant publishes on the DDS
topic ``ros_discovery_info``, as Cyclone DDS structs.
"""

from dataclasses import dataclass, field

from cyclonedds.idl import IdlStruct, types

GID_SIZE = 16  # Jazzy's RMW_GID_STORAGE_SIZE: a DDS GUID (12-byte prefix + 4-byte entity id)


def _zero_gid() -> list[int]:
    return [0] * GID_SIZE


@dataclass
class Gid(IdlStruct, typename="rmw_dds_common::msg::dds_::Gid_"):
    """rmw_dds_common/msg/Gid: char[16] data (``char`` is IDL uint8); accepts bytes or a list."""

    data: types.array[types.uint8, GID_SIZE] = field(default_factory=_zero_gid)


@dataclass
class NodeEntitiesInfo(IdlStruct, typename="rmw_dds_common::msg::dds_::NodeEntitiesInfo_"):
    """rmw_dds_common/msg/NodeEntitiesInfo: string<=256 node_namespace, node_name,
    Gid[] reader_gid_seq, writer_gid_seq."""

    node_namespace: types.bounded_str[256] = ""
    node_name: types.bounded_str[256] = ""
    reader_gid_seq: types.sequence[Gid] = field(default_factory=list)
    writer_gid_seq: types.sequence[Gid] = field(default_factory=list)


@dataclass
class ParticipantEntitiesInfo(
    IdlStruct, typename="rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_"
):
    """rmw_dds_common/msg/ParticipantEntitiesInfo: Gid gid, NodeEntitiesInfo[]
    node_entities_info_seq."""

    gid: Gid = field(default_factory=Gid)
    node_entities_info_seq: types.sequence[NodeEntitiesInfo] = field(default_factory=list)
