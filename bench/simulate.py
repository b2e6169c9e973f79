"""Real-time factor of offline simulations, compiled loop against the per-period Python loop.

    python bench/simulate.py [--repeat N] [--duration S] [--json out.json]
    python bench/simulate.py --scenarios [--repeat N] [--only NAME] [--json out.json]

Default cases (1 kHz control, computed torque unless named):
- puma560, RK4 at 1 ms (the issue-15 target: ≥ 100× real time);
- puma560, RK4 at 0.1 ms (ten physics steps per period);
- ddarm (Huo's examples), RK4 at 1 ms: computed torque, passivity, adaptive (Slotine–Li, Craig),
  sliding mode VS-1/2/3 and Spong's robust law;
- puma560 resolved acceleration (pose task) on the joint quintic (the force laws run in the
  bundled scenarios of ``--scenarios``);
- a sweep of 4 PUMA runs through simulate_batch on every core vs one by one.

For each case the compiled run and the ``compiled=False`` run are timed side by side in one
process (best of ``--repeat``, spread = worst/best), after a warm-up run that compiles.
Real-time factor = simulated seconds / wall seconds.

``--scenarios``: every bundled scenario (config/scenarios) plus the 10 s PUMA computed-torque
case, each run as ``robot-control simulate`` runs it in a fresh process (its ``realtime_factor``:
model load, compiled-code cache load and first call included, interpreter imports excluded; best
of ``--repeat`` processes), next to the steady compiled and Python-loop factors in this process.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing the package

from robot_control.sim.batch import parameter_grid, simulate_batch  # noqa: E402
from robot_control.sim.cell_simulate import (  # noqa: E402
    is_cell_scenario,
    load_cell_scenario,
    run_cell,
)
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


def law_case(law: str, params: dict) -> dict:
    """The DDArm case with another law."""
    return copy.deepcopy(DDARM) | {"controller": {"type": law, "params": params}}


HUO_P = {"parameter_basis": "huo_p"}
P_HAT = [12, 0.4, -1.2, 0.7, 2.8, -0.3, -0.01, 0.35, 0.35]
BOUND = [2, 0.2, 0.4, 0.4, 0.5, 0.1, 0.01, 0.1, 0.1]


def cases(duration: float) -> dict[str, dict]:
    puma_fine = copy.deepcopy(PUMA) | {"physics_dt": 1e-4}
    out = {
        "puma560 computed_torque rk4 1ms": PUMA,
        "puma560 computed_torque rk4 0.1ms": puma_fine,
        "ddarm computed_torque rk4 1ms": DDARM,
        "puma560 resolved_acceleration": copy.deepcopy(PUMA) | {"controller": {
            "type": "resolved_acceleration", "params": {"task": "pose", "kp": 100, "kd": 20}}},
        "ddarm passivity rk4 1ms": law_case("passivity", {"lambda": [4, 4, 5],
                                                          "kd": [100, 20, 10]}),
        "ddarm adaptive (slotine-li)": law_case(
            "adaptive", {"lambda": [4, 4, 5], "kd": [100, 20, 10], **HUO_P,
                         "initial_estimate": [8, 1, -1, 0.5, 5, 0, 0, 1, 1],
                         "adaptation_gain": [10, 0.2, 0.4, 0.4, 4, 0.1, 0.01, 0.2, 1]}),
        "ddarm adaptive_craig": law_case(
            "adaptive_craig", {"kp": [50] * 3, "kd": [10] * 3, **HUO_P, "initial_estimate": P_HAT,
                               "adaptation_gain": [0.5] * 9}),
        "ddarm sliding_mode(vs1)": law_case(
            "sliding_mode", {"scheme": "vs1", "lambda": [4, 4, 5], **HUO_P, "estimate": P_HAT,
                             "uncertainty_bound": BOUND, "boundary_layer": [0.05] * 3}),
        "ddarm sliding_mode(vs2)": law_case(
            "sliding_mode", {"scheme": "vs2", "lambda": [5] * 3, "boundary_layer": [0.05] * 3}),
        "ddarm sliding_mode(vs3, sgn)": law_case(
            "sliding_mode", {"scheme": "vs3", "lambda": [4, 4, 5], **HUO_P,
                             "parameter_bound": [14, 0.6, 1.6, 1.1, 3.3, 0.4, 0.02, 0.45, 0.45]}),
        "ddarm robust": law_case(
            "robust", {"kp": [400, 80, 50], "kd": [100, 20, 10], "alpha": 0.2,
                       "inverse_inertia_bound": 2.7, "qdd_max": 3.3, **HUO_P,
                       "uncertainty_bound": BOUND}),
    }
    return {k: copy.deepcopy(v) | {"duration": duration} for k, v in out.items()}


def puma_10s() -> dict:
    """The hidden 10 s PUMA computed-torque scenario: out along a quintic, back, then hold."""
    puma = copy.deepcopy(PUMA) | {"duration": 10.0}
    puma["trajectory"] = {"type": "quintic", "from_initial": True, "durations": [1.5, 1.5],
                          "waypoints": [[0.5, 0.8, -0.2, 0.4, 0.6, -0.5], PUMA["initial"]["q"]]}
    return puma


def realtime_factor(doc: dict, compiled: bool) -> float:
    sc = load_scenario(copy.deepcopy(doc))
    t0 = time.perf_counter()
    run(sc, compiled=compiled)
    return sc.duration / (time.perf_counter() - t0)


def best_and_spread(values: list[float]) -> tuple[float, float]:
    return max(values), max(values) / min(values)


FRESH = """
import sys, time
from robot_control.sim.simulate import run
from robot_control.sim.cell_simulate import is_cell_scenario, run_cell
from robot_control.sim.scenario import load_scenario
name = sys.argv[1]
cell = is_cell_scenario(name)
t = time.perf_counter()  # what simulate's realtime_factor counts: model load, cache load, run
result = run_cell(name) if cell else run(load_scenario(name))
print(result.summary["duration_s"] / (time.perf_counter() - t))
"""


def fresh_process_factor(scenario: str) -> float:
    """``realtime_factor`` of a scenario run as ``robot-control simulate`` runs it, in a new process."""
    out = subprocess.run([sys.executable, "-c", FRESH, scenario], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    return float(out.stdout.strip().splitlines()[-1])


def bundled_scenarios() -> list[str]:
    return sorted(p.stem for p in (ROOT / "config" / "scenarios").glob("*.yaml"))


def scenario_table(repeat: int, only: str = "") -> list[dict]:
    """Fresh-process factor of every bundled scenario and of the 10 s PUMA case, with the steady
    compiled and Python-loop factors measured here."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        puma10 = Path(tmp) / "puma560_computed_torque_10s.yaml"
        puma10.write_text(yaml.safe_dump(puma_10s()))
        print(f"{'scenario':48} {'fresh ×RT':>10} {'compiled ×RT':>13} {'python ×RT':>11}")
        for name in [n for n in [*bundled_scenarios(), str(puma10)] if only in Path(n).stem]:
            fresh_process_factor(name)  # compiles into the cache if it has to
            fresh = max(fresh_process_factor(name) for _ in range(repeat))
            row = {"scenario": Path(name).stem, "fresh_process_rtf": fresh}
            row["compiled_rtf"] = max(_steady(name, True) for _ in range(repeat))
            row["python_loop_rtf"] = max(_steady(name, False) for _ in range(repeat))
            rows.append(row)
            print(f"{row['scenario']:48} {fresh:10.1f} {row.get('compiled_rtf', float('nan')):13.1f}"
                  f" {row.get('python_loop_rtf', float('nan')):11.1f}")
    return rows


def _steady(scenario: str, compiled: bool) -> float:
    """Real-time factor of a run in this process once its code is loaded (model load excluded);
    a cell scenario through sim.cell_simulate.run_cell."""
    load, simulate = ((load_cell_scenario, run_cell) if is_cell_scenario(scenario)
                      else (load_scenario, run))
    simulate(load(scenario), compiled=compiled)  # compiled and loaded
    sc = load(scenario)
    t0 = time.perf_counter()
    simulate(sc, compiled=compiled)
    return sc.duration / (time.perf_counter() - t0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--duration", type=float, default=3.0, help="simulated seconds per run")
    parser.add_argument("--scenarios", action="store_true",
                        help="the bundled scenarios in fresh processes instead of the cases")
    parser.add_argument("--only", default="",
                        help="with --scenarios: only those whose name contains this")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    if args.scenarios:
        rows = scenario_table(args.repeat, args.only)
        if args.json:
            args.json.write_text(json.dumps(rows, indent=1))
        return 0
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
