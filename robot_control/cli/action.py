"""``robot-control action send_goal``: a client of the ROS 2 action protocol without ROS 2, as
``ros2 action send_goal`` (the goal as YAML; ``--feedback`` prints each feedback)."""

from __future__ import annotations

import argparse
import sys

import yaml


def add_arguments(parser: argparse.ArgumentParser) -> None:
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
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
    from robot_control.bus.dds.action_client import STATUS_NAMES, send_goal
    from robot_control.bus.dds.client import BusClient, BusClientError, message_to_dict
    from robot_control.cli.bus_tools import _plain

    def show(title: str, msg) -> None:
        print(f"{title}:")
        print(yaml.safe_dump(_plain(message_to_dict(msg)), sort_keys=False), end="", flush=True)

    try:
        goal = yaml.safe_load(args.goal) or {}
        with BusClient(discovery_s=args.spin_time) as client:
            outcome = send_goal(client, args.name, args.type, goal,
                                (lambda fb: show("Feedback", fb)) if args.feedback else None,
                                timeout_s=args.timeout)
    except (BusClientError, ValueError, yaml.YAMLError) as exc:
        print(f"robot-control action send_goal: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    if not outcome.accepted:
        print("Goal was rejected.")
        return 1
    print(f"Goal accepted with ID: {outcome.goal_id.hex()}")
    show("Result", outcome.result)
    status = STATUS_NAMES.get(outcome.status, str(outcome.status))
    print(f"Goal finished with status: {status}")
    return 0 if status == "SUCCEEDED" else 1
