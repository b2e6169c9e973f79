"""``robot-control bag record|play|info`` (like ``ros2 bag``) and ``robot-control plot``.

    robot-control bag record [-o DIR] [TOPIC …] [--all] [--duration S] [--node-name NAME]
    robot-control bag play DIR [--rate X] [--topics T …] [--delay S] [--node-name NAME]
    robot-control bag info DIR
    robot-control bag reindex DIR
    robot-control plot DIR|RESULT.json [-o FILE.png]

Both commands share this module: ``add_arguments`` reads which one it builds from the
sub-parser's name, as cli_bus does.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import datetime, timezone

COMMANDS = ("bag", "plot")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    command = parser.prog.split()[-1]
    if command == "plot":
        _plot_arguments(parser)
        return
    if command != "bag":
        raise ValueError(f"recording.cli builds {COMMANDS}, not '{command}'")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    p = verbs.add_parser("record", help="record live topics into a rosbag2 directory (MCAP)")
    p.add_argument("topics", nargs="*", metavar="TOPIC", help="topics to record")
    p.add_argument("-a", "--all", action="store_true", help="record every topic")
    p.add_argument("-o", "--output", metavar="DIR",
                   help="bag directory to create (default rosbag2_YYYY_MM_DD-HH_MM_SS)")
    p.add_argument("--duration", type=float, metavar="S",
                   help="stop S seconds after the first message (default: until Ctrl-C)")
    p.add_argument("--node-name", default="rosbag2_recorder", help="the recorder node's name")
    p.set_defaults(_handler=_record)
    p = verbs.add_parser("play", help="publish a bag's messages on the bus")
    p.add_argument("bag", metavar="DIR")
    p.add_argument("-r", "--rate", type=float, default=1.0, help="playback speed factor")
    p.add_argument("--topics", nargs="+", metavar="TOPIC", help="play only these topics")
    p.add_argument("-d", "--delay", type=float, default=0.0, metavar="S",
                   help="wait S seconds before playing (lets subscribers match)")
    p.add_argument("--node-name", default="rosbag2_player", help="the player node's name")
    p.set_defaults(_handler=_play)
    p = verbs.add_parser("info", help="what a bag holds (like ros2 bag info)")
    p.add_argument("bag", metavar="DIR")
    p.set_defaults(_handler=_info)
    p = verbs.add_parser("reindex", help="recover a bag whose recorder died: keep what is "
                         "readable, rebuild the MCAP index and metadata.yaml (like ros2 bag reindex)")
    p.add_argument("bag", metavar="DIR")
    p.set_defaults(_handler=_reindex)


def run(args: argparse.Namespace) -> int:
    from robot_control.recording.bag import BagError

    handler = getattr(args, "_handler", _plot)
    try:
        return handler(args)
    except KeyboardInterrupt:  # before the command took over the signal: nothing was written
        return 130
    except (BagError, ValueError) as exc:
        name = "plot" if handler is _plot else f"bag {args.verb}"
        print(f"robot-control {name}: {exc}", file=sys.stderr)
        return 1


def _record(args: argparse.Namespace) -> int:
    from robot_control.recording.recorder import Recorder

    if not args.topics and not args.all:
        raise ValueError("name the topics to record, or pass --all")
    output = args.output or time.strftime("rosbag2_%Y_%m_%d-%H_%M_%S")
    recorder = Recorder(output, args.topics, args.all, args.node_name)
    stats = recorder.record(args.duration)
    print(stats.report(), file=sys.stderr)
    return 0


def _play(args: argparse.Namespace) -> int:
    from robot_control.recording.player import Player

    stats = Player(args.bag, args.rate, args.topics, args.node_name).play(args.delay)
    print(stats.report(), file=sys.stderr)
    return 0


def _info(args: argparse.Namespace) -> int:
    from robot_control.recording.bag import bag_info

    print(format_info(bag_info(args.bag)))
    return 0


def _reindex(args: argparse.Namespace) -> int:
    from robot_control.recording.writer import reindex_bag

    print(reindex_bag(args.bag).report(), file=sys.stderr)
    return 0


def _stamp(ns: int) -> str:
    when = datetime.fromtimestamp(ns // 1_000_000_000, tz=timezone.utc)
    return (f"{when:%b %d %Y %H:%M:%S}.{ns % 1_000_000_000:09d} "
            f"({ns // 1_000_000_000}.{ns % 1_000_000_000:09d})")


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return ""


def format_info(info: dict) -> str:
    """The lines of ``ros2 bag info`` (times in UTC)."""
    topics = info["topics"]
    lines = [f"Files:             {', '.join(info['files'])}",
             f"Bag size:          {_size(info['size_bytes'])}",
             f"Storage id:        {info['storage']}",
             f"Duration:          {info['duration_ns'] * 1e-9:.9f}s",
             f"Start:             {_stamp(info['start_ns'])}",
             f"End:               {_stamp(info['start_ns'] + info['duration_ns'])}",
             f"Messages:          {info['messages']}"]
    for i, t in enumerate(topics):
        head = "Topic information: " if i == 0 else " " * 19
        lines.append(f"{head}Topic: {t['name']} | Type: {t['type']} | Count: {t['count']} | "
                     f"Serialization Format: {t['serialization_format']}")
    return "\n".join(lines)


# --- plot --------------------------------------------------------------------------------------


def _plot_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("source", metavar="DIR|RESULT",
                        help="a rosbag2 directory, or the JSON of `simulate --out`")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="image to write (PNG, PDF or SVG; default <source>.png)")
    parser.add_argument("--robot", help="robot for the effort limits and joint units when the "
                        "bag has no /robot_description (bundled name or model file)")
    parser.add_argument("--namespace", default="/", metavar="NS",
                        help="the recorded stack's namespace: its topics are /NS/joint_states … "
                             "(default /)")
    parser.set_defaults(_handler=_plot)


def _plot(args: argparse.Namespace) -> int:
    from robot_control.recording.runs import load_run
    from robot_control.sim.report import plot_run

    run = load_run(args.source, robot=args.robot, namespace=args.namespace)
    output = args.output or str(args.source).rstrip("/") + ".png"
    plot_run(run, output)
    print(f"wrote {output}", file=sys.stderr)
    return 0
