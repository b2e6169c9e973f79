"""The stack's own run as a scenario: what ``control.launch.yaml robot:=R controller:=L`` does.

The launch file gives each node ``config/stack.yaml``, then ``config/stack.<robot>.yaml`` (skipped
when the robot has none), then its arguments. This module reads the same files the same way and
builds the :class:`~robot_control.sim.scenario.Scenario` a lockstep run of that stack equals: the
plant's ``initial_q`` and ``physics_dt`` (its default: min(0.5 ms, 1/rate)), the trajectory
generator's sweep through ``waypoints`` and back, and the law's parameters (the file's, over
the defaults the controller node derives from the robot's model, control/tuning.py). So the
robot × law matrix (sim/matrix.py) runs offline, fast and deterministic, exactly what the
nodes run in lockstep.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from robot_control.foundation.safe_yaml import load_file
from robot_control.model.arm import load_arm
from robot_control.model.resources import share_path
from robot_control.sim.scenario import Scenario, load_scenario


def stack_files(robot: str) -> list[Path]:
    """The parameter files the launch file loads for ``robot``, in order, that exist."""
    files = [share_path("config", "stack.yaml"), share_path("config", f"stack.{robot}.yaml")]
    return [f for f in files if f.is_file()]


def _flatten(values: dict, prefix: str = "") -> dict:
    """Nested parameter mappings as ROS names them: {a: {b: 1}} -> {"a.b": 1}."""
    out = {}
    for key, value in values.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flatten(value, name + "."))
        else:
            out[name] = value
    return out


def stack_parameters(robot: str) -> dict[str, dict]:
    """Node name -> its parameters (dotted names) from the stack's files, later files winning."""
    nodes: dict[str, dict] = {}
    for path in stack_files(robot):
        doc = load_file(path) or {}
        for key, section in doc.items():
            name = key.rsplit("/", 1)[-1]  # /plant, /**/plant (any namespace): the node's name
            nodes.setdefault(name, {}).update(_flatten(section.get("ros__parameters", {})))
    return nodes


def law_parameters(params: dict, law: str) -> dict:
    """The ``law.*`` entries of the controller's parameters, without the prefix."""
    return {k[len(law) + 1:]: v for k, v in params.items() if k.startswith(law + ".")}


def stack_scenario(robot: str, law: str, rate: float, duration: float | None = None,
                   overrides: dict | None = None, arm_joints: list[str] | None = None) -> Scenario:
    """The stack's run of ``law`` on ``robot`` at ``rate`` as a scenario.

    ``duration`` defaults to one cycle of the sweep (out through the waypoints and back);
    ``overrides`` are extra controller parameters (``scheme`` for sliding_mode, …) for the law;
    ``arm_joints`` the nodes' parameter of that name (model/arm.py; default: derived).
    """
    from robot_control.control.registry import create
    from robot_control.control.tuning import default_initial_pose, derived_law_parameters
    from robot_control.sim.step_size import default_physics_dt
    from robot_control.trajectory.joint_trajectory import JointTrajectory

    model = load_arm(robot, arm_joints or [])
    nodes = stack_parameters(robot)
    plant, gen, ctrl = (nodes.get(k, {}) for k in ("plant", "trajectory_generator", "controller"))
    q0 = np.asarray(plant.get("initial_q", default_initial_pose(model)), dtype=float)
    params = derived_law_parameters(create(law), model, rate)  # at the pose the node uses
    params.update(law_parameters(ctrl, law))
    params.update(overrides or {})
    segment = float(gen.get("segment_duration", 1.5))
    waypoints = np.asarray(gen.get("waypoints", []), dtype=float).reshape(-1, model.nq)
    points = sweep_points(q0, waypoints)
    sweep = JointTrajectory.sweep(points, segment, model.lower, model.upper, model.velocity_limit)
    durations = np.diff(sweep.times_from_start).tolist()
    doc = {
        "robot": model if model.held_joints else robot,
        "duration": duration if duration is not None else float(np.sum(durations)),
        "rate": rate,
        "physics_dt": float(plant.get("physics_dt", default_physics_dt(model, q0, rate))),
        "initial": {"q": q0.tolist()},
        "trajectory": {"type": "quintic", "waypoints": sweep.positions.tolist(),
                       "durations": durations},
        "controller": {"type": law, "params": {k: _plain(v) for k, v in params.items()}},
    }
    sc = load_scenario(doc)
    sc.name = f"stack.{robot}.{law}"
    return sc


def sweep_points(q0: np.ndarray, waypoints: np.ndarray) -> list[np.ndarray]:
    """The trajectory generator's sweep (nodes/trajectory_node.py): from q0 through the
    waypoints (±0.3 rad about q0 when there are none) and back (JointTrajectory.sweep keeps it
    inside the limits)."""
    points = [q0, *waypoints] if len(waypoints) else [q0, q0 + 0.3, q0 - 0.3]
    return points + points[-2::-1]


def _plain(value):
    return value.tolist() if isinstance(value, np.ndarray) else value
