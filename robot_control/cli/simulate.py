"""``robot-control simulate FILE [--out result.json] [--plot FILE.png]``."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

PROG = "robot-control simulate"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scenario", help="scenario YAML file, or the name of a bundled scenario")
    parser.add_argument("--out", help="write the summary and the time series to this JSON file")
    parser.add_argument("--plot", help="write a plot (PNG, PDF or SVG) of the run")
    parser.add_argument("--record", metavar="DIR",
                        help="write the run as a rosbag2 directory (MCAP), as a live recording")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--engine", choices=("internal", "mujoco"),
                        help="the plant's physics engine (default: the scenario's plant.engine, "
                             "else internal)")


def run(args: argparse.Namespace) -> int:
    from robot_control.cli.interrupt import interrupted, requested, stop_within

    stop_within(PROG)
    try:
        return simulate_command(args)
    except BaseException as exc:
        # Ctrl-C: one line, no traceback (also when the KeyboardInterrupt broke a library's
        # step into another error, as a numba compile does)
        if isinstance(exc, KeyboardInterrupt) or requested.is_set():
            return interrupted(PROG)
        raise


def simulate_command(args: argparse.Namespace) -> int:
    """The command itself: load, run, print the summary, write what was asked."""
    from robot_control.sim import report
    from robot_control.sim.cell_simulate import (
        is_cell_scenario,
        load_cell_scenario,
        run_cell,
        scenario_engine,
    )
    from robot_control.sim.engine import preload, with_engine
    from robot_control.sim.scenario import ScenarioError, load_scenario
    from robot_control.sim.simulate import run as simulate

    if args.record and os.path.exists(args.record):
        print(f"robot-control simulate: {args.record} exists already, not overwriting",
              file=sys.stderr)
        return 2
    # a cell scenario (several arms holding one object, Huo §3.13) has its own loop and plot
    cell = is_cell_scenario(args.scenario)
    if cell and args.record:
        print("robot-control simulate: --record writes single-arm runs; a cell scenario has no "
              "bus topics yet", file=sys.stderr)
        return 2
    # an engine's imports are the interpreter's, not the run's (realtime_factor counts the run)
    preload(args.engine or scenario_engine(args.scenario))
    progress = not args.quiet and sys.stderr.isatty()
    try:
        if cell:
            sc = load_cell_scenario(args.scenario)
            sc.plant = with_engine(sc.plant, args.engine)
            scenario, result = None, run_cell(sc, progress=progress)
        else:
            started = time.perf_counter()  # realtime_factor includes loading the model
            scenario = load_scenario(args.scenario)
            if scenario.motion_warning:
                print(f"robot-control simulate: warning: {scenario.motion_warning}; the plant "
                      "saturates", file=sys.stderr)
            scenario.plant = with_engine(scenario.plant, args.engine)
            result = simulate(scenario, progress=progress, started=started)
    except (ScenarioError, ValueError, KeyError) as exc:
        print(f"robot-control simulate: {exc}", file=sys.stderr)
        return 2
    except FloatingPointError as exc:  # the plant diverged: no summary to trust
        print(f"robot-control simulate: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(result.summary, indent=2))
    if args.out:
        payload = {"summary": result.summary}
        if not cell:
            payload["diagnostics"] = result.diagnostics
        payload["series"] = result.series()
        with open(args.out, "w") as fh:
            json.dump(payload, fh)
    if args.plot:
        if cell:
            report.plot_cell_result(result, args.plot)
        else:
            report.plot_result(result, args.plot, **report.scenario_context(scenario))
    if args.record:
        from robot_control.recording.bag import BagError
        from robot_control.recording.offline import write_run

        try:
            counts = write_run(result, scenario, args.record)
        except BagError as exc:  # a full disk: the bag is closed with what was written
            print(f"robot-control simulate: {exc}", file=sys.stderr)
            return 1
        print(f"recorded {args.record}: " + ", ".join(f"{t} {n}" for t, n in counts.items()),
              file=sys.stderr)
    return 0
