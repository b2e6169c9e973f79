"""Where a control period of the two-arm cell (Huo C15) goes: each kernel of the compiled loop
timed on its own, many calls inside one compiled loop (process time, best of 10 batches).

    python bench/cell_parts.py [--scenario huo_3_13_load_sharing] [--calls 20000]

Rows: one constrained pass (dynamics.constrained_mass) and its parts (body motion, constraint
rows, composite-body mass matrix, bias torques, LᵀDL, Gram matrix, response), Kim's unit-pass
version of the same pass for comparison, one RK4 physics step (four passes), the load-sharing
law and its object estimate, and a frame's pose and acceleration for the log (from the rows the
pass left: E and the object's centre of mass); then the whole compiled run per period. A period
is about: 4 passes + law + 2 frames + (sense, path, saturation, logging: < 0.3 µs together).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from kernel_timing import per_call_us  # noqa: E402

from robot_control.control.base import Reference  # noqa: E402
from robot_control.control.compiled import task_inputs  # noqa: E402
from robot_control.control.load_sharing_kernels import (  # noqa: E402
    load_sharing_torque,
    object_motion,
)
from robot_control.control.registry import create  # noqa: E402
from robot_control.dynamics import constrained_mass as CM  # noqa: E402
from robot_control.dynamics.constrained import _body_work, _row_work, constrained_pass  # noqa: E402
from robot_control.dynamics.contact import body_motion, constraint_rows  # noqa: E402
from robot_control.model.cell import arms_model  # noqa: E402
from robot_control.sim import cell_kernels as CK  # noqa: E402
from robot_control.sim.cell_simulate import load_cell_scenario, run_cell  # noqa: E402
from robot_control.sim.engine import make_cell_plant  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenario", default="huo_3_13_load_sharing")
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args(argv)
    sc = load_cell_scenario(args.scenario)
    plant = make_cell_plant(sc.cell, sc.plant, sc.physics_dt)
    plant.reset(sc.arm_guess, sc.object_pose)
    c, model, n, na = plant._c, plant.model, plant.n, plant.n_arms
    D, g, cs = c[CK.C_D], model.gravity, plant._touching
    q, qd, tau = plant.q.copy(), np.zeros(n), np.zeros(n)
    qdd, lam = np.zeros(n), np.zeros(cs.m)
    W, S = CM._workspaces(model, plant.data, cs)
    G = W[: n * CM.BWORK].reshape(n, CM.BWORK)
    M = W[n * CM.BWORK : n * CM.BWORK + n * n].reshape(n, n)
    u = W[n * CM.BWORK + n * n : n * CM.BWORK + n * n + n]
    At, Y, Z, Gm, bias, phi = CM.row_views(S, cs.m, n)
    CM.constrained_mass_pass(D, g, 1.0, 1.0, q, qd, qdd, tau, c[CK.C_FEXT], cs.packed, W, S, lam)
    law = create(sc.controller_type)
    law.configure(arms_model(sc.cell), sc.controller_params)
    cfg, zero, out = law.cfg, np.zeros(na), np.zeros(na)
    task_inputs(cfg.object, Reference(q[:na], pose=np.eye(4), twist=np.zeros(6),
                                      accel=np.zeros(6), wrench=sc.force_reference), None)
    none = np.zeros(n, dtype=np.bool_)
    rows = [
        ("constrained pass (factored M), 13 rows", CM.constrained_mass_pass,
         (D, g, 1.0, 1.0, q, qd, qdd, tau, c[CK.C_FEXT], cs.packed, W, S, lam)),
        ("  body motion", body_motion, (D, q, qd, G)),
        ("  constraint rows", constraint_rows, (D, cs.packed, G, At.T, bias, phi)),
        ("  mass matrix (composite bodies)", CM.composite_mass, (D, G, M)),
        ("  bias torques", CM.bias_torques, (D, g, tau, c[CK.C_FEXT], G, u)),
        ("  Y = L⁻ᵀAᵀ and A M⁻¹ Aᵀ", CM.constraint_gram, (D, M, At, Y, Z, Gm)),
        ("  q̈ = L⁻¹D⁻¹(u + Yλ)", CM.respond, (D, M, Y, u, lam, qdd)),
        ("Kim's pass (ABA + 13 unit passes)", constrained_pass,
         (D, g, 1.0, 1.0, q, qd, qdd, tau.copy(), none, c[CK.C_FEXT], cs.packed,
          _body_work(plant.data), _row_work(cs, model), lam)),
        ("load-sharing law", load_sharing_torque,
         (cfg.data, cfg.tasks, cfg.object, cfg.starts, cfg.force_fractions, 10.0, q[:na], qd[:na],
          q[:na], zero, zero, out)),
        ("  object estimate (both arms' kinematics)", object_motion,
         (cfg.data, cfg.tasks, cfg.object, cfg.starts, q[:na], qd[:na], q[:na], zero, zero)),
        ("frame pose and acceleration (log, ×2)", CK.frame_from_rows,
         (D, G, c[CK.C_CONTACT_FRAME], qdd)),
    ]
    print(f"{'kernel':44} {'µs/call':>8}")
    for name, kernel, call in rows:
        print(f"{name:44} {per_call_us(kernel, call, args.calls):8.2f}")
    run_cell(sc)  # compiled or loaded
    walls, cpus = [], []
    for _ in range(5):
        t0 = time.process_time()
        walls.append(run_cell(load_cell_scenario(args.scenario)).summary["wall_time_s"])
        cpus.append(time.process_time() - t0)
    periods = sc.steps + 1
    print(f"{'whole compiled run, per period (best of 5)':44} {min(walls) / periods * 1e6:8.2f}"
          f"   wall ({sc.duration / min(walls):.1f}× real time); "
          f"{min(cpus) / periods * 1e6:.2f} process time, set-up included")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
