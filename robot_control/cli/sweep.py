"""``robot-control sweep FILE... [--set KEY=V1;V2...] [--workers N | --cluster ADDRESS]
[--out results.jsonl [--resume]]``.

Runs every scenario with every combination of the ``--set`` values (YAML values, e.g.
``--set controller.params.kp=[50,50,50];[100,100,100]``; ``;`` separates the values) in local
worker processes or as tasks of a Dask scheduler (``--cluster tcp://host:8786``), and prints one
JSON object per run: the scenario, its overrides, its summary (or why it failed). ``--out X.jsonl``
appends each run's record as it finishes (``--resume`` skips the runs the file holds); ``--out
X.json`` writes every record with its time series once all have run.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from robot_control.foundation.safe_yaml import load_text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scenarios", nargs="+", help="scenario YAML files or bundled names")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=V1;V2",
                        help="dotted scenario key and the values to sweep (YAML, ';'-separated)")
    add_execution_arguments(parser)
    parser.add_argument("--out", help="results file: .jsonl gets one record per run as it "
                                      "finishes; another name gets all records and their time "
                                      "series (JSON) at the end")


def add_execution_arguments(parser: argparse.ArgumentParser) -> None:
    """--workers / --cluster / --batch / --resume, shared with robot-control montecarlo."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, default=None,
                       help="local worker processes (default: every CPU this process may use)")
    where.add_argument("--cluster", metavar="ADDRESS",
                       help="run on the Dask scheduler at ADDRESS (tcp://host:8786; needs the "
                            "cluster extra)")
    parser.add_argument("--batch", type=int, default=1, metavar="K",
                        help="with --cluster: K runs a Dask task (for runs of a few ms, where "
                             "the scheduler's ~1 ms a task would be the limit)")
    parser.add_argument("--resume", action="store_true",
                        help="skip the runs the --out .jsonl file already holds")


def parse_sets(items: list[str]) -> dict[str, list]:
    """{"a.b": [v1, v2]} from ["a.b=v1;v2"]; each value is read as YAML."""
    grid: dict[str, list] = {}
    for item in items:
        key, sep, values = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--set needs KEY=VALUES, got '{item}'")
        grid[key] = [load_text(v, f"--set {key}") for v in values.split(";")]
    return grid


def streaming(out: str | None, resume: bool) -> bool:
    """Whether ``out`` is a JSON Lines results file (ValueError for --resume without one)."""
    lines = out is not None and Path(out).suffix == ".jsonl"
    if resume and not lines:
        raise ValueError("--resume needs --out FILE.jsonl (the results file to resume)")
    return lines


def tally(records: list[dict]) -> tuple[int, str]:
    """(runs that went wrong, 'N runs: a ok, b failed, c lost')."""
    counts: dict[str, int] = {}
    for r in records:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    text = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
    return len(records) - counts.get("ok", 0), f"{len(records)} runs: {text}"


def execute(prog: str, jobs, files, args, series: bool = False) -> list[dict] | None:
    """Run a study's jobs as the command line asks; None (after a one-line error) if it cannot."""
    from robot_control.sim.dispatch import ClusterError
    from robot_control.sim.study import run_study

    try:
        lines = streaming(args.out, args.resume)
        return run_study(jobs, files, args.out if lines else None, args.resume, args.cluster,
                         args.workers, series=series and not lines, batch=args.batch)
    except (ClusterError, ValueError, OSError) as exc:
        print(f"robot-control {prog}: {exc}", file=sys.stderr)
        return None
    except KeyboardInterrupt:  # Ctrl-C: what finished is in the file; say how to go on
        kept = (f"; the finished runs are in {args.out} (--resume runs the others)" if lines
                else "")
        print(f"robot-control {prog}: stopped{kept}", file=sys.stderr)
        raise SystemExit(130) from None


def run(args: argparse.Namespace) -> int:
    from robot_control.sim.batch import parameter_grid
    from robot_control.sim.jobs import make_jobs
    from robot_control.sim.scenario import ScenarioError

    try:
        overrides = parameter_grid(parse_sets(args.set))
        jobs, files = make_jobs(args.scenarios, overrides)
    except (ScenarioError, ValueError, KeyError, OSError) as exc:
        print(f"robot-control sweep: {exc}", file=sys.stderr)
        return 2
    records = execute("sweep", jobs, files, args, series=args.out is not None)
    if records is None:
        return 2
    for record in records:
        print(json.dumps({k: v for k, v in record.items() if k != "series"}))
    if args.out and not streaming(args.out, False):
        with open(args.out, "w") as fh:
            json.dump(records, fh)
    wrong, text = tally(records)
    print(f"robot-control sweep: {text}" + (f" (written to {args.out})" if args.out else ""),
          file=sys.stderr)
    return 1 if wrong else 0
