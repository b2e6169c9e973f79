"""``robot-control warmup [SCENARIO...]``: compile ahead the code the bundled scenarios run.

numba compiles each kernel on its first use and caches it (dynamics.compile_cache); a fresh
install would otherwise compile during its first runs. This runs every bundled scenario (or the
given ones) for a few control periods, printing each as it goes, so later runs load the cache.
"""

from __future__ import annotations

import argparse
import sys
import time


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scenarios", nargs="*",
                        help="scenario files or bundled names (default: every bundled scenario)")
    parser.add_argument("--periods", type=int, default=3,
                        help="control periods run per scenario (default 3)")


def bundled() -> list[str]:
    """Names of the bundled scenarios."""
    from robot_control.model.resources import share_path

    return sorted(p.stem for p in share_path("config", "scenarios").glob("*.yaml"))


def warm(name: str, periods: int) -> None:
    """Run one scenario for ``periods`` control periods (its compiled loop or Python loop)."""
    from robot_control.safe_yaml import load_file
    from robot_control.sim.cell_simulate import load_cell_scenario, run_cell
    from robot_control.sim.scenario import load_scenario, resolve_scenario_path
    from robot_control.sim.simulate import run

    doc = load_file(resolve_scenario_path(name))
    doc["duration"] = periods / float(doc.get("rate", 1000.0))
    if "cell" in doc:
        run_cell(load_cell_scenario(doc))
    else:
        run(load_scenario(doc))


def run(args: argparse.Namespace) -> int:
    from robot_control.dynamics.compile_cache import CACHE_DIR

    names = args.scenarios or bundled()
    print(f"robot-control warmup: compiling for {len(names)} scenarios into {CACHE_DIR}",
          file=sys.stderr)
    started = time.perf_counter()
    failed = 0
    for i, name in enumerate(names, 1):
        t = time.perf_counter()
        try:
            warm(name, args.periods)
        except Exception as exc:  # noqa: BLE001 - report and go on: warming is best effort
            failed += 1
            print(f"[{i}/{len(names)}] {name}: failed ({exc})", file=sys.stderr)
            continue
        print(f"[{i}/{len(names)}] {name}: {time.perf_counter() - t:.1f} s", file=sys.stderr)
    print(f"robot-control warmup: done in {time.perf_counter() - started:.1f} s"
          + (f", {failed} failed" if failed else ""), file=sys.stderr)
    return 1 if failed else 0
