"""The machine's own timer wake-up latency: the floor under any control loop that sleeps.

    python bench/wakeup.py [--duration S] [--interval-us N] [--priority P] [--repeat R]

Runs ``cyclictest`` (rt-tests, the field's tool: ``apt install rt-tests``) — one thread that
sleeps to an absolute deadline every ``--interval-us`` and records how late it woke — and prints
its p50/p99/p99.9/max and how many wake-ups were later than 250 µs, 500 µs and 1 ms; then the
same for a Python thread sleeping to the same grid (``time.sleep``, as a node's executor sleeps
between ticks); then the gaps of a thread that never sleeps (a Python spin loop reading the
clock: a gap longer than those bounds is a time it was not running). A 1 kHz loop whose thread
sleeps between ticks cannot miss fewer deadlines than the wake-ups later than its slack; the spin
loop shows whether the lateness comes from waking up (a sleeping virtual CPU resumed late) or
from the CPU being taken away. ``--priority`` > 0 runs the two sleepers under SCHED_FIFO (the
nodes' ``realtime_priority``); the rt-tests package is needed (one-line error otherwise).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time

BOUNDS_US = (250, 500, 1000)


def cyclictest(duration: float, interval_us: int, priority: int) -> list[int]:
    """Wake-up latencies (µs) of one cyclictest thread, from its histogram."""
    loops = int(duration * 1e6 / interval_us)
    cmd = ["cyclictest", "-q", "-m", "-i", str(interval_us), "-l", str(loops), "-h", "100000"]
    if priority > 0:
        cmd += ["-p", str(priority)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=duration + 60).stdout
    latencies: list[int] = []
    for line in out.splitlines():
        m = re.match(r"^(\d+)\s+(\d+)$", line.strip())
        if m and int(m.group(2)):
            latencies += [int(m.group(1))] * int(m.group(2))
    return latencies


def python_sleeps(duration: float, interval_us: int, priority: int) -> list[int]:
    """Wake-up latencies (µs) of this Python thread sleeping to an absolute 1/interval grid."""
    if priority > 0:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
    try:
        period = interval_us * 1e-6
        start = time.perf_counter()
        late, k = [], 1
        while k * period < duration:
            due = start + k * period
            time.sleep(max(0.0, due - time.perf_counter()))
            late.append(int((time.perf_counter() - due) * 1e6))
            k += 1
        return late
    finally:
        if priority > 0:
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))


def spin_gaps(duration: float) -> tuple[list[float], int]:
    """Gaps (µs) longer than the smallest bound seen by a thread that never sleeps, and how
    many clock readings it made."""
    gaps, reads = [], 0
    start = last = time.perf_counter()
    while last - start < duration:
        now = time.perf_counter()
        reads += 1
        if now - last > BOUNDS_US[0] * 1e-6:
            gaps.append((now - last) * 1e6)
        last = now
    return gaps, reads


def quantile(sorted_values: list[int], q: float) -> int:
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench/wakeup.py", description=__doc__.split("\n")[0])
    parser.add_argument("--duration", type=float, default=10.0, help="s per measurement")
    parser.add_argument("--interval-us", type=int, default=1000, help="cyclictest period, µs")
    parser.add_argument("--priority", type=int, default=0, help="SCHED_FIFO priority (0: off)")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args(argv)
    if shutil.which("cyclictest") is None:
        print("bench/wakeup.py needs cyclictest: apt install rt-tests", file=sys.stderr)
        return 2
    print(f"{args.duration:g} s per row; load = 1-minute load average before the row")
    print(f"{'what':<28} {'p50':>6} {'p99':>6} {'p99.9':>6} {'max':>6}  "
          + " ".join(f"{'>' + str(b) + ' µs':>9}" for b in BOUNDS_US) + "   load")
    for _ in range(args.repeat):
        load = os.getloadavg()[0]
        lat = sorted(cyclictest(args.duration, args.interval_us, args.priority))
        if lat:
            print(f"{'cyclictest ' + str(args.interval_us) + ' µs' + (' FIFO' if args.priority else ''):<28} "
                  f"{quantile(lat, .5):6d} {quantile(lat, .99):6d} {quantile(lat, .999):6d} "
                  f"{lat[-1]:6d}  " + " ".join(f"{sum(v > b for v in lat):9d}" for b in BOUNDS_US)
                  + f"   {load:.2f}", flush=True)
        load = os.getloadavg()[0]
        lat = sorted(python_sleeps(args.duration, args.interval_us, args.priority))
        print(f"{'python sleep' + (' FIFO' if args.priority else ''):<28} "
              f"{quantile(lat, .5):6d} {quantile(lat, .99):6d} {quantile(lat, .999):6d} "
              f"{lat[-1]:6d}  " + " ".join(f"{sum(v > b for v in lat):9d}" for b in BOUNDS_US)
              + f"   {load:.2f}", flush=True)
        load = os.getloadavg()[0]
        gaps, reads = spin_gaps(args.duration)
        print(f"{'spin (never sleeps)':<28} {'':>6} {'':>6} {'':>6} {max(gaps, default=0):6.0f}  "
              + " ".join(f"{sum(g > b for g in gaps):9d}" for b in BOUNDS_US)
              + f"   {load:.2f}  ({reads} clock reads)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
