"""Offline run time of example-robot-data's arms with the stack's derived defaults.

    python bench/arms.py [--arms panda,xarm7,...] [--law computed_torque] [--rate 500] [--repeat 3]

For each arm (default: every one of sim/matrix.EXAMPLE_ARMS; needs ``pip install
example-robot-data``) one cycle of its demo motion under the law — what ``robot-control check``
runs per law — timed in this process after a warm-up run that compiles: the package's own plant
(its derived step: the xArm7's damping needs 60 sub-steps a 2 ms period) side by side with the
same run on MuJoCo's plant (``plant.engine: mujoco``, where the mujoco extra is installed), and
the real-time factor (simulated seconds / wall seconds, best of ``--repeat``). The set-up
(``stack_scenario``: model, pose search, gains) is timed apart.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing the package


def best_time(make, repeat: int) -> tuple[float, float]:
    """(best, worst) wall seconds of ``run(make())`` over ``repeat`` runs (set-up not timed)."""
    from robot_control.sim.simulate import run

    times = []
    for _ in range(repeat):
        sc = make()
        t0 = time.perf_counter()
        run(sc)
        times.append(time.perf_counter() - t0)
    return min(times), max(times)


def main(argv: list[str] | None = None) -> int:
    from robot_control.sim import matrix
    from robot_control.sim.stack_scenario import stack_scenario

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--arms", default=",".join(matrix.EXAMPLE_ARMS))
    parser.add_argument("--law", default="computed_torque")
    parser.add_argument("--rate", type=float, default=500.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    try:
        import mujoco  # noqa: F401

        engines = ("internal", "mujoco")
    except ImportError:
        engines = ("internal",)
        print("mujoco not installed: the package's plant only (pip install -e '.[mujoco]')")
    print(f"{'arm':8s} {'n':>2s} {'step µs':>8s} {'set-up ms':>9s} {'sim s':>6s} "
          + " ".join(f"{e + ' wall s':>16s} {'×RT':>6s}" for e in engines)
          + ("  mujoco/internal" if len(engines) == 2 else ""))
    for name in args.arms.split(","):
        path = matrix.example_arm(name)
        if path is None:
            print(f"{name}: not in this interpreter's example-robot-data")
            continue
        t0 = time.perf_counter()
        sc = stack_scenario(path, args.law, args.rate)
        setup = time.perf_counter() - t0
        walls = []
        for engine in engines:
            def make(engine=engine, path=path):
                s = stack_scenario(path, args.law, args.rate)
                s.plant = {**s.plant, "engine": engine}
                return s
            best_time(make, 1)  # warm-up: compiles
            walls.append(best_time(make, args.repeat))
        row = (f"{name:8s} {sc.robot.nq:2d} {sc.physics_dt * 1e6:8.1f} {setup * 1e3:9.1f} "
               f"{sc.duration:6.2f} " + " ".join(
                   f"{b:9.3f} ({w / b:4.2f}) {sc.duration / b:6.1f}" for b, w in walls))
        if len(walls) == 2:
            row += f"  {walls[1][0] / walls[0][0]:6.2f}"
        print(row, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
