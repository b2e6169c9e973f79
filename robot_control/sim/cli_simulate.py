"""``robot-control simulate FILE [--out result.json] [--plot FILE.png]``."""

from __future__ import annotations

import argparse
import json
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scenario", help="scenario YAML file, or the name of a bundled scenario")
    parser.add_argument("--out", help="write the summary and the time series to this JSON file")
    parser.add_argument("--plot", help="write a plot (PNG, PDF or SVG) of the run")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    from robot_control.sim.cell_simulate import is_cell_scenario
    from robot_control.sim.scenario import ScenarioError
    from robot_control.sim.simulate import run as simulate

    if is_cell_scenario(args.scenario):  # several arms holding one object (Huo §3.13)
        return run_cell_scenario(args)
    try:
        result = simulate(args.scenario, progress=not args.quiet and sys.stderr.isatty())
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

        plot_result(result, args.plot)
    return 0


def run_cell_scenario(args: argparse.Namespace) -> int:
    """``simulate`` for a cell scenario: the summary of robot_control.sim.cell_simulate."""
    from robot_control.sim.cell_simulate import run_cell
    from robot_control.sim.scenario import ScenarioError

    try:
        result = run_cell(args.scenario, progress=not args.quiet and sys.stderr.isatty())
    except (ScenarioError, ValueError, KeyError) as exc:
        print(f"robot-control simulate: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(result.summary, indent=2))
    if args.out:
        with open(args.out, "w") as fh:
            json.dump({"summary": result.summary, "series": result.series()}, fh)
    if args.plot:
        from robot_control.sim.report import plot_cell_result

        plot_cell_result(result, args.plot)
    return 0
