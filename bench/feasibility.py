"""Cost of the torque-feasibility check and what its time scaling gives (issue 35, item 1).

    python bench/feasibility.py [--runs N] [--grid N]

Per robot (PUMA 560, DDArm), goals planned as the trajectory generator plans them (plan_goal
from the arm at rest: JTC's splines through the points): 100 points with velocities and
accelerations (a planner's output) over 5 s and 0.6 s, the same 100 positions alone (JTC joins
them with lines and 0.02 s rounded corners, which need far more torque) over 5 s and 1.5 s,
5 mrad in 4 ms, and the README's goal as it was before this check (second point at 2 s, now 3 s).
For each it
prints the check's cost (median and max of N runs, after one warm-up: the kernels are loaded
once per process; wall time, and the median CPU time of this process, which a loaded machine
does not inflate), the samples it used, its verdict, and for an infeasible goal the uniformly
time-scaled duration (trajectory/feasibility.py, what ``infeasible_motion: scale`` runs) and its
cost. The torque-limited optimum it is compared against is TOPP-RA's (the ``toppra`` package,
if importable: time-optimal path parameterisation of the *same* path — the planned quintics
with s = the planned time — under the same effort and velocity limits, with the package's own
inverse dynamics, on a grid of --grid points plus the knots; its figure holds at the grid
points only), twice: with ṡ ≤ 1 (nowhere faster than the goal asked: the fastest a *slowed*
goal can be, the fair bound for a time scaling) and free (it may re-time the whole path,
faster than asked where the torque allows). Without toppra that column says so. Prints the
1-minute load average too.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from robot_control.bus.dds.msg import idl_type  # noqa: E402
from robot_control.dynamics import inverse_dynamics  # noqa: E402
from robot_control.model import load_robot  # noqa: E402
from robot_control.trajectory.feasibility import (  # noqa: E402
    check_motion_feasible,
    scaled_to_limits,
    warm_up,
)
from robot_control.trajectory.jtc_goal import GoalRules, plan_goal  # noqa: E402

HOME = {"puma560": [0.0, 0.5, -1.0, 0.0, 0.5, 0.0], "ddarm": [-0.1, 1.5, 1.0]}
README = {"ddarm": [(1.0, [0.1, 1.3, 0.8]), (2.0, [0.3, 1.1, 0.6])]}


def trajectory_msg(points, names):
    """A trajectory_msgs/JointTrajectory of (time from start s, positions[, velocities,
    accelerations]) points."""
    msg = idl_type("trajectory_msgs/msg/JointTrajectory")(joint_names=list(names))
    Point = idl_type("trajectory_msgs/msg/JointTrajectoryPoint")
    Duration = idl_type("builtin_interfaces/msg/Duration")
    msg.points = [Point(positions=[float(x) for x in p[1]],
                        velocities=[float(x) for x in p[2]] if len(p) > 2 else [],
                        accelerations=[float(x) for x in p[3]] if len(p) > 3 else [],
                        time_from_start=Duration(sec=int(p[0]),
                                                 nanosec=int(round((p[0] - int(p[0])) * 1e9))))
                  for p in points]
    return msg


def planned(model, q0, points):
    """The goal's motion as the generator runs it, from q0 at rest."""
    rules = GoalRules(model.joint_names, model.lower, model.upper, model.velocity_limit,
                      max_duration=1e4)
    current = np.zeros((3, model.nq))
    current[0] = q0
    return plan_goal(trajectory_msg(points, model.joint_names), rules, 10**18,
                     current).trajectory


def hundred_points(q0, duration, rates=True):
    """100 points of q0 + 0.3 (1 − cos 2πt/T)·(±1) over T = ``duration`` s, as a planner
    (MoveIt) sends them — positions, velocities, accelerations, so JTC's segments are quintics
    — or positions only (JTC then joins them by lines with rounded corners)."""
    t = duration * np.arange(1, 101) / 100
    w = 2.0 * np.pi / duration
    sign = np.where(np.arange(len(q0)) % 2, -1.0, 1.0)
    P = np.asarray(q0) + 0.3 * np.outer(1.0 - np.cos(w * t), sign)
    V = 0.3 * w * np.outer(np.sin(w * t), sign)
    A = 0.3 * w * w * np.outer(np.cos(w * t), sign)
    A[-1] = 0.0  # the last point at rest
    V[-1] = 0.0
    return [(ti, p, v, a) if rates else (ti, p) for ti, p, v, a in zip(t, P, V, A, strict=True)]


def timed(fn, runs: int) -> tuple[float, float, object, float]:
    """(median ms, max ms, the last result, median CPU ms) of ``runs`` calls."""
    fn()
    times, cpu, out = [], [], None
    for _ in range(runs):
        t, c = time.perf_counter(), time.process_time()
        out = fn()
        cpu.append(1e3 * (time.process_time() - c))
        times.append(1e3 * (time.perf_counter() - t))
    return statistics.median(times), max(times), out, statistics.median(cpu)


def toppra_duration(model, motion, grid: int, not_faster: bool) -> float | str:
    """TOPP-RA's time-optimal duration of the same path under the effort and velocity limits;
    ``not_faster``: also ṡ ≤ 1, i.e. nowhere faster than the goal asked (a virtual coordinate
    s with q'(s) = 1 and velocity limit 1) — the optimum a time *scaling* can be held to."""
    try:
        import toppra as ta
        import toppra.algorithm as algo
        import toppra.constraint as constraint
    except ImportError:
        return "no toppra"
    ta.setup_logging("WARNING")
    n = model.nq
    extra = 1 if not_faster else 0

    class SamePath(ta.interpolator.AbstractGeometricPath):
        def __call__(self, s, order=0):
            ss = np.atleast_1d(np.asarray(s, dtype=float))
            x = motion.sample(ss)[order]
            if extra:
                x = np.hstack((x, (ss if order == 0 else np.full_like(ss, order == 1))[:, None]))
            return x if np.ndim(s) else x[0]

        @property
        def dof(self):
            return n + extra

        @property
        def path_interval(self):
            return np.array([0.0, motion.duration])

    def inv_dyn(q, qd, qdd):
        return np.r_[inverse_dynamics(model, q[:n], qd[:n], qdd[:n]), np.zeros(extra)]

    effort = np.r_[model.effort_limit, np.full(extra, 1e12)]
    speed = np.r_[model.velocity_limit, np.ones(extra)]
    torque = constraint.JointTorqueConstraint(
        inv_dyn, np.stack([-effort, effort], axis=1), np.zeros(n + extra),
        discretization_scheme=constraint.DiscretizationType.Interpolation)
    velocity = constraint.JointVelocityConstraint(np.stack([-speed, speed], axis=1))
    grid_s = np.union1d(np.linspace(0.0, motion.duration, grid), motion.times_from_start)
    instance = algo.TOPPRA([torque, velocity], SamePath(), gridpoints=grid_s,
                           parametrizer="ParametrizeConstAccel")
    result = instance.compute_trajectory(0.0, 0.0)
    return "failed" if result is None else result.duration


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--grid", type=int, default=1000)
    args = ap.parse_args()
    print(f"load average (1 min): {os.getloadavg()[0]:.2f}; {args.runs} runs per figure")
    print(f"{'robot':8} {'goal':24} {'points':>6} {'T s':>8} {'check ms':>15} {'cpu ms':>6} "
          f"{'samples':>7} "
          f"{'verdict':>8} {'scaled T s':>11} {'scale ms':>9} {'TOPP-RA T s (ṡ≤1 / free)':>25}")
    for robot in ("puma560", "ddarm"):
        model = load_robot(robot)
        warm_up(model)
        q0 = HOME[robot]
        goals = {"100 points, 5 s": hundred_points(q0, 5.0),
                 "100 points, 0.6 s": hundred_points(q0, 0.6),
                 "100 positions, 5 s": hundred_points(q0, 5.0, rates=False),
                 "100 positions, 1.5 s": hundred_points(q0, 1.5, rates=False),
                 "5 mrad in 4 ms": [(0.004, [q0[0] + 0.005, *q0[1:]])]}
        if robot in README:
            goals["README's old goal"] = README[robot]
        for name, points in goals.items():
            motion = planned(model, q0, points)
            med, worst, verdict, cpu = timed(
                lambda m=motion, r=model: check_motion_feasible(r, m), args.runs)
            scaled, scale_ms, optimum = "", "", ""
            if not verdict.feasible:
                s_med, _, (fast, _, _), _ = timed(
                    lambda m=motion, r=model: scaled_to_limits(r, m), max(3, args.runs // 5))
                scaled, scale_ms = f"{fast.duration:.4g}", f"{s_med:.1f}"
                optimum = " / ".join(
                    best if isinstance(best, str) else f"{best:.4g}"
                    for best in (toppra_duration(model, motion, args.grid, True),
                                 toppra_duration(model, motion, args.grid, False)))
            label = "ok" if verdict.feasible else "refused"
            print(f"{robot:8} {name:24} {len(points):6d} {motion.duration:8.4g} "
                  f"{med:6.2f} (max {worst:5.1f}) {cpu:6.2f} {verdict.samples:7d} {label:>8} "
                  f"{scaled:>11} {scale_ms:>9} {optimum:>25}")
            if not verdict.feasible:
                print(f"{'':8}   first violation: {verdict.violation}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
