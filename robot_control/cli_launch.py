"""``robot-control launch [FILE] [name:=value …] [--duration S] [--summary out.json]``.

Runs a launch file of this package without ROS 2 (:mod:`robot_control.launch_runner` reads it
and starts the nodes), watches the stack over the bus (:mod:`robot_control.launch_summary`) and
stops every node on Ctrl-C, after ``--duration`` seconds of closed-loop control, or as soon as
one node fails; then prints the summary as JSON. Exit status: 0, 1 if a node failed or the loop
never ran, 2 for a launch file or argument it cannot run.
"""

from __future__ import annotations

import argparse
import json
import shlex
import signal
import sys
import threading
import time
from dataclasses import dataclass
from typing import IO

from robot_control.launch_runner import (
    STOPPED_CODES,
    LaunchError,
    LaunchPlan,
    LineWriter,
    NodeProcess,
    child_environment,
    describe_exit,
    load_launch_file,
    node_command,
    node_module,
    resolve_launch_file,
    split_overrides,
    stop_processes,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("items", nargs="*", metavar="[FILE] name:=value",
                        help="launch file (default: the package's control.launch.yaml) and "
                             "launch arguments, e.g. controller:=adaptive rate:=500")
    parser.add_argument("--duration", type=float, metavar="S",
                        help="stop S seconds after the control loop is running (default: run "
                             "until Ctrl-C)")
    parser.add_argument("--summary", metavar="FILE", help="also write the summary JSON here")
    parser.add_argument("--startup-timeout", type=float, default=60.0, metavar="S",
                        help="give up if the control loop is not running after S seconds "
                             "(default 60)")
    parser.add_argument("--no-monitor", action="store_true",
                        help="do not watch the bus (no summary figures)")
    parser.add_argument("-s", "--show-args", action="store_true",
                        help="list the launch file's arguments and exit")
    parser.add_argument("--dry-run", action="store_true",
                        help="print each node's command line and exit")


@dataclass
class RunOptions:
    duration_s: float | None = None  # stop this long after the control loop is running
    startup_timeout_s: float = 60.0  # give up if the loop is not running by then
    monitor: bool = True  # collect the summary over the bus
    sigint_timeout_s: float = 5.0
    sigterm_timeout_s: float = 3.0


def run(args: argparse.Namespace) -> int:
    try:
        file, overrides = split_overrides(args.items)
        path = resolve_launch_file(file)
        if args.show_args:
            return _show_args(load_launch_file(path, {}))
        plan = load_launch_file(path, overrides)
        if args.dry_run:
            for node in plan.nodes:
                print(f"{node.label}: {shlex.join(node_command(node))}")
            return 0
    except (LaunchError, OSError) as exc:
        print(f"robot-control launch: {exc}", file=sys.stderr)
        return 2
    options = RunOptions(args.duration, args.startup_timeout, not args.no_monitor)
    try:
        code, summary = run_plan(plan, options)
    except LaunchError as exc:
        print(f"robot-control launch: {exc}", file=sys.stderr)
        return 2
    text = json.dumps(summary, indent=2)
    print(text)
    if args.summary:
        with open(args.summary, "w") as fh:
            fh.write(text + "\n")
    return code


def main(argv: list[str] | None = None) -> int:
    """``python -m robot_control.cli_launch …``: the same as ``robot-control launch …``."""
    parser = argparse.ArgumentParser(prog="robot-control launch")
    add_arguments(parser)
    return run(parser.parse_args(argv))


def _show_args(plan: LaunchPlan) -> int:
    print("Arguments (pass arguments as '<name>:=<value>'):")
    for arg in plan.arguments:
        print(f"\n    '{arg.name}':\n        {arg.description or 'no description given'}")
        if arg.default is not None:
            print(f"        (default: '{arg.default}')")
    return 0


class _StopRequest:
    """SIGINT / SIGTERM to the runner: the first stops the stack, a second hurries it."""

    def __init__(self) -> None:
        self.count = 0
        self.saved: list = []

    def __call__(self, signum, frame) -> None:
        self.count += 1

    def install(self) -> None:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self.saved.append((sig, signal.getsignal(sig)))
                signal.signal(sig, self)

    def restore(self) -> None:
        for sig, handler in self.saved:
            signal.signal(sig, handler)


def run_plan(plan: LaunchPlan, options: RunOptions, stream: IO[str] = sys.stdout
             ) -> tuple[int, dict[str, object]]:
    """Start every node of the plan, watch them, stop them all; (exit code, summary)."""
    out = LineWriter(stream)
    log = lambda message: out.write("launch", message)  # noqa: E731
    for node in plan.nodes:
        node_module(node)  # refuse a file we cannot run before starting anything
    stop = _StopRequest()
    stop.install()
    monitor = None
    procs: list[NodeProcess] = []
    reason, failed = "", {}
    ended = time.monotonic()
    try:
        if options.monitor:
            from robot_control.launch_summary import StackMonitor

            monitor = StackMonitor()
        env = child_environment()
        for node in plan.nodes:
            procs.append(NodeProcess(node, env, out))
            log(f"started {node.label} (pid {procs[-1].proc.pid}): "
                f"{shlex.join(procs[-1].command[1:])}")
        reason, failed = _watch(procs, monitor, stop, options, plan, log)
        log(f"stopping: {reason}")
        ended = time.monotonic()
        if monitor is not None and reason == "duration reached":
            monitor.wait_for_diagnostics(after=ended)  # the plant's figures up to the end
    finally:
        if monitor is not None:
            monitor.stop()
        hurry = stop.count > 1
        stop_processes(procs, 0.5 if hurry else options.sigint_timeout_s,
                       0.5 if hurry else options.sigterm_timeout_s, log)
        stop.restore()
    summary: dict[str, object] = {
        "launch_file": str(plan.file), "arguments": dict(plan.values),
        "robot": plan.values.get("robot"), "controller": plan.values.get("controller"),
        "requested_rate_hz": _number(plan.values.get("rate")),
    }
    if monitor is not None:
        summary.update(monitor.summary(until=ended))
    summary["stopped_by"] = reason
    summary["nodes"] = {p.node.label: {"pid": p.proc.pid, "exit": p.returncode} for p in procs}
    unclean = {p.node.label: p.returncode for p in procs if p.returncode not in STOPPED_CODES}
    failed = failed or unclean
    if failed:
        summary["failed"] = failed
    return (1 if failed else 0), summary


def _watch(procs: list[NodeProcess], monitor, stop: _StopRequest, options: RunOptions,
           plan: LaunchPlan, log) -> tuple[str, dict[str, object]]:
    """Wait for the reason to stop: a signal, a failed node, the duration, a startup timeout."""
    started = time.monotonic()
    # with a controller in the plan, "running" means the loop is closed (its state is flowing)
    needs_loop = monitor is not None and any(n.executable == "controller" for n in plan.nodes)
    announced = False
    while True:
        now = time.monotonic()
        if needs_loop and monitor.running and not announced:
            announced = True
            log(f"control loop running ({monitor.running_since - started:.1f} s after start)")
        crashed = [p for p in procs if p.returncode not in (None, 0)]
        if stop.count:
            return "interrupted", {}
        if crashed:
            return ("node failed: " + ", ".join(
                f"{p.node.label} ({describe_exit(p.returncode)})" for p in crashed),
                {p.node.label: p.returncode for p in crashed})
        if all(p.returncode is not None for p in procs):
            return "all nodes exited", {}
        if needs_loop and not monitor.running and now - started > options.startup_timeout_s:
            return (f"the control loop was not running after {options.startup_timeout_s:g} s",
                    {"startup": "timeout"})
        if options.duration_s is not None:
            since = monitor.running_since if needs_loop else started
            if since is not None and now - since >= options.duration_s:
                return "duration reached", {}
        time.sleep(0.05)


def _number(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


if __name__ == "__main__":
    sys.exit(main())
