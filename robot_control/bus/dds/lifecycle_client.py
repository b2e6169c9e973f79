"""The client side of the lifecycle_msgs services, for ``robot-control lifecycle`` (as
ros2lifecycle's api is for ``ros2 lifecycle``): managed nodes are those that serve
``<node>/get_state`` of type lifecycle_msgs/srv/GetState, ours and ROS 2's alike."""

from __future__ import annotations

import time

from robot_control.bus.dds.client import BusClient, BusClientError
from robot_control.bus.dds.msg import lifecycle_msgs as lc

GET_STATE = "lifecycle_msgs/srv/GetState"
CHANGE_STATE = "lifecycle_msgs/srv/ChangeState"
GET_TRANSITIONS = "lifecycle_msgs/srv/GetAvailableTransitions"
#: how long a named node may take to show its lifecycle services after the graph settled, s
FIND_WITHIN_S = 5.0


def _fq(name: str) -> str:
    return name if name.startswith("/") else "/" + name


def managed_nodes(client: BusClient) -> list[str]:
    """Fully qualified names of the nodes that serve the lifecycle services."""
    services = client.service_list()
    return sorted({n for n in client.node_list()
                   if GET_STATE in services.get(f"{n.rstrip('/')}/get_state", [])})


def _require_managed(client: BusClient, node: str) -> str:
    """The node's name once it serves the lifecycle services: on a loaded machine a busy node's
    services are discovered after the graph's first settling, so a node named is waited for
    (FIND_WITHIN_S) before it is called not found."""
    node = _fq(node)
    deadline = time.monotonic() + FIND_WITHIN_S
    while node not in managed_nodes(client):
        if time.monotonic() > deadline:
            raise BusClientError(f"node {node} not found among the managed nodes (waited "
                                 f"{FIND_WITHIN_S:g} s)")
        time.sleep(0.05)
    return node


def get_state(client: BusClient, node: str) -> tuple[int, str]:
    """(id, label) of a managed node's current state."""
    node = _require_managed(client, node)
    state = client.service_call(f"{node}/get_state", GET_STATE, lc.GetStateRequest(),
                                timeout_s=15.0).current_state
    return state.id, state.label


def transitions(client: BusClient, node: str, everything: bool = False
                ) -> list[lc.TransitionDescription]:
    """The transitions available from the node's state (all of its graph with ``everything``)."""
    node = _require_managed(client, node)
    service = "get_transition_graph" if everything else "get_available_transitions"
    response = client.service_call(f"{node}/{service}", GET_TRANSITIONS,
                                   lc.GetAvailableTransitionsRequest(), timeout_s=15.0)
    return list(response.available_transitions)


def change_state(client: BusClient, node: str, transition: str) -> bool:
    """Request a transition by label or id (as ``ros2 lifecycle set``); the node's success flag.
    BusClientError names the available transitions when the state has no such one."""
    node = _require_managed(client, node)
    available = transitions(client, node)
    chosen = next((t.transition for t in available if t.transition.label == transition), None) \
        or next((t.transition for t in available if str(t.transition.id) == transition), None)
    if chosen is None:
        raise BusClientError("Unknown transition requested, available ones are:" + "".join(
            f"\n- {t.transition.label} [{t.transition.id}]" for t in available))
    request = lc.ChangeStateRequest(transition=chosen)
    # a transition runs the node's hooks (configure may load and compile for seconds)
    response = client.service_call(f"{node}/change_state", CHANGE_STATE, request,
                                   timeout_s=120.0)
    return bool(response.success)


def format_transitions(items: list[lc.TransitionDescription]) -> str:
    """What ``ros2 lifecycle list`` prints."""
    return "\n".join(f"- {t.transition.label} [{t.transition.id}]\n"
                     f"\tStart: {t.start_state.label}\n\tGoal: {t.goal_state.label}"
                     for t in items)
