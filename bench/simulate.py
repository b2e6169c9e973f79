"""Real-time factor of offline simulations, compiled loop against the per-period Python loop.

    python bench/simulate.py [--repeat N] [--duration S] [--json out.json]

Cases (1 kHz control, computed torque unless named):
- puma560, RK4 at 1 ms (the issue-15 target: ≥ 100× real time);
- puma560, RK4 at 0.1 ms (ten physics steps per period);
- ddarm (Huo's examples), RK4 at 1 ms, computed torque and passivity;
- ddarm, sliding mode VS-2 (no compiled form: Python per period, compiled plant hold);
- a sweep of 4 PUMA runs through simulate_batch on every core vs one by one.

For each case the compiled run and the ``compiled=False`` run are timed side by side in one
process (best of ``--repeat``, spread = worst/best), after a warm-up run that compiles.
Real-time factor = simulated seconds / wall seconds.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing the package

from robot_control.sim.batch import parameter_grid, simulate_batch  # noqa: E402
from robot_control.sim.scenario import load_scenario  # noqa: E402
from robot_control.sim.simulate import run  # noqa: E402

PUMA = {"robot": "puma560", "rate": 1000, "physics_dt": 0.001,
        "initial": {"q": [0.0, 0.5, -0.5, 0.0, 0.3, 0.0]},
        "trajectory": {"type": "quintic", "from_initial": True, "durations": [1.5],
                       "waypoints": [[0.5, 0.8, -0.2, 0.4, 0.6, -0.5]]},
        "controller": {"type": "computed_torque", "params": {"kp": 100, "kd": 20}}}
DDARM = {"robot": "ddarm", "rate": 1000, "physics_dt": 0.001,
         "initial": {"q": [-0.1, 1.5, 1.0]},
         "trajectory": {"type": "named", "name": "huo_intended"},
         "controller": {"type": "computed_torque", "params": {"kp": [50] * 3, "kd": [10] * 3}}}


def cases(duration: float) -> dict[str, dict]:
    puma_fine = copy.deepcopy(PUMA) | {"physics_dt": 1e-4}
    passivity = copy.deepcopy(DDARM)
    passivity["controller"] = {"type": "passivity", "params": {"lambda": [4, 4, 5],
                                                               "kd": [100, 20, 10]}}
    sliding = copy.deepcopy(DDARM)
    sliding["controller"] = {"type": "sliding_mode",
                             "params": {"scheme": "vs2", "lambda": [5] * 3,
                                        "boundary_layer": [0.05] * 3}}
    out = {"puma560 computed_torque rk4 1ms": PUMA, "puma560 computed_torque rk4 0.1ms": puma_fine,
           "ddarm computed_torque rk4 1ms": DDARM, "ddarm passivity rk4 1ms": passivity,
           "ddarm sliding_mode(vs2) rk4 1ms": sliding}
    return {k: copy.deepcopy(v) | {"duration": duration} for k, v in out.items()}


def realtime_factor(doc: dict, compiled: bool) -> float:
    sc = load_scenario(copy.deepcopy(doc))
    t0 = time.perf_counter()
    run(sc, compiled=compiled)
    return sc.duration / (time.perf_counter() - t0)


def best_and_spread(values: list[float]) -> tuple[float, float]:
    return max(values), max(values) / min(values)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--duration", type=float, default=3.0, help="simulated seconds per run")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    rows = []
    print(f"{'case':36} {'compiled ×RT':>13} {'spread':>7} {'python-loop ×RT':>16} {'spread':>7} "
          f"{'speed-up':>9}")
    for name, doc in cases(args.duration).items():
        realtime_factor(doc | {"duration": 0.05}, True)  # warm-up: compile / load caches
        realtime_factor(doc | {"duration": 0.05}, False)
        fast, slow = [], []
        for _ in range(args.repeat):
            fast.append(realtime_factor(doc, True))
            slow.append(realtime_factor(doc, False))
        (bf, sf), (bs, ss) = best_and_spread(fast), best_and_spread(slow)
        rows.append({"case": name, "compiled_rtf": bf, "compiled_spread": sf,
                     "python_loop_rtf": bs, "python_loop_spread": ss})
        print(f"{name:36} {bf:13.1f} {sf:7.2f} {bs:16.1f} {ss:7.2f} {bf / bs:9.1f}")
    # a sweep: 4 PUMA runs (gains × seeds) on every core vs one by one in this process
    grid = parameter_grid({"controller.params.kp": [80, 120], "controller.params.kd": [15, 25]})
    doc = cases(args.duration)["puma560 computed_torque rk4 1ms"]
    workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    t0 = time.perf_counter()
    simulate_batch([doc], grid, workers=1)
    serial = time.perf_counter() - t0
    t0 = time.perf_counter()
    simulate_batch([doc], grid, workers=workers)
    parallel = time.perf_counter() - t0
    total = len(grid) * args.duration
    rows.append({"case": "sweep of 4 puma560 runs", "serial_rtf": total / serial,
                 "parallel_rtf": total / parallel, "workers": workers})
    print(f"sweep of {len(grid)} puma560 runs: one by one {total / serial:.1f}× real time, "
          f"simulate_batch on {workers} workers {total / parallel:.1f}× (incl. worker start-up)")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
