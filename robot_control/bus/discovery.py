"""The discovery settings of a ROS 2 node, read from its environment as rcl reads them
(rcl/discovery_options.c, rcl/domain_id.c): domain id, automatic discovery range, static peers.
Transport-neutral (no DDS import): the launcher checks a domain on either route with it, and the
rclpy-free transport builds its Cyclone DDS configuration from it (bus/dds/config.py).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

log = logging.getLogger(__name__)

MAX_DOMAIN_ID = 232  # Cyclone's RTPS port mapping (7400 + 250 d + …) must stay below 65536


class DiscoveryRange(str, Enum):
    """ROS_AUTOMATIC_DISCOVERY_RANGE values (rmw_automatic_discovery_range_t)."""

    OFF = "OFF"
    LOCALHOST = "LOCALHOST"
    SUBNET = "SUBNET"
    SYSTEM_DEFAULT = "SYSTEM_DEFAULT"


@dataclass(frozen=True)
class DiscoveryOptions:
    """What rcl hands the rmw: domain id, automatic discovery range, static peers."""

    domain_id: int = 0
    range: DiscoveryRange = DiscoveryRange.SUBNET
    static_peers: tuple[str, ...] = ()


def domain_id_from_env(env: Mapping[str, str]) -> int:
    """ROS_DOMAIN_ID as rcl_get_default_domain_id reads it: unset or empty means 0."""
    text = env.get("ROS_DOMAIN_ID", "").strip()
    if not text:
        return 0
    if not text.isdigit():
        raise ValueError(f"ROS_DOMAIN_ID={text!r} is not a non-negative integer")
    value = int(text)
    if value > MAX_DOMAIN_ID:
        raise ValueError(f"ROS_DOMAIN_ID={value} is above Cyclone DDS's maximum {MAX_DOMAIN_ID}")
    return value


def discovery_range_from_env(env: Mapping[str, str]) -> DiscoveryRange:
    """ROS_AUTOMATIC_DISCOVERY_RANGE as rcl reads it (unset/empty -> SUBNET, unknown ->
    LOCALHOST); the deprecated ROS_LOCALHOST_ONLY=1 still forces LOCALHOST in Jazzy."""
    if env.get("ROS_LOCALHOST_ONLY", "") == "1":
        return DiscoveryRange.LOCALHOST
    text = env.get("ROS_AUTOMATIC_DISCOVERY_RANGE", "")
    if text == "":
        return DiscoveryRange.SUBNET
    try:
        return DiscoveryRange(text)
    except ValueError:
        log.warning(
            "Invalid value '%s' specified for 'ROS_AUTOMATIC_DISCOVERY_RANGE', "
            "assuming localhost only",
            text,
        )
        return DiscoveryRange.LOCALHOST


def static_peers_from_env(env: Mapping[str, str]) -> tuple[str, ...]:
    """ROS_STATIC_PEERS: addresses separated by ';' (empty items skipped, as rcutils_split)."""
    if env.get("ROS_LOCALHOST_ONLY", "") == "1":
        return ()  # rcl: "'localhost_only' is enabled, ... 'static_peers' will be ignored"
    return tuple(
        peer.strip() for peer in env.get("ROS_STATIC_PEERS", "").split(";") if peer.strip()
    )


def discovery_options_from_env(env: Mapping[str, str] | None = None) -> DiscoveryOptions:
    """The DiscoveryOptions a ROS 2 node started in this environment would use."""
    env = os.environ if env is None else env
    return DiscoveryOptions(
        domain_id=domain_id_from_env(env),
        range=discovery_range_from_env(env),
        static_peers=static_peers_from_env(env),
    )
