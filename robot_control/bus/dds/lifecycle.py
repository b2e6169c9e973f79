"""The standard lifecycle_msgs services of a managed node and its ``<node>/transition_event``
topic on the DDS backend, served from robot_control.bus.lifecycle's state machine exactly as
rclpy's LifecycleNode answers them.

``<node>/change_state`` (a transition by label, else by id; ``success`` is true only when the
hook returned SUCCESS), ``get_state``, ``get_available_states``, ``get_available_transitions``
(the edges leaving the current state) and ``get_transition_graph`` (all of them), with
rmw_qos_profile_services_default; every step of a transition is published as a
lifecycle_msgs/TransitionEvent. rcl leaves the event's ``timestamp`` and ``transition`` at zero;
here they carry the time (ns since the epoch) and the edge taken, which the message documents.
"""

from __future__ import annotations

import time

from robot_control.bus.dds import config as dds_config
from robot_control.bus.dds.context import delete_entity
from robot_control.bus.dds.messages import dds_topic_name
from robot_control.bus.dds.msg import lifecycle_msgs as lc
from robot_control.bus.dds.services import ServiceServer
from robot_control.bus.lifecycle import (
    STATE_LABELS,
    TRANSITION_GRAPH,
    CallbackReturn,
    LifecycleHooks,
    StateMachine,
    TransitionDescription,
)

LIFECYCLE_SERVICES = {
    "change_state": "lifecycle_msgs/srv/ChangeState",
    "get_state": "lifecycle_msgs/srv/GetState",
    "get_available_states": "lifecycle_msgs/srv/GetAvailableStates",
    "get_available_transitions": "lifecycle_msgs/srv/GetAvailableTransitions",
    "get_transition_graph": "lifecycle_msgs/srv/GetAvailableTransitions",
}


def state_msg(state_id: int) -> lc.State:
    return lc.State(id=state_id, label=STATE_LABELS[state_id])


def description_msg(t: TransitionDescription) -> lc.TransitionDescription:
    """lifecycle_msgs/TransitionDescription of one edge of the state machine."""
    return lc.TransitionDescription(transition=lc.Transition(id=t.id, label=t.label),
                                    start_state=state_msg(t.start), goal_state=state_msg(t.goal))


class LifecycleServer:
    """A node's state machine, its five lifecycle services and its transition_event writer."""

    def __init__(self, context, executor, node_key: int, node_fqn: str, hooks: LifecycleHooks,
                 logger) -> None:
        self._context = context
        self._node_key = node_key
        base = node_fqn.rstrip("/")
        self.events_writer = context.writer(dds_topic_name(f"{base}/transition_event"),
                                            "lifecycle_msgs/msg/TransitionEvent", dds_config.DEFAULT)
        context.associate(node_key, writer=self.events_writer)
        self.machine = StateMachine(hooks, self._publish_event, logger)
        handlers = {
            "change_state": self._change_state,
            "get_state": self._get_state,
            "get_available_states": self._get_available_states,
            "get_available_transitions": self._get_available_transitions,
            "get_transition_graph": self._get_transition_graph,
        }
        self.servers = [
            ServiceServer(context, executor, node_key, LIFECYCLE_SERVICES[name], f"{base}/{name}",
                          handler, dds_config.SERVICES_DEFAULT)
            for name, handler in handlers.items()
        ]

    # each handler mirrors rclpy.lifecycle.LifecycleNodeMixin's
    def _change_state(self, request) -> lc.ChangeStateResponse:
        transition = request.transition
        tid = self.machine.transition_id(transition.label) if transition.label else transition.id
        result = None if tid is None else self.machine.change_state(tid)
        return lc.ChangeStateResponse(success=result == CallbackReturn.SUCCESS)

    def _get_state(self, request) -> lc.GetStateResponse:
        return lc.GetStateResponse(current_state=state_msg(self.machine.current))

    def _get_available_states(self, request) -> lc.GetAvailableStatesResponse:
        return lc.GetAvailableStatesResponse(
            available_states=[state_msg(s) for s in sorted(STATE_LABELS)])

    def _get_available_transitions(self, request) -> lc.GetAvailableTransitionsResponse:
        return lc.GetAvailableTransitionsResponse(available_transitions=[
            description_msg(t) for t in self.machine.available_transitions()])

    def _get_transition_graph(self, request) -> lc.GetAvailableTransitionsResponse:
        return lc.GetAvailableTransitionsResponse(available_transitions=[
            description_msg(t) for t in TRANSITION_GRAPH])

    def _publish_event(self, edge: TransitionDescription, start: int, goal: int) -> None:
        self.events_writer.write(lc.TransitionEvent(
            timestamp=time.time_ns(), transition=lc.Transition(id=edge.id, label=edge.label),
            start_state=state_msg(start), goal_state=state_msg(goal)))

    def destroy(self) -> None:
        for server in self.servers:
            server.destroy()
        self._context.dissociate(self._node_key, writer=self.events_writer)
        delete_entity(self.events_writer)
