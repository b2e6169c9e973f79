"""Cyclone DDS domain configuration and QoS that mirror rmw_cyclonedds (ROS 2 Jazzy).

Our participants must find ROS 2 nodes started with the same environment and be found by
them, so the domain id, the discovery range, the static peers and ``CYCLONEDDS_URI`` are read
as rcl reads them (rcl/discovery_options.c, rcl/domain_id.c) and turned into the XML fragment
rmw_cyclonedds' ``check_create_domain`` hands to ``dds_create_domain``. The QoS profiles are
the rmw ones, applied as rmw_cyclonedds' ``create_readwrite_qos`` applies them.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from xml.sax.saxutils import quoteattr

from cyclonedds.qos import Policy, Qos
from cyclonedds.util import duration

from robot_control.bus.dds.messages import ROS_DISCOVERY_TOPIC, type_hash
from robot_control.bus.discovery import (  # noqa: F401  (rcl's reading of the environment)
    MAX_DOMAIN_ID,
    DiscoveryOptions,
    DiscoveryRange,
    discovery_options_from_env,
    discovery_range_from_env,
    domain_id_from_env,
    static_peers_from_env,
)
from robot_control.bus.qos import (  # noqa: F401  (the profiles, re-exported for the backend)
    CLOCK,
    DEFAULT,
    DISCOVERY_INFO,
    LATCHED,
    PARAMETER_EVENTS,
    PARAMETERS,
    ROSOUT,
    SENSOR_DATA,
    SERVICES_DEFAULT,
    TOPIC_PROFILES,
    QosProfile,
)
from robot_control.bus.transport import with_receive_buffer

log = logging.getLogger(__name__)

MAX_AUTO_PARTICIPANT_INDEX = 32  # hard-coded in rmw_cyclonedds
INFINITE = duration(infinite=True)
LENGTH_UNLIMITED = -1


LOOPBACK_INTERFACE = '<NetworkInterface address="127.0.0.1"/>'


def loopback_interfaces(static_peers: tuple[str, ...]) -> str:
    """The ``<Interfaces>`` of a LOCALHOST participant: the loopback interface, so that it answers
    the SPDP a ROS 2 node (Cyclone 0.10.5) sends the ``localhost`` peer from 127.0.0.1.

    Measured against Jazzy: a Python Cyclone 11 participant left to choose its interface takes
    only the non-loopback one, ignores that SPDP, and ROS 2 nodes started after it never find it.
    Loopback alone keeps LOCALHOST traffic on this host and works where lo is the only interface;
    with static peers, the automatically chosen interface is kept too so remote peers stay
    reachable (there Cyclone refuses to select lo twice, so a host with nothing but lo must not
    name static peers under LOCALHOST).
    """
    auto = '<NetworkInterface autodetermine="true"/>' if static_peers else ""
    return f"<Interfaces>{auto}{LOOPBACK_INTERFACE}</Interfaces>"


def cyclonedds_config(
    options: DiscoveryOptions, cyclonedds_uri: str = "", pid: int | None = None
) -> str:
    """Cyclone DDS config string of rmw_cyclonedds' check_create_domain: a discovery fragment
    (none for SYSTEM_DEFAULT), a comma, then CYCLONEDDS_URI (Cyclone skips empty parts). Under
    LOCALHOST the fragment also selects the loopback interface (:func:`loopback_interfaces`)."""
    if options.range is DiscoveryRange.SYSTEM_DEFAULT:
        if options.static_peers:
            log.warning("static peers are ignored: discovery range is SYSTEM_DEFAULT")
        return cyclonedds_uri
    localhost = options.range is DiscoveryRange.LOCALHOST
    off = options.range is DiscoveryRange.OFF
    peers = () if off else (("localhost",) if localhost else ()) + options.static_peers
    if off and options.static_peers:
        log.warning("static peers are ignored: discovery range is OFF")

    parts = ["<CycloneDDS><Domain>"]
    if localhost:
        parts.append(f"<General>{loopback_interfaces(options.static_peers)}"
                     "<AllowMulticast>false</AllowMulticast></General>")
    elif off:
        parts.append("<General><AllowMulticast>false</AllowMulticast></General>")
    if off:
        # a tag no other process carries: nothing can discover this participant
        pid = os.getpid() if pid is None else pid
        parts.append(
            f"<Discovery><ParticipantIndex>none</ParticipantIndex>"
            f"<Tag>ros_discovery_off_{pid}</Tag>"
        )
    else:
        parts.append(
            "<Discovery><ParticipantIndex>auto</ParticipantIndex>"
            f"<MaxAutoParticipantIndex>{MAX_AUTO_PARTICIPANT_INDEX}</MaxAutoParticipantIndex>"
        )
    if peers:
        parts.append("<Peers>")
        parts.extend(f"<Peer address={quoteattr(peer)}/>" for peer in peers)
        parts.append("</Peers>")
    parts.append("</Discovery></Domain></CycloneDDS>,")
    return "".join(parts) + cyclonedds_uri


def domain_config_from_env(env: Mapping[str, str] | None = None) -> tuple[int, str]:
    """(domain id, Cyclone config) for ``cyclonedds.domain.Domain(id, config)``, from the
    environment exactly as a ROS 2 node of the package (rmw_cyclonedds) builds them: its
    CYCLONEDDS_URI carries the package's receive-buffer request (bus/transport.py)."""
    env = os.environ if env is None else env
    options = discovery_options_from_env(env)
    return options.domain_id, cyclonedds_config(
        options, with_receive_buffer(env.get("CYCLONEDDS_URI", "")))


# --- QoS ---------------------------------------------------------------------------------------


def topic_profile(ros_topic: str) -> QosProfile:
    """The profile a ROS 2 node uses on this topic by convention; DEFAULT otherwise."""
    if ros_topic == ROS_DISCOVERY_TOPIC:
        return DISCOVERY_INFO
    return TOPIC_PROFILES.get(ros_topic, DEFAULT)


def typehash_user_data(ros_type_name: str, extra: str = "") -> bytes:
    """USER_DATA of an endpoint: ``extra`` (rmw puts ``clientid=…;`` / ``serviceid=…;`` here for
    services) followed by ``typehash=<RIHS01 hash>;``."""
    return f"{extra}typehash={type_hash(ros_type_name)};".encode("ascii")


def endpoint_qos(
    profile: QosProfile,
    ros_type_name: str | None = None,
    extra_user_data: str = "",
    ignore_local: bool = False,
) -> Qos:
    """Reader/writer Qos as rmw_cyclonedds' create_readwrite_qos builds it from a profile,
    with the type hash of ``ros_type_name`` in USER_DATA."""
    policies = [
        Policy.WriterDataLifecycle(autodispose=False),
        Policy.History.KeepLast(depth=profile.depth),
        Policy.Reliability.Reliable(max_blocking_time=INFINITE)
        if profile.reliable
        else Policy.Reliability.BestEffort,
        Policy.Liveliness.Automatic(lease_duration=INFINITE),
    ]
    if profile.transient_local:
        # Cyclone keeps late-joiner data per the durability service's history, not the writer's
        policies += [
            Policy.Durability.TransientLocal,
            Policy.DurabilityService(
                cleanup_delay=0,
                history=Policy.History.KeepLast(depth=profile.depth),
                max_samples=LENGTH_UNLIMITED,
                max_instances=LENGTH_UNLIMITED,
                max_samples_per_instance=LENGTH_UNLIMITED,
            ),
        ]
    else:
        policies.append(Policy.Durability.Volatile)
    if profile.lifespan_s is not None:
        policies.append(Policy.Lifespan(lifespan=duration(seconds=profile.lifespan_s)))
    if ignore_local:
        policies.append(Policy.IgnoreLocal.Participant)
    if ros_type_name is not None:
        policies.append(Policy.Userdata(data=typehash_user_data(ros_type_name, extra_user_data)))
    return Qos(*policies)
