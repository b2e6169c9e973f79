"""A tool-side client of the ROS 2 action protocol on Cyclone DDS (what ``ros2 action
send_goal`` does, for machines without ROS 2): send the goal with a fresh UUID, follow its
feedback, ask for its result (rcl_action's services and topics: bus/dds/action.py)."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from robot_control.bus.dds import config as dds_config
from robot_control.bus.dds.client import BusClient, message_from_dict
from robot_control.bus.dds.messages import MESSAGE_TYPES

#: action_msgs/msg/GoalStatus values, by number
STATUS_NAMES = {0: "UNKNOWN", 1: "ACCEPTED", 2: "EXECUTING", 3: "CANCELING", 4: "SUCCEEDED",
                5: "CANCELED", 6: "ABORTED"}


@dataclass
class GoalOutcome:
    goal_id: bytes
    accepted: bool
    accepted_after_s: float  # send → the server's answer
    status: int = 0
    result: object = None


def send_goal(client: BusClient, action: str, action_type: str, goal: object,
              on_feedback: Callable[[object], None] | None = None,
              timeout_s: float = 5.0, result_timeout_s: float = 600.0) -> GoalOutcome:
    """Send ``goal`` (a message or a dict) to ``action`` and wait for its result; feedback of
    this goal goes to ``on_feedback`` (in a thread of its own) while it runs."""
    if action_type + "_Goal" not in MESSAGE_TYPES:
        raise ValueError(f"unknown action type {action_type}")
    base = action.rstrip("/") + "/_action/"
    if isinstance(goal, dict):
        goal = message_from_dict(MESSAGE_TYPES[action_type + "_Goal"], goal)
    goal_id = uuid.uuid4().bytes
    stop = threading.Event()
    follower = None
    if on_feedback is not None:  # the reader exists before the goal can send feedback
        reader = client.typed_reader(base + "feedback", action_type + "_FeedbackMessage",
                                     dds_config.DEFAULT)
        follower = threading.Thread(target=_follow, daemon=True,
                                    args=(client, reader, goal_id, on_feedback, stop))
        follower.start()
    try:
        request = {"goal_id": {"uuid": list(goal_id)}}
        Request = MESSAGE_TYPES[action_type + "_SendGoal_Request"]
        sent = time.perf_counter()
        response = client.service_call(base + "send_goal", action_type + "_SendGoal",
                                       _with(message_from_dict(Request, request), goal=goal),
                                       timeout_s)
        outcome = GoalOutcome(goal_id, bool(response.accepted), time.perf_counter() - sent)
        if outcome.accepted:
            got = client.service_call(base + "get_result", action_type + "_GetResult",
                                      request, result_timeout_s)
            outcome.status, outcome.result = int(got.status), got.result
        return outcome
    finally:
        stop.set()
        if follower is not None:
            follower.join(1.0)


def _with(msg, **fields):
    for name, value in fields.items():
        setattr(msg, name, value)
    return msg


def _follow(client: BusClient, reader, goal_id: bytes, on_feedback, stop: threading.Event) -> None:
    for sample in client.samples(reader, stop=stop):
        if bytes(sample.goal_id.uuid) == goal_id:
            on_feedback(sample.feedback)
