"""A cell: m arms on a common base B holding one rigid object O (Huo §3.13), and its models.

A cell file (``config/cells/<name>.yaml``) names the arms, where each stands in B, where each
grasps the object (the arm's end-effector frame, placed in O), the object's inertia in O and the
contact point E (frame ``contact``, placed in O)::

    name: two_puma560
    arms:
      - {name: arm1, robot: puma560, base: {xyz: [0, -0.85, 0], rpy: [0, 0, pi/2]},
         grasp: {xyz: [0, -0.25, 0.1], rpy: [pi, 0, 0]}}        # frame: end effector by default
      - {name: arm2, ...}
    object: {mass: 4.0, com: [0, 0, 0.05], inertia: [0.1, 0.01, 0.1, 0, 0, 0]}
    contact: {xyz: [0, 0, 0]}

Three models are built from it:

- ``arms_model``: every arm in one tree on the common base, names prefixed ``<arm>_`` — the
  joints a cell controller reads and drives (q = [q¹; …; qᵐ]);
- ``augmented_arm_model``: arm i alone holding the share M_iᴼ/Mᴼ of the object rigidly on its
  last link (Huo 3-148, 3-154), with frames ``object`` (O) and ``contact`` (E) on that link —
  the model of robot i in the decomposition H̲ = ΣH̲ⁱ, N̲ = ΣN̲ⁱ (3-156);
- ``closed_chain_model``: the arms plus the object as a free body (three prismatic and three
  revolute massless joints, X = (x, y, z, yaw, pitch, roll) of O in B), with one six-row loop
  closure per grasp (Kim §3): the whole cell as one constrained system, which the plant
  integrates.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from robot_control.foundation.safe_yaml import load_file
from robot_control.foundation.spatial import inverse_transform, rpy_to_matrix, transform_inertia
from robot_control.model.dh import _placement
from robot_control.model.expressions import read_constants
from robot_control.model.loader import load_robot
from robot_control.model.resources import share_path
from robot_control.model.robot_model import Body, Frame, Inertia, Joint, ModelError, RobotModel

Array = np.ndarray

_TOP_KEYS = ("name", "constants", "arms", "object", "contact", "description")
_ARM_KEYS = ("name", "robot", "base", "grasp", "frame")
_OBJECT_KEYS = ("mass", "com", "inertia")
#: joints of the object's free motion in the closed-chain model, in tree order
OBJECT_JOINTS = ("object_x", "object_y", "object_z", "object_yaw", "object_pitch", "object_roll")


@dataclass(frozen=True)
class CellArm:
    """One arm of a cell: its model, its base in B, and its grasp (end-effector frame in O)."""

    name: str
    model: RobotModel
    base: Array
    grasp: Array
    frame: str


@dataclass(frozen=True)
class Cell:
    """m arms on a common base holding one object with a contact point E."""

    name: str
    arms: tuple[CellArm, ...]
    object_inertia: Inertia
    contact: Array
    gravity: Array
    #: the file it was read from (resolved path), "" when it came from a mapping
    source: str = ""

    @property
    def m(self) -> int:
        return len(self.arms)

    @property
    def arm_names(self) -> list[str]:
        return [a.name for a in self.arms]

    def joint_slices(self) -> list[slice]:
        """Where each arm's joints sit in the cell's joint vector q = [q¹; …; qᵐ]."""
        out, start = [], 0
        for arm in self.arms:
            out.append(slice(start, start + arm.model.nq))
            start += arm.model.nq
        return out

    @property
    def nq(self) -> int:
        return sum(a.model.nq for a in self.arms)


# ------------------------------------------------------------------------------------ loading
def resolve_cell_path(name_or_path: str | Path) -> Path:
    """A cell file path, or the name of a bundled one in config/cells/."""
    path = Path(name_or_path)
    if path.is_file():
        return path
    bundled = share_path("config", "cells", f"{path.stem}.yaml")
    if bundled.is_file():
        return bundled
    raise ModelError(f"no cell file '{name_or_path}' (nor a bundled one of that name)")


def load_cell(source: str | Path | Mapping) -> Cell:
    """Read and validate a cell from a YAML file, a bundled cell name, or a mapping."""
    if isinstance(source, Mapping):
        spec, where, origin = dict(source), "cell", ""
    else:
        path = resolve_cell_path(source)
        spec = load_file(path, ModelError)
        where, origin = str(path), str(path.resolve())
        if not isinstance(spec, Mapping):
            raise ModelError(f"{where}: a cell must be a YAML mapping")
    unknown = set(spec) - set(_TOP_KEYS)
    if unknown:
        raise ModelError(f"{where}: unknown keys {sorted(unknown)} (allowed: {list(_TOP_KEYS)})")
    constants = read_constants(spec.get("constants"), where)
    arms_spec = spec.get("arms")
    if not isinstance(arms_spec, list) or len(arms_spec) < 2:
        raise ModelError(f"{where}: 'arms' must list at least two arms (Huo 3.13: m > 1)")
    arms = tuple(_arm(a, k, constants, where) for k, a in enumerate(arms_spec))
    names = [a.name for a in arms]
    if len(set(names)) != len(names):
        raise ModelError(f"{where}: arm names must be unique, got {names}")
    gravity = arms[0].model.gravity
    for arm in arms[1:]:
        if not np.allclose(arm.model.gravity, gravity):
            raise ModelError(f"{where}: arms '{arms[0].name}' and '{arm.name}' disagree on gravity")
    obj = spec.get("object")
    if not isinstance(obj, Mapping):
        raise ModelError(f"{where}: 'object' must be a mapping with mass, com, inertia")
    bad = set(obj) - set(_OBJECT_KEYS)
    if bad:
        raise ModelError(f"{where}: object has unknown keys {sorted(bad)}")
    inertia = _object_inertia(obj, constants, f"{where}: object")
    contact = _placement(spec.get("contact", {}), constants, f"{where}: key 'contact'", ())
    return Cell(str(spec.get("name", "cell")), arms, inertia, contact, gravity.copy(), origin)


def _arm(spec: object, k: int, constants, where: str) -> CellArm:
    w = f"{where}: arms[{k}]"
    if not isinstance(spec, Mapping):
        raise ModelError(f"{w}: expected a mapping with name, robot, base, grasp")
    bad = set(spec) - set(_ARM_KEYS)
    if bad:
        raise ModelError(f"{w}: unknown keys {sorted(bad)} (allowed: {list(_ARM_KEYS)})")
    for key in ("name", "robot", "grasp"):
        if key not in spec:
            raise ModelError(f"{w}: needs '{key}'")
    name = str(spec["name"])
    if not name.replace("_", "").isalnum():
        raise ModelError(f"{w}: name must be an identifier (it prefixes joint names), got '{name}'")
    model = load_robot(str(spec["robot"]))
    frame = str(spec.get("frame", model.end_effector))
    try:
        model.frame_placement(frame)
    except KeyError as exc:
        raise ModelError(f"{w}: {exc.args[0]}") from None
    base = _placement(spec.get("base", {}), constants, f"{w}: key 'base'", ())
    grasp = _placement(spec["grasp"], constants, f"{w}: key 'grasp'", ())
    return CellArm(name, model, base, grasp, frame)


def _object_inertia(spec: Mapping, constants, w: str) -> Inertia:
    from robot_control.model.dh import _inertia

    inertia = _inertia({"mass": spec.get("mass", 0.0), "com": spec.get("com", [0, 0, 0]),
                        "inertia": spec.get("inertia", [0, 0, 0, 0, 0, 0])}, constants, w)
    if not inertia.mass > 0.0:
        raise ModelError(f"{w}: mass must be > 0, got {inertia.mass}")
    return inertia


# ------------------------------------------------------------------------------------- models
def _placed_bodies(arm: CellArm, prefix: str, offset: int) -> tuple[list[Body], dict[str, Frame]]:
    """The arm's bodies moved onto the cell base (root joints after ``arm.base``), renamed."""
    bodies = []
    for b in arm.model.bodies:
        joint = replace(b.joint, name=prefix + b.joint.name,
                        origin=(arm.base @ b.joint.origin) if b.parent < 0 else b.joint.origin)
        bodies.append(Body(prefix + b.name, b.parent + offset if b.parent >= 0 else -1, joint,
                           b.inertia))
    frames = {}
    for f in arm.model.frames.values():
        placement = arm.base @ f.placement if f.body < 0 else f.placement
        frames[prefix + f.name] = Frame(prefix + f.name, f.body + offset if f.body >= 0 else -1,
                                        placement)
    body, X = arm.model.frame_placement(arm.frame)
    frames[f"{prefix}ee"] = Frame(f"{prefix}ee", body + offset if body >= 0 else -1,
                                  arm.base @ X if body < 0 else X)
    return bodies, frames


def arms_model(cell: Cell) -> RobotModel:
    """All arms in one tree on the common base; joints, bodies, frames named ``<arm>_<name>``.

    Frame ``<arm>_ee`` is the arm's grasping frame. No object: this is what a cell controller
    drives (its dynamics are block-diagonal, one block per arm).
    """
    bodies: list[Body] = []
    frames: dict[str, Frame] = {"base": Frame("base", -1, np.eye(4))}
    for arm in cell.arms:
        b, f = _placed_bodies(arm, f"{arm.name}_", len(bodies))
        bodies += b
        frames.update(f)
    model = RobotModel(cell.name, bodies, cell.gravity, frames)
    model.cell = cell  # what it was built from: a law configured on it need not read the file again
    return model


def object_in_grasp_body(arm: CellArm) -> tuple[int, Array]:
    """(body, placement of O in that body) of an arm holding the object at its grasp."""
    body, X = arm.model.frame_placement(arm.frame)
    return body, X @ inverse_transform(arm.grasp)


def augmented_arm_model(cell: Cell, i: int, share: float) -> RobotModel:
    """Arm i with ``share`` = M_iᴼ/Mᴼ of the object fixed to its last link (Huo 3-148, 3-154).

    J̃₆ⁱ = J₆ⁱ + (M_iᴼ/Mᴼ) ⁶A_O Jᴼ ⁶A_Oᵀ, i.e. the share's spatial inertia moved into the link's
    frame and added to it; frames ``object`` (O) and ``contact`` (E) are on that link.
    """
    arm = cell.arms[i]
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"object share of arm '{arm.name}' must be in [0, 1], got {share}")
    bodies, frames = _placed_bodies(arm, "", 0)
    body, T_bO = object_in_grasp_body(arm)
    obj = cell.object_inertia
    m, c, Ic = transform_inertia(share * obj.mass, obj.com, share * obj.inertia_com, T_bO)
    held = bodies[body].inertia + Inertia(m, c, Ic)
    bodies[body] = replace(bodies[body], inertia=held)
    frames["object"] = Frame("object", body, T_bO)
    frames["contact"] = Frame("contact", body, T_bO @ cell.contact)
    return RobotModel(f"{cell.name}_{arm.name}", bodies, cell.gravity, frames)


def _object_chain(cell: Cell, offset: int) -> list[Body]:
    """Six massless joints (x, y, z along B's axes; yaw, pitch, roll) carrying the object last."""
    unit = np.eye(3)
    bodies = []
    for k, name in enumerate(OBJECT_JOINTS):
        if k < 3:
            joint_type, screw = "prismatic", np.concatenate([np.zeros(3), unit[k]])
        else:
            axis = unit[(2, 1, 0)[k - 3]]  # R = Rz(yaw) Ry(pitch) Rx(roll), URDF's rpy
            joint_type, screw = "revolute", np.concatenate([axis, np.zeros(3)])
        inertia = cell.object_inertia if k == 5 else Inertia.zero()
        parent = -1 if k == 0 else offset + k - 1
        body_name = "object" if k == 5 else name + "_link"
        bodies.append(Body(body_name, parent, Joint(name, joint_type, screw, np.eye(4)), inertia))
    return bodies


def closed_chain_model(cell: Cell) -> RobotModel:
    """Arms plus the object as a free body: the cell's tree before its loops are closed (Kim §3).

    Coordinates: the arms' joints in cell order, then X = (x, y, z, yaw, pitch, roll) of O.
    Frames: ``<arm>_ee`` (grasping frame), ``grasp_<arm>`` (its place on the object), ``object``,
    ``object_com`` and ``contact`` (E). sim/cell.py's ``grasp_constraints`` closes its loops.
    """
    arms = arms_model(cell)
    bodies = list(arms.bodies)
    frames = dict(arms.frames)
    bodies += _object_chain(cell, len(bodies))
    obj = len(bodies) - 1
    for arm in cell.arms:
        frames[f"grasp_{arm.name}"] = Frame(f"grasp_{arm.name}", obj, arm.grasp)
    frames["object"] = Frame("object", obj, np.eye(4))
    com = np.eye(4)
    com[:3, 3] = cell.object_inertia.com
    frames["object_com"] = Frame("object_com", obj, com)
    frames["contact"] = Frame("contact", obj, cell.contact)
    return RobotModel(f"{cell.name}_closed", bodies, cell.gravity, frames)


def object_coordinates(pose: Array) -> Array:
    """X = (x, y, z, yaw, pitch, roll) of a placement of O (inverse of R = Rz Ry Rx)."""
    R = np.asarray(pose)[:3, :3]
    pitch = float(np.arcsin(np.clip(-R[2, 0], -1.0, 1.0)))
    yaw = float(np.arctan2(R[1, 0], R[0, 0]))
    roll = float(np.arctan2(R[2, 1], R[2, 2]))
    X = np.concatenate([np.asarray(pose)[:3, 3], [yaw, pitch, roll]])
    if not np.allclose(rpy_to_matrix([roll, pitch, yaw]), R, atol=1e-9):
        raise ValueError("object orientation at pitch ±90° has no unique yaw/roll")
    return X


def share_vector(values, m: int, name: str = "load_shares") -> Array:
    """Shares M_iᴼ/Mᴼ per arm: non-negative and summing to one (empty: equal shares)."""
    s = np.asarray(values, dtype=float).ravel()
    if s.size == 0:
        return np.full(m, 1.0 / m)
    if s.shape != (m,) or np.any(s < 0.0) or not np.all(np.isfinite(s)):
        raise ValueError(f"{name} must be {m} non-negative numbers, got {list(s)}")
    if abs(s.sum() - 1.0) > 1e-9:
        raise ValueError(f"{name} must sum to 1 (Mᴼ = Σ M_iᴼ), got {s.sum()}")
    return s


__all__ = [
    "OBJECT_JOINTS", "Cell", "CellArm", "arms_model", "augmented_arm_model",
    "closed_chain_model", "load_cell", "object_coordinates",
    "object_in_grasp_body", "resolve_cell_path", "share_vector",
]
