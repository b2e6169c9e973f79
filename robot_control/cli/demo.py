"""``robot-control demo``: the whole stack for a few seconds, then its summary.

The four nodes of launch/control.launch.yaml run as separate processes on the bus (Cyclone DDS
without ROS 2, rclpy with it); launch arguments pass through, e.g. ``controller:=adaptive``.
"""

from __future__ import annotations

import argparse
import sys

HINT = """
Try another robot or law (any launch argument works the same way):
  bash scripts/demo.sh controller:=passivity
  bash scripts/demo.sh robot:=puma560 controller:=pd_gravity rate:=500.0
  bash scripts/demo.sh realtime_priority:=50    # SCHED_FIFO plant and controller, if permitted
  bash scripts/demo.sh controller:=adaptive lockstep:=true      # deterministic, /clock-driven
  robot-control simulate huo_3_2_computed_torque_intended --plot run.png    # offline, no bus
While it runs, in another shell: robot-control node list | topic hz /joint_states |
  param set /controller controller passivity
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("items", nargs="*", metavar="name:=value",
                        help="launch arguments (robot, controller, rate, lockstep, scenario)")
    parser.add_argument("--duration", type=float, default=5.0, metavar="S",
                        help="seconds of control after the loop starts (default 5)")


def run(args: argparse.Namespace) -> int:
    from robot_control.cli import launch as cli_launch

    parser = argparse.ArgumentParser(prog="robot-control launch")
    cli_launch.add_arguments(parser)
    items = list(args.items)  # the launch file's defaults: 1 kHz
    code = cli_launch.run(parser.parse_args([*items, "--duration", str(args.duration)]))
    print(HINT, file=sys.stderr)
    return code
