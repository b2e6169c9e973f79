"""Recording throughput: ``robot-control bag record`` against ``ros2 bag record -s mcap`` on the same
stream, side by side in one run.

    python bench/recording.py [--rates 1000 2000] [--seconds 5] [--no-ros2]

For each rate a publisher node (test/bag_publisher.py) sends a numbered sequence of
sensor_msgs/JointState on /joint_states and /joint_command (one of each per period, the pair a
1 kHz control loop puts on the bus) for ``--seconds``, once every recorder has subscribed. Each
recorder runs as its own process; afterwards the bench reads every bag back with rosbags and
prints per recorder: messages recorded of those published, gaps in the sequence (dropped),
the recorder's CPU time (user + system, from wait4), its CPU time for the same run with nothing
to record (start-up, discovery, waiting: "idle"), and the difference per message recorded.
ROS 2 is used when ``ros2`` is on PATH or /opt/ros/jazzy exists (started first: the start order
in which a ROS 2 node and our participants find each other under LOCALHOST discovery).

Timings on a shared machine are noisy: repeat, and compare the two recorders of one run.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "test"))

import domains  # noqa: E402
from recording_helpers import (  # noqa: E402
    PAIR,
    finish,
    messages,
    popen,
    publisher,
    reap,
    ros2_available,
    ros2_command,
    ros2_env,
    wait_for_line,
)


def cpu_seconds(proc: subprocess.Popen, sig: int, timeout_s: float = 60.0) -> float:
    """Stop a recorder with sig and return its CPU time (user + system), from wait4."""
    os.kill(proc.pid, sig)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        pid, _, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = 0
            return usage.ru_utime + usage.ru_stime
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"recorder {proc.args} did not stop")


def missing(seq: list[int], count: int) -> list[int]:
    """Sequence numbers 0…count-1 absent from a recording."""
    return sorted(set(range(count)) - set(seq))


def start_recorders(env, with_ros2: bool, workdir: Path) -> dict[str, tuple]:
    """name -> (process, bag path); ROS 2's first (see the module docstring)."""
    recorders = {}
    if with_ros2:
        ros = popen(ros2_command("bag", "record", "-s", "mcap", "-o", str(workdir / "ros2"),
                                 *PAIR), env)
        wait_for_line(ros, "Listening for topics")
        recorders["ros2 bag record"] = (ros, workdir / "ros2")
    ours = popen([sys.executable, "-m", "robot_control.cli", "bag", "record", "-o",
                  str(workdir / "ours"), *PAIR], env)
    recorders["robot-control bag record"] = (ours, workdir / "ours")
    return recorders


def idle_cpu(seconds: float, with_ros2: bool, workdir: Path) -> dict[str, float]:
    """Each recorder's CPU time for starting, waiting ``seconds`` with nothing to record, stopping."""
    env = ros2_env("bench-recording-idle")
    recorders = start_recorders(env, with_ros2, workdir)
    time.sleep(seconds)
    cpu = {name: cpu_seconds(proc, signal.SIGINT) for name, (proc, _) in recorders.items()}
    domains.release(int(env["ROS_DOMAIN_ID"]))
    return cpu


def bench_rate(rate: float, seconds: float, with_ros2: bool, workdir: Path,
               idle: dict[str, float]) -> list[dict]:
    env = ros2_env(f"bench-recording-{rate}")
    count = int(rate * seconds)
    recorders = start_recorders(env, with_ros2, workdir)
    pub = publisher(env, count, rate, subscribers=len(recorders))
    finish(pub, None, timeout_s=seconds * 10 + 60)
    rows = []
    for name, (proc, path) in recorders.items():
        # ros2 bag record runs in a bash -c … exec: its pid is the recorder's
        cpu = cpu_seconds(proc, signal.SIGINT)
        bag = messages(path)
        recorded = {t: len(bag.get(t, [])) for t in PAIR}
        lost = {t: missing([int(m.position[0]) if len(m.position) else int(m.effort[0])
                            for _, _, m in bag.get(t, [])], count) for t in PAIR}
        total = sum(recorded.values())
        rows.append({"recorder": name, "rate_hz": rate, "published": 2 * count,
                     "recorded": total, "dropped": sum(map(len, lost.values())), "cpu_s": cpu,
                     "missing": {t: v[:5] for t, v in lost.items() if v},
                     "idle_cpu_s": idle[name],
                     "us_per_msg": 1e6 * max(0.0, cpu - idle[name]) / max(1, total)})
    domains.release(int(env["ROS_DOMAIN_ID"]))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rates", type=float, nargs="+", default=[1000.0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--no-ros2", action="store_true", help="only robot-control's recorder")
    args = parser.parse_args()
    with_ros2 = not args.no_ros2 and ros2_available()
    print(f"{'recorder':26s} {'rate Hz':>8s} {'published':>9s} {'recorded':>8s} {'dropped':>7s} "
          f"{'CPU s':>6s} {'idle s':>6s} {'µs/msg':>7s}")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            idle = idle_cpu(args.seconds, with_ros2, Path(tmp))
        for rate in args.rates:
            with tempfile.TemporaryDirectory() as tmp:
                for r in bench_rate(rate, args.seconds, with_ros2, Path(tmp), idle):
                    print(f"{r['recorder']:26s} {r['rate_hz']:8.0f} {r['published']:9d} "
                          f"{r['recorded']:8d} {r['dropped']:7d} {r['cpu_s']:6.2f} "
                          f"{r['idle_cpu_s']:6.2f} {r['us_per_msg']:7.1f}  "
                          f"{r['missing'] or ''}", flush=True)
    finally:
        reap()
    return 0


if __name__ == "__main__":
    sys.exit(main())
