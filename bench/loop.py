"""Start-up of the stack: how long until the control loop is closed, cold and warm.

    python bench/loop.py [--repeat N] [--duration S] [name:=value …]

Each round runs ``robot-control launch --duration S`` twice on a private ROS domain: *cold*, with
an empty numba cache (a fresh NUMBA_CACHE_DIR: every kernel the nodes need is compiled), then
*warm*, with the cache the cold run left. It prints, per run, the seconds from the start of the
launch to the closed loop (the launcher's "control loop running" line), the whole run's max
tracking error and the 1-minute load average when the run started, then the medians and the
cold/warm ratio. Goals (issue 12, 2 cores): loop closed ≤ 2 s warm, ≤ 8 s cold, max error ≤ 0.2 rad.

The OS file cache is not emptied (Python's own imports are warm in both), and on a shared machine
the load average says how much the figures are worth: repeat the rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "test"))
import domains  # noqa: E402  (the test suite's machine-wide domain claims)

LOOP_LINE = re.compile(r"control loop running \(([0-9.]+) s after start\)")


def launch_once(env: dict[str, str], duration: float, launch_args: list[str]) -> dict:
    """One ``robot-control launch``: seconds to the closed loop, max error, exit code."""
    with tempfile.TemporaryDirectory() as tmp:
        summary_file = Path(tmp) / "summary.json"
        started = time.monotonic()
        out = subprocess.run(
            [sys.executable, "-m", "robot_control.cli", "launch", *launch_args,
             "--duration", str(duration), "--summary", str(summary_file)],
            env=env, capture_output=True, text=True, timeout=duration + 180)
        wall = time.monotonic() - started
        summary = json.loads(summary_file.read_text()) if summary_file.exists() else {}
    found = LOOP_LINE.search(out.stdout)
    max_error = summary.get("max_error")
    return {"loop_closed_s": float(found.group(1)) if found else None,
            "max_error": max(max_error) if max_error else None,
            "exit": out.returncode, "wall_s": wall}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("launch_args", nargs="*", metavar="name:=value")
    parser.add_argument("--repeat", type=int, default=2, help="cold+warm rounds (default 2)")
    parser.add_argument("--duration", type=float, default=12.0,
                        help="closed-loop seconds per run (default 12)")
    args = parser.parse_args(argv)
    env = {**os.environ, "ROS_DOMAIN_ID": str(domains.claim("bench-loop")),
           "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST", "ROBOT_CONTROL_BUS": "dds"}
    rows: dict[str, list[dict]] = {"cold": [], "warm": []}
    print(f"{'run':<8}{'loop closed':>13}{'max error':>14}{'exit':>6}{'load 1 min':>12}")
    for k in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache:
            for kind in ("cold", "warm"):
                load = os.getloadavg()[0]
                row = launch_once({**env, "NUMBA_CACHE_DIR": cache}, args.duration,
                                  args.launch_args)
                rows[kind].append(row)
                closed = "never" if row["loop_closed_s"] is None else f"{row['loop_closed_s']:.1f} s"
                error = "-" if row["max_error"] is None else f"{row['max_error']:.3f} rad"
                print(f"{kind} #{k + 1:<3}{closed:>13}{error:>14}{row['exit']:>6}{load:>12.1f}",
                      flush=True)
    medians = {kind: statistics.median([r["loop_closed_s"] for r in runs
                                        if r["loop_closed_s"] is not None] or [float("nan")])
               for kind, runs in rows.items()}
    print(f"median loop closed: cold {medians['cold']:.1f} s (goal 8), warm {medians['warm']:.1f} s "
          f"(goal 2); cold/warm {medians['cold'] / medians['warm']:.1f}x; "
          f"{os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
