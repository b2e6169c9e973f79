"""``robot-control gains ROBOT [--rate HZ] [--law L …] [--bandwidth W] [--damping Z]``.

Prints, as a ``config/stack.<robot>.yaml`` section, the gains the controller node uses for a
robot without its own file: derived from the model by control/tuning.py (per-joint bandwidth
scaled by M_ii at the initial pose, capped by the rate and the effort limits), plus the joint
inertia and bandwidth they came from. With ``--stack`` it prints what the stack actually runs:
the robot's stack file over those defaults.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import yaml


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from robot_control.control.tuning import DEFAULT_BANDWIDTH, DEFAULT_DAMPING

    parser.add_argument("robot", help="bundled robot name or a .urdf / D-H .yaml path")
    parser.add_argument("--rate", type=float, default=1000.0, help="control rate, Hz (1000)")
    parser.add_argument("--law", action="append", default=[], metavar="L",
                        help="only this law (repeatable; default: every joint-space law)")
    parser.add_argument("--bandwidth", type=float, default=DEFAULT_BANDWIDTH, metavar="W",
                        help=f"requested closed-loop bandwidth, rad/s ({DEFAULT_BANDWIDTH:g})")
    parser.add_argument("--damping", type=float, default=DEFAULT_DAMPING, metavar="Z",
                        help=f"damping ratio ζ ({DEFAULT_DAMPING:g})")
    parser.add_argument("--stack", action="store_true",
                        help="the gains the stack runs: config/stack.<robot>.yaml over the "
                             "derived ones")


def _round(value):
    if isinstance(value, np.ndarray):
        return [float(f"{v:.4g}") for v in value.tolist()]
    return value


def run(args: argparse.Namespace) -> int:
    from robot_control.control.registry import available, create
    from robot_control.control.tuning import (
        bandwidth,
        default_initial_pose,
        derived_law_parameters,
        joint_inertia,
    )
    from robot_control.model import load_robot
    from robot_control.sim.stack_scenario import law_parameters, stack_parameters

    if not (args.rate > 0 and args.bandwidth > 0 and args.damping > 0):
        print("robot-control gains: --rate, --bandwidth and --damping must be positive",
              file=sys.stderr)
        return 2
    try:
        model = load_robot(args.robot)
        laws = [create(name) for name in (args.law or available())]
    except (ValueError, KeyError) as exc:
        print(f"robot-control gains: {exc}", file=sys.stderr)
        return 2
    stack = stack_parameters(args.robot) if args.stack else {}
    q0 = np.asarray(stack.get("plant", {}).get("initial_q", default_initial_pose(model)))
    m = joint_inertia(model, q0)
    print(f"# {model.name} at {args.rate:g} Hz: initial pose {_round(q0)}")
    print(f"# joint inertia M_ii(q0): {_round(m)}")
    print(f"# bandwidth ω per joint, rad/s: {_round(bandwidth(model, m, args.rate, args.bandwidth))}")
    section = {}
    for law in laws:
        values = derived_law_parameters(law, model, args.rate, q0, args.bandwidth, args.damping)
        values.update(law_parameters(stack.get("controller", {}), law.name))
        if values:
            section[law.name] = {k: _round(np.asarray(v) if isinstance(v, list) else v)
                                 for k, v in values.items()}
    print(yaml.safe_dump({"/**/controller": {"ros__parameters": section}}, sort_keys=False,
                         default_flow_style=None, width=100, allow_unicode=True), end="")
    return 0
