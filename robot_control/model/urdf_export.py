"""RobotModel → URDF text, for /robot_description (rviz, rqt) of models loaded from D-H tables.

URDF joints rotate about an axis through their frame's origin; a D-H joint's screw S = (ω, v)
generally does not pass through the body origin. Each URDF link frame is therefore the body frame
shifted to r = ω × v, the point of the axis nearest the body origin: then
T_{λ,i}(q) Trans(r_i) = M_i Trans(r_i) Rot(ω_i, q), which URDF can state.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import numpy as np

from robot_control.model.robot_model import RobotModel


def _rpy(R: np.ndarray) -> tuple[float, float, float]:
    """URDF roll-pitch-yaw of a rotation matrix (R = Rz(y) Ry(p) Rx(r))."""
    pitch = math.atan2(-R[2, 0], math.hypot(R[0, 0], R[1, 0]))
    if abs(math.cos(pitch)) < 1e-12:
        return math.atan2(-R[1, 2], R[1, 1]), pitch, 0.0
    return math.atan2(R[2, 1], R[2, 2]), pitch, math.atan2(R[1, 0], R[0, 0])


def _origin(parent: ET.Element, T: np.ndarray) -> None:
    xyz = " ".join(f"{v:.17g}" for v in T[:3, 3])
    rpy = " ".join(f"{v:.17g}" for v in _rpy(T[:3, :3]))
    ET.SubElement(parent, "origin", xyz=xyz, rpy=rpy)


def _shift(r: np.ndarray) -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = r
    return T


def link_frame_offsets(model: RobotModel) -> np.ndarray:
    """r_i per body (n × 3): the URDF link frame is the body frame shifted by r_i = ω × v, onto
    the joint's axis (zero for a prismatic joint, and for a URDF model's axes through the origin).
    /tf names these link frames, so it agrees with /robot_description."""
    offsets = np.zeros((len(model.bodies), 3))
    for i, b in enumerate(model.bodies):
        if b.joint.type != "prismatic":
            offsets[i] = np.cross(b.joint.screw[:3], b.joint.screw[3:])
    return offsets


def link_frame_shift(r: np.ndarray) -> np.ndarray:
    """Trans(r): from a URDF link frame to its body frame's placement (4 × 4)."""
    return _shift(r)


def robot_description(model: RobotModel) -> str:
    """URDF of the model: links with inertials, joints with axes and limits, frames as fixed joints."""
    robot = ET.Element("robot", name=model.name)
    ET.SubElement(robot, "link", name=model.base_name)
    offsets = link_frame_offsets(model)
    for i, b in enumerate(model.bodies):
        r = offsets[i]
        link = ET.SubElement(robot, "link", name=b.name)
        inertial = ET.SubElement(link, "inertial")
        _origin(inertial, _shift(b.inertia.com - r))
        ET.SubElement(inertial, "mass", value=f"{b.inertia.mass:.17g}")
        I = b.inertia.inertia_com
        ET.SubElement(inertial, "inertia", ixx=f"{I[0, 0]:.17g}", ixy=f"{I[0, 1]:.17g}",
                      ixz=f"{I[0, 2]:.17g}", iyy=f"{I[1, 1]:.17g}", iyz=f"{I[1, 2]:.17g}",
                      izz=f"{I[2, 2]:.17g}")
        j = b.joint
        bounded = np.isfinite(j.lower) and np.isfinite(j.upper)
        kind = j.type if j.type == "prismatic" or bounded else "continuous"
        joint = ET.SubElement(robot, "joint", name=j.name, type=kind)
        parent_r = offsets[b.parent] if b.parent >= 0 else np.zeros(3)
        parent_name = model.bodies[b.parent].name if b.parent >= 0 else model.base_name
        _origin(joint, _shift(-parent_r) @ j.origin @ _shift(r))
        ET.SubElement(joint, "parent", link=parent_name)
        ET.SubElement(joint, "child", link=b.name)
        axis = j.screw[3:] if j.type == "prismatic" else j.screw[:3]
        ET.SubElement(joint, "axis", xyz=" ".join(f"{a:.17g}" for a in axis))
        limit = {"effort": f"{min(j.effort_limit, 1e9):.17g}",
                 "velocity": f"{min(j.velocity_limit, 1e9):.17g}"}
        if kind != "continuous":
            limit.update(lower=f"{j.lower:.17g}", upper=f"{j.upper:.17g}")
        ET.SubElement(joint, "limit", **limit)
        f = j.friction
        if f.viscous or f.coulomb:
            ET.SubElement(joint, "dynamics", damping=f"{f.viscous:.17g}",
                          friction=f"{f.coulomb:.17g}")
    for name, frame in model.frames.items():
        if name in model.body_names or name == model.base_name:
            continue
        ET.SubElement(robot, "link", name=name)
        joint = ET.SubElement(robot, "joint", name=f"{name}_fixed", type="fixed")
        parent_r = offsets[frame.body] if frame.body >= 0 else np.zeros(3)
        _origin(joint, _shift(-parent_r) @ frame.placement)
        parent = model.bodies[frame.body].name if frame.body >= 0 else model.base_name
        ET.SubElement(joint, "parent", link=parent)
        ET.SubElement(joint, "child", link=name)
    ET.indent(robot)
    return '<?xml version="1.0"?>\n' + ET.tostring(robot, encoding="unicode") + "\n"
