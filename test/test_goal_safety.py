"""Motions a client did not ask for, on the rclpy-free route: real plant,
controller and trajectory generator processes on Cyclone DDS (a private domain), this package's
action client. An aborted goal's target never moves the arm when the controller comes back; a
trajectory on /controller/joint_trajectory whose first knot is away from the reference is refused;
an oversized goal is refused before it is decoded, and what a bad message makes a node log stays
short. The rclpy ActionClient's side: test_goal_safety_ros2.py."""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest
from launch_run import Stack as LaunchedStack
from launch_run import stack_env
from stack_helpers import Stack, private_domain, wait_until

from robot_control.bus.backend import create_node
from robot_control.bus.dds.action_client import send_goal
from robot_control.bus.dds.client import BusClient
from robot_control.bus.dds.lifecycle_client import change_state
from robot_control.nodes.convert import TRAJECTORY_TOPIC, Messages

# slow (scripts/test.sh --slow): a stack of node processes per test
pytestmark = pytest.mark.slow

ACTION = "/trajectory_generator/follow_joint_trajectory"
TYPE = "control_msgs/action/FollowJointTrajectory"
NAMES = ["joint1", "joint2", "joint3"]
COMMON = ["rate:=250.0"]
START = [-0.1, 1.5, 1.0]
NODES = {"plant": [*COMMON, f"initial_q:={START}"], "controller": COMMON,
         "trajectory_generator": [*COMMON, "default_motion:=hold"]}
ABORTED, SUCCEEDED = 6, 4


def goal(positions, seconds: float = 1.0, names=NAMES) -> dict:
    sec, nanosec = int(seconds), int(round((seconds % 1) * 1e9))
    return {"trajectory": {"joint_names": list(names), "points": [
        {"positions": [float(x) for x in positions],
         "time_from_start": {"sec": sec, "nanosec": nanosec}}]}}


def measured(client: BusClient) -> np.ndarray:
    return np.asarray(client.topic_echo("/joint_states", timeout_s=10)[0].position)


def ready(client: BusClient, stop) -> np.ndarray:
    """Wait until the controller commands and the generator holds a reference (``stop()``: what
    a failure shows); the position."""
    assert client.topic_echo("/joint_command", timeout_s=120), stop()
    settle = time.monotonic() + 30  # the arm at rest first: a hold goal then means "stay"
    while time.monotonic() < settle and np.abs(np.asarray(client.topic_echo(
            "/joint_states", timeout_s=10)[0].velocity)).max() > 0.02:
        time.sleep(0.2)
    deadline = time.monotonic() + 60
    while True:  # until the generator anchored its hold at the first joint state
        q = measured(client)
        outcome = send_goal(client, ACTION, TYPE, goal(q, 0.2), timeout_s=30)
        if "no reference yet" not in str(outcome.result) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert outcome.status == SUCCEEDED, (outcome, stop())
    return measured(client)


def at_rest(client: BusClient, window_s: float = 0.2, still: float = 1e-3) -> bool:
    """Whether the arm moved less than ``still`` rad over the next ``window_s``."""
    before = measured(client)
    time.sleep(window_s)
    return float(np.abs(measured(client) - before).max()) < still


def farthest(client: BusClient, q0: np.ndarray, seconds: float) -> float:
    """The largest |q − q0| over the joint states of the next ``seconds``."""
    worst, end = 0.0, time.monotonic() + seconds
    for msg in client.iter_topic("/joint_states", timeout_s=seconds + 5):
        worst = max(worst, float(np.abs(np.asarray(msg.position) - q0).max()))
        if time.monotonic() > end:
            break
    return worst


def test_an_aborted_goal_never_moves_the_arm_later():
    env = private_domain(71)
    os.environ.update({k: env[k] for k in ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE")})
    with Stack(env, NODES) as stack, BusClient(discovery_s=0.5) as client:
        check_an_aborted_goal_never_moves_the_arm_later(client, stack.stop)


def test_in_a_composed_stack_too():
    """The same with the nodes in one process (``robot-control launch composed:=true``)."""
    env = stack_env("goal-safety-composed")
    os.environ.update({k: env[k] for k in ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE")})
    stack = LaunchedStack(env, "composed:=true", "rate:=250")
    try:
        assert stack.wait_for("[launch] control loop running", 150), "\n".join(stack.lines[-40:])
        with BusClient(discovery_s=0.5) as client:
            check_an_aborted_goal_never_moves_the_arm_later(
                client, lambda: "\n".join(stack.lines[-60:]))
    finally:
        stack.stop()


def check_an_aborted_goal_never_moves_the_arm_later(client: BusClient, stop) -> None:
    """The reported failure, reproduced: with the controller deactivated a 0.2 rad goal is ABORTED; when
    the controller is activated again the arm holds where it is (before: it went there)."""
    q0 = ready(client, stop)
    assert change_state(client, "/controller", "deactivate")
    target = q0 + np.array([0.2, 0.0, 0.0])
    outcome = send_goal(client, ACTION, TYPE, goal(target), timeout_s=10)
    assert outcome.status == ABORTED and outcome.result.error_code == -4, outcome
    # at once, not at the goal time
    assert "the controller is inactive" in outcome.result.error_string, outcome
    held = measured(client)  # the plant held the arm meanwhile
    assert np.abs(held - q0).max() < 0.05
    assert change_state(client, "/controller", "activate")
    # before the fix the arm went the 0.2 rad to the aborted goal's target here
    assert farthest(client, held, 2.5) < 0.02
    # and the next goal starts from where the arm is, and runs
    again = send_goal(client, ACTION, TYPE, goal(measured(client) + [0.05, 0.0, 0.0]),
                      timeout_s=10)
    assert again.status == SUCCEEDED, (again, stop())


def test_a_motion_beyond_the_actuators_saturates_and_aborts_by_its_path_tolerance(tmp_path):
    """0.1 rad in 0.15 s on the DDArm asks ~340 N·m of joint 1 by the model: within its 500 N·m,
    so the generator and the controller accept it (trajectory/feasibility.py). The arm the plant
    runs is heavier than its description (link 1's inertia ×5): it lags, the feedback asks more
    than 500 N·m, the controller saturates (the plant never gets a command to reject), the goal's
    path tolerance aborts it and the arm holds; the stack stays up and the next goal runs."""
    from robot_control.model.resources import share_path

    heavy = tmp_path / "ddarm.yaml"  # named ddarm: its parameter groups are the bundled ones
    heavy.write_text(share_path("config", "robots", "ddarm.yaml").read_text().replace(
        "inertia: [2.0, 3.861136, 2.0, 0, 0, 0]", "inertia: [10.0, 19.30568, 10.0, 0, 0, 0]", 1))
    nodes = {name: [*args, f"robot:={heavy}"] if name == "plant" else args
             for name, args in NODES.items()}
    env = private_domain(75)
    os.environ.update({k: env[k] for k in ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE")})
    with Stack(env, nodes) as stack, BusClient(discovery_s=0.5) as client:
        q0 = ready(client, stack.stop)
        fast = goal(q0 + [0.1, 0.0, 0.0], 0.15)
        fast["path_tolerance"] = [{"name": n, "position": 0.02} for n in NAMES]
        outcome = send_goal(client, ACTION, TYPE, fast, timeout_s=10)
        assert outcome.status == ABORTED and outcome.result.error_code == -4, outcome
        assert "path tolerance violated" in outcome.result.error_string, outcome.result
        values = {}  # the controller's status (1 Hz) after the goal: its saturation count
        deadline = time.monotonic() + 5.0
        for msg in client.iter_topic("/diagnostics", timeout_s=5):
            if time.monotonic() > deadline:
                break
            for st in msg.status:
                if st.name.endswith(": controller"):
                    values = {v.key: v.value for v in st.values}
            if int(values.get("saturated_commands", 0)) > 0:
                break
        assert int(values.get("saturated_commands", 0)) > 0, (values, outcome.result)
        # the reference comes to rest (stop_time) and the arm settles on it
        assert wait_until(lambda: at_rest(client), 15), "the arm did not come to rest"
        settle = goal(measured(client) + [0.02, 0.0, 0.0])
        settle["goal_time_tolerance"] = {"sec": 5}  # a loaded machine may take its time
        again = send_goal(client, ACTION, TYPE, settle, timeout_s=10)
        assert again.status == SUCCEEDED, (again, stack.stop())
        logs = stack.stop()
    assert "saturated:" not in logs["plant"] and "rejected" not in logs["plant"], logs["plant"]


def test_a_trajectory_off_the_reference_is_refused_and_oversized_ones_before_decoding():
    env = private_domain(72)
    os.environ.update({k: env[k] for k in ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE")})
    with Stack(env, NODES) as stack, BusClient(discovery_s=0.5) as client:
        q0 = ready(client, stack.stop)
        node = create_node("goal_probe", [])
        try:
            m = Messages(node)
            pub = node.create_publisher("trajectory_msgs/msg/JointTrajectory",
                                        "/" + TRAJECTORY_TOPIC, qos="transient_local")
            far = q0 + np.array([1.5, 0.0, 0.0])
            knots = (np.array([0.0, 1.0]), np.vstack([far, far]), np.zeros((2, 3)),
                     np.zeros((2, 3)))
            # matched both ways: the writer's count says only that it sees the controller's
            # reader, and a volatile reader drops what came before it saw this writer
            time.sleep(1.0)
            pub.publish(m.joint_trajectory(0, NAMES, knots))
            # before the fix joint 1 swung towards q0 + 1.5 at 2.3 rad/s here
            assert farthest(client, q0, 2.0) < 0.02

            # 250 000 points: refused before the 12 MB are decoded (5 s of Python objects),
            # so the generator's heartbeat (every 0.5 s) goes on meanwhile
            point = m.JointTrajectoryPoint(positions=list(q0), time_from_start=m.duration(10**9))
            huge = m.JointTrajectory(joint_names=NAMES, points=[point] * 250_000)
            beats: list[float] = []
            node.create_subscription("diagnostic_msgs/msg/DiagnosticArray", "/diagnostics",
                                     lambda msg: beats.extend(
                                         time.monotonic() for s in msg.status
                                         if s.name.endswith("trajectory_generator")))
            done = threading.Event()
            spinner = threading.Thread(target=_spin, args=(node, done), daemon=True)
            spinner.start()
            sent = time.monotonic()
            try:
                outcome = send_goal(client, ACTION, TYPE, _goal_of(huge), timeout_s=30)
                took = time.monotonic() - sent
                time.sleep(1.0)
            finally:
                done.set()
                spinner.join(5)
            print(f"250 000-point goal answered in {took * 1e3:.0f} ms (client round trip, "
                  "its serialisation included)")
            assert outcome.status == ABORTED and outcome.result.error_code == -1, outcome
            assert "250000 points exceed" in outcome.result.error_string
            assert "before decoding" in outcome.result.error_string
            gaps = np.diff([sent, *[b for b in beats if b >= sent]])
            print(f"longest silence of the generator's heartbeat: {gaps.max():.2f} s")
            assert gaps.max() < 2.0, gaps  # (decoding it first: > 5 s)

            # 10 000 names: refused, and the lines it makes a node log stay short
            names = [f"joint_{i}" for i in range(10_000)]
            many = m.JointTrajectory(joint_names=names, points=[point])
            node.create_publisher("trajectory_msgs/msg/JointTrajectory",
                                  "/trajectory_generator/joint_trajectory").publish(many)
            pub.publish(many)
            bad = send_goal(client, ACTION, TYPE, _goal_of(many), timeout_s=10)
            assert bad.status == ABORTED and len(bad.result.error_string) < 1024
            assert "10000 joint names" in bad.result.error_string
            # the stack is still up and obeys
            again = send_goal(client, ACTION, TYPE, goal(q0 + [0.05, 0.0, 0.0]), timeout_s=10)
            assert again.status == SUCCEEDED, (again, stack.stop())
        finally:
            node.shutdown()
        logs = stack.stop()
    for name, text in logs.items():
        longest = max((len(line) for line in text.splitlines()), default=0)
        assert longest <= 1024, (name, longest)
    assert "point 0 is at time_from_start 0 but joint 'joint1' is 1.5" in logs["controller"]
    assert "10000 joint names" in logs["trajectory_generator"]


def _spin(node, done: threading.Event) -> None:
    while not done.is_set():
        node.spin_once(0.05)


def _goal_of(trajectory):
    """A FollowJointTrajectory goal message around ``trajectory``."""
    from robot_control.bus.dds.messages import MESSAGE_TYPES

    return MESSAGE_TYPES[TYPE + "_Goal"](trajectory=trajectory)


def test_a_goal_while_the_generator_is_not_active_is_aborted_with_the_reason():
    """Accept-then-abort, as the client needs the reason: a bare rejection has none."""
    env = private_domain(76)
    os.environ.update({k: env[k] for k in ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE")})
    with Stack(env, NODES) as stack, BusClient(discovery_s=0.5) as client:
        q0 = ready(client, stack.stop)
        assert change_state(client, "/trajectory_generator", "deactivate")
        outcome = send_goal(client, ACTION, TYPE, goal(q0 + [0.05, 0.0, 0.0]), timeout_s=10)
        assert outcome.accepted and outcome.status == ABORTED, outcome
        assert outcome.result.error_code == -1 and "not active" in outcome.result.error_string
        assert change_state(client, "/trajectory_generator", "activate")
        again = send_goal(client, ACTION, TYPE, goal(measured(client) + [0.02, 0.0, 0.0]),
                          timeout_s=10)
        assert again.status == SUCCEEDED, (again, stack.stop())
