"""What each start-up kernel costs to compile, and to run: CPU seconds of its first call in a
fresh process with an empty compile cache, then µs per call (best of 10 batches in a compiled
loop, bench/kernel_timing.py).

    python bench/compile_cost.py [--robot ddarm] [--kernels hold_rk4,acceleration+hold_rk4,…]
                                  [--numba-inliner]

CPU seconds (``time.process_time`` of the process) are what a compile costs whatever the
machine's load; the wall time beside them is not. Each kernel compiles in its own process, so a
kernel that shares callees with another is charged for them too (as the first node to need it
is at a cold start). Kernels: the plant's RK4 hold (one physics step per call), the mass matrix,
inverse dynamics, gravity, forward kinematics (placements) and the limits' polynomial extrema;
also ``acceleration`` (the plant's q̈, the hold's callee). ``a+b``: a then b in one process
(the second loads or links what the first compiled; the parts' CPU printed after the row).
``--numba-inliner``: with numba's own copy of an inlined callee (dynamics/inline_copy.py
uninstalled), for comparison.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ("hold_rk4", "mass_matrix", "inverse_dynamics", "gravity", "placements", "unit_extrema")

ONE = """
import json, sys, time
import numpy as np
sys.path.insert(0, sys.argv[3])
from robot_control.dynamics import inline_copy
if sys.argv[4] == "numba":
    inline_copy.uninstall()
from kernel_timing import per_call_us
from robot_control.dynamics import kernels as K
from robot_control.model import load_robot
from robot_control.sim import plant_kernels as PK
from robot_control.sim.engine import make_plant
from robot_control.trajectory.limits import unit_extrema
model = load_robot(sys.argv[2])
plant = make_plant(model, None, 0.001)
n, D = model.nq, plant.data.D
q, qd, qdd, tau = np.full(n, 0.2), np.full(n, 0.3), np.zeros(n), np.full(n, 0.5)
calls = {
    "hold_rk4": (PK.hold_rk4, (D, plant._J, plant._S, plant._X, plant.mass_buffer, plant.surface,
                               0.0, 1, q.copy(), qd.copy(), qdd, tau)),
    "acceleration": (PK.acceleration, (D, plant._J, plant._S, plant._X, plant.mass_buffer,
                                       plant.surface, 0.0, q, qd, tau, qdd.copy())),
    "mass_matrix": (K.mass_matrix_kernel, (D, q, np.zeros((n, n)))),
    "inverse_dynamics": (K.inverse_dynamics_kernel, (D, q, qd, qdd, None, tau.copy())),
    "gravity": (K.gravity_kernel, (D, q, tau.copy())),
    "placements": (K.placements, (D, q, np.zeros((n, 4, 4)))),
    "unit_extrema": (unit_extrema, (np.linspace(-1.0, 1.0, 6 * n).reshape(n, 6), np.zeros((n, 4)))),
}
parts, wall = [], time.perf_counter()
for name in sys.argv[1].split("+"):  # in this order, in this process
    kernel, args = calls[name]
    cpu = time.process_time()
    kernel(*args)
    parts.append(time.process_time() - cpu)
wall = time.perf_counter() - wall
us = per_call_us(kernel, args, 20000, nrt=name == "unit_extrema")
print(json.dumps({"cpu": sum(parts), "parts": parts, "wall": wall, "us": us}))
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--robot", default="ddarm")
    parser.add_argument("--kernels", default=",".join(KERNELS))
    parser.add_argument("--numba-inliner", action="store_true",
                        help="numba's own copy of inlined callees (inline_copy uninstalled)")
    args = parser.parse_args(argv)
    print(f"{'kernel':18} {'compile CPU s':>13} {'wall s':>7} {'µs/call':>8}   "
          f"(load {os.getloadavg()[0]:.1f})")
    for name in args.kernels.split(","):
        with tempfile.TemporaryDirectory() as cache:
            env = {**os.environ, "NUMBA_CACHE_DIR": cache,
                   "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
            run = subprocess.run([sys.executable, "-c", ONE, name, args.robot, str(ROOT / "bench"),
                                  "numba" if args.numba_inliner else "shared"],
                                 env=env, capture_output=True, text=True, timeout=600)
        if run.returncode:
            print(f"{name:18} failed: {run.stderr.strip().splitlines()[-1]}")
            continue
        r = json.loads(run.stdout.strip().splitlines()[-1])
        parts = " + ".join(f"{c:.2f}" for c in r["parts"]) if len(r["parts"]) > 1 else ""
        print(f"{name:18} {r['cpu']:13.2f} {r['wall']:7.1f} {r['us']:8.3f}   {parts}", flush=True)
    print(f"(load {os.getloadavg()[0]:.1f} at the end)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
