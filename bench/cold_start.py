"""Cold and warm start of the stack on both launch routes (issue 36).

    python bench/cold_start.py [--routes dds,ros] [--repeat N] [--trace] [name:=value …]

Each round starts the stack twice with a fresh, empty user cache (``XDG_CACHE_HOME`` in a
temporary folder: no compiled kernel, no cached model, as a new user's first start): *cold*,
then *warm* once the controller's background compile of its other laws is done (what the next
start finds). Printed: seconds from the launch command to the lifecycle manager's "stack
active" line (the four nodes active), the launch's own wall time, the missed-deadline share of
the run (the ``--duration`` window after activation), the plant's hold and saturation warnings
in it, and the 1-minute load average at the start and the end (the machine is shared: the
load says what a figure is worth); then the medians.

- ``dds``: ``robot-control launch --duration S`` (the rclpy-free route, the package on this
  interpreter);
- ``ros``: ``ros2 launch robot_control control.launch.yaml``, stopped by SIGINT once active, in a
  workspace ``colcon build`` makes from this checkout (scripts/ros2_workspace.sh; only when
  ROS 2 is there: $ROS_SETUP or /opt/ros/jazzy).

``--trace`` lists, for each cold run, every kernel numba compiled: the process, the start
(seconds after the launch), the compile's duration in wall and in the thread's CPU seconds (the
latter is what the kernel costs, whatever the machine's load) and the kernel (numba's compile event,
recorded through a sitecustomize module on the nodes' path; ``plant_node fork`` is the plant's
step compiler, nodes/plant_compiler.py; ``fork_server`` the launcher's fork server,
bringup/fork_server.py, whose one throw-away kernel is numba's set-up for the nodes it forks;
the waits of dynamics/compile_once.py are not compiles and do not appear).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "test"))
import domains  # noqa: E402  (the test suite's machine-wide domain claims)

ACTIVE = re.compile(r"stack active")
MISSED = re.compile(r"missed deadlines \d+ \(([0-9.]+) %\)")
BACKGROUND = re.compile(r"in the background \(pid (\d+)")
#: the plant's hold (safe behaviour) and saturation warnings: events of the run after activation
HOLDS = re.compile(r"safe behaviour '")
SATURATED = re.compile(r"\] saturated: ")
ROS_SETUP = Path(os.environ.get("ROS_SETUP", "/opt/ros/jazzy/setup.bash"))
#: a start that is not active by then counts as failed (s)
ACTIVE_TIMEOUT_S = 300.0
#: the background law compiler may finish before the warm start within this (s; then ended)
BACKGROUND_TIMEOUT_S = 60.0

#: numba's compile event, one JSON line per kernel, in $COLD_TRACE_DIR/<pid>.jsonl
TRACER = textwrap.dedent("""
    import json, os, sys, threading, time
    if os.environ.get("COLD_TRACE_DIR"):
        import numba.core.event as _ev
        _local = threading.local()
        _dir = os.environ["COLD_TRACE_DIR"]
        _cmd = open("/proc/self/cmdline", "rb").read().split(b"\\0")
        # a node forked by the launcher's fork server (bringup/fork_server.py) is one fork deep;
        # a process forked from a node (the plant's step compiler) one more
        _forks = [1 if any(b"fork_server" in w for w in _cmd) else 0, 0]
        os.register_at_fork(after_in_child=lambda: _forks.__setitem__(1, _forks[1] + 1))
        def _process():
            argv = sys.argv if _forks[1] else [w.decode() for w in _cmd[1:]]
            word = next((w for w in argv if "robot_control" in w or w.endswith("_node.py")
                         or w.endswith("lifecycle_manager.py")), _cmd[0].decode())
            name = word.rsplit("/", 1)[-1].removesuffix(".py").rsplit(".", 1)[-1]
            return name if _forks[1] <= _forks[0] else f"{name} fork"
        class _Listener(_ev.Listener):
            def on_start(self, event):
                _local.__dict__.setdefault("starts", []).append((time.time(), time.thread_time()))
            def on_end(self, event):
                t0, cpu0 = _local.starts.pop()
                if not _local.starts:  # top level: its callees are inside its time
                    f = event.data["dispatcher"].py_func
                    with open(os.path.join(_dir, f"{os.getpid()}.jsonl"), "a") as out:
                        out.write(json.dumps({"process": _process(), "t0": t0,
                                              "s": time.time() - t0,
                                              "cpu": time.thread_time() - cpu0,
                                              "kernel": f"{f.__module__}.{f.__qualname__}"})
                                  + "\\n")
        _ev.register("numba:compile", _Listener())
""")


def start_once(route: str, env: dict[str, str], duration: float, launch_args: list[str],
               trace_dir: str | None) -> dict:
    """One start: seconds to "stack active", wall time, missed share, background compiler."""
    if route == "dds":
        cmd = [sys.executable, "-m", "robot_control.cli", "launch", *launch_args,
               "--duration", str(duration), "--startup-timeout", str(ACTIVE_TIMEOUT_S)]
    else:
        cmd = ["ros2", "launch", "robot_control", "control.launch.yaml", *launch_args]
    if trace_dir:
        env = {**env, "COLD_TRACE_DIR": trace_dir,
               "PYTHONPATH": os.pathsep.join([trace_dir, env.get("PYTHONPATH", "")])}
    load_start = os.getloadavg()[0]
    started = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)
    active = None
    lines: list[str] = []
    # ros2 launch runs until stopped (SIGINT, as Ctrl-C), also when it prints nothing
    stop = threading.Timer(ACTIVE_TIMEOUT_S, proc.send_signal, args=(signal.SIGINT,))
    stop.start()
    for line in proc.stdout:
        lines.append(line)
        if active is None and ACTIVE.search(line):
            active = time.monotonic() - started
            stop.cancel()
            stop = threading.Timer(duration, proc.send_signal, args=(signal.SIGINT,))
            stop.start()
    proc.wait()
    stop.cancel()
    text = "".join(lines)
    missed = MISSED.search(text)
    background = BACKGROUND.search(text)
    return {"active_s": active, "wall_s": time.monotonic() - started, "exit": proc.returncode,
            "missed_pct": float(missed.group(1)) if missed else None,
            "background_pid": int(background.group(1)) if background else None,
            "errors": sum("[ERROR]" in line for line in lines),
            "holds": sum(bool(HOLDS.search(line)) for line in lines),
            "saturated": sum(bool(SATURATED.search(line)) for line in lines),
            "load_start": load_start, "load_end": os.getloadavg()[0],
            "tail": "".join([line for line in lines if "[ERROR]" in line][:10]
                            + ([] if active is not None else [text[-600:]]))}


def wait_for(pid: int | None, timeout_s: float) -> None:
    """Let the background law compiler finish (a warm start finds every law), then end it."""
    deadline = time.monotonic() + timeout_s
    while pid is not None and time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.5)
    if pid is not None:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass


def trace_table(trace_dir: str, started_epoch: float) -> None:
    """Every compiled kernel of a cold run, in start order."""
    rows = []
    for file in Path(trace_dir).glob("*.jsonl"):
        rows += [json.loads(line) for line in file.read_text().splitlines()]
    for r in sorted(rows, key=lambda r: r["t0"]):
        print(f"    {r['process']:<20} at {r['t0'] - started_epoch:6.1f} s "
              f"{r['s']:6.1f} s ({r['cpu']:5.1f} s CPU)  "
              f"{r['kernel'].removeprefix('robot_control.')}")
    totals: dict[str, list[float]] = {}
    for r in rows:
        total = totals.setdefault(r["process"], [0.0, 0.0])
        total[0] += r["s"]
        total[1] += r["cpu"]
    print("    compiling by process, wall (CPU) seconds: " + ", ".join(
        f"{p} {s:.1f} ({c:.1f})" for p, (s, c) in sorted(totals.items())))


def fmt(value: float | None, spec: str) -> str:
    return "—" if value is None else f"{value:{spec}}"


def run_route(route: str, args: argparse.Namespace, base: dict[str, str]) -> dict[str, list]:
    results: dict[str, list] = {"cold": [], "warm": []}
    for k in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="cold-start-") as home:
            env = {**base, "XDG_CACHE_HOME": home}
            for kind in ("cold", "warm"):
                trace_dir = None
                if args.trace and kind == "cold":
                    trace_dir = tempfile.mkdtemp(prefix="trace-", dir=home)
                    Path(trace_dir, "sitecustomize.py").write_text(TRACER)
                epoch = time.time()
                row = start_once(route, env, args.duration, args.launch_args, trace_dir)
                results[kind].append(row)
                print(f"{route:<4} {kind} #{k + 1:<2} active {fmt(row['active_s'], '6.1f')} s  "
                      f"launch {row['wall_s']:6.1f} s  missed {fmt(row['missed_pct'], '5.1f')} %  "
                      f"holds {row['holds']}  saturation warnings {row['saturated']}  "
                      f"exit {row['exit']:>3}  ERROR lines {row['errors']}  "
                      f"load {row['load_start']:.1f}→{row['load_end']:.1f}",
                      flush=True)
                if row["tail"]:
                    print(textwrap.indent(row["tail"], "    | "), flush=True)
                if trace_dir:
                    trace_table(trace_dir, epoch)
                wait_for(row["background_pid"], BACKGROUND_TIMEOUT_S if kind == "cold" else 0)
    return results


def summary(route: str, results: dict[str, list]) -> None:
    medians = {}
    for kind, rows in results.items():
        values = [r["active_s"] for r in rows if r["active_s"] is not None]
        medians[kind] = statistics.median(values) if values else None
    print(f"{route}: median active cold {fmt(medians['cold'], '.1f')} s, warm "
          f"{fmt(medians['warm'], '.1f')} s ({os.cpu_count()} cores)")


def ros_available() -> bool:
    return ROS_SETUP.is_file()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("launch_args", nargs="*", metavar="name:=value")
    parser.add_argument("--routes", default="dds,ros", help="dds,ros (default both)")
    parser.add_argument("--repeat", type=int, default=2, help="cold+warm rounds (default 2)")
    parser.add_argument("--duration", type=float, default=3.0,
                        help="seconds the stack runs once active (default 3)")
    parser.add_argument("--trace", action="store_true", help="list each cold run's compiles")
    parser.add_argument("--inside-ros-workspace", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    routes = args.routes.split(",")
    domain = domains.claim("bench-cold-start")
    base = {**os.environ, "ROS_DOMAIN_ID": str(domain),
            "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    try:
        if args.inside_ros_workspace:  # ROS 2 and the workspace are sourced: the ros route only
            summary("ros", run_route("ros", args, base))
            return 0
        if "dds" in routes:
            summary("dds", run_route("dds", args, {**base, "ROBOT_CONTROL_BUS": "dds"}))
        if "ros" in routes:
            if not ros_available():
                print(f"ros: skipped (no ROS 2 at {ROS_SETUP})")
                return 0
            inner = ["python3", str(Path(__file__).resolve()), "--inside-ros-workspace",
                     "--repeat", str(args.repeat), "--duration", str(args.duration),
                     *(["--trace"] if args.trace else []), *args.launch_args]
            script = (f"source {ROOT / 'scripts' / 'ros2_workspace.sh'} >&2 && "
                      + " ".join(f"'{w}'" for w in inner))
            return subprocess.run(["bash", "-c", script], env=base).returncode
        return 0
    finally:
        domains.release(domain)


if __name__ == "__main__":
    sys.exit(main())
