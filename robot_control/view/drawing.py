"""A robot in the viser scene: each link's shapes under a frame per link, posed from joint values;
the same robot again, translucent, as the reference posture's ghost; the TF frames as small axes."""

from __future__ import annotations

import numpy as np

from robot_control.spatial import quaternion_xyzw
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

    def pose(self, positions: dict[str, float]) -> None:
        """Place every link at these joint positions (nothing is sent if they did not change)."""
        key = tuple(round(positions.get(j, 0.0), 5) for j in self.robot.joint_names)
        if key == self.last:
            return
        self.last = key
        for link, T in self.robot.link_poses(positions).items():
            frame = self.frames.get(link)
            if frame is not None:
                frame.position = tuple(T[:3, 3])
                frame.wxyz = tuple(quaternion(T[:3, :3]))

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
            key = tuple(np.round(T[:3, :4].ravel(), 5))
            if self.last.get(name) == key:
                continue
            self.last[name] = key
            position, wxyz = tuple(T[:3, 3]), tuple(quaternion(T[:3, :3]))
            handle = self.axes.get(name)
            if handle is None:
                self.axes[name] = self.scene_api.add_frame(
                    f"{self.prefix}/{_node_name(name)}", axes_length=self.size,
                    axes_radius=self.size / 20.0, position=position, wxyz=wxyz)
            else:
                handle.position, handle.wxyz = position, wxyz

    @property
    def visible(self) -> bool:
        return bool(self.root.visible)

    @visible.setter
    def visible(self, shown: bool) -> None:
        self.root.visible = shown

    def remove(self) -> None:
        self.root.remove()


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
