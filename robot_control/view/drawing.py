"""A robot in the viser scene: each link's shapes under a frame per link, posed from joint values;
the reference posture's ghost as an orange skeleton (lines along the links); the TF frames as
small axes."""

from __future__ import annotations

import numpy as np

from robot_control.foundation.spatial import quaternion_xyzw
from robot_control.view.scene import RobotScene, Shape

BODY = (40, 90, 170)
GHOST = (240, 140, 20)
#: the ghost's lines, pixels: a skeleton rather than a second, translucent robot — blended
#: shapes covering the body cost a software-rendered page as much as the body (docs/view.md)
GHOST_THICKNESS = 4.0
#: segments of a cylinder's circle and subdivisions of a sphere (viser's defaults: 32 and 3,
#: 1280 triangles a sphere): enough for a smooth outline at the page's size, a fifth of the
#: triangles to rasterise where WebGL is software
CYLINDER_SEGMENTS = 16
SPHERE_SUBDIVISIONS = 2


def quaternion(R: np.ndarray) -> np.ndarray:
    """(w, x, y, z) of a rotation matrix, viser's order (spatial.quaternion_xyzw reordered)."""
    x, y, z, w = quaternion_xyzw(R)
    return np.array([w, x, y, z])


class DrawnRobot:
    """One robot's link frames (and their shapes) under ``prefix`` in the scene."""

    def __init__(self, scene_api, prefix: str, robot: RobotScene, color=BODY,
                 opacity: float | None = None, offset=(0.0, 0.0, 0.0)) -> None:
        self.robot = robot
        self.root = scene_api.add_frame(prefix, show_axes=False, position=tuple(offset))
        self.frames = {}
        for link, shapes in robot.links.items():
            frame = scene_api.add_frame(f"{prefix}/{link}", show_axes=False)
            for i, shape in enumerate(shapes):
                _add_shape(scene_api, f"{prefix}/{link}/s{i}", shape, color, opacity)
            self.frames[link] = frame
        self.last: tuple | None = None
        self.placed: dict[str, tuple] = {}  # link → the (position, wxyz) last sent

    def pose(self, positions: dict[str, float]) -> None:
        """Place every link at these joint positions: only the links that moved are sent (the
        base and what hangs on it by fixed joints never are after the first time)."""
        key = tuple(round(positions.get(j, 0.0), 5) for j in self.robot.joint_names)
        if key == self.last:
            return
        self.last = key
        for link, T in self.robot.link_poses(positions).items():
            frame = self.frames.get(link)
            if frame is not None:
                self.placed[link] = _send_changed(frame, _placement(T), self.placed.get(link))

    def remove(self) -> None:
        self.root.remove()


class DrawnSkeleton:
    """A robot as line segments under ``prefix`` (the reference's ghost): one from each link's
    origin to each child link's origin, and a leaf link's to twice its centre of mass."""

    def __init__(self, scene_api, prefix: str, robot: RobotScene, color=GHOST,
                 offset=(0.0, 0.0, 0.0)) -> None:
        self.robot = robot
        self.segments = skeleton_segments(robot)
        self.last: tuple | None = None
        self.lines = None  # a robot without offsets (all its links at one point) has no lines
        if self.segments:
            colors = np.broadcast_to(np.asarray(color, np.uint8), (len(self.segments), 2, 3))
            self.lines = scene_api.add_line_segments(
                prefix, skeleton_points(robot, self.segments, {}), colors.copy(),
                thickness=GHOST_THICKNESS, thickness_units="screen", position=tuple(offset))

    def pose(self, positions: dict[str, float]) -> None:
        """Move the skeleton to these joint positions (sent only when they changed)."""
        key = tuple(round(positions.get(j, 0.0), 5) for j in self.robot.joint_names)
        if key != self.last and self.lines is not None:
            self.last = key
            self.lines.points = skeleton_points(self.robot, self.segments, positions)

    def remove(self) -> None:
        if self.lines is not None:
            self.lines.remove()


def skeleton_segments(robot: RobotScene) -> list[tuple[str, str, np.ndarray]]:
    """(from link, to link, end point in the 'to' link's frame, homogeneous) of a robot's
    skeleton: parent → child along every joint with an offset or a slide, and a leaf link from
    its origin to twice its centre of mass."""
    out = []
    parents = {j.parent for j in robot.joints}
    origin = np.array([0.0, 0.0, 0.0, 1.0])
    for j in robot.joints:
        if np.linalg.norm(j.origin[:3, 3]) > 1e-6 or j.type == "prismatic":
            out.append((j.parent, j.child, origin))
        com = robot.coms.get(j.child)
        if j.child not in parents and com is not None and np.linalg.norm(com) > 1e-6:
            out.append((j.child, j.child, np.append(2.0 * com, 1.0)))
    return out


def skeleton_points(robot: RobotScene, segments: list, positions: dict[str, float]) -> np.ndarray:
    """The skeleton's segments (N × 2 × 3, float32) at these joint positions."""
    poses = robot.link_poses(positions)
    points = np.zeros((len(segments), 2, 3), np.float32)
    for i, (a, b, end) in enumerate(segments):
        if a in poses and b in poses:
            points[i, 0] = poses[a][:3, 3]
            points[i, 1] = (poses[b] @ end)[:3]
    return points


class DrawnFrames:
    """Small axes for each TF frame of one robot, under ``prefix`` (placed at the robot's offset),
    added as frames appear and moved only when their poses change."""

    def __init__(self, scene_api, prefix: str, size: float, offset=(0.0, 0.0, 0.0)) -> None:
        self.scene_api = scene_api
        self.prefix = prefix
        self.size = size
        self.root = scene_api.add_frame(prefix, show_axes=False, position=tuple(offset))
        self.axes: dict[str, object] = {}
        self.last: dict[str, tuple] = {}

    def pose(self, poses: dict[str, np.ndarray]) -> None:
        """Place the axes of every frame (poses relative to the robot's root frame)."""
        for name, T in poses.items():
            placed = _placement(T)
            handle = self.axes.get(name)
            if handle is None:
                self.axes[name] = self.scene_api.add_frame(
                    f"{self.prefix}/{_node_name(name)}", axes_length=self.size,
                    axes_radius=self.size / 25.0, position=placed[0], wxyz=placed[1])
                self.last[name] = placed
            else:
                self.last[name] = _send_changed(handle, placed, self.last.get(name))

    @property
    def visible(self) -> bool:
        return bool(self.root.visible)

    @visible.setter
    def visible(self, shown: bool) -> None:
        self.root.visible = shown

    def remove(self) -> None:
        self.root.remove()


def _placement(T: np.ndarray) -> tuple[tuple, tuple]:
    """(position, wxyz) of a pose, rounded (to 10 µm, 1e-5) so that a pose that did not move
    compares equal and is not sent again."""
    return (tuple(round(float(v), 5) for v in T[:3, 3]),
            tuple(round(float(v), 5) for v in quaternion(T[:3, :3])))


def _send_changed(handle, placed: tuple[tuple, tuple], before: tuple | None) -> tuple:
    """Set a scene node's position and orientation, each only if it changed (one message each
    to every open page); the placement now shown."""
    if before is None or before[0] != placed[0]:
        handle.position = placed[0]
    if before is None or before[1] != placed[1]:
        handle.wxyz = placed[1]
    return placed


def _node_name(frame: str) -> str:
    """A TF frame's name as one scene path element ('side/link1' → 'side_link1')."""
    return frame.replace("/", "_") or "_"


def _add_shape(scene_api, name: str, shape: Shape, color, opacity) -> None:
    kw = {"position": tuple(shape.origin[:3, 3]), "wxyz": tuple(quaternion(shape.origin[:3, :3]))}
    if opacity is not None and shape.kind != "mesh":
        kw["opacity"] = opacity
    if shape.kind == "box":
        scene_api.add_box(name, color=color, dimensions=shape.size, **kw)
    elif shape.kind == "cylinder":
        scene_api.add_cylinder(name, radius=shape.size[0], height=shape.size[1], color=color,
                               radial_segments=CYLINDER_SEGMENTS, **kw)
    elif shape.kind == "sphere":
        scene_api.add_icosphere(name, radius=shape.size[0], color=color,
                                subdivisions=SPHERE_SUBDIVISIONS, **kw)
    else:
        scene_api.add_mesh_simple(name, shape.vertices * np.asarray(shape.size), shape.faces,
                                  color=color, opacity=opacity, **kw)
