"""``robot-control model export ROBOT [--format urdf|mjcf] [-o FILE]``: a model for other tools."""

from __future__ import annotations

import argparse
import logging
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="model_command", required=True)
    export = sub.add_parser("export", help="write a robot (or a cell's arms) as URDF or MJCF")
    export.add_argument("robot", help="bundled robot or cell name, or a .urdf / D-H .yaml file")
    export.add_argument("--format", choices=("urdf", "mjcf"), default="urdf",
                        help="urdf (for /robot_description, rviz) or mjcf (MuJoCo)")
    export.add_argument("-o", "--output", help="file to write (default: standard output)")
    export.add_argument("--timestep", type=float, default=1e-3,
                        help="MJCF: physics step in seconds (default 0.001)")
    export.add_argument("--integrator", default="implicitfast",
                        help="MJCF: MuJoCo integrator (implicitfast, RK4, Euler, implicit)")


def load_model(name: str):
    """A robot by name or file, else the arms of a bundled cell (one tree, prefixed names)."""
    from robot_control.model import load_robot
    from robot_control.model.cell import arms_model, load_cell
    from robot_control.model.robot_model import ModelError

    try:
        return load_robot(name)
    except ModelError as robot_error:
        try:
            return arms_model(load_cell(name))
        except ModelError:
            raise robot_error from None


def run(args: argparse.Namespace) -> int:
    from robot_control.model.mjcf import MujocoMissing, compile_mjcf, to_mjcf
    from robot_control.model.robot_model import ModelError
    from robot_control.model.urdf_export import robot_description

    logging.basicConfig(format="robot-control model: warning: %(message)s")
    try:
        model = load_model(args.robot)
        if args.format == "urdf":
            text = robot_description(model)
        else:
            text = to_mjcf(model, timestep=args.timestep, integrator=args.integrator)
            try:
                compile_mjcf(text)  # MuJoCo's own verdict before anything is written
            except MujocoMissing:
                pass  # writing MJCF needs no MuJoCo; checking it does
    except (ModelError, ValueError, OSError) as exc:
        print(f"robot-control model: {exc}", file=sys.stderr)
        return 2
    if args.output:
        with open(args.output, "w") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return 0
