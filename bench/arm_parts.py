"""Where a control period of a single-arm offline run goes: each kernel of the compiled loop
timed on its own, many calls inside one compiled loop (process time, best of 10 batches).

    python bench/arm_parts.py [--scenario FILE_OR_NAME] [--calls 20000]

Default scenario: bench/simulate.py's 10 s PUMA computed-torque case. Rows: the ABA, the plant's
acceleration (ABA plus the plant's terms; on a surface the ABA with the push), one RK4 step (four
accelerations), the hold of one control period, the law's update, sensing, saturation, on a
surface the push and contact Jacobian the hold ends with, the reference sample (for a Cartesian
path its sample and the task-frame error); then the whole compiled run per period, set-up
included. A period is about: hold + law + sense + reference + saturate + logging.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml
from numba import njit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from kernel_timing import per_call_us  # noqa: E402
from simulate import puma_10s  # noqa: E402

from robot_control.control import compiled as C  # noqa: E402
from robot_control.control.base import Reference  # noqa: E402
from robot_control.dynamics import kernels as K  # noqa: E402
from robot_control.sim import plant_kernels as PK  # noqa: E402
from robot_control.sim import run_kernels as RK  # noqa: E402
from robot_control.sim.engine import make_plant  # noqa: E402
from robot_control.sim.scenario import CartesianPath, load_scenario  # noqa: E402
from robot_control.sim.simulate import make_controller, run  # noqa: E402
from robot_control.trajectory.cartesian import path_sample_into  # noqa: E402
from robot_control.trajectory.sampling import sample_into  # noqa: E402


def law_caller(kind: int):
    """law_update for this law kind (a literal in the compiled loop, as run_periods makes it)."""
    @njit(_nrt=False)
    def call(law, t, q, qd, ref, tau):
        C.law_update(kind, law, t, q, qd, ref[0], ref[1], ref[2], tau)
    return call


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenario", default="")
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        name = args.scenario
        if not name:
            name = str(Path(tmp) / "puma560_computed_torque_10s.yaml")
            Path(name).write_text(yaml.safe_dump(puma_10s()))
        sc = load_scenario(name)
    plant = make_plant(sc.robot, sc.plant, sc.physics_dt)
    plant.reset(sc.q0, sc.qd0)
    law = make_controller(sc)
    spec = law.compiled()
    n = sc.robot.nq
    D = plant.data.D
    J, S, X, Mbuf, Cs = plant._J, plant._S, plant._X, plant.mass_buffer, plant.surface
    q, qd, qdd = plant.q.copy(), np.full(n, 0.3), np.zeros(n)
    tau = np.full(n, 0.5)
    ref, out = np.zeros((3, n)), np.zeros(n)
    ref[0] = q
    cartesian = isinstance(sc.trajectory, CartesianPath)
    C.task_inputs(spec.task, Reference(sc.q0, pose=np.eye(4), twist=np.zeros(6),
                                       accel=np.zeros(6), wrench=sc.force_reference)
                  if cartesian else Reference(sc.q0, wrench=sc.force_reference), plant.wrench)
    rows = [
        ("ABA (forward_dynamics_kernel)", K.forward_dynamics_kernel, (D, q, qd, tau, None, qdd)),
        ("plant acceleration", PK.acceleration, (D, J, S, X, Mbuf, Cs, 0.0, q, qd, tau, qdd)),
        ("RK4 step (4 accelerations)", PK.rk4_step,
         (D, J, S, X, Mbuf, Cs, 0.0, q.copy(), qd.copy(), qdd, tau)),
        ("hold (one control period)", PK.hold_rk4,
         (D, J, S, X, Mbuf, Cs, 0.0, max(1, round(1.0 / (sc.rate * sc.physics_dt))), q.copy(),
          qd.copy(), qdd, tau)),
        ("law update", law_caller(spec.kind), (spec.arrays, 0.5, q, qd, ref, out)),
        ("sense", PK.sense, (n, q, qd, np.zeros(2), np.zeros((0, n)), out, qdd)),
        ("saturate", PK.saturate, (J, S, tau, out, np.zeros(n, dtype=np.bool_))),
    ]
    if Cs is not None:
        rows.append(("surface push and its Jacobian (hold's end)", PK.contact_torque,
                     (D, Cs, q, qd, np.zeros(n))))
    if cartesian:
        A = spec.task
        from robot_control.control import task_kernels as KT
        frame = np.array(plant.model.frame_placement(sc.trajectory.frame
                                                     or plant.model.end_effector)[1], dtype=float)
        frame[3, 0] = plant.model.frame_placement(sc.trajectory.frame
                                                  or plant.model.end_effector)[0]
        rows += [("path sample", path_sample_into,
                  (sc.trajectory.table, 0.5, A[KT.TK_POSE : KT.TK_POSE + 4, :4], A[KT.TK_RATES])),
                 ("task-frame error (log)", RK.frame_error,
                  (D, frame, q, np.eye(4), np.zeros(3), -1))]
    else:
        knots, seg_rows, first, last = sc.trajectory.sampling_arrays()
        rows.append(("quintic sample", sample_into, (knots, seg_rows, first, last, 0.5, ref)))
    print(f"{'kernel':44} {'µs/call':>8}")
    for label, kernel, call in rows:
        print(f"{label:44} {per_call_us(kernel, call, args.calls, nrt=False):8.3f}")
    run(load_scenario(name) if args.scenario else sc)  # compiled or loaded
    walls = []
    for _ in range(5):
        with tempfile.TemporaryDirectory() as tmp:
            if not args.scenario:
                name = str(Path(tmp) / "puma560_computed_torque_10s.yaml")
                Path(name).write_text(yaml.safe_dump(puma_10s()))
            s2 = load_scenario(name)
        t0 = time.perf_counter()
        run(s2)
        walls.append(time.perf_counter() - t0)
    periods = sc.steps + 1
    print(f"{'whole compiled run, per period (best of 5)':44} {min(walls) / periods * 1e6:8.3f}"
          f"   ({sc.duration / min(walls):.1f}× real time, set-up included)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
