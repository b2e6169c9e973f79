"""A Pinocchio model built from a RobotModel, for robots Pinocchio has no file for (D-H arms).

Our joint i moves by T_{λ(i),i}(q) = M_i · exp([S_i] q) about a general screw S_i in body i.
Pinocchio's RZ / PZ joints move about the z axis of the joint frame, so each joint gets an
"axis frame" A_i in body i whose z axis is the screw axis: exp([S_i] q) = A_i Rz(q) A_i⁻¹
(revolute) or A_i Tz(q) A_i⁻¹ (prismatic). Pinocchio's joint frame i is then body i's frame
times A_i; its placement in joint λ(i) is A_λ⁻¹ M_i A_i, and body i (inertia, frames) sits
at A_i⁻¹ in it. Joint torques and world quantities are frame-independent, so they compare
directly; a body-frame wrench must be moved into the joint frame with ``joint_wrenches``.

Used by ``bench/dynamics.py`` and by ``test/test_pinocchio_agreement.py``; needs ``pinocchio``.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from robot_control.foundation.spatial import inverse_transform, transform
from robot_control.model import RobotModel


def _rotation_with_z(u: np.ndarray) -> np.ndarray:
    """A rotation whose third column is the unit vector u."""
    a = np.array([1.0, 0.0, 0.0]) if abs(u[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(a, u)
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(u, x), u])


def axis_frame(screw: np.ndarray) -> np.ndarray:
    """A_i: z along the screw axis, origin on the axis (w × v for a revolute screw with zero pitch)."""
    w, v = screw[:3], screw[3:]
    if not np.any(w):
        return transform(_rotation_with_z(v / np.linalg.norm(v)))
    pitch = float(w @ v)
    if abs(pitch) > 1e-12:
        raise ValueError(f"screw {screw} has pitch {pitch}: not a revolute joint")
    return transform(_rotation_with_z(w), np.cross(w, v))


def depth_first_order(model: RobotModel) -> list[int]:
    """Bodies in depth-first pre-order: Pinocchio needs every subtree's joints to be contiguous,
    while a RobotModel only needs parent[i] < i."""
    order: list[int] = []
    stack = [i for i in reversed(range(model.nq)) if model.parent[i] < 0]
    while stack:
        i = stack.pop()
        order.append(i)
        stack.extend(j for j in reversed(range(model.nq)) if model.parent[j] == i)
    return order


def pinocchio_model(model: RobotModel) -> pin.Model:
    """An equivalent pin.Model: same joint names (depth-first order), body and named frames, gravity."""
    pm = pin.Model()
    pm.name = model.name
    pm.gravity = pin.Motion(np.asarray(model.gravity, float), np.zeros(3))
    A = [axis_frame(s) for s in model.screw]
    joint_ids: dict[int, int] = {}
    for i in depth_first_order(model):
        body = model.bodies[i]
        p = int(model.parent[i])
        parent_id = 0 if p < 0 else joint_ids[p]
        A_parent = np.eye(4) if p < 0 else A[p]
        placement = inverse_transform(A_parent) @ body.joint.origin @ A[i]
        jm = pin.JointModelPZ() if body.joint.type == "prismatic" else pin.JointModelRZ()
        jid = pm.addJoint(parent_id, jm, pin.SE3(placement), body.joint.name)
        joint_ids[i] = jid
        B = pin.SE3(inverse_transform(A[i]))  # body i's frame in joint i's frame
        inertia = body.inertia
        spatial = pin.Inertia(inertia.mass, inertia.com, inertia.inertia_com)
        pm.appendBodyToJoint(jid, spatial.se3Action(B), pin.SE3.Identity())
        pm.addFrame(pin.Frame(body.name, jid, 0, B, pin.FrameType.BODY))
    for name, frame in model.frames.items():
        if name in model.body_names:
            continue
        if frame.body < 0:
            pm.addFrame(pin.Frame(name, 0, 0, pin.SE3(frame.placement), pin.FrameType.OP_FRAME))
        else:
            placement = inverse_transform(A[frame.body]) @ frame.placement
            pm.addFrame(pin.Frame(name, joint_ids[frame.body], 0, pin.SE3(placement),
                                  pin.FrameType.OP_FRAME))
    return pm


def joint_wrenches(model: RobotModel, pm: pin.Model, f_ext: np.ndarray) -> list:
    """Our body-frame wrenches (n, f) as Pinocchio's per-joint forces (joint frame, linear-first)."""
    forces = [pin.Force.Zero() for _ in range(pm.njoints)]
    for i, body in enumerate(model.bodies):
        body_in_joint = pin.SE3(inverse_transform(axis_frame(model.screw[i])))
        forces[pm.getJointId(body.joint.name)] = body_in_joint.act(
            pin.Force(f_ext[i, 3:], f_ext[i, :3])
        )
    return forces
