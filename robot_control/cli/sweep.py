"""``robot-control sweep FILE... [--set KEY=V1,V2...] [--workers N] [--out results.json]``.

Runs every scenario with every combination of the ``--set`` values (YAML values, e.g.
``--set controller.params.kp=[50,50,50];[100,100,100]``; ``;`` separates the values) in worker
processes, and prints one JSON object per run: the scenario, its overrides and its summary.
"""

from __future__ import annotations

import argparse
import json
import sys

from robot_control.safe_yaml import load_text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scenarios", nargs="+", help="scenario YAML files or bundled names")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=V1;V2",
                        help="dotted scenario key and the values to sweep (YAML, ';'-separated)")
    parser.add_argument("--workers", type=int, default=None,
                        help="worker processes (default: every CPU this process may use)")
    parser.add_argument("--out", help="also write summaries and time series to this JSON file")


def parse_sets(items: list[str]) -> dict[str, list]:
    """{"a.b": [v1, v2]} from ["a.b=v1;v2"]; each value is read as YAML."""
    grid: dict[str, list] = {}
    for item in items:
        key, sep, values = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--set needs KEY=VALUES, got '{item}'")
        grid[key] = [load_text(v, f"--set {key}") for v in values.split(";")]
    return grid


def run(args: argparse.Namespace) -> int:
    from robot_control.sim.batch import parameter_grid, simulate_batch
    from robot_control.sim.scenario import ScenarioError

    try:
        overrides = parameter_grid(parse_sets(args.set))
        results = simulate_batch(args.scenarios, overrides, args.workers)
    except (ScenarioError, ValueError, KeyError) as exc:
        print(f"robot-control sweep: {exc}", file=sys.stderr)
        return 2
    rows = []
    per = len(overrides)
    for i, result in enumerate(results):
        row = {"scenario": args.scenarios[i // per], "overrides": overrides[i % per],
               "summary": result.summary}
        rows.append(row)
        print(json.dumps(row))
    if args.out:
        with open(args.out, "w") as fh:
            json.dump([r | {"series": res.series()} for r, res in zip(rows, results)], fh)
    return 0
