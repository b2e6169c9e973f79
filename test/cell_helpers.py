"""What the cell stack tests share: the topics a run is rebuilt from, and the check that a
lockstep run over the bus equals the offline run of the same scenario."""

from __future__ import annotations

import numpy as np
import pytest

from robot_control.nodes.convert import read_accel, read_pose, read_wrench
from robot_control.sim.cell_simulate import pose_error, pressing_forces, summarise_cell

SCENARIO = "huo_3_13_load_sharing"
ARMS = ("arm1", "arm2")
TOPICS = {
    "/joint_states": "sensor_msgs/msg/JointState",
    "/joint_command": "sensor_msgs/msg/JointState",
    "/wrench": "geometry_msgs/msg/WrenchStamped",
    "/arm1/wrench": "geometry_msgs/msg/WrenchStamped",
    "/arm2/wrench": "geometry_msgs/msg/WrenchStamped",
    "/arm1/joint_states": "sensor_msgs/msg/JointState",
    "/object/accel": "geometry_msgs/msg/AccelStamped",
    "/object/pose": "geometry_msgs/msg/PoseStamped",
    "/object/reference": "geometry_msgs/msg/PoseStamped",
}


def bus_series(samples: dict[str, dict[int, object]], stamps: list[int], sc) -> dict:
    """The offline run's series rebuilt from what the nodes published (samples: topic → header
    stamp in ns → message)."""
    s = samples
    shares = np.asarray(sc.controller_params["load_shares"], dtype=float)
    normal = np.asarray(sc.plant["environment"]["normal"], dtype=float)
    mass, gravity = sc.cell.object_inertia.mass, sc.cell.gravity
    tau = np.array([s["/joint_command"][k].effort for k in stamps])
    contact = np.array([read_wrench(s["/wrench"][k])[3:] @ normal for k in stamps])
    e = np.array([pose_error(read_pose(s["/object/pose"][k]), read_pose(s["/object/reference"][k]))
                  for k in stamps])
    p = np.array([pressing_forces(
        np.array([read_wrench(s[f"/{arm}/wrench"][k]) for arm in ARMS])[:, 3:], mass,
        read_accel(s["/object/accel"][k])[1], gravity, normal, shares) for k in stamps])
    return {"tau": tau, "contact_force": contact, "pose_error": e, "arm_forces": p}


def check_equals_offline(samples: dict[str, dict[int, object]], sc, offline) -> None:
    """A lockstep bus run equals the offline run: the same arithmetic in the same order, equal to
    the last bit (the orientation error, which travels as a quaternion, to 1e-12 rad)."""
    stamps = [k * (1_000_000_000 // int(sc.rate)) for k in range(offline.summary["steps"] + 1)]
    bus = bus_series(samples, stamps, sc)
    assert np.array_equal(bus["tau"], offline.tau)  # no saturation: τ applied = τ commanded
    assert np.array_equal(bus["contact_force"], offline.contact_force)
    assert np.array_equal(bus["arm_forces"], offline.arm_forces)
    assert np.array_equal(bus["pose_error"][:, :3], offline.pose_error[:, :3])
    assert np.allclose(bus["pose_error"][:, 3:], offline.pose_error[:, 3:], rtol=0, atol=1e-12)
    fractions = np.array([offline.summary["force_shares"][a]["prescribed_fraction"]
                          for a in ARMS])
    summary = summarise_cell(sc, offline.t, bus["pose_error"], bus["contact_force"],
                             offline.desired_force, bus["arm_forces"], bus["tau"], fractions,
                             offline.summary["wall_time_s"])
    for key in ("normal_force", "force_shares", "max_torque"):
        assert summary[key] == offline.summary[key], key
    assert summary["object_pose_error"]["position_m"] == \
        offline.summary["object_pose_error"]["position_m"]
    assert summary["object_pose_error"]["orientation_rad"] == pytest.approx(
        offline.summary["object_pose_error"]["orientation_rad"], rel=1e-9)
