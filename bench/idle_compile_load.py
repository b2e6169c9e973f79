"""Does a compile at the lowest CPU priority starve the stack's loop? (issue 36: nothing may hold
or saturate while a cold start's background compiles run)

    python bench/idle_compile_load.py [--rounds 2] [--duration 5] [name:=value …]

A cold start leaves the controller's other laws to a background compiler at SCHED_IDLE
(nodes/law_compiler.py) that runs through the first seconds after activation. This bench
separates that from everything else a cold start does: warm starts of ``robot-control launch
--duration S`` (the compile cache as it is: run it once first), alternately alone and beside a
numba compile at SCHED_IDLE (``chrt --idle 0 python bench/compile_cost.py --kernels hold_rk4``:
about 8 s of one core's CPU, started with the launch, so it compiles through the active window).
Printed per run: the missed-deadline share over the window, the plant's hold and saturation
warnings, the achieved rate, the load average; then the medians of each kind.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "test"))
sys.path.insert(0, str(ROOT / "bench"))
import domains  # noqa: E402  (the test suite's machine-wide domain claims)
from cold_start import HOLDS, MISSED, SATURATED  # noqa: E402

RATE = __import__("re").compile(r"achieved ([0-9.]+) Hz")


def launch(env: dict[str, str], duration: float, launch_args: list[str], idle_compile: bool) -> dict:
    """One warm launch, with or without the SCHED_IDLE compile beside it."""
    burner = None
    if idle_compile:
        burner = subprocess.Popen(["chrt", "--idle", "0", sys.executable,
                                   str(ROOT / "bench" / "compile_cost.py"), "--kernels", "hold_rk4"],
                                  env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  start_new_session=True)  # its kernel's process is its child
    load = os.getloadavg()[0]
    out = subprocess.run([sys.executable, "-m", "robot_control.cli", "launch", *launch_args,
                          "--duration", str(duration)], env=env, capture_output=True, text=True,
                         timeout=300)
    text = out.stdout + out.stderr
    if burner is not None:
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
    args = parser.parse_args(argv)
    domain = domains.claim("bench-idle-compile")
    env = {**os.environ, "ROS_DOMAIN_ID": str(domain), "ROBOT_CONTROL_BUS": "dds",
           "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    rows: dict[str, list[float]] = {"alone": [], "idle compile": []}
    try:
        for k in range(args.rounds):
            for kind in rows:
                r = launch(env, args.duration, args.launch_args, kind == "idle compile")
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
