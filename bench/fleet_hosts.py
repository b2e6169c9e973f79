"""A fleet across two hosts (issue 25): loop figures, discovery time and DDS traffic per robot.

    python bench/fleet_hosts.py [--counts 1,2,4] [--rate 1000] [--duration S] [--json FILE]

The two hosts are two network namespaces joined by a veth pair (10.231.0.1/24 and
10.231.0.2/24, simple discovery over the subnet: SPDP by multicast, the rest unicast, as on two
machines on one switch; both share this machine's two cores). For each N, N composed stacks
(``robot-control launch namespace:=fleet<i> composed:=true``, the rclpy-free route) start at once,
stack i on host A if i is even, B otherwise, each with its launcher's monitor; a capture on the
veth (bench/rtps_capture.py) tallies every frame between the hosts by kind — SPDP, SEDP,
liveliness, other built-in, user data — from before the first stack starts until the last one
has ended. When every loop is closed, a newcomer participant on host B counts what it discovers
across both hosts and the seconds until it saw every node (as ``bench/fleet.py --census``). Each
stack runs ``--duration`` seconds of control; its summary gives the loop figures.

One line per N: the worst stack's rate and missed deadlines, the participants and endpoints the
newcomer saw and its discovery time, and the bytes between the hosts by kind; then the increments
per added robot. Needs root (``ip netns``, a raw socket); says so and exits 2 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "test"))
sys.path.insert(0, str(ROOT / "bench"))
import domains  # noqa: E402  (the test suite's machine-wide domain claims)
from fleet import NODES_PER_STACK, verdict  # noqa: E402
from rtps_capture import KINDS  # noqa: E402

HOSTS = ("rc_fleet_a", "rc_fleet_b")
LINK = ("rc_veth_a", "rc_veth_b")
ADDRESSES = ("10.231.0.1/24", "10.231.0.2/24")

NEWCOMER = ("import json, sys; sys.path.insert(0, sys.argv[3]); from fleet import discover; "
            "print(json.dumps(discover(int(sys.argv[1]), float(sys.argv[2]), 0.0)))")


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


def make_hosts(hosts=HOSTS, links=LINK, addresses=ADDRESSES) -> None:
    """Two network namespaces joined by a veth pair, each with lo and its veth end up."""
    remove_hosts(hosts)
    for host in hosts:
        ip("netns", "add", host)
    ip("link", "add", links[0], "type", "veth", "peer", "name", links[1])
    for host, link, address in zip(hosts, links, addresses):
        ip("link", "set", link, "netns", host)
        ip("-n", host, "addr", "add", address, "dev", link)
        ip("-n", host, "link", "set", link, "up")
        ip("-n", host, "link", "set", "lo", "up")


def remove_hosts(hosts=HOSTS) -> None:
    for host in hosts:  # deleting a namespace deletes its veth end, and with it the pair
        subprocess.run(["ip", "netns", "del", host], capture_output=True)


def in_host(host: str, cmd: list[str]) -> list[str]:
    return ["ip", "netns", "exec", host, *cmd]


def run_hosts(count: int, rate: float, duration: float, domain: int, tmp: Path) -> dict:
    """N stacks over two hosts with the veth captured; see the module docstring."""
    env = {**os.environ, "ROS_DOMAIN_ID": str(domain), "ROBOT_CONTROL_BUS": "dds",
           "ROS_AUTOMATIC_DISCOVERY_RANGE": "SUBNET"}
    env.pop("ROS_STATIC_PEERS", None)
    make_hosts()
    tally = tmp / f"tally{count}.json"
    capture = subprocess.Popen(in_host(HOSTS[0], [sys.executable, str(ROOT / "bench" /
                                                  "rtps_capture.py"), LINK[0], "--out",
                                                  str(tally)]),
                               stdout=subprocess.PIPE, text=True)
    stacks = []
    try:
        capture.stdout.readline()  # "capturing"
        for i in range(count):
            out = tmp / f"stack{count}_{i}.json"
            cmd = [sys.executable, "-m", "robot_control.cli", "launch", f"namespace:=fleet{i}",
                   f"rate:={rate:g}", "composed:=true", "--duration", str(duration),
                   "--summary", str(out)]
            stacks.append((out, subprocess.Popen(in_host(HOSTS[i % 2], cmd), env=env,
                                                 stdout=subprocess.PIPE,
                                                 stderr=subprocess.STDOUT, text=True)))
        deadline = time.monotonic() + 300.0
        for _, p in stacks:  # each launcher says when its loop closed
            for line in p.stdout:
                if "control loop running" in line or time.monotonic() > deadline:
                    break
        newcomer = subprocess.run(
            in_host(HOSTS[1], [sys.executable, "-c", NEWCOMER, str(NODES_PER_STACK * count),
                               "60", str(ROOT / "bench")]), env=env, capture_output=True,
            text=True, timeout=120)
        seen = json.loads(newcomer.stdout.strip().splitlines()[-1]) if newcomer.stdout else {}
        codes = [p.wait(duration + 300) for _, p in stacks]
    finally:
        for _, p in stacks:
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
                try:
                    p.wait(60)
                except subprocess.TimeoutExpired:
                    p.kill()
        capture.send_signal(signal.SIGINT)
        try:
            capture.wait(30)
        except subprocess.TimeoutExpired:
            capture.kill()
        remove_hosts()
    summaries = [json.loads(out.read_text()) if out.exists() else {} for out, _ in stacks]
    traffic = json.loads(tally.read_text()) if tally.exists() else {}
    return {"count": count, "rate": rate, "codes": codes, "summaries": summaries,
            "newcomer": seen, "traffic": traffic}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench/fleet_hosts.py",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--counts", default="1,2,4", help="stack counts, comma-separated")
    parser.add_argument("--rate", type=float, default=500.0, help="control rate, Hz")
    parser.add_argument("--duration", type=float, default=20.0,
                        help="s of control per stack (the newcomer's census runs meanwhile)")
    parser.add_argument("--json", help="write every run here")
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        print("bench/fleet_hosts.py needs root (ip netns, a raw packet socket)", file=sys.stderr)
        return 2
    domain = domains.claim("bench-fleet-hosts")
    runs = []
    kinds = [k for k in KINDS if k != "not_rtps"]
    print(f"{'N':>3} {'min Hz':>8} {'missed':>7} {'held':>4} {'parts':>5} {'endpts':>6} "
          f"{'found s':>7}  " + " ".join(f"{k + ' kB':>14}" for k in kinds))
    with tempfile.TemporaryDirectory() as tmp:
        for count in [int(c) for c in args.counts.split(",")]:
            run = run_hosts(count, args.rate, args.duration, domain, Path(tmp))
            runs.append(run)
            v = verdict(run)
            rate, missed, held = v["min_rate_hz"], v["max_missed"], v["held"]
            seen, traffic = run["newcomer"], run["traffic"]
            print(f"{count:3d} {rate or 0:8.1f} {100 * (missed or 0):6.2f}% "
                  f"{'yes' if held else 'no':>4} {seen.get('participants', 0):5d} "
                  f"{seen.get('endpoints', 0):6d} {seen.get('discovered_s', float('nan')):7.2f}  "
                  + " ".join(f"{traffic.get(k, {}).get('bytes', 0) / 1e3:14.1f}" for k in kinds),
                  flush=True)
            time.sleep(2.0)
    if len(runs) > 1:
        first, last = runs[0], runs[-1]
        added = last["count"] - first["count"]
        print(f"per added robot ({first['count']}→{last['count']} stacks, {args.duration:g} s "
              "runs): " + ", ".join(
                  f"{k} {(last['traffic'].get(k, {}).get('bytes', 0) - first['traffic'].get(k, {}).get('bytes', 0)) / added / 1e3:.1f} kB"  # noqa: E501
                  for k in kinds))
    if args.json:
        Path(args.json).write_text(json.dumps(runs, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
