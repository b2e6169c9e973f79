"""Recordings for identification tests: an offline run written as the stack's nodes publish it.

Independent of ``robot-control simulate --record`` (a second writer to compare with), this runs a
scenario's control loop
(the plant's measured, noisy q and q̇; the controller's τ) and writes a rosbag2 directory (MCAP)
with /joint_states (position, velocity, effort = torque applied over the period that ended at the
state, as the plant node publishes) and /joint_command (effort, header.stamp = the state it
answers) — the layout the plant and controller nodes give the bus.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

from robot_control.control.base import State
from robot_control.sim.clock import period_ns, seconds
from robot_control.sim.plant import Plant
from robot_control.sim.scenario import Scenario
from robot_control.sim.simulate import make_controller, reference_at

JOINT_STATE = "sensor_msgs/msg/JointState"
EMPTY = np.zeros(0)


def record_scenario(sc: Scenario, path: Path) -> Path:
    """Run ``sc`` offline and write its /joint_states and /joint_command to a bag at ``path``."""
    store = get_typestore(Stores.ROS2_JAZZY)
    JointState = store.types[JOINT_STATE]
    Header = store.types["std_msgs/msg/Header"]
    Time = store.types["builtin_interfaces/msg/Time"]
    plant = Plant(sc.robot, sc.plant, sc.physics_dt)
    plant.reset(sc.q0, sc.qd0)
    law = make_controller(sc)
    names = sc.robot.joint_names
    tick = period_ns(sc.rate)
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        states = writer.add_connection("/joint_states", JOINT_STATE, typestore=store)
        commands = writer.add_connection("/joint_command", JOINT_STATE, typestore=store)
        for k in range(sc.steps + 1):
            stamp_ns = k * tick
            t = seconds(stamp_ns)
            header = Header(stamp=Time(sec=stamp_ns // 10**9, nanosec=stamp_ns % 10**9),
                            frame_id="")
            q, qd = plant.measure()
            msg = JointState(header=header, name=names, position=q, velocity=qd,
                             effort=plant.applied.copy())
            writer.write(states, stamp_ns, store.serialize_cdr(msg, JOINT_STATE))
            tau = law.update(t, State(t, q, qd), reference_at(sc, t, sc.q0))
            cmd = JointState(header=header, name=names, position=EMPTY, velocity=EMPTY,
                             effort=np.asarray(tau, dtype=float))
            writer.write(commands, stamp_ns + 1, store.serialize_cdr(cmd, JOINT_STATE))
            if k < sc.steps:
                plant.step(tau, seconds(tick))
    return path
