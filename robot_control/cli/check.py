"""``robot-control check ROBOT [--rate HZ] [--law L …] [--arm-joints J …]``: before the stack.

Prints what the package derives for a robot (a bundled name, a .urdf or a D-H .yaml): the arm's
joints and the tool joints it holds, the initial pose, the demo motion, the plant's integration
step, the gains of each law; then runs the stack's own run of each joint-space law offline
(sim/stack_scenario.py, the run a lockstep stack equals bit for bit) and judges it as the law
matrix does (sim/matrix.py). Exit 1, with the reasons, when the description cannot run or a law
would not hold.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("robot", help="bundled robot name or a .urdf / D-H .yaml path")
    parser.add_argument("--rate", type=float, default=500.0, help="control rate, Hz (500)")
    parser.add_argument("--law", action="append", default=[], metavar="L",
                        help="only this law (a law-matrix label, repeatable; default: every "
                             "model-based joint-space law)")
    parser.add_argument("--arm-joints", nargs="+", default=[], metavar="J",
                        help="the joints the laws drive (default: all but grippers and fingers)")


def _vector(x) -> str:
    return "[" + ", ".join(f"{v:.4g}" for v in np.asarray(x, dtype=float)) + "]"


def run(args: argparse.Namespace) -> int:
    from robot_control.control.tuning import coupling
    from robot_control.model.arm import load_arm
    from robot_control.model.robot_model import ModelError
    from robot_control.sim import matrix
    from robot_control.sim.arm_check import description_problems
    from robot_control.sim.stack_scenario import stack_scenario
    from robot_control.sim.step_size import viscous_rate

    try:
        model = load_arm(args.robot, args.arm_joints)
    except (ModelError, ValueError, OSError) as exc:
        print(f"robot-control check: FAILED: {exc}", file=sys.stderr)
        return 1
    labels = args.law or list(matrix.MODEL_BASED)
    known = [row.label for row in matrix.joint_laws()]
    unknown = [law for law in labels if law not in known]
    if unknown:
        print(f"robot-control check: unknown law(s) {', '.join(unknown)} (one of "
              f"{', '.join(known)})", file=sys.stderr)
        return 2
    first = stack_scenario(args.robot, "computed_torque", args.rate, arm_joints=args.arm_joints)
    q0 = first.q0
    print(f"robot: {model.name} ({model.nq} joints driven: {', '.join(model.joint_names)})")
    held = model.held_joints
    print("tool joints held: " + (", ".join(f"{k} at {v:.4g}" for k, v in held.items())
                                  if held else "none"))
    print(f"initial pose: {_vector(q0)} (coupling max M_ii·(M⁻¹)_ii = {coupling(model, q0):.3g})")
    traj = first.trajectory
    print(f"demo motion: {len(traj.positions)} waypoints, {traj.duration:.3g} s "
          f"(segments of {np.diff(traj.times_from_start)[0]:.3g} s)")
    lam = viscous_rate(model, q0)
    print(f"plant step: {first.physics_dt:.3g} s at {args.rate:g} Hz"
          + (f" (fastest viscous mode {lam:.3g} 1/s)" if lam > 0 else ""))
    problems = description_problems(model, q0)
    for p in problems:
        print(f"  cannot run: {p}")
    if problems:
        print("robot-control check: FAILED: the description cannot run", file=sys.stderr)
        return 1
    failed = []
    for label in labels:
        row = matrix.law_row(label)
        sc = stack_scenario(args.robot, row.law, args.rate, overrides=row.extra,
                            arm_joints=args.arm_joints)
        gains = sc.controller_params
        cell = matrix.scenario_cell(args.robot, label, args.rate, sc)
        shown = {k: _vector(gains[k]) for k in ("kp", "kd", "lambda") if k in gains}
        print(f"{label:18s} max|e| {cell.max_error:9.3g} (bound {cell.bound:g})  τ/limit "
              f"{cell.torque_ratio:6.3g}  q̇/limit {cell.speed_ratio:6.3g}  "
              f"{cell.verdict or 'ok'}  " + " ".join(f"{k} {v}" for k, v in shown.items()),
              flush=True)
        if cell.verdict:
            failed.append(f"{label}: {cell.verdict}")
    if failed:
        print("robot-control check: FAILED: " + "; ".join(failed), file=sys.stderr)
        return 1
    print(f"robot-control check: ok: {len(labels)} law(s) hold at {args.rate:g} Hz")
    return 0
