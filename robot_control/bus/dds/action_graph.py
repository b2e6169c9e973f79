"""Actions on the ROS graph, as ``ros2 action list`` and ``ros2 action info`` see them.

An action is no DDS entity of its own: rcl_action makes a server three services
(``<name>/_action/send_goal``, ``get_result``, ``cancel_goal``) and two topics (``feedback``,
``status``). So an action is a ``send_goal`` service, its type the service's type without the
``_SendGoal`` suffix, its servers the nodes serving that service and its clients the nodes calling
it.
"""

from __future__ import annotations

from robot_control.bus.dds.client import BusClient, BusClientError

SEND_GOAL = "/_action/send_goal"
SEND_GOAL_TYPE = "_SendGoal"


def action_type(service_type: str) -> str:
    """``pkg/action/Name`` of a send_goal service type (``pkg/action/Name_SendGoal[_Request]``)."""
    for suffix in ("_Request", "_Response"):
        service_type = service_type.removesuffix(suffix)
    return service_type.removesuffix(SEND_GOAL_TYPE)


def action_list(client: BusClient) -> dict[str, list[str]]:
    """Action name -> its types, of every action server on the domain."""
    return {name.removesuffix(SEND_GOAL): sorted({action_type(t) for t in types})
            for name, types in client.service_list().items() if name.endswith(SEND_GOAL)}


def action_info(client: BusClient, action: str) -> dict[str, dict[str, list[str]]]:
    """{"clients": {node: types}, "servers": {node: types}} of an action."""
    action = action if action.startswith("/") else "/" + action
    service = action.rstrip("/") + SEND_GOAL
    out: dict[str, dict[str, list[str]]] = {"clients": {}, "servers": {}}
    for node in client.node_list():
        try:
            endpoints = client.node_info(node)
        except BusClientError:  # gone meanwhile
            continue
        for role, group in (("servers", "service_servers"), ("clients", "service_clients")):
            types = endpoints.get(group, {}).get(service)
            if types:
                out[role][node] = sorted({action_type(t) for t in types})
    return out
