"""The stack's control loop over the bus (issue 11) and its start-up (issue 12).

    python bench/loop.py [--duration S] [--repeat N] [--routes dds,rclpy]
                         [--layouts processes,composed] [--rates 500,1000,2000]
                         [--robots ddarm,puma560] [--json FILE] [name:=value …]
    python bench/loop.py --startup [--repeat N] [--duration S] [name:=value …]

**Loop table** (default): ``robot-control launch robot:=R rate:=F composed:=… --duration S``
(computed torque, the launch file's demo motion) for every combination of route — ``dds``, the
rclpy-free Cyclone DDS backend; ``rclpy``, the nodes on rclpy (ROS 2 from $ROS_SETUP or
/opt/ros/jazzy, sourced for the launch only) — layout (four node processes and their lifecycle
manager, or all of them composed in one process), rate and robot, 10 s of closed-loop control
each, on a private ROS domain. One line per run, from the launch summary: the achieved rate
(plant ticks per second), state→command latency p50/p99/max (the plant's: state published to
command applied), missed deadlines (ticks whose command had not arrived by the next tick) as a
count and a share of the ticks, the max tracking error over the joints, and the 1-minute load
average at the start and at the end of the run (the machine is shared: the load says what a
figure is worth). A field the summary lacks prints as "—". Then, per route, robot and rate, the
composed run's figures as ratios of the four-process run's measured next to it. Targets (issue
11, idle 2-core machine): composed 1 kHz p99 ≤ 300 µs, missed ≤ 0.1 %; composed 2 kHz missed ≤ 1 %;
four processes 1 kHz p99 ≤ 1 ms, missed ≤ 1 %; rclpy four processes 1 kHz ≥ 990 Hz.

**Start-up** (``--startup``): each round runs ``robot-control launch --duration S`` twice, *cold*
(an empty numba cache: a fresh NUMBA_CACHE_DIR, every kernel the nodes need is compiled) then
*warm* (the cache the cold run left), and prints the seconds from the start of the launch to
the closed loop (the launcher's "control loop running" line), the run's max tracking error and
the 1-minute load average, then the medians and the cold/warm ratio. Goals (issue 12, 2 cores):
loop closed ≤ 2 s warm, ≤ 8 s cold, max error ≤ 0.2 rad. The OS file cache is not emptied
(Python's own imports are warm in both).
"""

from __future__ import annotations

import argparse
import itertools
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
MISSING = "—"
LAYOUTS = {"processes": "false", "composed": "true"}


def launch_once(env: dict[str, str], duration: float, launch_args: list[str]) -> dict:
    """One ``robot-control launch``: its summary (empty if it wrote none), the seconds to the
    closed loop from its output, exit code, wall time and the load averages around it."""
    with tempfile.TemporaryDirectory() as tmp:
        summary_file = Path(tmp) / "summary.json"
        load_start = os.getloadavg()[0]
        started = time.monotonic()
        out = subprocess.run(
            [sys.executable, "-m", "robot_control.cli", "launch", *launch_args,
             "--duration", str(duration), "--summary", str(summary_file)],
            env=env, capture_output=True, text=True, timeout=duration + 240)
        wall = time.monotonic() - started
        summary = json.loads(summary_file.read_text()) if summary_file.exists() else {}
    found = LOOP_LINE.search(out.stdout)
    return {"summary": summary, "loop_closed_s": float(found.group(1)) if found else None,
            "exit": out.returncode, "wall_s": wall, "load_start": load_start,
            "load_end": os.getloadavg()[0],
            "tail": "" if out.returncode == 0 else (out.stdout + out.stderr)[-2000:]}


# --- the loop table ------------------------------------------------------------------------------


def figure(summary: dict, *path: str):
    """A number at ``path`` in the summary, or None where a field is missing or not a number."""
    value: object = summary
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    if isinstance(value, list):
        numbers = [v for v in value if isinstance(v, int | float)]
        return max(numbers) if numbers and len(numbers) == len(value) else None
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def loop_figures(run: dict) -> dict[str, float | None]:
    """The table's figures of one run (None where the summary has none)."""
    s = run["summary"]
    steps, missed = figure(s, "steps"), figure(s, "missed_deadlines")
    ratio = figure(s, "missed_deadline_ratio")
    if ratio is None and steps and missed is not None:
        ratio = missed / steps
    return {"rate_hz": figure(s, "rate_hz"), "p50_us": figure(s, "latency_us", "p50"),
            "p99_us": figure(s, "latency_us", "p99"), "max_us": figure(s, "latency_us", "max"),
            "missed": missed, "missed_pct": None if ratio is None else 100.0 * ratio,
            "max_error_rad": figure(s, "max_error")}


def fmt(value: float | None, spec: str, unit: str = "") -> str:
    return MISSING if value is None else f"{value:{spec}}{unit}"


HEADER = (f"{'route':<6} {'layout':<9} {'robot':<8} {'rate':>5} {'achieved':>9} {'p50':>8} "
          f"{'p99':>8} {'max':>8} {'missed':>13} {'max err':>9} {'load start/end':>15}")


def table_row(route: str, layout: str, robot: str, rate: float, run: dict) -> str:
    f = loop_figures(run)
    missed = MISSING if f["missed"] is None else \
        f"{int(f['missed'])} ({fmt(f['missed_pct'], '.2f', '%')})"
    note = "" if run["exit"] == 0 else f"  exit {run['exit']}"
    return (f"{route:<6} {layout:<9} {robot:<8} {rate:>5.0f} {fmt(f['rate_hz'], '.0f', ' Hz'):>9} "
            f"{fmt(f['p50_us'], '.0f', ' µs'):>8} {fmt(f['p99_us'], '.0f', ' µs'):>8} "
            f"{fmt(f['max_us'], '.0f', ' µs'):>8} {missed:>13} "
            f"{fmt(f['max_error_rad'], '.4f'):>9} "
            f"{run['load_start']:>7.2f}/{run['load_end']:<6.2f}{note}")


def ros_environment(base: dict[str, str]) -> dict[str, str] | None:
    """base with ROS 2 sourced ($ROS_SETUP or /opt/ros/jazzy/setup.bash), or None without one."""
    setup = os.environ.get("ROS_SETUP", "/opt/ros/jazzy/setup.bash")
    if not Path(setup).is_file():
        return None
    out = subprocess.run(["bash", "-c", f"source {setup} >/dev/null 2>&1 && env -0"],
                         env={**base, "PATH": "/usr/bin:" + base.get("PATH", "")},
                         capture_output=True, timeout=60)
    if out.returncode != 0:
        return None
    env = dict(item.split("=", 1) for item in out.stdout.decode().split("\0") if "=" in item)
    return {**env, "ROBOT_CONTROL_BUS": "rclpy", "RMW_IMPLEMENTATION": "rmw_cyclonedds_cpp"}


def route_environments(base: dict[str, str], routes: list[str]) -> dict[str, dict | None]:
    envs: dict[str, dict | None] = {}
    for route in routes:
        if route == "dds":
            envs[route] = {**base, "ROBOT_CONTROL_BUS": "dds"}
        elif route == "rclpy":
            envs[route] = ros_environment(base)
        else:
            raise SystemExit(f"unknown route {route!r}: dds or rclpy")
    return envs


def ratio_lines(results: list[dict]) -> list[str]:
    """Composed over four processes, per route, robot, rate and repeat (runs side by side)."""
    lines = []
    by_key = {(r["route"], r["robot"], r["rate"], r["round"], r["layout"]): r for r in results}
    for (route, robot, rate, k, layout), composed in by_key.items():
        processes = by_key.get((route, robot, rate, k, "processes"))
        if layout != "composed" or processes is None:
            continue
        c, p = loop_figures(composed), loop_figures(processes)
        parts = []
        for key, label in (("rate_hz", "achieved"), ("p50_us", "p50"), ("p99_us", "p99"),
                           ("max_us", "max"), ("missed_pct", "missed"),
                           ("max_error_rad", "max err")):
            ok = c[key] is not None and p[key] not in (None, 0)
            parts.append(f"{label} {c[key] / p[key]:.2f}x" if ok else f"{label} {MISSING}")
        lines.append(f"{route:<6} {robot:<8} {rate:>5.0f} Hz: " + ", ".join(parts))
    return lines


def loop_table(args: argparse.Namespace, base: dict[str, str]) -> int:
    routes, layouts = args.routes.split(","), args.layouts.split(",")
    rates = [float(r) for r in args.rates.split(",")]
    robots = args.robots.split(",")
    for layout in layouts:
        if layout not in LAYOUTS:
            raise SystemExit(f"unknown layout {layout!r}: processes or composed")
    envs = route_environments(base, routes)
    print(f"{args.duration:g} s of closed-loop control per run, computed torque; "
          f"{os.cpu_count()} cores; p50/p99/max: state→command latency; missed: deadlines")
    print(HEADER)
    results = []
    for k, rate, robot, route, layout in itertools.product(range(args.repeat), rates, robots,
                                                            routes, layouts):
        if envs[route] is None:
            print(f"{route:<6} {layout:<9} {robot:<8} {rate:>5.0f}  no ROS 2 to run rclpy "
                  f"(set ROS_SETUP)", flush=True)
            continue
        run = launch_once(envs[route], args.duration,
                          [f"robot:={robot}", f"rate:={rate}", f"composed:={LAYOUTS[layout]}",
                           *args.launch_args])
        results.append({"route": route, "layout": layout, "robot": robot, "rate": rate,
                        "round": k, **run})
        print(table_row(route, layout, robot, rate, run), flush=True)
        if run["exit"] != 0:
            print("    " + run["tail"].replace("\n", "\n    ")[-1500:], flush=True)
    print("\ncomposed / four processes (same route, robot, rate, round):")
    for line in ratio_lines(results):
        print("  " + line)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


# --- start-up ------------------------------------------------------------------------------------


def startup(args: argparse.Namespace, base: dict[str, str]) -> int:
    env = {**base, "ROBOT_CONTROL_BUS": "dds"}
    rows: dict[str, list[dict]] = {"cold": [], "warm": []}
    print(f"{'run':<8}{'loop closed':>13}{'max error':>14}{'exit':>6}{'load 1 min':>12}")
    for k in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache:
            for kind in ("cold", "warm"):
                row = launch_once({**env, "NUMBA_CACHE_DIR": cache}, args.duration,
                                  args.launch_args)
                rows[kind].append(row)
                closed = "never" if row["loop_closed_s"] is None else \
                    f"{row['loop_closed_s']:.1f} s"
                error = figure(row["summary"], "max_error")
                error = "-" if error is None else f"{error:.3f} rad"
                print(f"{kind} #{k + 1:<3}{closed:>13}{error:>14}{row['exit']:>6}"
                      f"{row['load_start']:>12.1f}", flush=True)
    medians = {kind: statistics.median([r["loop_closed_s"] for r in runs
                                        if r["loop_closed_s"] is not None] or [float("nan")])
               for kind, runs in rows.items()}
    print(f"median loop closed: cold {medians['cold']:.1f} s (goal 8), warm {medians['warm']:.1f} s "
          f"(goal 2); cold/warm {medians['cold'] / medians['warm']:.1f}x; "
          f"{os.cpu_count()} cores")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("launch_args", nargs="*", metavar="name:=value")
    parser.add_argument("--startup", action="store_true",
                        help="time the start-up, cold and warm (issue 12), not the loop")
    parser.add_argument("--repeat", type=int, default=None,
                        help="rounds (default: 1 table, 2 cold+warm start-up rounds)")
    parser.add_argument("--duration", type=float, default=None,
                        help="closed-loop seconds per run (default: 10 table, 12 start-up)")
    parser.add_argument("--routes", default="dds,rclpy", help="dds,rclpy (default both)")
    parser.add_argument("--layouts", default="processes,composed",
                        help="processes,composed (default both)")
    parser.add_argument("--rates", default="500,1000,2000", help="Hz (default 500,1000,2000)")
    parser.add_argument("--robots", default="ddarm,puma560", help="default ddarm,puma560")
    parser.add_argument("--json", metavar="FILE", help="also write every run's summary here")
    args = parser.parse_args(argv)
    base = {**os.environ, "ROS_DOMAIN_ID": str(domains.claim("bench-loop")),
            "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    if args.startup:
        args.repeat = 2 if args.repeat is None else args.repeat
        args.duration = 12.0 if args.duration is None else args.duration
        return startup(args, base)
    args.repeat = 1 if args.repeat is None else args.repeat
    args.duration = 10.0 if args.duration is None else args.duration
    return loop_table(args, base)


if __name__ == "__main__":
    sys.exit(main())
