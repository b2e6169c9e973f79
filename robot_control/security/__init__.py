"""SROS2 (DDS Security) for robot_control: one enclave per process, the shipped least-privilege
policy (config/security/policy.xml), keystores made from it, and the checks a node and the
launcher make before a secure start (docs/security.md).

Only the rclpy route can run securely: it uses the ROS 2 distribution's Cyclone DDS, built with
the security plugins. The rclpy-free route's Cyclone DDS (the ``cyclonedds`` wheel) has none, so
it refuses ``ROS_SECURITY_ENABLE=true`` rather than run unsecured under a secure name.
"""

from __future__ import annotations

from collections.abc import Mapping

ENCLAVE_ROOT = "/robot_control"
OPERATOR_ENCLAVE = f"{ENCLAVE_ROOT}/operator"
OBSERVER_ENCLAVE = f"{ENCLAVE_ROOT}/observer"
CONTAINER_ENCLAVE = f"{ENCLAVE_ROOT}/container"

ENABLE_ENV = "ROS_SECURITY_ENABLE"
STRATEGY_ENV = "ROS_SECURITY_STRATEGY"
KEYSTORE_ENV = "ROS_SECURITY_KEYSTORE"
OVERRIDE_ENV = "ROS_SECURITY_ENCLAVE_OVERRIDE"

#: why the rclpy-free route refuses to run securely, and what to do instead (one line)
DDS_ROUTE_REFUSAL = (
    "ROS_SECURITY_ENABLE=true, but the rclpy-free route cannot run securely: the cyclonedds "
    "wheel (Cyclone DDS 0.11) ships no DDS Security plugins and cannot load the ROS 2 "
    "distribution's (Cyclone 0.10.5, another ABI); source ROS 2 (the rclpy route) to run "
    "securely, or unset ROS_SECURITY_ENABLE to run without security")


class SecurityError(ValueError):
    """A secure start that cannot happen, with the reason in one line."""


def requested(env: Mapping[str, str]) -> bool:
    """Whether rcl would enable security in this environment (it compares with "true" exactly)."""
    return env.get(ENABLE_ENV, "") == "true"


def secure_environment(keystore: str) -> dict[str, str]:
    """The variables a secure node needs (besides its ``--enclave``): enabled and enforced, so a
    node whose keystore lacks its files refuses to start instead of running without security."""
    return {ENABLE_ENV: "true", STRATEGY_ENV: "Enforce", KEYSTORE_ENV: keystore}
