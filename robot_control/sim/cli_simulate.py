"""``robot-control simulate FILE [--out result.json] [--plot FILE.png]``."""

from __future__ import annotations

import argparse
import json
import os
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scenario", help="scenario YAML file, or the name of a bundled scenario")
    parser.add_argument("--out", help="write the summary and the time series to this JSON file")
    parser.add_argument("--plot", help="write a plot (PNG, PDF or SVG) of the run")
    parser.add_argument("--record", metavar="DIR",
                        help="write the run as a rosbag2 directory (MCAP), as a live recording")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    from robot_control.sim.scenario import ScenarioError, load_scenario
    from robot_control.sim.simulate import run as simulate

    if args.record and os.path.exists(args.record):
        print(f"robot-control simulate: {args.record} exists already, not overwriting",
              file=sys.stderr)
        return 2
    try:
        scenario = load_scenario(args.scenario)
        result = simulate(scenario, progress=not args.quiet and sys.stderr.isatty())
    except (ScenarioError, ValueError, KeyError) as exc:
        print(f"robot-control simulate: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(result.summary, indent=2))
    if args.out:
        with open(args.out, "w") as fh:
            json.dump({"summary": result.summary, "diagnostics": result.diagnostics,
                       "series": result.series()}, fh)
    if args.plot:
        from robot_control.sim.report import plot_result

        plot_result(result, args.plot, scenario.robot.effort_limit)
    if args.record:
        from robot_control.recording.offline import write_run

        counts = write_run(result, scenario, args.record)
        print(f"recorded {args.record}: " + ", ".join(f"{t} {n}" for t, n in counts.items()),
              file=sys.stderr)
    return 0
