"""What SROS2 costs the 1 kHz loop (issue 27): secure and plain side by side in one run.

    python bench/security.py [--duration S] [--repeat N] [--layouts processes,composed]
                             [--rate HZ] [--chrt PRIO] [--json FILE] [name:=value …]

Runs on the rclpy route (ROS 2 from $ROS_SETUP or /opt/ros/jazzy, sourced for the launches;
the rclpy-free route has no DDS Security). Makes a keystore with ``robot-control security init``
on a private ROS domain, then for every round and layout (four node processes and their
lifecycle manager, or all composed in one process) runs ``robot-control launch rate:=HZ
composed:=… --duration S`` plain, then with ``security:=true keystore:=…`` (each node in its
enclave, authenticated discovery, encrypted data, access control), back to back so both see the
same machine. One line per run: the achieved rate (plant steps per second), state→command latency
p50/p99/max and missed deadlines (the plant's own figures, as in bench/loop.py), the CPU the node
processes used while the loop ran (cores: CPU seconds per wall second, from /proc, between the
launcher's "control loop running" and "stopping" lines), the bring-up time (node processes
started → loop closed: imports, discovery — authenticated when secure — and the lifecycle
bring-up) and the 1-minute load average. Then secure/plain per round and layout, and with
several rounds the medians of each figure per layout and mode (the machine's load moves between
runs; medians over rounds weigh that down). Goal (issue 27):
≤ 10 % extra p99 at 1 kHz, missed deadlines within the loop's goal (bench/loop.py).
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH.parent / "test"))
import domains  # noqa: E402  (the test suite's machine-wide domain claims)
from loop import LAYOUTS, fmt, loop_figures, ros_environment  # noqa: E402

LOOP_LINE = re.compile(r"\[launch\] control loop running \(([0-9.]+) s after start\)")
STOP_LINE = "[launch] stopping:"
MISSING = "—"
TICK = os.sysconf("SC_CLK_TCK")


def descendants_cpu(root: int) -> dict[int, float]:
    """CPU seconds (user + system) of every live descendant of ``root``, from /proc/<pid>/stat."""
    parent, cpu = {}, {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile
        pid = int(entry)
        parent[pid] = int(fields[1])
        cpu[pid] = (int(fields[11]) + int(fields[12])) / TICK  # utime, stime (stat 14, 15)
    out = {}
    for pid in cpu:
        p = parent.get(pid)
        while p is not None and p != root and p > 1:
            p = parent.get(p)
        if p == root:
            out[pid] = cpu[pid]
    return out


def launch_measured(env: dict[str, str], duration: float, launch_args: list[str],
                    prefix: tuple[str, ...] = ()) -> dict:
    """One ``robot-control launch`` (after the ``prefix`` command, e.g. chrt): its summary,
    bring-up time, node CPU while the loop ran, exit code and load averages."""
    with tempfile.TemporaryDirectory() as tmp:
        summary_file = Path(tmp) / "summary.json"
        load_start = os.getloadavg()[0]
        proc = subprocess.Popen(
            [*prefix, sys.executable, "-m", "robot_control.cli", "launch", *launch_args,
             "--duration", str(duration), "--summary", str(summary_file)],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines: queue.SimpleQueue = queue.SimpleQueue()
        threading.Thread(target=lambda: [lines.put(ln) for ln in proc.stdout] and None,
                         daemon=True).start()
        deadline = time.monotonic() + duration + 240.0
        closed_s, cpu0, cpu1, tail = None, None, None, []
        while time.monotonic() < deadline and (proc.poll() is None or not lines.empty()):
            try:
                line = lines.get(timeout=0.2)
            except queue.Empty:
                continue
            tail = (tail + [line])[-40:]
            found = LOOP_LINE.search(line)
            if found:
                closed_s = float(found.group(1))
                cpu0 = (time.monotonic(), descendants_cpu(proc.pid))
            elif line.startswith(STOP_LINE) and cpu1 is None:
                cpu1 = (time.monotonic(), descendants_cpu(proc.pid))
        if proc.poll() is None:
            proc.kill()
        proc.wait(30)
        summary = json.loads(summary_file.read_text()) if summary_file.exists() else {}
    cores = None
    if cpu0 is not None and cpu1 is not None and cpu1[0] > cpu0[0]:
        used = sum(cpu1[1][pid] - cpu0[1][pid] for pid in cpu1[1] if pid in cpu0[1])
        cores = used / (cpu1[0] - cpu0[0])
    return {"summary": summary, "loop_closed_s": closed_s, "cpu_cores": cores,
            "exit": proc.returncode, "load_start": load_start, "load_end": os.getloadavg()[0],
            "tail": "" if proc.returncode == 0 else "".join(tail)}


HEADER = (f"{'layout':<9} {'mode':<6} {'achieved':>9} {'p50':>8} {'p99':>8} {'max':>8} "
          f"{'missed':>14} {'CPU':>6} {'bring-up':>9} {'load':>5}")


def row(layout: str, mode: str, run: dict) -> str:
    f = loop_figures(run)
    missed = MISSING if f["missed"] is None else \
        f"{int(f['missed'])} ({fmt(f['missed_pct'], '.2f', '%')})"
    note = "" if run["exit"] == 0 else f"  exit {run['exit']}"
    return (f"{layout:<9} {mode:<6} {fmt(f['rate_hz'], '.0f', ' Hz'):>9} "
            f"{fmt(f['p50_us'], '.0f', ' µs'):>8} {fmt(f['p99_us'], '.0f', ' µs'):>8} "
            f"{fmt(f['max_us'], '.0f', ' µs'):>8} {missed:>14} "
            f"{fmt(run['cpu_cores'], '.2f'):>6} {fmt(run['loop_closed_s'], '.1f', ' s'):>9} "
            f"{run['load_start']:>5.2f}{note}")



def ratio(secure: dict, plain: dict) -> str:
    """secure / plain of the figures that matter, as ratios."""
    s, p = loop_figures(secure), loop_figures(plain)
    s.update(cpu=secure["cpu_cores"], up=secure["loop_closed_s"])
    p.update(cpu=plain["cpu_cores"], up=plain["loop_closed_s"])
    parts = []
    for key, label in (("rate_hz", "achieved"), ("p50_us", "p50"), ("p99_us", "p99"),
                       ("missed_pct", "missed"), ("cpu", "CPU"), ("up", "bring-up")):
        ok = s[key] is not None and p[key] not in (None, 0)
        parts.append(f"{label} {s[key] / p[key]:.2f}x" if ok else f"{label} {MISSING}")
    return ", ".join(parts)


def median_run(runs: list[dict]) -> dict:
    """A run whose figures are the medians of the runs' (summary fields the table reads)."""
    def med(values):
        values = [v for v in values if v is not None]
        return statistics.median(values) if values else None

    figures = [loop_figures(r) for r in runs]
    summary = {"rate_hz": med([f["rate_hz"] for f in figures]),
               "latency_us": {k: med([f[f"{k}_us"] for f in figures])
                              for k in ("p50", "p99", "max")},
               "missed_deadlines": med([f["missed"] for f in figures]),
               "missed_deadline_ratio": med([None if f["missed_pct"] is None
                                             else f["missed_pct"] / 100 for f in figures]),
               "max_error": med([f["max_error_rad"] for f in figures])}
    return {"summary": summary, "cpu_cores": med([r["cpu_cores"] for r in runs]),
            "loop_closed_s": med([r["loop_closed_s"] for r in runs]),
            "load_start": med([r["load_start"] for r in runs]), "exit": 0}


def make_keystore(env: dict[str, str], path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "robot_control.cli", "security", "init",
                          str(path)], env=env, capture_output=True, text=True, timeout=180)
    if out.returncode != 0:
        raise SystemExit(f"security init failed: {out.stderr.strip()}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("launch_args", nargs="*", metavar="name:=value")
    parser.add_argument("--duration", type=float, default=10.0,
                        help="closed-loop seconds per run (default 10)")
    parser.add_argument("--repeat", type=int, default=1, help="rounds (default 1)")
    parser.add_argument("--layouts", default="processes,composed")
    parser.add_argument("--rate", type=float, default=1000.0, help="control rate (default 1000)")
    parser.add_argument("--json", help="write every run's figures here")
    parser.add_argument("--chrt", type=int, metavar="PRIO",
                        help="run each launch, runner and nodes, under SCHED_FIFO at PRIO "
                             "(chrt -f): the composed container has no realtime_priority of its "
                             "own, and on a loaded machine the load, not the transport, decides")
    args = parser.parse_args(argv)
    base = {k: v for k, v in os.environ.items() if not k.startswith("ROS_SECURITY")}
    env = ros_environment(base)
    if env is None:
        raise SystemExit("no ROS 2 (set ROS_SETUP): SROS2 runs on the rclpy route only")
    env.update(ROS_DOMAIN_ID=str(domains.claim("bench-security")),
               ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    layouts = args.layouts.split(",")
    prefix = ("chrt", "-f", str(args.chrt)) if args.chrt else ()
    results = []
    with tempfile.TemporaryDirectory(prefix="robot_control_keystore_") as tmp:
        keystore = Path(tmp) / "keystore"
        make_keystore(env, keystore)
        modes = {"plain": [], "secure": ["security:=true", f"keystore:={keystore}"]}
        print(f"{args.duration:g} s of closed-loop control per run at {args.rate:g} Hz, computed "
              f"torque, rclpy route, ROS domain {env['ROS_DOMAIN_ID']}; {os.cpu_count()} cores; "
              "p50/p99/max: state→command latency; CPU: cores the nodes used while the loop ran; "
              "bring-up: node start → loop closed")
        print(HEADER)
        for k in range(args.repeat):
            for layout in layouts:
                pair = {}
                for mode, extra in modes.items():
                    run = launch_measured(env, args.duration,
                                          [f"rate:={args.rate}",
                                           f"composed:={LAYOUTS[layout]}", *extra,
                                           *args.launch_args], prefix)
                    pair[mode] = run
                    results.append({"round": k, "layout": layout, "mode": mode, **run})
                    print(row(layout, mode, run), flush=True)
                    if run["exit"] != 0:
                        print("    " + run["tail"].replace("\n", "\n    ")[-1500:], flush=True)
                print(f"  secure/plain: {ratio(pair['secure'], pair['plain'])}", flush=True)
    if args.repeat > 1:
        print(f"\nmedians over {args.repeat} rounds:")
        print(HEADER)
        for layout in layouts:
            medians = {mode: median_run([r for r in results if r["layout"] == layout
                                         and r["mode"] == mode and r["exit"] == 0])
                       for mode in modes}
            for mode, run in medians.items():
                print(row(layout, mode, run))
            print(f"  secure/plain: {ratio(medians['secure'], medians['plain'])}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
