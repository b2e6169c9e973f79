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
from robot_control.bus.dds.context import delete_entity
from robot_control.bus.dds.messages import MESSAGE_TYPES

#: action_msgs/msg/GoalStatus values, by number
STATUS_NAMES = {0: "UNKNOWN", 1: "ACCEPTED", 2: "EXECUTING", 3: "CANCELING", 4: "SUCCEEDED",
                5: "CANCELED", 6: "ABORTED"}


#: how long a rejected goal waits for the server's reason on /rosout
REASON_WAIT_S = 1.0
#: what our servers (bus/dds/action.py, rclpy's in bus/ros) log when they reject a goal
REJECTED_PREFIX = "goal rejected: "


@dataclass
class GoalOutcome:
    goal_id: bytes
    accepted: bool
    accepted_after_s: float  # send → the server's answer
    status: int = 0
    result: object = None
    reason: str = ""  # of a rejection, as the server logged it ('' if it gave none)


def send_goal(client: BusClient, action: str, action_type: str, goal: object,
              on_feedback: Callable[[object], None] | None = None,
              timeout_s: float = 5.0, result_timeout_s: float = 600.0,
              on_answer: Callable[[GoalOutcome], None] | None = None) -> GoalOutcome:
    """Send ``goal`` (a message or a dict) to ``action`` and wait for its result; ``on_answer``
    gets the server's answer (accepted with its ID, or rejected with the reason the server logged
    on /rosout) before any feedback is passed on; feedback of this goal goes to ``on_feedback``
    (in a thread of its own) while it runs."""
    if action_type + "_Goal" not in MESSAGE_TYPES:
        raise ValueError(f"unknown action type {action_type}")
    base = action.rstrip("/") + "/_action/"
    if isinstance(goal, dict):
        goal = message_from_dict(MESSAGE_TYPES[action_type + "_Goal"], goal)
    goal_id = uuid.uuid4().bytes
    stop, answered = threading.Event(), threading.Event()
    follower = None
    # the server says why it rejects a goal only in its log: listen before sending
    rosout = client.typed_reader("/rosout", "rcl_interfaces/msg/Log", dds_config.ROSOUT)
    if on_feedback is not None:  # the reader exists before the goal can send feedback
        reader = client.typed_reader(base + "feedback", action_type + "_FeedbackMessage",
                                     dds_config.DEFAULT)
        deadline = time.monotonic() + timeout_s  # matched first, or the first feedback is lost
        while not reader.get_matched_publications() and time.monotonic() < deadline:
            time.sleep(0.01)
        follower = threading.Thread(target=_follow, daemon=True,
                                    args=(client, reader, goal_id, on_feedback, stop, answered))
        follower.start()
    try:
        request = {"goal_id": {"uuid": list(goal_id)}}
        Request = MESSAGE_TYPES[action_type + "_SendGoal_Request"]
        sent, sent_ns = time.perf_counter(), time.time_ns()
        response = client.service_call(base + "send_goal", action_type + "_SendGoal",
                                       _with(message_from_dict(Request, request), goal=goal),
                                       timeout_s)
        outcome = GoalOutcome(goal_id, bool(response.accepted), time.perf_counter() - sent)
        if outcome.accepted:
            delete_entity(rosout)
        else:  # (reading it to the end deletes it)
            outcome.reason = rejection_reason(client, rosout, sent_ns)
        if on_answer is not None:
            on_answer(outcome)
        answered.set()
        if outcome.accepted:
            got = client.service_call(base + "get_result", action_type + "_GetResult",
                                      request, result_timeout_s)
            outcome.status, outcome.result = int(got.status), got.result
        return outcome
    finally:
        answered.set()
        stop.set()
        if follower is not None:
            follower.join(1.0)


def rejection_reason(client: BusClient, rosout, since_ns: int,
                     wait_s: float = REASON_WAIT_S) -> str:
    """The reason in the first "goal rejected: …" line logged on /rosout at or after since_ns
    (wall clock, less a margin for clocks), waiting at most wait_s; '' if none came."""
    stop = threading.Event()
    timer = threading.Timer(wait_s, stop.set)
    timer.start()
    try:
        for log in client.samples(rosout, stop=stop):
            stamp = log.stamp.sec * 1_000_000_000 + log.stamp.nanosec
            if str(log.msg).startswith(REJECTED_PREFIX) and stamp >= since_ns - 1_000_000_000:
                return f"{log.name}: {str(log.msg).removeprefix(REJECTED_PREFIX)}"
    finally:
        timer.cancel()
    return ""


def _with(msg, **fields):
    for name, value in fields.items():
        setattr(msg, name, value)
    return msg


def _follow(client: BusClient, reader, goal_id: bytes, on_feedback, stop: threading.Event,
            answered: threading.Event) -> None:
    """Pass on this goal's feedback, once the goal's answer has been passed on."""
    for sample in client.samples(reader, stop=stop):
        if bytes(sample.goal_id.uuid) == goal_id:
            answered.wait()
            on_feedback(sample.feedback)
