"""The arm a stack drives: a description's movable joints less its tools, which are held.

A URDF from the wild often carries an end effector: the Panda's two prismatic fingers (one
mimicking the other), the Z1's ``jointGripper``, the SO-101's jaw. Those joints are not part of
the arm's chain; driven by the arm's law with gains derived for the arm, a 10⁻⁴ kg·m² jaw at its
stop is what fails first. So the stack's model is the *arm*: the joints the ``arm_joints``
parameter lists, by default every movable joint but the tools (``tool_joints``), and each tool
joint is locked as a fixed joint at its hold position (``hold_position``: zero, moved a quarter of
its range inside a limit it would sit on). A mimic joint among the arm's is refused: coupled
coordinates are not modelled, and making them independent would be a silent lie.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from robot_control.model.robot_model import ModelError, RobotModel

#: a joint whose name holds one of these words is an end effector's (not its child link's: the
#: SO-101's wrist_roll moves a link named gripper)
TOOL_WORDS = ("finger", "gripper", "jaw", "claw")
#: how far inside a limit a held joint stays (fraction of its range), as the default pose does
HOLD_MARGIN = 0.25


def hold_position(lower: float, upper: float) -> float:
    """Zero, moved HOLD_MARGIN of the range inside any limit it would be on or beyond."""
    span = upper - lower if np.isfinite(upper - lower) else 0.0
    lo = lower + HOLD_MARGIN * span if np.isfinite(lower) else -np.inf
    hi = upper - HOLD_MARGIN * span if np.isfinite(upper) else np.inf
    return float(np.clip(0.0, lo, hi))


def tool_joints(joints) -> list[str]:
    """The movable joints of an end effector, by the URDF's structure: named like a finger,
    gripper, jaw or claw, mimicking or mimicked, or below such a joint."""
    from robot_control.model.urdf import _MOVABLE

    movable = [j for j in joints if j.type in _MOVABLE]
    mimicked = {j.mimic[0] for j in movable if j.mimic is not None}
    tools = {j.name for j in movable
             if j.mimic is not None or j.name in mimicked
             or any(w in j.name.lower() for w in TOOL_WORDS)}
    child_of = {j.child: j for j in joints}
    for j in movable:  # below a tool is the tool: walk up to the root
        link = j.parent
        while link in child_of:
            if child_of[link].name in tools:
                tools.add(j.name)
                break
            link = child_of[link].parent
    return [j.name for j in movable if j.name in tools]


def arm_locks(joints, arm_joints: Sequence[str]) -> dict[str, float]:
    """Hold position of every movable joint not in ``arm_joints`` (mimics follow their master's);
    ModelError for an unknown name or a mimic joint in the arm."""
    from robot_control.model.urdf import _MOVABLE

    movable = {j.name: j for j in joints if j.type in _MOVABLE}
    unknown = [n for n in arm_joints if n not in movable]
    if unknown:
        raise ModelError(f"arm_joints: {', '.join(repr(n) for n in unknown)} is not a movable "
                         f"joint of the description (movable: {', '.join(movable)})")
    arm = set(arm_joints)
    for name in arm_joints:
        j = movable[name]
        if j.mimic is not None:
            raise ModelError(
                f"joint '{name}' mimics '{j.mimic[0]}': coupled coordinates are not modelled; "
                "leave it out of arm_joints (it is then held with its master) or make it fixed")
    locks = {n: hold_position(j.lower, j.upper) for n, j in movable.items()
             if n not in arm and j.mimic is None}
    for n, j in movable.items():
        if n not in arm and j.mimic is not None:
            master, multiplier, offset = j.mimic
            if master in arm:
                raise ModelError(f"joint '{n}' mimics arm joint '{master}': coupled coordinates "
                                 "are not modelled; add the mimic's master to the tools")
            base = locks.get(master, hold_position(movable[master].lower, movable[master].upper)
                             if master in movable else 0.0)
            locks[n] = multiplier * base + offset
    return locks


def load_arm(robot: str | Path, arm_joints: Sequence[str] = ()) -> RobotModel:
    """The model a stack drives for ``robot`` (a bundled name, a .urdf / D-H .yaml path or a
    URDF string): ``arm_joints`` (default: every movable joint but ``tool_joints``), the other
    joints held; ``model.held_joints`` maps each held joint to its position."""
    from robot_control.model.loader import load_robot, urdf_source
    from robot_control.model.model_cache import cached_load
    from robot_control.model.urdf import load_urdf, parse_urdf

    source = urdf_source(robot)
    if source is None:  # a D-H table: every row is a joint of the arm
        model = load_robot(robot)
        if arm_joints and list(arm_joints) != list(model.joint_names):
            raise ModelError(f"arm_joints: a D-H robot's joints are all its arm's "
                             f"({', '.join(model.joint_names)})")
        model.held_joints = {}
        return model
    _, _, joints = parse_urdf(source)
    if arm_joints:
        arm = list(arm_joints)
    else:
        tools = set(tool_joints(joints))
        arm = [j.name for j in joints if j.type != "fixed" and j.name not in tools
               and j.type in ("revolute", "continuous", "prismatic")]
        if not arm:
            raise ModelError("the description has no movable joint besides its tools "
                             f"({', '.join(sorted(tools)) or 'none'}): nothing to drive")
    locks = arm_locks(joints, arm)
    if not locks:
        model = load_robot(robot)
    elif isinstance(source, Path):
        variant = ";".join(f"{k}={v!r}" for k, v in sorted(locks.items()))
        model = cached_load(source, (), lambda: load_urdf(source, locked=locks), variant)
    else:
        model = load_urdf(source, locked=locks)
    model.held_joints = dict(locks)
    return model
