"""``robot-control demo``: the whole stack for a few seconds, then its summary.

The nodes of launch/control.launch.yaml run on the bus (Cyclone DDS without ROS 2, rclpy with it);
launch arguments pass through, e.g. ``controller:=adaptive``. Unless told otherwise the demo runs
them composed in one process with SCHED_FIFO priority for the plant and controller loops
(DEMO_DEFAULTS): the configuration that holds 1 kHz on a busy 2-core machine (a node says so in a
warning where the system refuses the priority, and the loop runs without it).
"""

from __future__ import annotations

import argparse

HINT = """
Try another robot or law (any launch argument works the same way):
  bash scripts/demo.sh controller:=passivity
  bash scripts/demo.sh robot:=puma560 controller:=pd_gravity rate:=500.0
  bash scripts/demo.sh composed:=false realtime_priority:=0   # separate processes, no FIFO
  bash scripts/demo.sh controller:=adaptive lockstep:=true      # deterministic, /clock-driven
  robot-control simulate huo_3_2_computed_torque_intended --plot run.png    # offline, no bus
While it runs, in another shell: robot-control node list | topic hz /joint_states |
  param set /controller controller passivity
"""


#: launch arguments the demo sets unless given: one process, real-time loops where permitted
DEMO_DEFAULTS = {"composed": "true", "realtime_priority": "50"}


def demo_items(items: list[str]) -> list[str]:
    """The launch arguments with DEMO_DEFAULTS added for those not given."""
    given = {item.split(":=", 1)[0] for item in items if ":=" in item}
    return [*items, *(f"{k}:={v}" for k, v in DEMO_DEFAULTS.items() if k not in given)]


def launch_arguments() -> str:
    """The launch file's arguments with their defaults, for --help (read from the file)."""
    from robot_control.bringup.runner import default_launch_file, load_launch_file

    try:
        plan = load_launch_file(default_launch_file())
    except (OSError, ValueError) as exc:  # a broken install: say so rather than fail --help
        return f"(the launch file cannot be read: {exc})"
    return "; ".join(f"{a.name} (default '{a.default}')" for a in plan.arguments)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("items", nargs="*", metavar="name:=value",
                        help="launch arguments: " + launch_arguments().replace("%", "%%")
                        + "; the demo sets " + " ".join(f"{k}:={v}" for k, v in
                                                        DEMO_DEFAULTS.items())
                        + " unless given")
    parser.add_argument("--duration", type=float, default=5.0, metavar="S",
                        help="seconds of control after the loop starts (default 5)")


def run(args: argparse.Namespace) -> int:
    from robot_control.cli import launch as cli_launch

    parser = argparse.ArgumentParser(prog="robot-control launch")
    cli_launch.add_arguments(parser)
    items = demo_items(list(args.items))  # the launch file's defaults otherwise: 1 kHz
    print(f"[demo] {' '.join(items)}", flush=True)
    # the hints before the last line, which says how the run ended (exit status 1: it failed)
    return cli_launch.run(parser.parse_args([*items, "--duration", str(args.duration)]), HINT)
