"""``robot-control action list|info|send_goal``: the ROS 2 action tools without ROS 2.

- ``list [-t]``: the actions servers offer (with their types), as ``ros2 action list``;
- ``info NAME [-t]``: the nodes serving and calling an action, as ``ros2 action info``;
- ``send_goal NAME TYPE GOAL [--feedback]``: send a goal (YAML) and wait for its result, as
  ``ros2 action send_goal``: "Goal accepted with ID: …" as soon as the server answers, then the
  feedback, the result and its status; a rejected goal says the server's reason (what it logged
  on /rosout) and exits 1.
"""

from __future__ import annotations

import argparse
import sys

import yaml

PROG = "robot-control action"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    p = verbs.add_parser("list", help="the actions on the bus")
    p.add_argument("-t", "--show-types", action="store_true", help="with their types")
    p.add_argument("--spin-time", type=float, default=1.0, metavar="S",
                   help="time to discover the graph first (default 1 s)")
    p = verbs.add_parser("info", help="the servers and clients of an action")
    p.add_argument("name", help="the action, e.g. /trajectory_generator/follow_joint_trajectory")
    p.add_argument("-t", "--show-types", action="store_true", help="with their types")
    p.add_argument("--spin-time", type=float, default=1.0, metavar="S",
                   help="time to discover the graph first (default 1 s)")
    p = verbs.add_parser("send_goal", help="send a goal and wait for its result")
    p.add_argument("name", help="the action, e.g. /trajectory_generator/follow_joint_trajectory")
    p.add_argument("type", help="its type, e.g. control_msgs/action/FollowJointTrajectory")
    p.add_argument("goal", help="the goal as YAML, e.g. \"{trajectory: {joint_names: [...], "
                   "points: [{positions: [...], time_from_start: {sec: 2}}]}}\"")
    p.add_argument("-f", "--feedback", action="store_true", help="print the goal's feedback")
    p.add_argument("--timeout", type=float, default=5.0, metavar="S",
                   help="give up after S seconds without an answer to the goal (default 5)")
    p.add_argument("--spin-time", type=float, default=1.0, metavar="S",
                   help="time to discover the graph first (default 1 s)")


def run(args: argparse.Namespace) -> int:
    from robot_control.bus.dds.client import BusClient, BusClientError

    try:
        with BusClient(discovery_s=args.spin_time) as client:
            return VERBS[args.verb](client, args)
    except (BusClientError, ValueError, yaml.YAMLError) as exc:
        print(f"{PROG} {args.verb}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def _list(client, args) -> int:
    from robot_control.bus.dds.action_graph import action_list

    for name, types in action_list(client).items():
        print(f"{name} [{', '.join(types)}]" if args.show_types else name)
    return 0


def _info(client, args) -> int:
    from robot_control.bus.dds.action_graph import action_info

    name = args.name if args.name.startswith("/") else "/" + args.name
    info = action_info(client, name)
    print(f"Action: {name}")
    for role in ("clients", "servers"):
        print(f"Action {role}: {len(info[role])}")
        for node, types in info[role].items():
            print(f"    {node} [{', '.join(types)}]" if args.show_types else f"    {node}")
    return 0


def _send_goal(client, args) -> int:
    from robot_control.bus.dds.action_client import STATUS_NAMES, GoalOutcome, send_goal
    from robot_control.bus.dds.client import message_to_dict
    from robot_control.cli.bus_tools import _plain

    def show(title: str, msg) -> None:
        print(f"{title}:")
        print(yaml.safe_dump(_plain(message_to_dict(msg)), sort_keys=False), end="", flush=True)

    def answered(outcome: GoalOutcome) -> None:
        if outcome.accepted:
            print(f"Goal accepted with ID: {outcome.goal_id.hex()}\n", flush=True)
        else:
            print("Goal was rejected" + (f": {outcome.reason}" if outcome.reason else
                                         " (the server logged no reason)") + ".", flush=True)

    goal = yaml.safe_load(args.goal) or {}
    outcome = send_goal(client, args.name, args.type, goal,
                        (lambda fb: show("Feedback", fb)) if args.feedback else None,
                        timeout_s=args.timeout, on_answer=answered)
    if not outcome.accepted:
        return 1
    show("Result", outcome.result)
    status = STATUS_NAMES.get(outcome.status, str(outcome.status))
    print(f"Goal finished with status: {status}")
    return 0 if status == "SUCCEEDED" else 1


VERBS = {"list": _list, "info": _info, "send_goal": _send_goal}
