"""``robot-control montecarlo SCENARIO --samples N [--seed S] [--mass-error E] [--payload KG]
[--friction-error E] [--friction V,C] [--noise SQ[,SQD]] [--workers N | --cluster ADDRESS]
--out FILE.jsonl [--resume] [--plot PNG]``.

Runs the scenario on N perturbed plants (sim/montecarlo.py: the controller keeps its model),
appends each run's record to the results file as it finishes, and prints p50 / p95 / max of
each joint's max and rms tracking error, the peak torques, saturation counts and failures.
"""

from __future__ import annotations

import argparse
import json
import sys

from robot_control.cli.sweep import add_execution_arguments, execute


def _pair(text: str) -> tuple[float, float]:
    """'a' or 'a,b' as (a, b) (b = 0 when absent)."""
    parts = [float(v) for v in text.split(",")]
    if len(parts) not in (1, 2):
        raise argparse.ArgumentTypeError(f"expected A or A,B, got '{text}'")
    return (parts[0], parts[1] if len(parts) == 2 else 0.0)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scenario", help="scenario YAML file or bundled name")
    parser.add_argument("--samples", type=int, required=True, help="number of perturbed runs")
    parser.add_argument("--seed", type=int, default=0,
                        help="sample k is drawn from a generator seeded by (seed, k)")
    parser.add_argument("--mass-error", type=float, default=0.0, metavar="E",
                        help="each link's mass and inertia × U(1−E, 1+E) (e.g. 0.2)")
    parser.add_argument("--payload", type=float, default=0.0, metavar="KG",
                        help="a point mass U(0, KG) at the last link")
    parser.add_argument("--friction-error", type=float, default=0.0, metavar="E",
                        help="the plant's viscous and Coulomb friction × U(1−E, 1+E)")
    parser.add_argument("--friction", type=_pair, default=(0.0, 0.0), metavar="V[,C]",
                        help="unmodelled friction added per joint: viscous U(0, V) N·m·s/rad, "
                             "Coulomb U(0, C) N·m")
    parser.add_argument("--noise", type=_pair, default=(0.0, 0.0), metavar="SQ[,SQD]",
                        help="sensor noise σ of q (rad) and q̇ (rad/s), fresh in every sample")
    add_execution_arguments(parser)
    parser.add_argument("--out", required=True, help="results file (.jsonl): a record per sample")
    parser.add_argument("--plot", metavar="PNG", help="draw the distributions (needs matplotlib)")
    parser.add_argument("--json", action="store_true", help="print the statistics as JSON")


def run(args: argparse.Namespace) -> int:
    from robot_control.sim.batch import scenario_document
    from robot_control.sim.jobs import make_jobs
    from robot_control.sim.montecarlo import (
        Perturbation,
        plot_statistics,
        sample_overrides,
        statistics,
        statistics_table,
    )
    from robot_control.sim.scenario import ScenarioError, load_scenario

    spec = Perturbation(args.mass_error, args.payload, args.friction_error, args.friction,
                        args.noise)
    try:
        spec.check()
        if args.samples < 1:
            raise ValueError(f"--samples must be ≥ 1, got {args.samples}")
        if not args.out.endswith(".jsonl"):
            raise ValueError(f"--out must be a .jsonl results file, got '{args.out}'")
        name, doc = scenario_document(args.scenario)
        model = load_scenario(doc).robot  # refused here, before any run, if it cannot run
        overrides = [sample_overrides(doc, model, spec, args.seed, k) for k in range(args.samples)]
        extras = [{"sample": k, "seed": args.seed} for k in range(args.samples)]
        jobs, files = make_jobs([args.scenario], overrides, extras)
    except (ScenarioError, ValueError, KeyError, OSError) as exc:
        print(f"robot-control montecarlo: {exc}", file=sys.stderr)
        return 2
    records = execute("montecarlo", jobs, files, args)
    if records is None:
        return 2
    stats = statistics(records)
    print(json.dumps(stats) if args.json else f"{name}: " + statistics_table(stats))
    if args.plot:
        try:
            plot_statistics(records, args.plot, f"{name}: {stats['ok']} samples, seed {args.seed}")
        except (RuntimeError, ValueError) as exc:
            print(f"robot-control montecarlo: --plot: {exc}", file=sys.stderr)
            return 1
    return 1 if stats["failed"] else 0
