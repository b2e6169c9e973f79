"""Identification accuracy: parameters estimated from recorded excitation runs vs the plant's.

    python bench/identification_accuracy.py [--robots ddarm puma560] [--json out.json]

For each robot: an optimised Fourier excitation (10 s period, 5 harmonics, 2 periods) tracked by
computed torque at 1 kHz on a plant whose parameters differ from the nominal model (the DDArm
carries a 0.5 kg load, the PUMA's links are ±10 % heavier), recorded as the nodes publish it
(test/bag_helpers.py; issue 14's ``simulate --record`` will replace it), once without and once
with the joint sensor noise (0.1 mrad, 1 mrad/s), then ``robot-control identify``'s pipeline.
Prints, per run, the largest relative error over the parameters that are non-zero for the
robot, the largest |estimate| of the zero ones, and the condition number; ``--json`` writes
every estimate. This measures accuracy, not speed (wall times are printed for information).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test"))

from bag_helpers import record_scenario  # noqa: E402

from robot_control.dynamics.regressor import parameter_basis  # noqa: E402
from robot_control.identification import (  # noqa: E402
    FilterSpec,
    centred_torque,
    identification_samples,
    identify,
    read_joint_bag,
)
from robot_control.sim.plant_config import parse_plant_config, plant_model  # noqa: E402
from robot_control.sim.scenario import load_scenario  # noqa: E402

RUNS = {
    "ddarm": ([-0.1, 1.5, 1.0], "huo_p", {"payload": {"mass": 0.5, "com": [0.1, 0.0, 0.05]}}),
    "puma560": ([0.0, 0.5, -2.5, 0.0, -0.5, 0.0], "base",
                {"inertia_scale": [1.0, 1.1, 0.9, 1.1, 0.9, 1.1]}),
}
NOISE = {"position": 1e-4, "velocity": 1e-3, "seed": 3}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", nargs="+", default=list(RUNS), choices=list(RUNS))
    parser.add_argument("--json", help="write every estimate to this file")
    args = parser.parse_args()
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for robot in args.robots:
            q0, basis, plant = RUNS[robot]
            n = len(q0)
            started = time.perf_counter()
            sc = load_scenario({
                "robot": robot, "duration": 20.0, "rate": 1000, "physics_dt": 0.001,
                "initial": {"q": q0},
                "trajectory": {"type": "excitation", "period": 10.0, "harmonics": 5,
                               "cycles": 2},
                "controller": {"type": "computed_torque",
                               "params": {"kp": [100.0] * n, "kd": [20.0] * n}},
                "plant": plant})
            print(f"{robot}: excitation optimised in {time.perf_counter() - started:.1f} s")
            truth = parameter_basis(sc.robot, basis).parameters(
                plant_model(sc.robot, parse_plant_config(plant, sc.robot)).inertial_parameters())
            for noisy in (False, True):
                sc.plant = {**plant, **({"noise": NOISE} if noisy else {})}
                bag = record_scenario(sc, Path(tmp) / f"{robot}_{noisy}")
                rec = read_joint_bag(bag, sc.robot.joint_names)
                valid, tau, _ = centred_torque(rec)
                est = identify(sc.robot, basis,
                               identification_samples(rec.t, rec.q, rec.qd, tau, valid,
                                                      FilterSpec()))
                nonzero = np.abs(truth) > 1e-9
                rel = np.abs(est.values - truth)[nonzero] / np.abs(truth[nonzero])
                worst = est.names[np.flatnonzero(nonzero)[np.argmax(rel)]]
                zero = np.abs(est.values[~nonzero]).max(initial=0.0)
                label = "with noise" if noisy else "no noise  "
                print(f"  {label}: max relative error {100 * rel.max():.4f} % ({worst}), "
                      f"{nonzero.sum()} non-zero of {truth.size}; max |zero parameter| "
                      f"{zero:.2e}; condition number {est.condition_number:.3f}")
                out[f"{robot}/{'noisy' if noisy else 'clean'}"] = {
                    "names": est.names, "truth": truth.tolist(), "estimate": est.values.tolist(),
                    "std": est.std.tolist(), "max_relative_error": float(rel.max()),
                    "condition_number": est.condition_number}
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
