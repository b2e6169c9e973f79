"""/tf and /tf_static (tf2_msgs/TFMessage) of the model, from the measured joint positions.

Each moving body's link frame is published on /tf relative to its parent's (the model's base
frame for the first), from forward kinematics of the package's model (dynamics/kinematics.py:
L_parent⁻¹ L_child of the world placements), at ``tf_rate``. A link frame is the one
/robot_description states (model/urdf_export.py): the body frame shifted onto its joint's axis,
L_i = T_i Trans(r_i) — the body frame itself for a URDF robot, not for a D-H one — so rviz and the
view draw the description's links where /tf puts them. Frames fixed to a body — links a
URDF attaches by fixed joints, tools — go once on /tf_static (transient local, as tf2_ros'
StaticTransformBroadcaster), so late subscribers get them. Frame ids are the model's link names
(URDF link names; a D-H robot's ``link1…linkN`` on its ``base_name``), each behind the node's
``frame_prefix`` (``arm1/base_link`` in namespace /arm1, as robot_state_publisher's frame_prefix).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robot_control.bus.param_table import declare, param
from robot_control.dynamics.kinematics import forward_kinematics
from robot_control.foundation.spatial import inverse_transform, quaternion_xyzw
from robot_control.model.urdf_export import link_frame_offsets, link_frame_shift

NS = 1_000_000_000


@dataclass(frozen=True)
class TfParams:
    """How often the frames go out."""

    tf_rate: float = param(100.0, "rate of /tf (the links' frames from the measured positions), "
                           "Hz; 0: none", range=(0.0, 10000.0), read_only=True)


class TfPublisher:
    """Publishes the model's frames; call :meth:`publish_if_due` with each measured state."""

    def __init__(self, node, model, frame_prefix: str = "") -> None:
        self.node = node
        self.model = model
        self.prefix = frame_prefix
        rate = declare(node, TfParams).tf_rate
        self.period_ns = int(NS / rate) if rate > 0 else 0
        self.next_ns = 0
        self.TFMessage = node.msg("tf2_msgs/msg/TFMessage")
        self.Stamped = node.msg("geometry_msgs/msg/TransformStamped")
        self.pub = node.create_lifecycle_publisher("tf2_msgs/msg/TFMessage", "/tf", qos=100) \
            if rate > 0 else None
        self.parents = [model.base_name if b.parent < 0 else model.body_names[b.parent]
                        for b in model.bodies]
        self.shifts = np.array([link_frame_shift(r) for r in link_frame_offsets(model)])
        fixed = [f for name, f in model.frames.items()
                 if name != model.base_name and name not in model.body_names]
        if fixed:
            static = node.create_publisher("tf2_msgs/msg/TFMessage", "/tf_static",
                                           qos="transient_local")
            static.publish(self.TFMessage(transforms=[
                self._transform(0, model.base_name if f.body < 0 else model.body_names[f.body],
                                f.name, f.placement if f.body < 0
                                else inverse_transform(self.shifts[f.body]) @ f.placement)
                for f in fixed]))

    def due(self, stamp_ns: int) -> bool:
        """Whether the rate says to publish the frames of a state stamped ``stamp_ns``."""
        return self.pub is not None and stamp_ns >= self.next_ns

    def publish_if_due(self, stamp_ns: int, q: np.ndarray) -> None:
        """Publish the moving frames at ``stamp_ns`` if the rate says so."""
        if not self.due(stamp_ns):
            return
        self.next_ns = (stamp_ns // self.period_ns + 1) * self.period_ns
        self.pub.publish(self.message(stamp_ns, q))

    def message(self, stamp_ns: int, q: np.ndarray):
        """The TFMessage of every moving body's link frame relative to its parent at q."""
        L = forward_kinematics(self.model, q) @ self.shifts
        out = []
        for i, body in enumerate(self.model.bodies):
            local = L[i] if body.parent < 0 else inverse_transform(L[body.parent]) @ L[i]
            out.append(self._transform(stamp_ns, self.parents[i], self.model.body_names[i],
                                       local))
        return self.TFMessage(transforms=out)

    def _transform(self, stamp_ns: int, parent: str, child: str, X: np.ndarray):
        msg = self.Stamped()
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(int(stamp_ns), NS)
        msg.header.frame_id = self.prefix + parent
        msg.child_frame_id = self.prefix + child
        t = msg.transform.translation
        t.x, t.y, t.z = (float(v) for v in X[:3, 3])
        r = msg.transform.rotation
        r.x, r.y, r.z, r.w = quaternion_xyzw(X[:3, :3])
        return msg
