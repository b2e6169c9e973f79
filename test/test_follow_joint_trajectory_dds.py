"""The action protocol without ROS 2 at either end: real plant, controller and trajectory
generator processes on Cyclone DDS (private domain), and this package's own action client
(``robot-control action send_goal``'s) sending FollowJointTrajectory goals: one that succeeds
with feedback, one aborted with its code and reason, one the arm cannot execute (5 mrad in
4 ms: within the position and velocity limits, 40× the torque) refused with INVALID_GOAL and
then, with ``infeasible_motion: scale``, run slower to success; one the inactive generator
would reject is covered by the ROS suite (test_follow_joint_trajectory_ros2.py, its dds route)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import pytest
from stack_helpers import Stack, private_domain

from robot_control.bus.dds.action_client import send_goal
from robot_control.bus.dds.client import BusClient

# slow (scripts/test.sh --slow): a stack of node processes driven through the action
pytestmark = pytest.mark.slow

ACTION = "/trajectory_generator/follow_joint_trajectory"
TYPE = "control_msgs/action/FollowJointTrajectory"
COMMON = ["rate:=250.0"]
GOAL = [0.2, 1.3, 0.8]


def goal(positions, names=("joint1", "joint2", "joint3"), seconds=1):
    return {"trajectory": {"joint_names": list(names), "points": [
        {"positions": list(positions), "time_from_start": {"sec": seconds}}]}}


def wait_for_server(client: BusClient, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        client.graph.update()
        if client.graph.publications(ACTION + "/_action/status"):
            return True
        time.sleep(0.1)
    return False


def test_goals_over_the_dds_action_protocol():
    env = private_domain(43)
    os.environ.update({k: env[k] for k in ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE")})
    nodes = {"plant": [*COMMON, "initial_q:=[-0.1, 1.5, 1.0]"], "controller": COMMON,
             "trajectory_generator": [*COMMON, "default_motion:=hold"]}
    with Stack(env, nodes) as stack, BusClient(discovery_s=0.5) as client:
        assert wait_for_server(client, 120), stack.stop()
        # the controller is up once it commands (a cold compile cache takes it tens of seconds,
        # and a goal sent before would run on a plant nobody drives, and abort)
        assert client.topic_echo("/joint_command", timeout_s=120), stack.stop()
        deadline = time.monotonic() + 60
        while True:  # until the generator anchored its hold at the first joint state
            feedback = []
            outcome = send_goal(client, ACTION, TYPE, goal(GOAL), feedback.append, timeout_s=10)
            if "no reference yet" not in str(outcome.result) or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert outcome.accepted and outcome.status == 4, (outcome, stack.stop())
        assert outcome.result.error_code == 0 and outcome.result.error_string == "goal reached"
        assert feedback  # its rate: the ROS suite (rclpy client) and bench/follow_joint_trajectory.py
        last = feedback[-1]
        assert list(last.joint_names) == ["joint1", "joint2", "joint3"]
        assert np.abs(np.subtract(last.actual.positions, GOAL)).max() < 0.01
        bad = send_goal(client, ACTION, TYPE, goal(GOAL, names=("joint1", "elbow", "joint3")))
        assert bad.accepted and bad.status == 6
        assert bad.result.error_code == -2 and "unknown joints elbow" in bad.result.error_string
        cli = subprocess.run([sys.executable, "-m", "robot_control.cli", "action", "send_goal",
                              ACTION, TYPE, "{trajectory: {joint_names: [joint1], points: []}}"],
                             env=env, capture_output=True, text=True, timeout=60)
        assert cli.returncode == 1 and "Goal finished with status: ABORTED" in cli.stdout
        assert "error_code: -2" in cli.stdout, cli.stdout + cli.stderr
        check_an_infeasible_goal_is_refused_then_scaled(client, stack)


def check_an_infeasible_goal_is_refused_then_scaled(client: BusClient, stack: Stack) -> None:
    jolt = goal([GOAL[0] + 0.005, *GOAL[1:]])
    jolt["trajectory"]["points"][0]["time_from_start"] = {"sec": 0, "nanosec": 4_000_000}
    refused = send_goal(client, ACTION, TYPE, jolt, timeout_s=10)
    assert refused.accepted and refused.status == 6, (refused, stack.stop())
    text = refused.result.error_string
    assert refused.result.error_code == -1 and "the arm cannot execute this motion" in text, text
    assert "joint 'joint1' needs torque" in text and "effort limit 500 N·m" in text, text
    ok, reason = client.param_set("/trajectory_generator", "infeasible_motion", "scale")
    assert ok, reason
    assert not client.param_set("/trajectory_generator", "infeasible_motion", "clip")[0]
    scaled = send_goal(client, ACTION, TYPE, jolt, timeout_s=10)
    assert scaled.accepted and scaled.status == 4, (scaled, stack.stop())
    assert scaled.result.error_code == 0, scaled.result.error_string
    assert scaled.result.error_string.startswith("goal reached; time-scaled ×"), scaled.result
