"""The plant on MuJoCo: wrapper cost against MuJoCo's own step loop, and offline real-time factor.

    python bench/mujoco_plant.py [--repeat N] [--periods N] [--json out.json]

1. ``MujocoPlant.step(τ, 1 ms)`` at 1 kHz control on the PUMA 560 (physics step 1 ms: one
   ``mj_step`` a period; and 0.1 ms: ten) against a bare loop ``qfrc_applied = τ; mj_step``
   on the same compiled model — the ratio is what the wrapper adds (saturation, copies,
   divergence check). Best of ``--repeat``.
2. ``robot-control simulate --engine mujoco`` of the PUMA 10 s case of bench/simulate.py (1 kHz,
   computed torque, 1 ms step), in a fresh process, against ``--engine internal``: real-time
   factor = 10 s / wall time of the run (the summary's: model load, compiled-code cache load and
   first call included, interpreter imports excluded), best of ``--repeat`` processes (a process
   that waits for another's compile lock, or meets a busy core, is not the code's speed); and
   the same run repeated in one process (``steady``: the loop without the fixed costs).
"""

from __future__ import annotations

import argparse
import copy
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from simulate import PUMA  # noqa: E402

from robot_control.model import load_robot  # noqa: E402
from robot_control.sim.engine import make_plant  # noqa: E402

Q0 = np.array([0.0, 0.5, -0.5, 0.0, 0.3, 0.0])


def hold_torque(model) -> np.ndarray:
    """g(q₀): the arm holds still (a push drives the light wrist into its stops, where a 1e4
    N·m/rad stop at a 1 ms step diverges on either engine)."""
    from robot_control import dynamics as dyn

    return dyn.gravity_torques(model, Q0)


def time_wrapper(dt: float, periods: int) -> float:
    """Seconds per control period of MujocoPlant.step (1 ms hold)."""
    model = load_robot("puma560")
    plant = make_plant(model, {"engine": "mujoco"}, dt)
    plant.reset(Q0)
    tau = hold_torque(model)
    start = time.perf_counter()
    for _ in range(periods):
        plant.step(tau, 1e-3)
    return (time.perf_counter() - start) / periods


def time_bare(dt: float, periods: int) -> float:
    """Seconds per control period of the bare MuJoCo loop on the same model."""
    import mujoco

    model = load_robot("puma560")
    plant = make_plant(model, {"engine": "mujoco"}, dt)
    m, d = plant.mj, mujoco.MjData(plant.mj)
    d.qpos[:] = Q0
    tau = hold_torque(model)
    steps = round(1e-3 / dt)
    start = time.perf_counter()
    for _ in range(periods):
        d.qfrc_applied[:] = tau
        mujoco.mj_step(m, d, steps)
    return (time.perf_counter() - start) / periods


def simulate_rtf(engine: str, duration: float, repeat: int) -> dict:
    """Real-time factor of ``robot-control simulate --engine ENGINE`` in fresh processes (best of
    ``repeat``), and of the run repeated in this process."""
    from robot_control.sim.scenario import load_scenario
    from robot_control.sim.simulate import run

    doc = copy.deepcopy(PUMA) | {"duration": duration}
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "puma.yaml"
        path.write_text(yaml.safe_dump(doc))
        for _ in range(repeat):
            start = time.perf_counter()
            proc = subprocess.run([sys.executable, "-m", "robot_control.cli", "simulate", str(path),
                                   "--engine", engine, "--quiet"], capture_output=True, text=True,
                                  check=True)
            runs.append((json.loads(proc.stdout)["wall_time_s"], time.perf_counter() - start))
    steady = []
    for _ in range(repeat + 1):  # the first run in this process loads the compiled code
        sc = load_scenario(copy.deepcopy(doc) | {"plant": {"engine": engine}})
        steady.append(run(sc).summary["wall_time_s"])
    wall, process = min(r[0] for r in runs), min(r[1] for r in runs)
    return {"realtime_factor": duration / wall, "wall_s": wall,
            "spread": max(r[0] for r in runs) / wall, "process_s": process,
            "process_realtime_factor": duration / process,
            "steady_realtime_factor": duration / min(steady[1:])}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--periods", type=int, default=3000)  # g(q₀) alone holds ~5 s
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args()
    out: dict = {}
    for dt in (1e-3, 1e-4):
        pairs = [(time_wrapper(dt, args.periods), time_bare(dt, args.periods))
                 for _ in range(args.repeat)]  # interleaved: both see the same machine load
        wrapper, bare = min(p[0] for p in pairs), min(p[1] for p in pairs)
        key = f"puma560 1 kHz hold, physics {dt * 1e3:g} ms"
        out[key] = {"plant_us": wrapper * 1e6, "bare_mj_step_us": bare * 1e6,
                    "ratio": wrapper / bare}
        print(f"{key}: MujocoPlant.step {wrapper * 1e6:.1f} µs, bare mj_step loop "
              f"{bare * 1e6:.1f} µs, ratio {wrapper / bare:.2f}")
    for engine in ("mujoco", "internal"):
        r = simulate_rtf(engine, args.duration, args.repeat)
        out[f"simulate --engine {engine} puma560 {args.duration:g} s"] = r
        print(f"simulate --engine {engine}, PUMA {args.duration:g} s: {r['realtime_factor']:.0f}× "
              f"real time in a fresh process (run {r['wall_s']:.3f} s, worst ×{r['spread']:.1f}; "
              f"whole process {r['process_s']:.2f} s = {r['process_realtime_factor']:.1f}×); "
              f"steady {r['steady_realtime_factor']:.0f}×")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
