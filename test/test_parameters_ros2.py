"""Both bus routes serve the same parameter descriptors on the wire: a plant on the rclpy-free
route (Cyclone DDS, no ROS 2 in its process) and a plant on rclpy, described by ``ros2 param
describe`` — every parameter its tables declare (nodes/plant_parameters.py …, docs/parameters.md)
— and a value the tables refuse is refused with the same reason on both. Run by
``bash scripts/test_ros2.sh -k param``."""

from __future__ import annotations

import re
import sys

import pytest
from ros2_env import Watched, dds_python, dds_python_missing, ros2, ros_env, wait_for, without_ros

pytestmark = pytest.mark.ros2
#: what rclpy declares on every node itself (its descriptors are rclpy's)
RCLPY_OWN = {"use_sim_time", "start_type_description_service"}
PLANT = ["-m", "robot_control.nodes.plant_node", "--ros-args", "-p", "lockstep:=true",
         "-p", "robot:=puma560", "-r"]


@pytest.fixture(scope="module")
def env():
    if dds_python_missing():
        pytest.skip(dds_python_missing())
    return ros_env("parameters-ros2")


@pytest.fixture(scope="module")
def plants(env):
    with Watched([dds_python(), *PLANT, "__node:=plant_dds"], without_ros(env)) as dds, \
            Watched([sys.executable, *PLANT, "__node:=plant_rclpy"],
                    {**env, "ROBOT_CONTROL_BUS": "rclpy"}) as rclpy_plant:
        assert wait_for(lambda: {"/plant_dds", "/plant_rclpy"} <= set(
            ros2(env, "node", "list", "--no-daemon").split()), 90), (dds.output,
                                                                     rclpy_plant.output)
        yield dds, rclpy_plant


def described(env, node: str, names: list[str]) -> list[str]:
    """``ros2 param describe`` of every name, one block per parameter."""
    out = ros2(env, "param", "describe", node, *names, "--no-daemon", timeout=60)
    return [b.strip() for b in re.split(r"(?=^Parameter name:)", out, flags=re.M) if b.strip()]


def test_both_routes_describe_every_parameter_alike(env, plants):
    names = sorted(ros2(env, "param", "list", "/plant_dds", "--no-daemon").split())
    on_rclpy = set(ros2(env, "param", "list", "/plant_rclpy", "--no-daemon").split())
    assert {"physics_dt", "safe_behaviour", "lockstep_start_subscribers"} <= set(names)
    assert on_rclpy - set(names) <= RCLPY_OWN and set(names) <= on_rclpy
    ours = [n for n in names if n not in RCLPY_OWN]
    dds, rclpy_side = described(env, "/plant_dds", ours), described(env, "/plant_rclpy", ours)
    assert len(dds) == len(ours)
    assert dds == rclpy_side
    physics_dt = next(b for b in dds if b.startswith("Parameter name: physics_dt"))
    assert "Min value: 1e-06" in physics_dt and "read only: true" in physics_dt.lower()


def test_a_value_the_tables_refuse_is_refused_alike(env, plants):
    replies = [ros2(env, "param", "set", node, "safe_behaviour", "coast", "--no-daemon")
               for node in ("/plant_dds", "/plant_rclpy")]
    for reply in replies:
        assert "safe_behaviour must be one of hold, zero_torque, got 'coast'" in reply, reply
