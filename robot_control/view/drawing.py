"""A robot in the viser scene: each link's shapes under a frame per link, posed from joint values;
the same robot again, translucent, as the reference posture's ghost; the TF frames as small axes."""

from __future__ import annotations

import numpy as np

from robot_control.foundation.spatial import quaternion_xyzw
from robot_control.view.scene import RobotScene, Shape

BODY = (40, 90, 170)
GHOST = (240, 140, 20)
GHOST_OPACITY = 0.35


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
                               **kw)
    elif shape.kind == "sphere":
        scene_api.add_icosphere(name, radius=shape.size[0], color=color, **kw)
    else:
        scene_api.add_mesh_simple(name, shape.vertices * np.asarray(shape.size), shape.faces,
                                  color=color, opacity=opacity, **kw)
