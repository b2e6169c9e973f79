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
    from robot_control.sim.scenario import ScenarioError
    from robot_control.sim.simulate import run as simulate

    try:
        result = simulate(args.scenario, progress=not args.quiet and sys.stderr.isatty())
    except (ScenarioError, ValueError, KeyError) as exc:
        print(f"robot-control simulate: {exc}", file=sys.stderr)
        return 2
    except FloatingPointError as exc:  # the plant diverged: no summary to trust
        print(f"robot-control simulate: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(result.summary, indent=2))
    if args.out:
        with open(args.out, "w") as fh:
            json.dump({"summary": result.summary, "diagnostics": result.diagnostics,
                       "series": result.series()}, fh)
    if args.plot:
        from robot_control.sim.report import plot_result

        plot_result(result, args.plot)
    return 0
