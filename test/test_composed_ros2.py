"""The rclpy-free stack composed into one process (``robot-control launch composed:=true``, Cyclone
DDS, messages by reference inside the process) seen by a real ROS 2: ``ros2 node list`` and
``ros2 lifecycle get`` show the five nodes, ``ros2 topic echo`` and ``ros2 bag record`` get the
topics — the container writes them to DDS because these readers (in other processes) match."""

from __future__ import annotations

import re

import pytest
from ros2_env import (
    STACK_NODES,
    bag_topics,
    dds_python_missing,
    record_bag,
    ros2,
    ros2_missing,
    ros_env,
    start_dds_stack,
    stop_daemon,
)

pytestmark = [pytest.mark.ros2, pytest.mark.skipif(
    bool(ros2_missing() or dds_python_missing()),
    reason=str(ros2_missing() or dds_python_missing()))]

TOPICS = {"/joint_states": "sensor_msgs/msg/JointState",
          "/joint_command": "sensor_msgs/msg/JointState",
          "/controller/state": "sensor_msgs/msg/JointState"}


def test_ros2_sees_the_nodes_and_topics_of_a_composed_stack_without_ros(tmp_path):
    env = ros_env("composed-ros2")
    try:
        with start_dds_stack(env, "composed:=true", "rate:=250.0") as stack:
            assert stack.wait_for_line(r"stack active", 180), stack.output[-3000:]
            nodes = set(ros2(env, "node", "list", "--no-daemon").split())
            assert {*STACK_NODES, "/lifecycle_manager"} <= nodes, nodes
            states = ros2(env, "lifecycle", "get", "--no-daemon", timeout=60)
            assert all(f"{node}: active [3]" in states for node in STACK_NODES), states
            echo = ros2(env, "topic", "echo", "/joint_states", "--once", "--no-daemon",
                        timeout=60)
            assert "name:" in echo and "- joint1" in echo, echo
            info = record_bag(env, tmp_path / "composed", TOPICS)
            assert stack.proc.poll() is None, stack.output[-3000:]
    finally:
        stop_daemon(env)
    assert re.search(r"Storage id:\s+mcap", info), info
    recorded = bag_topics(info)
    assert {t: recorded.get(t, ("?", 0))[0] for t in TOPICS} == TOPICS, info
    assert min(recorded[t][1] for t in TOPICS) > 100, info  # 3 s at 250 Hz: hundreds each
