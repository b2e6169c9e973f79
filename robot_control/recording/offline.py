"""``robot-control simulate SCENARIO --record DIR``: an offline run written as the bag a recording of
the live stack would be, so both are read, played and plotted with the same tools.

Each control period k (stamp t_k = k·period in simulated time, as the lockstep nodes stamp):
- ``/joint_states`` — sensed q, q̇ and, as effort, the torque the plant applied over the period
  that ended at t_k (zero at t_0), as the plant node publishes it;
- ``/wrench`` — the contact wrench at t_k (``world`` frame), only when the plant has an
  environment;
- ``/joint_reference`` — one point (q_d, q̇_d, q̈_d) at t_k, as the trajectory generator;
- ``/joint_command`` — the law's τ_k (before the plant's saturation), stamped t_k;
- ``/controller/state`` — e = q_d − q, ė = q̇_d − q̇ and τ_k, as the controller node;
plus ``/robot_description`` (transient local) at t_0, the URDF the dynamics server publishes.
Messages are built with the DDS backend's message types and serialized as it sends them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from robot_control.bus.dds import config as dds_config
from robot_control.bus.dds import messages as m
from robot_control.model.urdf_export import robot_description
from robot_control.recording import bag
from robot_control.recording.serialized import serialize
from robot_control.recording.writer import BagWriter
from robot_control.sim.clock import period_ns
from robot_control.sim.scenario import Scenario
from robot_control.sim.simulate import Result, reference_at

TOPICS = {
    "/robot_description": "std_msgs/msg/String",
    "/joint_states": "sensor_msgs/msg/JointState",
    "/wrench": "geometry_msgs/msg/WrenchStamped",
    "/joint_reference": "trajectory_msgs/msg/JointTrajectory",
    "/joint_command": "sensor_msgs/msg/JointState",
    "/controller/state": "sensor_msgs/msg/JointState",
}
WRENCH_FRAME = "world"
CHECKPOINT_PERIODS = 1000  # control periods per checkpoint (writer.py)


def write_run(result: Result, scenario: Scenario, path: str | Path) -> dict[str, int]:
    """Write a simulation's Result as a rosbag2 directory; message counts per topic."""
    if result.tau_command is None or result.q_measured is None:
        raise ValueError("this Result has no sensed state / commanded torque series to record")
    names = scenario.robot.joint_names
    contact = bool(scenario.plant.get("environment"))
    tick = period_ns(scenario.rate)
    writer = BagWriter(path)
    counts = dict.fromkeys(TOPICS, 0)
    try:
        conns = {topic: writer.add_topic(topic, ros_type,
                                      [bag.qos_of_profile(dds_config.topic_profile(topic))])
                 for topic, ros_type in TOPICS.items() if contact or topic != "/wrench"}

        def write(topic: str, stamp_ns: int, msg) -> None:
            writer.write(conns[topic], stamp_ns, serialize(msg))
            counts[topic] += 1

        write("/robot_description", 0, m.String(data=robot_description(scenario.robot)))
        for k in range(len(result.t)):
            if k and k % CHECKPOINT_PERIODS == 0:  # a full disk then keeps all but the last ones
                writer.checkpoint()
            ns = k * tick
            stamp = m.time_from_nanoseconds(ns)
            q, qd = result.q_measured[k], result.qd_measured[k]
            applied = result.tau[k - 1] if k else np.zeros(len(names))
            write("/joint_states", ns, m.joint_state(stamp, names, q, qd, applied))
            if contact:
                w = result.wrench[k]
                write("/wrench", ns, m.wrench_stamped(stamp, w[3:], w[:3], WRENCH_FRAME))
            ref = reference_at(scenario, result.t[k], scenario.q0)
            write("/joint_reference", ns, m.joint_reference(stamp, names, ref.q, ref.qd, ref.qdd))
            tau = result.tau_command[k]
            write("/joint_command", ns, m.joint_state(stamp, names, tau=tau))
            write("/controller/state", ns, m.joint_state(stamp, names, ref.q - q, ref.qd - qd, tau))
    finally:
        writer.close()
    return {topic: n for topic, n in counts.items() if topic in conns}
