"""``robot-control lifecycle nodes|get|set|list``: ``ros2 lifecycle`` without ROS 2.

A client of the standard lifecycle_msgs services (robot_control.bus.dds.lifecycle_client), so it
drives our managed nodes and ROS 2's alike and prints what ``ros2 lifecycle`` prints:

    robot-control lifecycle nodes [-c]              # managed nodes on the domain
    robot-control lifecycle get [NODE]              # "active [3]" (every node's if none)
    robot-control lifecycle set NODE TRANSITION     # by label or id: configure, activate, 3 …
    robot-control lifecycle list NODE [-a]          # transitions from its state (-a: all)

Unlike ``ros2 lifecycle set``, a refused or failed transition exits 1.
"""

from __future__ import annotations

import argparse
import sys

from robot_control.cli.bus_tools import _print, _verb
from robot_control.cli.bus_tools import run as run

COMMAND = "lifecycle"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    p = _verb(verbs, "nodes", _nodes, "managed nodes on the bus")
    p.add_argument("-c", "--count-nodes", action="store_true",
                   help="only print how many there are")
    p = _verb(verbs, "get", _get, "the lifecycle state of a node (of every managed node if none)")
    p.add_argument("node", nargs="?")
    p = _verb(verbs, "set", _set, "trigger a transition (label or id)")
    p.add_argument("node")
    p.add_argument("transition", help="e.g. configure, activate, deactivate, cleanup, shutdown")
    p = _verb(verbs, "list", _list, "transitions available from a node's state")
    p.add_argument("node")
    p.add_argument("-a", "--all", action="store_true", help="the whole transition graph")
    parser.set_defaults(_bus_command=COMMAND)


def _nodes(client, args) -> int:
    from robot_control.bus.dds.lifecycle_client import managed_nodes

    names = managed_nodes(client)
    if args.count_nodes:
        print(len(names))
    else:
        _print("\n".join(names))
    return 0


def _get(client, args) -> int:
    from robot_control.bus.dds.lifecycle_client import get_state, managed_nodes

    if args.node:
        state_id, label = get_state(client, args.node)
        print(f"{label} [{state_id}]")
        return 0
    for node in managed_nodes(client):
        state_id, label = get_state(client, node)
        print(f"{node}: {label} [{state_id}]")
    return 0


def _set(client, args) -> int:
    from robot_control.bus.dds.lifecycle_client import change_state

    if change_state(client, args.node, args.transition):
        print("Transitioning successful")
        return 0
    print("Transitioning failed", file=sys.stderr)
    return 1


def _list(client, args) -> int:
    from robot_control.bus.dds.lifecycle_client import format_transitions, transitions

    _print(format_transitions(transitions(client, args.node, everything=args.all)))
    return 0
