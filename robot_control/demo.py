"""``robot-control demo``: a tour of the dynamics core on every bundled robot."""

from __future__ import annotations

import argparse
import time

import numpy as np


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=int, default=0, help="random state seed")


def run(args: argparse.Namespace) -> int:
    from robot_control import dynamics as dyn
    from robot_control.model import bundled_robots, load_robot

    rng = np.random.default_rng(args.seed)
    print(f"{'robot':<20}{'nq':>3}  {'|ABA(RNEA(qdd)) - qdd|':>24}  {'RNEA µs':>8}  {'ABA µs':>8}")
    for name in bundled_robots():
        model = load_robot(name)
        q, qd, qdd = rng.uniform(-1, 1, size=(3, model.nq))
        tau = dyn.inverse_dynamics(model, q, qd, qdd)
        err = np.abs(dyn.forward_dynamics(model, q, qd, tau) - qdd).max()
        times = []
        for fn, fargs in ((dyn.inverse_dynamics, (q, qd, qdd)), (dyn.forward_dynamics, (q, qd, tau))):
            t0 = time.perf_counter()
            for _ in range(2000):
                fn(model, *fargs)
            times.append((time.perf_counter() - t0) / 2000 * 1e6)
        print(f"{name:<20}{model.nq:>3}  {err:>24.2e}  {times[0]:>8.2f}  {times[1]:>8.2f}")
    return 0
