"""URDF loader: a file path or a ``robot_description`` string → RobotModel.

Fixed joints are merged into their parent body (their links stay reachable as frames).
Mimic joints are kept as independent coordinates, as Pinocchio's parser does by default, when
the whole tree is loaded; an arm model (``arm_joints`` given: model/arm.py) locks every other
movable joint — fingers, grippers and the joints that mimic them — at a hold position, as a fixed
joint, and refuses a mimic joint among the arm's: coupled coordinates are not modelled.
A tree is required: a joint whose link is its own parent, joints that form a cycle, and joints
not connected to the root link are refused, by name, never silently left out.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from robot_control.foundation.safe_yaml import read_text
from robot_control.foundation.spatial import rpy_to_matrix, transform, transform_inertia
from robot_control.model.robot_model import (
    Body,
    Frame,
    Inertia,
    Joint,
    JointFriction,
    ModelError,
    RobotModel,
)

_MOVABLE = ("revolute", "continuous", "prismatic")
#: largest URDF read (file or robot_description string): a 1000-link chain is about 0.5 MB;
#: XML entity expansion ("billion laughs") is bounded by expat itself
MAX_URDF_BYTES = 16 * 1024 * 1024


@dataclass
class _Link:
    name: str
    inertia: Inertia
    has_inertial: bool


@dataclass
class _UJoint:
    name: str
    type: str
    parent: str
    child: str
    origin: np.ndarray
    axis: np.ndarray
    lower: float = -np.inf
    upper: float = np.inf
    velocity: float = np.inf
    effort: float = np.inf
    friction: JointFriction = field(default_factory=JointFriction)
    mimic: tuple[str, float, float] | None = None  # (master joint, multiplier, offset)


def _floats(text: str | None, n: int, where: str, default: str | None = None) -> np.ndarray:
    if text is None:
        if default is None:
            raise ModelError(f"{where}: missing attribute")
        text = default
    try:
        values = np.array([float(x) for x in text.split()])
    except ValueError as exc:
        raise ModelError(f"{where}: '{text}' is not a list of numbers") from exc
    if values.shape != (n,) or not np.all(np.isfinite(values)):
        raise ModelError(f"{where}: expected {n} finite numbers, got '{text}'")
    return values


def _number(el: ET.Element, attr: str, where: str, default: float | None = None) -> float:
    text = el.get(attr)
    if text is None:
        if default is None:
            raise ModelError(f"{where}: missing attribute '{attr}'")
        return default
    try:
        return float(text)
    except ValueError as exc:
        raise ModelError(f"{where}: attribute {attr}='{text}' is not a number") from exc


def _origin(el: ET.Element | None, where: str) -> np.ndarray:
    if el is None:
        return np.eye(4)
    xyz = _floats(el.get("xyz"), 3, f"{where} <origin xyz>", "0 0 0")
    rpy = _floats(el.get("rpy"), 3, f"{where} <origin rpy>", "0 0 0")
    return transform(rpy_to_matrix(rpy), xyz)


def _parse_link(el: ET.Element) -> _Link:
    name = el.get("name")
    if not name:
        raise ModelError("<link> without a name")
    where = f"link '{name}'"
    inertial = el.find("inertial")
    if inertial is None:
        return _Link(name, Inertia.zero(), False)
    mass_el = inertial.find("mass")
    if mass_el is None:
        raise ModelError(f"{where}: <inertial> has no <mass>")
    mass = _number(mass_el, "value", f"{where} <mass>")
    if mass < 0.0:
        raise ModelError(f"{where}: negative mass {mass}")
    T = _origin(inertial.find("origin"), f"{where} <inertial>")
    I_el = inertial.find("inertia")
    if I_el is None:
        raise ModelError(f"{where}: <inertial> has no <inertia>")
    w = f"{where} <inertia>"
    ixx, ixy, ixz = (_number(I_el, a, w, 0.0) for a in ("ixx", "ixy", "ixz"))
    iyy, iyz, izz = (_number(I_el, a, w, 0.0) for a in ("iyy", "iyz", "izz"))
    I_local = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    m, c, Ic = transform_inertia(mass, np.zeros(3), I_local, T)
    return _Link(name, Inertia(m, c, Ic), True)


def _parse_joint(el: ET.Element) -> _UJoint:
    name = el.get("name")
    if not name:
        raise ModelError("<joint> without a name")
    where = f"joint '{name}'"
    jtype = el.get("type")
    if jtype is None:
        raise ModelError(f"{where}: missing type")
    parent_el, child_el = el.find("parent"), el.find("child")
    if parent_el is None or parent_el.get("link") is None:
        raise ModelError(f"{where}: missing <parent link=...>")
    if child_el is None or child_el.get("link") is None:
        raise ModelError(f"{where}: missing <child link=...>")
    origin = _origin(el.find("origin"), where)
    axis_el = el.find("axis")
    axis = _floats(
        axis_el.get("xyz") if axis_el is not None else None, 3, f"{where} <axis>", "1 0 0"
    )
    j = _UJoint(name, jtype, parent_el.get("link"), child_el.get("link"), origin, axis)
    if jtype in _MOVABLE:
        norm = np.linalg.norm(axis)
        if norm < 1e-12:
            raise ModelError(f"{where}: zero axis")
        j.axis = axis / norm
    limit = el.find("limit")
    if limit is not None:
        w = f"{where} <limit>"
        if jtype != "continuous":
            j.lower = _number(limit, "lower", w, -np.inf if jtype == "fixed" else 0.0)
            j.upper = _number(limit, "upper", w, np.inf if jtype == "fixed" else 0.0)
            if j.lower == j.upper == 0.0:
                j.lower, j.upper = -np.inf, np.inf
        j.velocity = _number(limit, "velocity", w, np.inf) or np.inf
        j.effort = _number(limit, "effort", w, np.inf) or np.inf
    dyn = el.find("dynamics")
    if dyn is not None:
        w = f"{where} <dynamics>"
        coulomb = _number(dyn, "friction", w, 0.0)
        j.friction = JointFriction(viscous=_number(dyn, "damping", w, 0.0), coulomb=coulomb,
                                   static=coulomb)
    mimic = el.find("mimic")
    if mimic is not None and jtype in _MOVABLE:
        w = f"{where} <mimic>"
        master = mimic.get("joint")
        if not master:
            raise ModelError(f"{w}: missing joint")
        j.mimic = (master, _number(mimic, "multiplier", w, 1.0), _number(mimic, "offset", w, 0.0))
    return j


def load_urdf(source: str | Path, gravity=(0.0, 0.0, -9.81),
              locked: dict[str, float] | None = None) -> RobotModel:
    """Build a RobotModel from a URDF file path or a URDF XML string (``robot_description``);
    the ``locked`` joints become fixed at the given position (an arm model: model/arm.py)."""
    name, links, joints = parse_urdf(source)
    return _build_tree(name, links, joints, np.asarray(gravity, float), locked or {})


def parse_urdf(source: str | Path) -> tuple[str, dict[str, _Link], list[_UJoint]]:
    """The robot's name, links and joints of a URDF file path or XML string, each checked."""
    text = str(source)
    if text.lstrip().startswith("<"):
        xml, origin_name = text, "robot_description"
    else:
        path = Path(source)
        if not path.is_file():
            raise FileNotFoundError(f"URDF file not found: {path}")
        xml, origin_name = read_text(path, MAX_URDF_BYTES, ModelError, "URDF"), str(path)
    if len(xml) > MAX_URDF_BYTES:
        raise ModelError(f"{origin_name}: longer than the {MAX_URDF_BYTES >> 20} MiB a URDF may be")
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as exc:
        raise ModelError(f"{origin_name}: not well-formed XML ({exc})") from exc
    if root.tag != "robot":
        raise ModelError(f"{origin_name}: root element is <{root.tag}>, expected <robot>")
    links: dict[str, _Link] = {}
    for el in root.findall("link"):
        link = _parse_link(el)
        if link.name in links:
            raise ModelError(f"link '{link.name}' is defined twice")
        links[link.name] = link
    joints = [_parse_joint(el) for el in root.findall("joint")]
    return root.get("name", "robot"), links, joints


def joint_motion(j: _UJoint, position: float) -> np.ndarray:
    """The 4 × 4 motion of joint ``j`` at ``position``: a rotation about its axis (Rodrigues)
    or a translation along it."""
    T = np.eye(4)
    if j.type == "prismatic":
        T[:3, 3] = j.axis * position
        return T
    k = np.array([[0.0, -j.axis[2], j.axis[1]], [j.axis[2], 0.0, -j.axis[0]],
                  [-j.axis[1], j.axis[0], 0.0]])
    T[:3, :3] = np.eye(3) + np.sin(position) * k + (1.0 - np.cos(position)) * (k @ k)
    return T


def _build_tree(name: str, links: dict[str, _Link], joints: list[_UJoint], gravity,
                locked: dict[str, float]) -> RobotModel:
    children: dict[str, list[_UJoint]] = {n: [] for n in links}
    child_of: dict[str, _UJoint] = {}
    for j in joints:
        for role, link in (("parent", j.parent), ("child", j.child)):
            if link not in links:
                raise ModelError(f"joint '{j.name}': {role} link '{link}' is not defined")
        if j.parent == j.child:
            raise ModelError(f"joint '{j.name}': link '{j.child}' is its own parent")
        if j.child in child_of:
            raise ModelError(f"link '{j.child}' is the child of two joints")
        if j.type not in _MOVABLE and j.type != "fixed":
            raise ModelError(
                f"joint '{j.name}': unsupported type '{j.type}' "
                "(fixed-base manipulators: revolute, continuous, prismatic, fixed)"
            )
        child_of[j.child] = j
        children[j.parent].append(j)
    roots = [n for n in links if n not in child_of]
    if len(roots) != 1:
        raise ModelError(f"URDF must have exactly one root link, found {roots or 'none (a cycle)'}")

    bodies: list[Body] = []
    frames: dict[str, Frame] = {roots[0]: Frame(roots[0], -1, np.eye(4))}

    # Depth-first, joints in document order (the coordinate order Pinocchio uses too), with an
    # explicit stack rather than recursion so a chain of any length loads.
    pending = [(j, -1, np.eye(4)) for j in reversed(children[roots[0]])]
    while pending:
        j, body, T_body_link = pending.pop()
        T = T_body_link @ j.origin
        if j.name in locked:
            T = T @ joint_motion(j, locked[j.name])
        if j.type == "fixed" or j.name in locked:
            frames[j.child] = Frame(j.child, body, T)
            child = links[j.child]
            if body >= 0 and child.has_inertial:
                m, c, Ic = transform_inertia(
                    child.inertia.mass, child.inertia.com, child.inertia.inertia_com, T
                )
                bodies[body].inertia = bodies[body].inertia + Inertia(m, c, Ic)
            pending.extend((jc, body, T) for jc in reversed(children[j.child]))
            continue
        screw = np.zeros(6)
        screw[3 if j.type == "prismatic" else 0 :][:3] = j.axis
        joint = Joint(j.name, j.type, screw, T, j.lower, j.upper, j.velocity, j.effort,
                      j.friction)
        bodies.append(Body(j.child, body, joint, links[j.child].inertia))
        pending.extend((jc, len(bodies) - 1, np.eye(4)) for jc in reversed(children[j.child]))

    _check_connected(joints, child_of, set(frames) | {b.name for b in bodies}, roots[0])
    return RobotModel(name, bodies, gravity=gravity, frames=frames, base_name=roots[0])


def _check_connected(joints: list[_UJoint], child_of: dict[str, _UJoint],
                     reached: set[str], root: str) -> None:
    """ModelError naming the joints the depth-first visit from the root did not reach: a cycle
    (every link has one parent, so a link that cannot reach the root lies on or below one)."""
    lost = [j for j in joints if j.child not in reached]
    if not lost:
        return
    link, path = lost[0].child, []
    while link not in path:  # parent pointers from an unreached link must come round
        path.append(link)
        link = child_of[link].parent
    loop = path[path.index(link):][::-1]  # parent → child order
    names = [child_of[loop[(i + 1) % len(loop)]].name for i in range(len(loop))]
    message = (f"joints {', '.join(repr(n) for n in names)} form a cycle "
               f"({' → '.join(loop)} → {loop[0]})")
    others = [j.name for j in lost if j.name not in names]
    if others:
        message += (f"; joint(s) {', '.join(repr(n) for n in others)} not connected to the "
                    f"root link '{root}'")
    raise ModelError(f"URDF must be a tree: {message}")
