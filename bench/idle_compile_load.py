"""Does a compile at the lowest CPU priority starve the stack's loop? (issue 36: nothing may hold
or saturate while a cold start's background compiles run)

    python bench/idle_compile_load.py [--rounds 2] [--duration 5] [--spin] [--pin CPU] [name:=value …]

A cold start leaves the controller's other laws to a background compiler at SCHED_IDLE
(nodes/law_compiler.py) that runs through the first seconds after activation. This bench
separates that from everything else a cold start does: warm starts of ``robot-control launch
--duration S`` (the compile cache as it is: run it once first), alternately alone and beside a
numba compile at SCHED_IDLE (``chrt --idle 0 python bench/compile_cost.py --kernels hold_rk4``:
about 8 s of one core's CPU, started with the launch, so it compiles through the active window).
``--spin``: a Python busy loop at SCHED_IDLE instead of the compile (the priority's effect
without numba's memory traffic); ``--pin CPU``: the burner kept on that CPU (taskset). Printed
per run: the missed-deadline share over the window, the plant's hold and saturation warnings, the
achieved rate, the load average; then the medians.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "test"))
sys.path.insert(0, str(ROOT / "bench"))
import domains  # noqa: E402  (the test suite's machine-wide domain claims)
from cold_start import HOLDS, MISSED, SATURATED  # noqa: E402

RATE = __import__("re").compile(r"achieved ([0-9.]+) Hz")


def pace(pgid: int, on_s: float, period_s: float, done: threading.Event) -> None:
    """Let the process group run ``on_s`` of every ``period_s`` (SIGCONT, then SIGSTOP)."""
    while not done.is_set():
        os.killpg(pgid, signal.SIGCONT)
        if done.wait(on_s):
            break
        os.killpg(pgid, signal.SIGSTOP)
        done.wait(period_s - on_s)
    os.killpg(pgid, signal.SIGCONT)


def launch(env: dict[str, str], duration: float, launch_args: list[str],
           burn: list[str] | None, pin: str | None = None,
           duty: tuple[float, float] | None = None, nice: bool = False) -> dict:
    """One warm launch, with or without ``burn`` (a command) beside it at SCHED_IDLE (nice 19:
    SCHED_OTHER at the lowest weight instead)."""
    burner, pacer, done = None, None, threading.Event()
    if burn:
        burner = subprocess.Popen([*(["taskset", "-c", pin] if pin else []),
                                   *(["nice", "-n", "19"] if nice else ["chrt", "--idle", "0"]),
                                   *burn],
                                  env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  start_new_session=True)  # its kernel's process is its child
        if duty is not None:
            pacer = threading.Thread(target=pace, args=(burner.pid, *duty, done), daemon=True)
            pacer.start()
    load = os.getloadavg()[0]
    out = subprocess.run([sys.executable, "-m", "robot_control.cli", "launch", *launch_args,
                          "--duration", str(duration)], env=env, capture_output=True, text=True,
                         timeout=300)
    text = out.stdout + out.stderr
    if burner is not None:
        done.set()
        if pacer is not None:
            pacer.join()
        os.killpg(burner.pid, signal.SIGKILL)
        burner.wait()
    missed, rate = MISSED.search(text), RATE.search(text)
    return {"missed": float(missed.group(1)) if missed else None,
            "holds": sum(bool(HOLDS.search(line)) for line in text.splitlines()),
            "saturated": sum(bool(SATURATED.search(line)) for line in text.splitlines()),
            "rate": float(rate.group(1)) if rate else None, "load": load}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("launch_args", nargs="*", metavar="name:=value")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--spin", action="store_true", help="a busy loop instead of a compile")
    parser.add_argument("--pin", help="the CPU the burner is kept on (taskset -c)")
    parser.add_argument("--nice", action="store_true",
                        help="the burner at nice 19 (SCHED_OTHER) instead of SCHED_IDLE")
    parser.add_argument("--duty", metavar="ON/PERIOD", help="the burner runs ON ms of every "
                        "PERIOD ms (SIGSTOP / SIGCONT), e.g. 20/100")
    args = parser.parse_args(argv)
    burn = ([sys.executable, "-c", "while True: pass"] if args.spin else
            [sys.executable, str(ROOT / "bench" / "compile_cost.py"), "--kernels", "hold_rk4"])
    domain = domains.claim("bench-idle-compile")
    env = {**os.environ, "ROS_DOMAIN_ID": str(domain), "ROBOT_CONTROL_BUS": "dds",
           "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    duty = None
    if args.duty:
        on_ms, period_ms = (float(x) for x in args.duty.split("/"))
        duty = (on_ms / 1e3, period_ms / 1e3)
    beside = ("nice" if args.nice else "idle") + (" spin" if args.spin else " compile")
    rows: dict[str, list[float]] = {"alone": [], beside: []}
    try:
        for k in range(args.rounds):
            for kind in rows:
                r = launch(env, args.duration, args.launch_args, burn if kind == beside else None,
                           args.pin, duty, args.nice)
                print(f"#{k + 1} {kind:<13} missed {r['missed']} %  holds {r['holds']}  "
                      f"saturation warnings {r['saturated']}  {r['rate']} Hz  load {r['load']:.1f}",
                      flush=True)
                if r["missed"] is not None:
                    rows[kind].append(r["missed"])
    finally:
        domains.release(domain)
    print("median missed: " + ", ".join(
        f"{kind} {statistics.median(v):.1f} %" for kind, v in rows.items() if v))
    return 0


if __name__ == "__main__":
    sys.exit(main())
