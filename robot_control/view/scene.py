"""What the page draws of a robot: each link's shapes (its URDF visuals, else simple shapes from
its joints and centre of mass) and each link's pose from joint values (the URDF tree, forward)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from robot_control.model.urdf import _MOVABLE, _origin, joint_motion, parse_urdf

#: radius of the simple shapes drawn where a link has no visual, m (scaled with the robot)
STICK_RADIUS_FRACTION = 0.08


@dataclass
class Shape:
    """One drawable of a link, in the link's frame: ``box`` (size), ``cylinder`` (radius,
    length, along its z), ``sphere`` (radius) or ``mesh`` (vertices, faces)."""

    kind: str
    origin: np.ndarray  # 4 × 4 in the link frame
    size: tuple[float, ...] = ()
    vertices: np.ndarray | None = None
    faces: np.ndarray | None = None


@dataclass
class RobotScene:
    """The links of a robot with their shapes, the tree to place them, and what cannot be drawn."""

    name: str
    root: str
    links: dict[str, list[Shape]]
    joints: list  # model.urdf's parsed joints, parents before children
    problems: list[str] = field(default_factory=list)  # "link 'x': why it is not drawn"
    coms: dict[str, np.ndarray] = field(default_factory=dict)  # link → centre of mass (its frame)

    @property
    def size(self) -> float:
        """A length for the robot (see _robot_scale)."""
        return _robot_scale(self.joints)

    @property
    def joint_names(self) -> list[str]:
        return [j.name for j in self.joints if j.type in _MOVABLE]

    def link_poses(self, positions: dict[str, float]) -> dict[str, np.ndarray]:
        """World pose (4 × 4) of every link at the named joint positions (missing ones: 0)."""
        poses = {self.root: np.eye(4)}
        for j in self.joints:
            if j.parent not in poses:
                continue
            motion = joint_motion(j, positions.get(j.name, 0.0)) if j.type in _MOVABLE \
                else np.eye(4)
            poses[j.child] = poses[j.parent] @ j.origin @ motion
        return poses


def load_scene(description: str, base_dir: Path | None = None) -> RobotScene:
    """A RobotScene of a robot_description (URDF XML); raises ModelError / ValueError when the
    description itself cannot be read (a link that cannot be drawn is only listed)."""
    name, links, joints = parse_urdf(description)
    children = {j.child for j in joints}
    roots = [n for n in links if n not in children]
    root = roots[0] if roots else next(iter(links))
    ordered = _parents_first(root, joints)
    scale = _robot_scale(ordered)
    shapes: dict[str, list[Shape]] = {}
    problems: list[str] = []
    visuals = {el.get("name"): el.findall("visual")
               for el in ET.fromstring(description).findall("link")}
    for link in links.values():
        drawn: list[Shape] = []
        for el in visuals.get(link.name, []):
            try:
                drawn.append(_visual_shape(el, link.name, base_dir))
            except ValueError as exc:
                problems.append(str(exc))
        if not drawn and not visuals.get(link.name):
            drawn = _stick_shapes(link, ordered, scale)
        shapes[link.name] = drawn
    coms = {link.name: np.asarray(link.inertia.com, float) for link in links.values()
            if link.has_inertial}
    return RobotScene(name, root, shapes, ordered, problems, coms)


def _parents_first(root: str, joints: list) -> list:
    """The joints in an order where each joint's parent link is placed before it."""
    by_parent: dict[str, list] = {}
    for j in joints:
        by_parent.setdefault(j.parent, []).append(j)
    out, todo = [], [root]
    while todo:
        link = todo.pop()
        for j in by_parent.get(link, []):
            out.append(j)
            todo.append(j.child)
    return out


def _robot_scale(joints: list) -> float:
    """A length for the robot's size: the sum of its joint offsets (at least 0.1 m)."""
    return max(0.1, sum(float(np.linalg.norm(j.origin[:3, 3])) for j in joints))


def _stick_shapes(link, joints: list, scale: float) -> list[Shape]:
    """A link with no visual: a sphere at its origin and a cylinder to each child joint (a leaf
    link: to twice its centre of mass, where its body is)."""
    r = STICK_RADIUS_FRACTION * scale
    shapes = [Shape("sphere", np.eye(4), (1.5 * r,))]
    ends = [j.origin[:3, 3] for j in joints if j.parent == link.name]
    if not ends and link.has_inertial:
        ends = [2.0 * np.asarray(link.inertia.com, float)]
    for end in ends:
        length = float(np.linalg.norm(end))
        if length > 1e-6:
            shapes.append(Shape("cylinder", _segment_frame(end), (r, length)))
    return shapes


def _segment_frame(end: np.ndarray) -> np.ndarray:
    """The frame of a cylinder from the origin to ``end``: centred between, z along it."""
    z = end / np.linalg.norm(end)
    helper = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(helper, z)
    x /= np.linalg.norm(x)
    T = np.eye(4)
    T[:3, :3] = np.column_stack([x, np.cross(z, x), z])
    T[:3, 3] = end / 2.0
    return T


def _visual_shape(el: ET.Element, link: str, base_dir: Path | None) -> Shape:
    """One ``<visual>`` as a Shape; ValueError naming the link when it cannot be drawn."""
    where = f"link '{link}'"
    try:
        origin = _origin(el.find("origin"), where)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    geometry = el.find("geometry")
    kind = next(iter(geometry), None) if geometry is not None else None
    if kind is None:
        raise ValueError(f"{where}: a <visual> without <geometry>")
    try:
        if kind.tag == "box":
            return Shape("box", origin, tuple(_numbers(kind.get("size"), 3)))
        if kind.tag == "cylinder":
            return Shape("cylinder", origin, (float(kind.get("radius")), float(kind.get("length"))))
        if kind.tag == "sphere":
            return Shape("sphere", origin, (float(kind.get("radius")),))
    except (TypeError, ValueError):
        raise ValueError(f"{where}: <{kind.tag}> with missing or bad sizes") from None
    if kind.tag == "mesh":
        return _mesh_shape(kind, origin, where, base_dir)
    raise ValueError(f"{where}: geometry <{kind.tag}> cannot be drawn")


def _numbers(text: str | None, n: int) -> list[float]:
    values = [float(v) for v in (text or "").split()]
    if len(values) != n:
        raise ValueError(f"expected {n} numbers, got {text!r}")
    return values


def _mesh_shape(el: ET.Element, origin: np.ndarray, where: str, base_dir: Path | None) -> Shape:
    """A mesh file the process can read (a plain or file:// path, relative to base_dir)."""
    filename = el.get("filename", "")
    path = Path(filename.removeprefix("file://"))
    if filename.startswith("package://") or not filename:
        raise ValueError(f"{where}: mesh '{filename}' cannot be read here (no package path)")
    if not path.is_absolute() and base_dir is not None:
        path = base_dir / path
    try:
        import trimesh

        mesh = trimesh.load(path, force="mesh")
        scale = _numbers(el.get("scale"), 3) if el.get("scale") else [1.0, 1.0, 1.0]
    except Exception as exc:  # any reader's failure means the same: this link is not drawn
        raise ValueError(f"{where}: mesh '{filename}' cannot be read ({exc})") from None
    return Shape("mesh", origin, tuple(scale), np.asarray(mesh.vertices, float),
                 np.asarray(mesh.faces, np.int32))
