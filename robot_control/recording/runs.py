"""The time series of a run for ``robot-control plot``: from a bag (live or offline, read through
the topics of the bus contract) or from the JSON ``simulate --out`` writes.

From a bag: q and q̇ from /joint_states (effort: the applied τ), q_d from /joint_reference, e and
the commanded τ from /controller/state (else τ from /joint_command, e from q_d interpolated at the
state stamps; without /joint_reference, q_d = q + e at the controller's stamps), the contact force
from /wrench, the effort limits and joint types from the URDF on /robot_description, and the
controller's law (each one it ran, in order) from its /diagnostics heartbeat. Times are header
stamps, relative to the earliest one.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from robot_control.bus.ros_args import namespace_prefix
from robot_control.model import load_robot
from robot_control.model.robot_model import PRISMATIC, ModelError
from robot_control.recording import bag
from robot_control.sim.report import Run, run_from_series

TOPICS = ("/joint_states", "/joint_reference", "/joint_command", "/controller/state", "/wrench",
          "/robot_description", "/diagnostics")
CONTROLLER_ROLE = ": controller"  # the controller node's DiagnosticStatus is "<fqn>: controller"


def load_run(source: str | Path, robot: str | None = None, namespace: str = "/") -> Run:
    """A Run from a rosbag2 directory (of the stack in ``namespace``) or a ``simulate --out``
    JSON file."""
    source = Path(source)
    if source.is_dir():
        return run_from_bag(source, robot, namespace)
    if source.suffix == ".json" and source.is_file():
        return run_from_json(source, robot)
    raise bag.BagError(f"{source} is neither a rosbag2 directory nor a simulate --out JSON file")


def _stamp(msg) -> float:
    return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9


def _joint_series(msgs: list, field: str) -> tuple[np.ndarray, np.ndarray]:
    """(stamps, one row per message) of a JointState field (messages lacking it are left out)."""
    rows = [(_stamp(m), getattr(m, field)) for m in msgs if len(getattr(m, field))]
    if not rows:
        return np.empty(0), np.empty((0, 0))
    return np.array([t for t, _ in rows]), np.array([v for _, v in rows], dtype=float)


def _model(source: str | None):
    """The robot model named by a bundled name, a file or a URDF string; None if unavailable."""
    if source is None:
        return None
    try:
        return load_robot(source)
    except (ModelError, OSError) as exc:
        print(f"no effort limits: {exc}", file=sys.stderr)
        return None


def _effort_limit(model, joints: list[str]) -> np.ndarray | None:
    if model is None:
        return None
    limits = dict(zip(model.joint_names, model.effort_limit))
    return np.array([limits.get(name, np.inf) for name in joints])


def _prismatic(model, joints: list[str]) -> list[bool] | None:
    """Which of the joints are prismatic (None without a model, or if it lacks one of them)."""
    if model is None or not set(joints) <= set(model.joint_names):
        return None
    kind = dict(zip(model.joint_names, (int(c) == PRISMATIC for c in model.joint_type)))
    return [kind[name] for name in joints]


def _laws(diagnostics: list) -> list[str]:
    """The laws the controller reported running, in order, each once per stretch."""
    out: list[str] = []
    for msg in diagnostics:
        for status in msg.status:
            if status.name.endswith(CONTROLLER_ROLE):
                law = next((kv.value for kv in status.values if kv.key == "law"), None)
                if law and (not out or out[-1] != law):
                    out.append(law)
    return out


def _decoded(path: Path, prefix: str = "") -> dict[str, list]:
    """The contract topics' messages by their names without the stack's namespace ``prefix``."""
    out: dict[str, list] = {topic: [] for topic in TOPICS}
    for msg in bag.read_messages(path, [prefix + topic for topic in TOPICS]):
        out[msg.topic[len(prefix):]].append(bag.decode(msg))
    return out


def run_from_bag(path: str | Path, robot: str | None = None, namespace: str = "/") -> Run:
    """A Run from the contract topics of a bag (see the module docstring), those of the stack
    in ``namespace``."""
    path = Path(path)
    prefix = namespace_prefix(namespace)
    topics = _decoded(path, prefix)
    states, refs = topics["/joint_states"], topics["/joint_reference"]
    ctrl, cmds, wrenches = topics["/controller/state"], topics["/joint_command"], topics["/wrench"]
    named = states or ctrl or cmds
    if not named and not refs:
        raise bag.BagError(f"{path} holds none of {prefix}/joint_states, {prefix}/joint_reference, "
                           f"{prefix}/controller/state, {prefix}/joint_command: nothing to plot")
    joints = list(named[0].name) if named else list(refs[0].joint_names)
    series = {}
    if states:
        series["position"] = _joint_series(states, "position")
        series["applied"] = _joint_series(states, "effort")
    if states:
        series["velocity"] = _joint_series(states, "velocity")
    if refs:
        series["reference"] = (np.array([_stamp(m) for m in refs]),
                               np.array([m.points[0].positions for m in refs if m.points]))
    if ctrl:
        series["error"] = _joint_series(ctrl, "position")
        series["command"] = _joint_series(ctrl, "effort")
        if states and not refs and len(series["error"][0]) and len(series["position"][0]):
            t, q = series["position"]
            te, e = series["error"]
            series["reference"] = (te, e + np.column_stack([np.interp(te, t, q[:, j])
                                                            for j in range(q.shape[1])]))
    elif states and refs:
        t, q = series["position"]
        tr, qr = series["reference"]
        series["error"] = (t, np.column_stack([np.interp(t, tr, qr[:, j]) - q[:, j]
                                               for j in range(q.shape[1])]))
    if cmds and "command" not in series:
        series["command"] = _joint_series(cmds, "effort")
    if wrenches:
        series["force"] = (np.array([_stamp(m) for m in wrenches]),
                           np.array([[m.wrench.force.x, m.wrench.force.y, m.wrench.force.z]
                                     for m in wrenches]))
    series = {k: v for k, v in series.items() if len(v[0])}
    _warn_non_finite(series, {"position": "/joint_states position",
                              "applied": "/joint_states effort",
                              "velocity": "/joint_states velocity",
                              "reference": "/joint_reference positions",
                              "command": "/controller/state effort" if ctrl
                              else "/joint_command effort",
                              "error": "/controller/state position" if ctrl else None,
                              "force": "/wrench force"})
    t0 = min(v[0][0] for v in series.values())
    description = topics["/robot_description"]
    model = _model(robot or (description[-1].data if description else None))
    span = max(v[0][-1] for v in series.values()) - t0
    laws = _laws(topics["/diagnostics"])
    ran = " on ".join(part for part in (" → ".join(laws), model.name if model else "") if part)
    title = f"{path.name}: {ran + ', ' if ran else ''}{span:.2f} s recorded"
    return Run(title=title, joints=joints, effort_limit=_effort_limit(model, joints),
               prismatic=_prismatic(model, joints),
               **{k: (t - t0, v) for k, (t, v) in series.items()})


def _warn_non_finite(series: dict, fields: dict[str, str | None]) -> None:
    """One stderr line per recorded field holding NaN or ±inf: its topic, how many messages and
    the stamp of the first (they are drawn as gaps)."""
    for key, field in fields.items():
        if field is None or key not in series:
            continue
        t, values = series[key]
        bad = ~np.isfinite(values).reshape(len(values), -1).all(axis=1)
        if bad.any():
            first = t[min(int(np.argmax(bad)), len(t) - 1)]
            print(f"warning: {field} is NaN or infinite in {int(bad.sum())} of {len(bad)} "
                  f"messages, the first stamped t = {first:.9f} s (drawn as gaps)", file=sys.stderr)


def run_from_json(path: str | Path, robot: str | None = None) -> Run:
    """A Run from the JSON of ``simulate --out`` (summary and series)."""
    doc = json.loads(Path(path).read_text())
    if "series" not in doc or "summary" not in doc:
        raise bag.BagError(f"{path} has no time series (write one with simulate --out, or "
                           "record a bag)")
    summary = doc["summary"]
    joints = list(summary["joints"])
    model = _model(robot or summary["robot"])
    return run_from_series(summary, doc["series"], _effort_limit(model, joints),
                           _prismatic(model, joints), _surface_normal(summary))


def _surface_normal(summary: dict) -> np.ndarray | None:
    """The contact surface's unit normal of a bundled scenario (None: free space, or a scenario
    file this installation does not hold)."""
    from robot_control.sim.report import scenario_context
    from robot_control.sim.scenario import load_scenario, resolve_scenario_path

    try:
        return scenario_context(load_scenario(resolve_scenario_path(summary["scenario"])))["normal"]
    except (OSError, ValueError, KeyError):
        return None
