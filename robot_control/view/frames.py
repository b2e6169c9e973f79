"""The TF frames on the bus as the page draws them: /tf and /tf_static (tf2_msgs/TFMessage) kept
as a forest of parent → child transforms, and one robot's frames placed relative to its root
frame (the plant's ``<frame_prefix><base link>``, e.g. ``side/base_link`` in /side)."""

from __future__ import annotations

import threading

import numpy as np

from robot_control.foundation.spatial import quaternion_matrix


class TfTree:
    """The latest transform of every child frame heard on /tf and /tf_static, with its parent.

    One per view process (both topics are global, shared by every robot on the page)."""

    def __init__(self, node=None) -> None:
        self._edges: dict[str, tuple[str, np.ndarray]] = {}  # child → (parent, T parent→child)
        self._lock = threading.Lock()
        self.dropped = 0  # transforms that could not be read (a zero quaternion, NaN)
        if node is not None:
            node.create_subscription("tf2_msgs/msg/TFMessage", "/tf", self.on_message, qos=100)
            node.create_subscription("tf2_msgs/msg/TFMessage", "/tf_static", self.on_message,
                                     qos="transient_local")

    def on_message(self, msg) -> None:
        """Keep every transform of a TFMessage (a bad one is counted and skipped)."""
        for tf in msg.transforms:
            t, r = tf.transform.translation, tf.transform.rotation
            try:
                T = np.eye(4)
                T[:3, :3] = quaternion_matrix(r.x, r.y, r.z, r.w)
                T[:3, 3] = (t.x, t.y, t.z)
                if not np.all(np.isfinite(T)):
                    raise ValueError("not finite")
            except ValueError:
                self.dropped += 1
                continue
            self.add(str(tf.header.frame_id), str(tf.child_frame_id), T)

    def add(self, parent: str, child: str, T: np.ndarray) -> None:
        """The transform of ``child`` in ``parent`` (a later one replaces it)."""
        with self._lock:
            self._edges[child.lstrip("/")] = (parent.lstrip("/"), np.asarray(T, float))

    def poses_under(self, root: str) -> dict[str, np.ndarray]:
        """Pose (4 × 4) relative to ``root`` of every frame below it (and root: identity)."""
        with self._lock:
            edges = dict(self._edges)
        children: dict[str, list[str]] = {}
        for child, (parent, _) in edges.items():
            children.setdefault(parent, []).append(child)
        poses = {root: np.eye(4)}
        todo = [root]
        while todo:
            frame = todo.pop()
            for child in children.get(frame, []):
                if child not in poses:  # a cycle in bad data must not loop
                    poses[child] = poses[frame] @ edges[child][1]
                    todo.append(child)
        return poses


def robot_root_frame(namespace: str, root_link: str) -> str:
    """The TF frame of a robot's root link as its plant names it by default (its namespace as
    the frame prefix: ``side/base_link`` in /side, ``base_link`` in /)."""
    ns = namespace.strip("/")
    return f"{ns}/{root_link}" if ns else root_link
