"""``robot-control topic|node|param|service …``: the ros2 command-line tools, without ROS 2.

Each command is a :class:`~robot_control.bus.dds.client.BusClient` (a tool participant on the
domain named by ROS_DOMAIN_ID, discovering as ROS 2 does) and prints what ``ros2`` prints:

    robot-control topic list [-t] | echo NAME [--count N] | hz NAME [--duration S] [-w N]
    robot-control node list | info NAME
    robot-control param list [NODE] | get NODE NAME | set NODE NAME VALUE | describe NODE NAME
                        | dump NODE
    robot-control service list [-t] | call NAME TYPE [REQUEST_YAML]

Parameters change only through the standard rcl_interfaces services, so a refused ``param set``
prints the node's reason and exits 1, exactly as ``ros2 param set`` reports it.

The four commands share this module: ``add_arguments`` reads which one it builds from the
sub-parser's name (``robot-control topic`` → ``topic``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

import yaml

COMMANDS = ("topic", "node", "param", "service")
Handler = Callable[[object, argparse.Namespace], int]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    command = parser.prog.split()[-1]
    if command not in COMMANDS:
        raise ValueError(f"cli_bus builds {COMMANDS}, not '{command}'")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    _BUILDERS[command](verbs)
    parser.set_defaults(_bus_command=command)


def run(args: argparse.Namespace) -> int:
    from robot_control.bus.dds.client import BusClient, BusClientError

    try:
        with BusClient(discovery_s=args.spin_time) as client:
            return args._handler(client, args)
    except (BusClientError, ValueError) as exc:
        print(f"robot-control {args._bus_command} {args.verb}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    except BrokenPipeError:  # the reader went away (`topic echo … | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error at exit
        return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m robot_control.cli.bus_tools topic list`` is ``robot-control topic list`` (etc.)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = argparse.ArgumentParser(prog="robot-control")
    commands = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        add_arguments(commands.add_parser(name))
    return run(parser.parse_args(argv))


def _verb(verbs, name: str, handler: Handler, help_text: str) -> argparse.ArgumentParser:
    p = verbs.add_parser(name, help=help_text)
    p.add_argument("--spin-time", type=float, default=2.0, metavar="S",
                   help="time to discover the graph before answering (default 2 s)")
    p.set_defaults(_handler=handler)
    return p


# --- topic -------------------------------------------------------------------------------------


def _topic_parsers(verbs) -> None:
    p = _verb(verbs, "list", _topic_list, "topics on the bus")
    p.add_argument("-t", "--show-types", action="store_true", help="with their types")
    p = _verb(verbs, "echo", _topic_echo, "print a topic's messages as YAML")
    p.add_argument("name")
    p.add_argument("--count", "--times", type=int, metavar="N",
                   help="stop after N messages (default: until Ctrl-C)")
    p.add_argument("--once", action="store_const", const=1, dest="count",
                   help="print one message and exit")
    p.add_argument("--timeout", type=float, default=5.0, metavar="S",
                   help="give up after S seconds without a publisher or a message (default 5)")
    p = _verb(verbs, "hz", _topic_hz, "publication rate of a topic, reported every second")
    p.add_argument("name")
    p.add_argument("--duration", type=float, metavar="S",
                   help="stop after S seconds of reports (default: until Ctrl-C)")
    p.add_argument("-w", "--window", type=int, default=10000, metavar="N",
                   help="the rate over the last N messages (default 10000)")
    p.add_argument("--timeout", type=float, default=5.0, metavar="S",
                   help="give up after S seconds without a publisher (default 5)")


def _topic_list(client, args) -> int:
    from robot_control.bus.dds.client import format_topic_list

    _print(format_topic_list(client.topic_list(), show_types=args.show_types))
    return 0


def _topic_echo(client, args) -> int:
    from robot_control.bus.dds.client import BusClientError, format_message

    received = 0
    for msg in client.iter_topic(args.name, timeout_s=args.timeout, discovery_s=args.timeout):
        print(format_message(msg), flush=True)
        received += 1
        if args.count is not None and received >= args.count:
            return 0
    if args.count is not None:
        raise BusClientError(f"{received} of {args.count} messages on {args.name}: nothing "
                             f"more for {args.timeout:g} s")
    return 0


def _topic_hz(client, args) -> int:
    """As ``ros2 topic hz``: a report each second once messages flow, until Ctrl-C (or
    --duration); exit 1 if no rate could be measured in that time."""
    import time

    from robot_control.bus.dds.client import format_hz

    if args.window < 2:
        raise ValueError(f"--window must be at least 2 messages, got {args.window}")
    measured, started = False, time.monotonic()
    for fresh, stats in client.topic_rates(args.name, window=args.window,
                                           discovery_s=args.timeout):
        if fresh and stats["count"] >= 2:
            print(format_hz(stats), flush=True)
            measured = True
        elif not fresh and stats["count"]:  # (nothing at all yet: nothing to say, as ros2)
            print("no new messages", flush=True)
        if args.duration is not None and time.monotonic() - started >= args.duration:
            break
    if not measured:
        print(f"no rate: fewer than 2 messages on {args.name} in {args.duration:g} s",
              file=sys.stderr)
        return 1
    return 0


# --- node --------------------------------------------------------------------------------------


def _node_parsers(verbs) -> None:
    _verb(verbs, "list", _node_list, "nodes on the bus")
    p = _verb(verbs, "info", _node_info, "a node's publishers, subscribers and services")
    p.add_argument("name")


def _node_list(client, args) -> int:
    from robot_control.bus.dds.client import format_node_list
    from robot_control.bus.dds.graph import duplicates

    names = client.node_list()
    if duplicates(names):  # ros2 node list's warning, word for word
        print("WARNING: Be aware that there are nodes in the graph that share an exact name, "
              "which can have unintended side effects.", file=sys.stderr)
    _print(format_node_list(names))
    return 0


def _node_info(client, args) -> int:
    from robot_control.bus.dds.client import format_node_info

    print(format_node_info(client.node_info(args.name)))
    return 0


# --- param -------------------------------------------------------------------------------------


def _param_parsers(verbs) -> None:
    p = _verb(verbs, "list", _param_list, "parameter names of a node (of every node if none)")
    p.add_argument("node", nargs="?")
    p = _verb(verbs, "get", _param_get, "a parameter's value")
    p.add_argument("node")
    p.add_argument("name")
    p = _verb(verbs, "set", _param_set, "change a parameter (the node may refuse, with a reason)")
    p.add_argument("node")
    p.add_argument("name")
    p.add_argument("value", help="a YAML value: 5.0, true, [1, 2, 3], text")
    p = _verb(verbs, "describe", _param_describe, "a parameter's type, range and description")
    p.add_argument("node")
    p.add_argument("name")
    p = _verb(verbs, "dump", _param_dump, "all values of a node as a ros__parameters file")
    p.add_argument("node")


def _param_list(client, args) -> int:
    from robot_control.bus.dds.client import format_param_list

    nodes = [args.node] if args.node else sorted(set(client.node_list()))
    for node in nodes:
        _print(format_param_list(node, client.param_list(node)))
    return 0


def _param_get(client, args) -> int:
    from robot_control.bus.dds.client import format_param_value

    print(format_param_value(client.param_get(args.node, args.name)))
    return 0


def _param_set(client, args) -> int:
    ok, reason = client.param_set(args.node, args.name, args.value)
    if ok:
        print("Set parameter successful" + (f": {reason}" if reason else ""))
        return 0
    print("Setting parameter failed" + (f": {reason}" if reason else ""), file=sys.stderr)
    return 1


def _param_describe(client, args) -> int:
    from robot_control.bus.dds.client import format_descriptor

    print(format_descriptor(client.param_describe(args.node, args.name)))
    return 0


def _param_dump(client, args) -> int:
    node = args.node if args.node.startswith("/") else "/" + args.node
    values = {name: client.param_get(node, name) for name in client.param_list(node)}
    print(yaml.safe_dump({node: {"ros__parameters": _nest(values)}}, sort_keys=False,
                         default_flow_style=None), end="")
    return 0


def _nest(values: dict[str, object]) -> dict[str, object]:
    """Dotted names as the nested mappings a params file uses (``a.b: 1`` → ``a: {b: 1}``)."""
    out: dict[str, object] = {}
    for name, value in values.items():
        *path, leaf = name.split(".")
        level = out
        for part in path:
            level = level.setdefault(part, {})
        level[leaf] = value
    return out


# --- service -----------------------------------------------------------------------------------


def _service_parsers(verbs) -> None:
    p = _verb(verbs, "list", _service_list, "services on the bus")
    p.add_argument("-t", "--show-types", action="store_true", help="with their types")
    p = _verb(verbs, "call", _service_call, "call a service and print the response")
    p.add_argument("name")
    p.add_argument("type", help="service type, e.g. rcl_interfaces/srv/ListParameters")
    p.add_argument("request", nargs="?", default="{}", help="the request as YAML (default {})")
    p.add_argument("--timeout", type=float, default=5.0, metavar="S",
                   help="give up after S seconds without a response (default 5)")


def _service_list(client, args) -> int:
    from robot_control.bus.dds.client import format_service_list

    _print(format_service_list(client.service_list(), show_types=args.show_types))
    return 0


def _service_call(client, args) -> int:
    from robot_control.bus.dds.client import message_to_dict

    response = client.service_call(args.name, args.type, args.request, timeout_s=args.timeout)
    print("response:")
    print(yaml.safe_dump(_plain(message_to_dict(response)), sort_keys=False), end="")
    return 0


def _plain(value: object) -> object:
    """Message data as YAML-safe builtins (arrays as lists, bytes as lists of integers)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, bytes | bytearray):
        return list(value)
    if hasattr(value, "tolist"):
        return _plain(value.tolist())
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _print(text: str) -> None:
    if text:
        print(text)


_BUILDERS = {"topic": _topic_parsers, "node": _node_parsers, "param": _param_parsers,
             "service": _service_parsers}


if __name__ == "__main__":
    sys.exit(main())
