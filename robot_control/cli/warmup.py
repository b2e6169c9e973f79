"""``robot-control warmup [SCENARIO...] [--no-stack]``: compile ahead the code runs will use.

numba compiles each kernel on its first use and caches it (dynamics.compile_cache); a fresh
install would otherwise compile during its first runs. This runs every bundled scenario (or the
given ones) for a few control periods, printing each as it goes; then (unless ``--no-stack`` or
scenarios are named) the stack itself for a second, composed in a namespace of its own, and waits
for its controller's background compile of the other laws (nodes/law_compiler.py). Later runs
and launches load the cache.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

from robot_control.foundation.file_locks import lock_within

#: the stack's run and the wait for its background compiler each end by then (s)
STACK_TIMEOUT_S = 600.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scenarios", nargs="*",
                        help="scenario files or bundled names (default: every bundled scenario)")
    parser.add_argument("--periods", type=int, default=3,
                        help="control periods run per scenario (default 3)")
    parser.add_argument("--no-stack", action="store_true",
                        help="only the scenarios, not the stack's nodes (the default with names)")


def bundled() -> list[str]:
    """Names of the bundled scenarios."""
    from robot_control.model.resources import share_path

    return sorted(p.stem for p in share_path("config", "scenarios").glob("*.yaml"))


def warm(name: str, periods: int) -> None:
    """Run one scenario for ``periods`` control periods (its compiled loop or Python loop)."""
    from robot_control.foundation.safe_yaml import load_file
    from robot_control.sim.cell_simulate import load_cell_scenario, run_cell
    from robot_control.sim.scenario import load_scenario, resolve_scenario_path
    from robot_control.sim.simulate import run

    doc = load_file(resolve_scenario_path(name))
    doc["duration"] = periods / float(doc.get("rate", 1000.0))
    if "cell" in doc:
        run_cell(load_cell_scenario(doc))
    else:
        run(load_scenario(doc))


def warm_stack() -> str | None:
    """Run the stack for a second (composed, namespace ``warmup_<pid>`` on this domain: it meets
    no running stack) and wait for its background law compiler; why it failed, or None."""
    from robot_control.dynamics.compile_cache import CACHE_DIR
    from robot_control.nodes.law_compiler import LOCK_NAME

    deadline = time.monotonic() + STACK_TIMEOUT_S
    cmd = [sys.executable, "-m", "robot_control.cli", "launch", "composed:=true",
           f"namespace:=warmup_{os.getpid()}", "--duration", "1"]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=STACK_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return f"the stack did not end within {STACK_TIMEOUT_S:g} s"
    if done.returncode != 0:
        return (done.stdout + done.stderr).strip().splitlines()[-1]
    if CACHE_DIR is None:
        return None
    with open(CACHE_DIR / LOCK_NAME, "a") as lock:  # the compiler holds it until it is done
        if not lock_within(lock, deadline - time.monotonic(), 0.5):
            return f"the background law compiler still runs after {STACK_TIMEOUT_S:g} s"
        return None


def run(args: argparse.Namespace) -> int:
    from robot_control.dynamics.compile_cache import CACHE_DIR

    names = args.scenarios or bundled()
    stack = not (args.no_stack or args.scenarios)
    print(f"robot-control warmup: compiling for {len(names)} scenarios"
          + (" and the stack" if stack else "") + f" into {CACHE_DIR}", file=sys.stderr)
    started = time.perf_counter()
    failed = 0
    steps = len(names) + stack
    for i, name in enumerate(names, 1):
        t = time.perf_counter()
        try:
            warm(name, args.periods)
        except Exception as exc:  # noqa: BLE001 - report and go on: warming is best effort
            failed += 1
            print(f"[{i}/{steps}] {name}: failed ({exc})", file=sys.stderr)
            continue
        print(f"[{i}/{steps}] {name}: {time.perf_counter() - t:.1f} s", file=sys.stderr)
    if stack:
        t = time.perf_counter()
        problem = warm_stack()
        failed += problem is not None
        print(f"[{steps}/{steps}] the stack's nodes and laws: "
              + (f"failed ({problem})" if problem else f"{time.perf_counter() - t:.1f} s"),
              file=sys.stderr)
    print(f"robot-control warmup: done in {time.perf_counter() - started:.1f} s"
          + (f", {failed} failed" if failed else ""), file=sys.stderr)
    return 1 if failed else 0
