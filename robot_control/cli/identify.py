"""``robot-control identify BAG --robot NAME [--basis base|GROUPS] [--friction] [--physical]``.

Reads /joint_states and /joint_command from a rosbag2 directory, filters and differentiates
(robot_control.identification.signals), solves the weighted least squares of Huo 2.5, prints the
estimates with their standard deviations and the condition number, and writes a parameter file
the controller node loads (``--params-file``: ``initial_estimate`` and ``parameter_basis`` of the
adaptive laws), optionally a report (``--report``) and a corrected model (``--model-out``, URDF).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import yaml

ADAPTIVE_LAWS = ("adaptive", "adaptive_craig")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("bag", help="rosbag2 directory (MCAP or SQLite 3) with /joint_states "
                        "and /joint_command")
    parser.add_argument("--robot", required=True, help="bundled robot name or .urdf / D-H .yaml")
    parser.add_argument("--namespace", default="/", metavar="NS",
                        help="the recorded stack's namespace: /NS/joint_states, /NS/joint_command "
                             "(default /)")
    parser.add_argument("--basis", default="base",
                        help="'base' (minimal parameters) or a group set of the robot (e.g. huo_p)")
    parser.add_argument("--friction", action="store_true",
                        help="also estimate viscous and Coulomb friction per joint (Huo 2.6)")
    parser.add_argument("--physical", action="store_true",
                        help="constrain the estimate to a physically consistent model")
    parser.add_argument("--torque", choices=("auto", "state", "command"), default="auto",
                        help="torque from /joint_states effort or /joint_command (default: state "
                        "efforts when recorded)")
    parser.add_argument("--cutoff", type=float, default=10.0, help="low-pass cutoff, Hz")
    parser.add_argument("--order", type=int, default=4, help="Butterworth order (per pass)")
    parser.add_argument("--decimate", type=float, default=100.0, help="rate kept after "
                        "filtering, Hz")
    parser.add_argument("--trim", type=float, default=0.5, help="seconds dropped at each end")
    parser.add_argument("--params", help="controller parameter file to write (default: "
                        "<BAG>.params.yaml beside the bag)")
    parser.add_argument("--report", help="also write the full result (YAML)")
    parser.add_argument("--model-out", help="also write the identified model as URDF")


def run(args: argparse.Namespace) -> int:
    from robot_control.bus.ros_args import namespace_prefix
    from robot_control.identification import (
        FilterSpec,
        RecordingError,
        centred_torque,
        identification_samples,
        identify,
        read_joint_bag,
    )
    from robot_control.identification.recording import COMMAND_TOPIC, STATE_TOPIC
    from robot_control.model import load_robot

    try:
        model = load_robot(args.robot)
        prefix = namespace_prefix(args.namespace)
        rec = read_joint_bag(args.bag, model.joint_names, prefix + STATE_TOPIC,
                             prefix + COMMAND_TOPIC)
        valid, tau, source = centred_torque(rec, args.torque)
        spec = FilterSpec(args.cutoff, args.order, args.decimate, args.trim)
        samples = identification_samples(rec.t, rec.q, rec.qd, tau, valid, spec)
        est = identify(model, args.basis, samples, args.friction, args.physical)
    except (RecordingError, ValueError, KeyError, OSError) as exc:
        print(f"robot-control identify: {exc}", file=sys.stderr)
        return 2
    print(format_estimate(est, model, rec, spec, source, samples.gaps))
    params = Path(args.params) if args.params else Path(f"{Path(args.bag)}.params.yaml")
    try:
        params.write_text(parameter_file(est, model, args.bag))
        print(f"wrote {params} (controller: --params-file {params})")
        if args.report:
            Path(args.report).write_text(yaml.safe_dump(report(est, model, spec, source, args.bag),
                                                        sort_keys=False))
            print(f"wrote {args.report}")
        if args.model_out:
            Path(args.model_out).write_text(identified_urdf(est, model))
            print(f"wrote {args.model_out}")
    except (OSError, ValueError) as exc:
        print(f"robot-control identify: {exc}", file=sys.stderr)
        return 2
    return 0


def format_estimate(est, model, rec, spec, source: str, gaps: int) -> str:
    """The table the command prints: estimate, σ, relative σ per parameter, and the fit's quality."""
    lines = [f"robot {model.name}, basis '{est.basis}' ({est.inertial_size} parameters"
             + (", friction" if est.friction is not None else "") + ")",
             f"recording: {rec.t.size} states at {rec.rate:.0f} Hz over "
             f"{rec.t[-1] - rec.t[0]:.2f} s; torque from {source} (zero-order hold centred)"
             + (f"; {gaps} missing torques interpolated" if gaps else ""),
             f"filter: {spec.describe()}",
             f"samples: {est.rows // model.nq} ({est.rows} equations); condition number "
             f"{est.condition_number:.4g} (columns scaled), {est.condition_number_raw:.4g} (raw)",
             "residual σ per joint [N·m]: " + ", ".join(f"{s:.3g}" for s in est.joint_sigma),
             *est.notes,
             f"{'parameter':<28}{'estimate':>14}{'std':>12}{'std %':>9}"]
    for name, value, std, rel in zip(est.names, est.values, est.std, est.relative_std):
        rel_text = f"{rel:9.3f}" if np.isfinite(rel) and rel < 1e4 else f"{'—':>9}"
        lines.append(f"{name:<28}{value:14.6g}{std:12.3g}{rel_text}")
    return "\n".join(lines)


def report(est, model, spec, source: str, bag: str) -> dict:
    """The full result as plain data (for ``--report``)."""
    out = {
        "bag": str(bag), "robot": model.name, "basis": est.basis, "torque_source": source,
        "filter": spec.describe(), "equations": int(est.rows),
        "condition_number": est.condition_number,
        "condition_number_raw": est.condition_number_raw,
        "residual_sigma": est.joint_sigma.tolist(), "physically_consistent": est.physical,
        "parameters": [{"name": n, "estimate": float(v), "std": float(s)}
                       for n, v, s in zip(est.names, est.values, est.std)],
        "estimate": est.inertial.tolist(),
        "standard_parameters": est.theta.tolist(),
    }
    if est.friction is not None:
        out["friction"] = {"viscous": est.friction[:, 0].tolist(),
                           "coulomb": est.friction[:, 1].tolist()}
    return out


def parameter_file(est, model, bag: str) -> str:
    """ros__parameters for the controller (``/**/controller``: in any namespace): the adaptive
    laws start from the identified p̂."""
    laws = {law: {"parameter_basis": est.basis, "initial_estimate": est.inertial.tolist()}
            for law in ADAPTIVE_LAWS}
    head = (f"# Identified by robot-control identify from {bag}: robot {model.name}, basis "
            f"'{est.basis}',\n# condition number {est.condition_number:.4g}. Estimates in the "
            f"basis order: {', '.join(est.names[:est.inertial_size])}\n")
    return head + yaml.safe_dump({"/**/controller": {"ros__parameters": laws}}, sort_keys=False)


def identified_urdf(est, model) -> str:
    """URDF of the model with the identified parameters (and friction); refuses an inconsistent one."""
    from robot_control.model.robot_model import JointFriction, ModelError
    from robot_control.model.urdf_export import robot_description

    try:
        identified = model.with_inertial_parameters(est.theta, check=True)
    except ModelError as exc:
        raise ValueError(f"the estimate is not a physical model ({exc}); use --physical to write "
                         "a model") from None
    if est.friction is not None:
        for b, (viscous, coulomb) in zip(identified.bodies, est.friction):
            b.joint = replace(b.joint, friction=JointFriction(float(viscous), float(coulomb),
                                                              float(coulomb)))
    return robot_description(identified)
