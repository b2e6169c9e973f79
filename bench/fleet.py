"""How many namespaced stacks one machine holds (issue 25): a fleet on one ROS domain.

    python bench/fleet.py [--counts 1,2,4] [--rates 1000,500,250] [--duration S] [--pin]
                          [--layout composed|processes] [--json FILE] [name:=value …]

For every rate and stack count N, N ``robot-control launch namespace:=fleet<i> rate:=F
composed:=true --duration S`` run side by side on one private ROS domain (loopback discovery,
the rclpy-free route), each its own robot in its own namespace; the launches start together, and
each one's summary (its monitor listens in its own namespace) gives its achieved rate (plant
ticks per second), its state→command latency p99, and its missed deadlines (ticks whose command
had not arrived by the next tick) as a share of the ticks. One line per run: the worst stack's
figures, whether every stack held the targets (≥ 99 % of the rate; missed ≤ 0.1 % at 1 kHz,
≤ 1 % below), the 1-minute load average at the start and at the end (the machine is shared:
the load says what a figure is worth) and the wall time of the slowest start-up (launch to
closed loop). The largest N that held, per rate, closes the table.

``--census``: for each N, N composed stacks at 250 Hz with their loops closed, then a newcomer
participant (the robot-control tool's) counts what it discovers — participants, endpoints (the
DDS readers and writers SEDP announces) and nodes — and the seconds until it saw every node: the
inputs of docs/scaling.md's plan for 10, 100 and 1000 robots.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "test"))
import domains  # noqa: E402  (the test suite's machine-wide domain claims)

#: targets of issue 25: missed-deadline share allowed at a rate (1 kHz: 0.1 %, below: 1 %)
MISSED_TARGET = {1000.0: 0.001}
MISSED_TARGET_DEFAULT = 0.01
RATE_TARGET = 0.99  # share of the requested rate to achieve
NODES_PER_STACK = 5  # four nodes and their lifecycle manager


def fleet_env(domain: int) -> dict[str, str]:
    """This environment on ``domain`` with loopback discovery and the rclpy-free route."""
    return {**os.environ, "ROS_DOMAIN_ID": str(domain), "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST",
            "ROBOT_CONTROL_BUS": "dds"}


def pinned(i: int):
    """What runs stack i's launch on one CPU of its own (round robin), as ``taskset -c`` would:
    its launcher, its nodes and their threads inherit the CPU set."""
    cpus = sorted(os.sched_getaffinity(0))
    return lambda: os.sched_setaffinity(0, {cpus[i % len(cpus)]})


def run_fleet(count: int, rate: float, duration: float, layout: str, domain: int,
              extra: list[str], pin: bool = False) -> dict[str, object]:
    """N stacks side by side (``pin``: stack i on CPU i mod the CPUs); their summaries and the
    load around the run."""
    env = fleet_env(domain)
    with tempfile.TemporaryDirectory() as tmp:
        procs = []
        load_start = os.getloadavg()[0]
        for i in range(count):
            out = Path(tmp) / f"fleet{i}.json"
            cmd = [sys.executable, "-m", "robot_control.cli", "launch", f"namespace:=fleet{i}",
                   f"rate:={rate:g}", f"composed:={'true' if layout == 'composed' else 'false'}",
                   *extra, "--duration", str(duration), "--summary", str(out)]
            procs.append((out, subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                                                stderr=subprocess.DEVNULL,
                                                preexec_fn=pinned(i) if pin else None)))
        codes = [p.wait(duration + 600) for _, p in procs]
        load_end = os.getloadavg()[0]
        summaries = [json.loads(out.read_text()) if out.exists() else {} for out, _ in procs]
    return {"count": count, "rate": rate, "codes": codes, "summaries": summaries,
            "load": (load_start, load_end)}


def discover(want: int, timeout_s: float, discovery_s: float = 1.0) -> dict[str, object]:
    """A newcomer participant on this process's domain: the participants, endpoints and nodes it
    discovers, and the seconds until it saw ``want`` nodes (its first ``discovery_s`` included)."""
    from robot_control.bus.dds.client import BusClient

    start = time.monotonic()
    with BusClient(discovery_s=discovery_s) as client:
        while len(client.graph.nodes()) < want and time.monotonic() - start < timeout_s:
            client.graph.update()
            time.sleep(0.01)
        found_s = time.monotonic() - start
        client.graph.settle(min_s=2.0, quiet_s=1.0, max_s=10.0)
        return {"participants": len(client.graph.participants),
                "endpoints": len(client.graph.endpoints), "nodes": len(client.graph.nodes()),
                "discovered_s": found_s}


def census(count: int, domain: int, timeout_s: float = 300.0) -> dict[str, object]:
    """N composed stacks up (loops closed); what a newcomer on the domain discovers: participants,
    endpoints (DDS readers and writers, the SEDP records) and nodes, and how long until it saw
    every node of the fleet."""
    env = fleet_env(domain)
    cmd = [sys.executable, "-m", "robot_control.cli", "launch", "composed:=true", "rate:=250",
           "--duration", "3600"]
    procs = [subprocess.Popen([*cmd[:4], f"namespace:=fleet{i}", *cmd[4:]], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for i in range(count)]
    try:
        deadline = time.monotonic() + timeout_s
        for p in procs:  # each stack's launcher says when its loop closed
            for line in p.stdout:
                if "control loop running" in line or time.monotonic() > deadline:
                    break
        os.environ.update({k: env[k] for k in ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE")})
        return {"count": count, **discover(NODES_PER_STACK * count, deadline - time.monotonic())}
    finally:
        for p in procs:
            p.send_signal(2)
        for p in procs:
            try:
                p.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()


def verdict(run: dict[str, object]) -> dict[str, object]:
    """The worst stack's figures and whether every stack held the targets."""
    rate = float(run["rate"])
    allowed = MISSED_TARGET.get(rate, MISSED_TARGET_DEFAULT)
    rates, missed, p99, up = [], [], [], []
    for s in run["summaries"]:
        rates.append(s.get("rate_hz") or 0.0)
        missed.append(s.get("missed_deadline_ratio"))
        p99.append((s.get("latency_us") or {}).get("p99"))
        up.append(s.get("loop_closed_s"))
    known_missed = [m for m in missed if m is not None]
    held = (len(run["summaries"]) == run["count"] and all(c == 0 for c in run["codes"])
            and all(r >= RATE_TARGET * rate for r in rates)
            and len(known_missed) == run["count"] and max(known_missed) <= allowed)
    return {"min_rate_hz": min(rates) if rates else None,
            "max_missed": max(known_missed) if known_missed else None,
            "max_p99_us": max((p for p in p99 if p is not None), default=None),
            "max_start_s": max((u for u in up if u is not None), default=None),
            "held": held, "allowed_missed": allowed}


def _fmt(value, spec: str) -> str:
    return "—" if value is None else format(value, spec)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench/fleet.py", description=__doc__.split("\n")[0])
    parser.add_argument("--counts", default="1,2,4", help="stack counts, comma-separated")
    parser.add_argument("--rates", default="1000,500,250", help="control rates, Hz")
    parser.add_argument("--duration", type=float, default=10.0, help="s of control per run")
    parser.add_argument("--layout", choices=("composed", "processes"), default="composed")
    parser.add_argument("--json", help="write every run's summaries here")
    parser.add_argument("--census", action="store_true",
                        help="instead: participants, endpoints and discovery time per stack count")
    parser.add_argument("--pin", action="store_true",
                        help="stack i's processes on CPU i mod the CPUs (as taskset -c)")
    parser.add_argument("extra", nargs="*", help="launch arguments for every stack (name:=value)")
    args = parser.parse_args(argv)
    counts = [int(c) for c in args.counts.split(",")]
    rates = [float(r) for r in args.rates.split(",")]
    domain = domains.claim("bench-fleet")  # one domain for the whole fleet, nobody else's
    if args.census:
        print(f"{'N':>3} {'participants':>12} {'endpoints':>9} {'nodes':>5} {'discovered s':>12}")
        for count in counts:
            c = census(count, domain)
            print(f"{count:3d} {c['participants']:12d} {c['endpoints']:9d} {c['nodes']:5d} "
                  f"{c['discovered_s']:12.2f}", flush=True)
        return 0
    print(f"{'rate':>6} {'N':>3} {'min Hz':>8} {'max missed':>11} {'p99 µs':>8} "
          f"{'start s':>8} {'held':>5}  load start→end")
    runs, best = [], {}
    for rate in rates:
        for count in counts:
            run = run_fleet(count, rate, args.duration, args.layout, domain, args.extra, args.pin)
            v = verdict(run)
            runs.append({**run, **v})
            if v["held"]:
                best[rate] = max(best.get(rate, 0), count)
            missed = None if v["max_missed"] is None else 100 * v["max_missed"]
            print(f"{rate:6g} {count:3d} {_fmt(v['min_rate_hz'], '8.1f')} "
                  f"{_fmt(missed, '10.2f')}% {_fmt(v['max_p99_us'], '8.0f')} "
                  f"{_fmt(v['max_start_s'], '8.1f')} {'yes' if v['held'] else 'no':>5}  "
                  f"{run['load'][0]:.1f}→{run['load'][1]:.1f}", flush=True)
            time.sleep(2.0)  # the previous fleet's participants leave the domain
    for rate in rates:
        allowed = MISSED_TARGET.get(rate, MISSED_TARGET_DEFAULT)
        print(f"{rate:g} Hz (≥ {100 * RATE_TARGET:g} % of the rate, missed ≤ {100 * allowed:g} %): "
              f"{best.get(rate, 0)} stack(s) held, of {counts} tried ({args.layout}"
              + (", pinned)" if args.pin else ")"))
    if args.json:
        Path(args.json).write_text(json.dumps(runs, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
