"""``robot-control launch`` with ``security:=true``: before any node starts, every node of the
plan must be on the rclpy route and its enclave backed by the keystore (the check each node makes
for itself, done for all at once so the launch refuses in one line instead of failing node by
node)."""

from __future__ import annotations

from collections.abc import Mapping

from robot_control.bringup.runner import LaunchPlan, node_command
from robot_control.security import DDS_ROUTE_REFUSAL, SecurityError, requested
from robot_control.security.keystore import check_process


def check_plan(plan: LaunchPlan, env: Mapping[str, str], backend: str) -> dict[str, str] | None:
    """None when no node of the plan runs securely; else the environment of its secure nodes
    (for the runner's own observer), once every node passed; SecurityError naming the node."""
    secure = [node for node in plan.nodes if requested({**env, **node.env})]
    if not secure:
        return None
    if backend != "rclpy":
        raise SecurityError(DDS_ROUTE_REFUSAL)
    plain = [node.label for node in plan.nodes if node not in secure]
    if plain:
        raise SecurityError(f"security is enabled for some nodes but not for {', '.join(plain)}: "
                            "a plain node cannot talk to secure ones")
    for node in secure:
        try:
            check_process(node_command(node), {**env, **node.env}, backend)
        except SecurityError as exc:
            raise SecurityError(f"node {node.label} cannot start securely: {exc}") from None
    return {**env, **secure[0].env}
