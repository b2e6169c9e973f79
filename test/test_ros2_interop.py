"""The two backends of the bus against each other on the wire, in both start orders: an rclpy
node and a DDS-backend node (no ROS 2 in its process) exchange topics both ways (ping → pong)
and call each other's standard parameter services (get, set, a refusal with its reason)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from ros2_env import (
    TEST_DIR,
    Watched,
    dds_python,
    dds_python_missing,
    ros2_missing,
    ros_env,
    wait_for,
    without_ros,
)

if ros2_missing():
    pytest.skip(ros2_missing(), allow_module_level=True)

from launch_helpers import Observer  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.parameter_client import AsyncParameterClient  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

pytestmark = [pytest.mark.ros2, pytest.mark.skipif(bool(dds_python_missing()),
                                                   reason=str(dds_python_missing()))]
PROBE = str(TEST_DIR / "bus_probe.py")
UP_S = 90.0


def rclpy_probe(env) -> Watched:
    return Watched([sys.executable, PROBE, "--ros-args", "-p", "gain:=2.5"],
                   {**env, "ROBOT_CONTROL_BUS": "rclpy"})


def dds_probe(env) -> Watched:
    return Watched([dds_python(), PROBE, "--ros-args", "-p", "gain:=2.5"], without_ros(env))


def done(future, timeout_s: float = 15.0):
    assert wait_for(future.done, timeout_s), "no reply"
    return future.result()


@pytest.mark.parametrize("order", ["probe_first", "peer_first"])
def test_an_rclpy_node_talks_to_a_dds_node(order):
    env = ros_env(f"interop-rclpy-to-dds-{order}")
    probe = dds_probe(env) if order == "probe_first" else None
    if probe is not None:
        assert probe.wait_for_line("probe ready", UP_S), probe.output
    peer = Observer(int(env["ROS_DOMAIN_ID"]), "rclpy_peer")
    try:
        pongs = []
        ping = peer.node.create_publisher(JointState, "/ping", 10)
        peer.node.create_subscription(JointState, "/pong", lambda m: pongs.append(m), 10)
        client = AsyncParameterClient(peer.node, "/probe")
        if probe is None:
            time.sleep(1.0)  # the rclpy side's endpoints exist before the DDS node starts
            probe = dds_probe(env)

        def answered() -> bool:
            ping.publish(JointState(name=["interop"], position=[1.25]))
            return any(list(m.name) == ["interop"] for m in pongs)

        assert wait_for(answered, UP_S, every=0.2), probe.output
        assert list(pongs[-1].position) == [1.25]
        assert client.wait_for_services(timeout_sec=15.0)
        assert done(client.get_parameters(["gain"])).values[0].double_value == 2.5
        results = done(client.set_parameters([Parameter("gain", value=4.5),
                                              Parameter("mode", value="q")])).results
        assert results[0].successful and not results[1].successful
        assert results[1].reason == "mode must be 'a' or 'b', not 'q'"
        assert done(client.get_parameters(["gain"])).values[0].double_value == 4.5
    finally:
        peer.close()
        if probe is not None:
            probe.stop()


@pytest.mark.parametrize("order", ["probe_first", "peer_first"])
def test_a_dds_node_talks_to_an_rclpy_node(order):
    env = ros_env(f"interop-dds-to-rclpy-{order}")
    checker = [dds_python(), PROBE, "--check"]
    with rclpy_probe(env) if order == "probe_first" else Watched(checker, without_ros(env)) as first:
        if order == "probe_first":
            assert first.wait_for_line("probe ready", UP_S), first.output
            out = subprocess.run(checker, env=without_ros(env), capture_output=True, text=True,
                                 timeout=3 * UP_S)
            report, log = out.stdout, out.stderr
        else:
            time.sleep(2.0)  # the DDS side's endpoints exist before the rclpy node starts
            with rclpy_probe(env) as probe:
                assert first.proc.wait(3 * UP_S) == 0, first.output + probe.output
            report, log = first.output, ""
    result = json.loads(next(line for line in report.splitlines() if line.startswith("{")))
    assert result == {"backend": "dds", "round_trips": 5, "gain_before": 2.5,
                      "set": [True, ""], "gain_after": 4.5,
                      "refused": [False, "mode must be 'a' or 'b', not 'q'"]}, report + log


def test_the_dds_side_runs_without_ros2():
    """The DDS-backend processes above see no rclpy: they are what a user without ROS 2 runs."""
    code = "import importlib.util as u; print(u.find_spec('rclpy') is None)"
    out = subprocess.run([dds_python(), "-c", code], env=without_ros(dict(os.environ)),
                         capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "True", out.stderr
