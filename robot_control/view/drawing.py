"""A robot in the viser scene: each link's shapes under a frame per link, posed from joint values;
the same robot again, translucent, as the reference posture's ghost."""

from __future__ import annotations

import numpy as np

from robot_control.view.scene import RobotScene, Shape

BODY = (40, 90, 170)
GHOST = (240, 140, 20)
GHOST_OPACITY = 0.35


def quaternion(R: np.ndarray) -> np.ndarray:
    """(w, x, y, z) of a rotation matrix (Shepperd's method: the largest of the four first)."""
    t = np.trace(R)
    if t > 0:
        s = 2.0 * np.sqrt(1.0 + t)
        return np.array([0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s,
                         (R[1, 0] - R[0, 1]) / s])
    i = int(np.argmax(np.diag(R)))
    j, k = (i + 1) % 3, (i + 2) % 3
    s = 2.0 * np.sqrt(1.0 + R[i, i] - R[j, j] - R[k, k])
    q = np.empty(4)
    q[0] = (R[k, j] - R[j, k]) / s
    q[1 + i] = 0.25 * s
    q[1 + j] = (R[j, i] + R[i, j]) / s
    q[1 + k] = (R[k, i] + R[i, k]) / s
    return q


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
