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
    from robot_control.sim import report
    from robot_control.sim.cell_simulate import is_cell_scenario, run_cell
    from robot_control.sim.scenario import ScenarioError
    from robot_control.sim.simulate import run as simulate

    # a cell scenario (several arms holding one object, Huo §3.13) has its own loop and plot
    cell = is_cell_scenario(args.scenario)
    runner, plot = (run_cell, report.plot_cell_result) if cell else (simulate, report.plot_result)
    try:
        result = runner(args.scenario, progress=not args.quiet and sys.stderr.isatty())
    except (ScenarioError, ValueError, KeyError) as exc:
        print(f"robot-control simulate: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(result.summary, indent=2))
    if args.out:
        payload = {"summary": result.summary}
        if not cell:
            payload["diagnostics"] = result.diagnostics
        payload["series"] = result.series()
        with open(args.out, "w") as fh:
            json.dump(payload, fh)
    if args.plot:
        plot(result, args.plot)
    return 0
