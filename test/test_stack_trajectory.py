"""The motion crosses processes once, as quintic knots: real plant, controller and
trajectory generator processes on a private domain, and a node of this test that sends a goal
and listens to what the generator sends the controller."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest
from stack_helpers import Stack, private_domain

from robot_control.bus import create_node
from robot_control.bus.dds.client import BusClient
from robot_control.bus.dds.lifecycle_client import change_state
from robot_control.nodes.convert import TRAJECTORY_TOPIC, Messages, stamp_ns

# slow (scripts/test.sh --slow): a stack of node processes
pytestmark = pytest.mark.slow

GOAL = [0.3, 1.2, 0.5]
NAMES = ["joint1", "joint2", "joint3"]
COMMON = ["rate:=250.0"]


def spin_until(node, predicate, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        node.spin_once(0.05)
    return bool(predicate())


def test_a_goal_reaches_the_controller_as_knots_and_is_tracked_to_its_end():
    env = private_domain(41)
    os.environ.update({k: env[k] for k in ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE")})
    nodes = {"plant": [*COMMON, "initial_q:=[-0.1, 1.5, 1.0]"], "controller": COMMON,
             "trajectory_generator": [*COMMON, "default_motion:=hold"]}
    with Stack(env, nodes) as stack:
        node = create_node("goal_sender", [])
        try:
            m = Messages(node)
            motions, errors, states = [], [], []
            node.create_subscription("trajectory_msgs/msg/JointTrajectory", TRAJECTORY_TOPIC,
                                     motions.append, qos="transient_local")
            node.create_subscription("sensor_msgs/msg/JointState", "/controller/state",
                                     lambda msg: errors.append(list(msg.position)))
            node.create_subscription("sensor_msgs/msg/JointState", "/joint_states",
                                     lambda msg: states.append(list(msg.position)))
            goals = node.create_publisher("trajectory_msgs/msg/JointTrajectory",
                                          "/trajectory_generator/goal")
            # the hold at the measured position, sent once; the loop runs
            assert spin_until(node, lambda: motions and len(errors) > 20, 120), stack.stop()
            hold = motions[-1]
            assert len(hold.points) == 1
            np.testing.assert_allclose(hold.points[0].positions, [-0.1, 1.5, 1.0], atol=0.01)
            assert spin_until(node, lambda: goals.get_subscription_count() > 0, 30)
            goal = m.joint_trajectory(0, NAMES, (np.array([2.0]), np.array([GOAL]),
                                                     np.zeros((1, 3)), np.zeros((1, 3))))
            sent_ns = time.time_ns()
            goals.publish(goal)
            assert spin_until(node, lambda: len(motions) > 1, 30), stack.stop()
            knots = motions[-1]
            # the goal re-anchored at the reference: a knot at its start, then the goal at 2 s
            times = [p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec
                     for p in knots.points]
            assert times == [0.0, 2.0]
            assert list(knots.points[-1].positions) == GOAL
            assert abs(stamp_ns(knots.header.stamp) - sent_ns) < 5e9  # it starts on receipt
            states.clear()
            errors.clear()
            spin_until(node, lambda: False, 3.0)  # 2 s of motion, then the goal is held
            tracked, errors_seen = list(states), list(errors)
            # deactivated, the generator leaves the controller a hold where the reference is
            with BusClient(discovery_s=1.0) as client:
                assert change_state(client, "/trajectory_generator", "deactivate")
            assert spin_until(node, lambda: len(motions) > 2, 30), stack.stop()
        finally:
            node.shutdown()
    assert tracked and errors_seen, "the loop stopped"
    np.testing.assert_allclose(tracked[-1], GOAL, atol=0.02)
    # the controller tracked what it sampled itself: its error stayed small all along
    assert np.abs(np.array(errors_seen)).max() < 0.05
    hold = motions[-1]
    assert len(hold.points) == 1 and list(hold.points[0].positions) == GOAL
