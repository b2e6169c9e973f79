"""The ``robot-control`` command: one entry point, one sub-command per job.

Each family of sub-commands is a module of this room (``add_arguments(parser)`` and
``run(args) -> int``, a thin layer over the library), loaded only when its command runs.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

COMMANDS: dict[str, tuple[str, str]] = {
    # name: (module providing add_arguments(parser) and run(args) -> int, help)
    "demo": ("robot_control.cli.demo", "run the main demo"),
    "simulate": ("robot_control.cli.simulate", "run a scenario file offline and summarise it"),
    "warmup": ("robot_control.cli.warmup",
               "compile ahead the code the bundled scenarios run (a fresh install's first runs)"),
    "sweep": ("robot_control.cli.sweep",
              "run scenarios × parameter sets offline on every core and summarise each"),
    "montecarlo": ("robot_control.cli.montecarlo",
                   "run a scenario on many perturbed plants; percentiles of its tracking errors"),
    "launch": ("robot_control.cli.launch", "run a launch file of this package without ROS 2"),
    "topic": ("robot_control.cli.bus_tools", "list, echo and measure topics (like ros2 topic)"),
    "node": ("robot_control.cli.bus_tools", "list nodes and show their endpoints (like ros2 node)"),
    "param": ("robot_control.cli.bus_tools",
              "list, get, set, describe and dump node parameters (like ros2 param)"),
    "service": ("robot_control.cli.bus_tools", "list and call services (like ros2 service)"),
    "action": ("robot_control.cli.action",
               "list actions, show their servers, send a goal (like ros2 action)"),
    "lifecycle": ("robot_control.cli.lifecycle",
                  "list managed nodes, get and change their states (like ros2 lifecycle)"),
    "identify": ("robot_control.cli.identify",
                 "estimate a robot's dynamic parameters from a recorded run (rosbag2)"),
    "bag": ("robot_control.cli.recording",
            "record, play and inspect rosbag2 (MCAP) recordings (like ros2 bag)"),
    "security": ("robot_control.cli.security",
                 "make an SROS2 keystore with the package's policy; check enclaves"),
    "check": ("robot_control.cli.check",
              "what the package derives for a robot, and whether each law holds on it offline"),
    "laws": ("robot_control.cli.laws",
             "list the control laws (built in and plug-ins): family, compiled kernel, formula"),
    "gains": ("robot_control.cli.gains",
              "print the per-joint gains derived for a robot (or those its stack runs)"),
    "model": ("robot_control.cli.model", "export a robot model as URDF or MJCF (MuJoCo)"),
    "plot": ("robot_control.cli.recording",
             "plot a recorded or simulated run: q vs q_d, error, torques, contact force"),
    "view": ("robot_control.cli.view",
             "watch and tune running stacks (or replay a recording) in a browser page"),
}


#: commands that run until Ctrl-C: stopped that way, even while loading, they end quietly with 0
STOPPED_BY_CTRL_C = ("robot_control.cli.launch", "robot_control.cli.demo",
                     "robot_control.cli.bus_tools", "robot_control.cli.view")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The CLI's parser: every command, with the arguments of ``only`` (all when None). One
    command's arguments load only its module: the others' import the numeric stack (`gains`:
    0.5 s of numba, scipy and the laws) before `robot-control launch` could start its nodes."""
    parser = argparse.ArgumentParser(
        prog="robot-control",
        description="Model-based manipulator control on a ROS 2 bus (runs with or without ROS 2).",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text)
        if only is None or name == only:
            _load(module).add_arguments(p)
        p.set_defaults(_module=module)
    return parser


def _load(module: str):
    import importlib

    return importlib.import_module(module)


#: commands whose twin on the ROS 2 route is a ``ros2`` command (they speak DDS themselves)
ROS2_TWINS = {"topic": "ros2 topic", "node": "ros2 node", "param": "ros2 param",
              "service": "ros2 service", "action": "ros2 action", "lifecycle": "ros2 lifecycle",
              "bag": "ros2 bag"}


def main(argv: list[str] | None = None) -> int:
    import sys

    argv_ = sys.argv[1:] if argv is None else argv
    try:
        with _LoadingInterrupt(argv_):
            import numpy  # noqa: F401  (every command's first heavy import: under this scope)

            parser = build_parser(argv_[0] if argv_ and argv_[0] in COMMANDS else None)
            args = parser.parse_args(argv)
            run: Callable[[argparse.Namespace], int] = _load(args._module).run
        try:
            return run(args)
        except ModuleNotFoundError as exc:
            if exc.name != "cyclonedds":
                raise
            return _needs_cyclonedds(args.command)
    except KeyboardInterrupt:  # Ctrl-C while a command loads its own part: a line, no traceback
        return _interrupted(argv_)


class _LoadingInterrupt:
    """While the command's modules load, Ctrl-C ends the process at once, quietly, without
    raising. A KeyboardInterrupt raised inside the libraries' imports was seen (1 run in 20 under
    load) to end the process by SIGINT (exit −2, no output) although the command caught it and
    returned 0: strace shows the handled signal, then CPython sending itself SIGINT at exit —
    its exit path for an unhandled KeyboardInterrupt, whose flag C code that runs Python code
    through ``PyRun_*`` sets and leaves set; the import that did it was not identified. Nothing
    has started yet, so there is nothing to clean up."""

    def __init__(self, argv: list[str]) -> None:
        self.argv = argv
        self.previous = None

    def _stop(self, signum, frame) -> None:
        import os
        import sys

        code = _interrupted(self.argv)
        sys.stdout.flush()
        os._exit(code)

    def __enter__(self) -> _LoadingInterrupt:
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGINT, self._stop)
        return self

    def __exit__(self, *exc) -> None:
        import signal

        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)


def _interrupted(argv: list[str]) -> int:
    """The exit status of a command stopped by Ctrl-C before it ran: quiet 0 for a command that
    runs until Ctrl-C, else a line and 130."""
    import sys

    module = COMMANDS.get(next((a for a in argv if not a.startswith("-")), ""), ("",))[0]
    if module in STOPPED_BY_CTRL_C:
        return 0  # its usual way to end: quiet
    print("robot-control: interrupted", file=sys.stderr, flush=True)
    return 130


def _needs_cyclonedds(command: str) -> int:
    """A DDS command on an install without cyclonedds: one line naming its ros2 twin."""
    import sys

    twin = ROS2_TWINS.get(command)
    print(f"robot-control {command}: needs the cyclonedds package (pip install "
          f"cyclonedds)" + (f"; with ROS 2 sourced, `{twin} …` does this" if twin else ""),
          file=sys.stderr)
    return 1

