"""Goal-accept latency and feedback rate of ``~/follow_joint_trajectory`` (issue 24).

    python bench/follow_joint_trajectory.py [--goals N] [--rate HZ] [--robot ddarm]
                                            [--composed]

Runs the stack without ROS 2 (``robot-control launch``, the rclpy-free route) on a private ROS
domain and sends N FollowJointTrajectory goals one after another with this package's action
client (bus/dds/action_client.py, what ``robot-control action send_goal`` runs): each a 1 s move
between two poses. Per goal it measures the accept latency (send_goal request written → the
server's answer read: one service round trip through the trajectory generator's executor, which
also runs the 1 kHz /joint_states subscription) and the feedback rate (feedback messages of the
goal over the time between its first and last). Prints p50/p95/max of the latency, the mean
feedback rate against ``action_monitor_rate``, every goal's status, and the 1-minute load
average (the machine is shared: the load says what a figure is worth).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from robot_control.bus.dds.action_client import STATUS_NAMES, send_goal  # noqa: E402
from robot_control.bus.dds.client import BusClient  # noqa: E402

ACTION = "/trajectory_generator/follow_joint_trajectory"
TYPE = "control_msgs/action/FollowJointTrajectory"
POSES = {"ddarm": ([0.0, 1.3, 0.8], [0.3, 1.0, 0.5]),
         "puma560": ([0.1, 0.2, 0.1, 0.2, 0.3, -0.1], [0.3, 0.5, -0.1, 0.4, 0.5, -0.3])}


def percentile(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--goals", type=int, default=20)
    ap.add_argument("--rate", type=float, default=1000.0)
    ap.add_argument("--robot", default="ddarm", choices=sorted(POSES))
    ap.add_argument("--composed", action="store_true")
    args = ap.parse_args()
    env = {**os.environ, "ROS_DOMAIN_ID": str(180 + os.getpid() % 20),
           "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST", "ROBOT_CONTROL_BUS": "dds"}
    os.environ.update(env)
    stack = subprocess.Popen(
        [sys.executable, "-m", "robot_control.cli", "launch", "--no-monitor",
         f"robot:={args.robot}", f"rate:={args.rate}", f"composed:={str(args.composed).lower()}",
         "--duration", str(60 + 3 * args.goals)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    load = os.getloadavg()[0]
    latencies, rates, statuses = [], [], []
    try:
        with BusClient(discovery_s=0.5) as client:
            names = [f"joint{i + 1}" for i in range(len(POSES[args.robot][0]))]
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:  # the stack is up and its reference anchored
                client.graph.update()
                if client.graph.publications(ACTION + "/_action/status"):
                    probe = send_goal(client, ACTION, TYPE, _goal(names, POSES[args.robot][0]))
                    if probe.accepted and probe.status == 4:
                        break
                time.sleep(0.5)
            else:
                print("the stack did not come up", file=sys.stderr)
                return 1
            for i in range(args.goals):
                stamps: list[float] = []
                outcome = send_goal(client, ACTION, TYPE,
                                    _goal(names, POSES[args.robot][(i + 1) % 2]),
                                    lambda _fb, s=stamps: s.append(time.perf_counter()))
                latencies.append(outcome.accepted_after_s * 1e3)
                statuses.append(STATUS_NAMES.get(outcome.status, str(outcome.status)))
                if len(stamps) > 1:
                    rates.append((len(stamps) - 1) / (stamps[-1] - stamps[0]))
    finally:
        stack.terminate()
        stack.wait(30)
    print(f"{args.goals} goals, {args.robot} at {args.rate:g} Hz"
          f"{' composed' if args.composed else ''}, rclpy-free route, load {load:.1f}"
          f" → {os.getloadavg()[0]:.1f}")
    print(f"accept latency ms: p50 {statistics.median(latencies):.2f}  p95 "
          f"{percentile(latencies, 95):.2f}  max {max(latencies):.2f}")
    print(f"feedback rate Hz: mean {statistics.mean(rates):.2f} (min {min(rates):.2f}, max "
          f"{max(rates):.2f}); action_monitor_rate 20")
    print("statuses:", {s: statuses.count(s) for s in sorted(set(statuses))})
    return 0


def _goal(names: list[str], q: list[float]) -> dict:
    return {"trajectory": {"joint_names": names, "points": [
        {"positions": q, "time_from_start": {"sec": 1}}]}}


if __name__ == "__main__":
    sys.exit(main())
