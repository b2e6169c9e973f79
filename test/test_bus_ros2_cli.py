"""Interop with a real ROS 2 installation: the ``ros2`` command line against a node running on
the DDS backend. Skipped unless ``ros2`` is on PATH (source a ROS 2 Jazzy setup with
rmw_cyclonedds_cpp and run ``pytest test/test_bus_ros2_cli.py``)."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from bus_probe import bus_env, start_probe

pytestmark = pytest.mark.skipif(shutil.which("ros2") is None, reason="ros2 CLI not on PATH")


@pytest.fixture(scope="module")
def ros2():
    env = {**os.environ, **bus_env("ros2cli"), "RMW_IMPLEMENTATION": "rmw_cyclonedds_cpp"}
    probe = start_probe(env, "-p", "gain:=2.5")

    def run(*args: str, timeout: float = 30.0) -> str:
        out = subprocess.run(["ros2", *args], env=env, capture_output=True, text=True,
                             timeout=timeout)
        return out.stdout + out.stderr

    run.env = env
    yield run
    probe.terminate()
    probe.wait(10)


def test_ros2_node_list_and_info_show_our_node(ros2):
    assert "/probe" in ros2("node", "list", "--no-daemon").split()
    info = ros2("node", "info", "/probe", "--no-daemon")
    assert "/pong: sensor_msgs/msg/JointState" in info
    assert "/probe/set_parameters: rcl_interfaces/srv/SetParameters" in info


def test_ros2_topic_info_names_the_node(ros2):
    assert "Node name: probe" in ros2("topic", "info", "-v", "/pong", "--no-daemon")


def test_ros2_param_get_set_and_a_refusal(ros2):
    assert "Double value is: 2.5" in ros2("param", "get", "/probe", "gain")
    assert "Set parameter successful" in ros2("param", "set", "/probe", "gain", "3.0")
    refused = ros2("param", "set", "/probe", "mode", "c")
    assert "Setting parameter failed" in refused and "mode must be 'a' or 'b'" in refused
    assert "String value is: a" in ros2("param", "get", "/probe", "mode")


def test_ros2_service_list_and_rosout(ros2):
    assert "/probe/get_parameters" in ros2("service", "list", "--no-daemon").split()
    assert "probe ready" in ros2("topic", "echo", "--once", "/rosout", "rcl_interfaces/msg/Log",
                                 "--qos-durability", "transient_local")


def test_ros2_publisher_reaches_our_subscriber(ros2):
    echo = subprocess.Popen(["ros2", "topic", "echo", "--once", "/pong",
                             "sensor_msgs/msg/JointState"],
                            env=ros2.env, stdout=subprocess.PIPE, text=True)
    ros2("topic", "pub", "--times", "5", "/ping", "sensor_msgs/msg/JointState",
         "{name: [from_ros2], position: [1.5]}")
    out, _ = echo.communicate(timeout=30)
    assert "from_ros2" in out and "1.5" in out
