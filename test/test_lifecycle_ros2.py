"""Managed nodes against a real ROS 2: the ``ros2 lifecycle`` CLI drives the lifecycle probe on
the DDS backend (no ROS 2 in its process), ``robot-control lifecycle`` drives it on the rclpy
backend (an rclpy LifecycleNode), and both print the same transition graph. Run by
``bash scripts/test_ros2.sh`` (or with ROS 2 sourced and the project's venv in
$ROBOT_CONTROL_DDS_PYTHON)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ros2_env import (
    STACK_NODES,
    Watched,
    dds_python,
    dds_python_missing,
    ros2,
    ros_env,
    start_dds_stack,
    wait_for,
    without_ros,
)

pytestmark = pytest.mark.ros2
PROBE = str(Path(__file__).with_name("lifecycle_probe.py"))


@pytest.fixture(scope="module")
def env():
    if dds_python_missing():
        pytest.skip(dds_python_missing())
    return ros_env("lifecycle-ros2")  # its ros2 daemon ends with the module (conftest)


@pytest.fixture(scope="module")
def dds_probe(env):
    with Watched([dds_python(), PROBE, "--ros-args", "-r", "__node:=lc_dds"],
                 without_ros(env)) as proc:
        assert proc.wait_for_line("lifecycle probe ready", 60), proc.output
        yield proc


@pytest.fixture(scope="module")
def rclpy_probe(env):
    with Watched([sys.executable, PROBE, "--ros-args", "-r", "__node:=lc_rclpy"],
                 {**env, "ROBOT_CONTROL_BUS": "rclpy"}) as proc:
        assert proc.wait_for_line("lifecycle probe ready", 60), proc.output
        yield proc


def lifecycle(env, *args: str) -> str:
    """``ros2 lifecycle …`` without a daemon."""
    return ros2(env, "lifecycle", *args, "--no-daemon", timeout=60)


def robot_control(env, *args: str) -> subprocess.CompletedProcess:
    """``robot-control lifecycle …`` as a user without ROS 2 runs it."""
    return subprocess.run([dds_python(), "-m", "robot_control.cli", "lifecycle", *args],
                          env=without_ros(env), capture_output=True, text=True, timeout=120)


def test_ros2_lifecycle_drives_a_managed_node_on_the_dds_backend(env, dds_probe):
    assert wait_for(lambda: "/lc_dds" in lifecycle(env, "nodes").split(), 30)
    assert lifecycle(env, "get", "/lc_dds").strip() == "unconfigured [1]"
    assert "- configure [1]\n\tStart: unconfigured\n\tGoal: configuring" in \
        lifecycle(env, "list", "/lc_dds")
    events = Watched(["ros2", "topic", "echo", "/lc_dds/transition_event",
                      "lifecycle_msgs/msg/TransitionEvent"], env)
    try:
        # the event topic is volatile: the echo must be matched before the transition
        assert wait_for(lambda: "Subscription count: 1" in ros2(
            env, "topic", "info", "/lc_dds/transition_event", "--no-daemon"), 30)
        out = lifecycle(env, "set", "/lc_dds", "configure")
        assert "Transitioning successful" in out, out
        assert events.wait_for_line(r"label: configuring", 15), events.output
        assert events.wait_for_line(r"label: inactive", 5), events.output
    finally:
        events.stop()
    assert "Transitioning successful" in lifecycle(env, "set", "/lc_dds", "activate")
    assert lifecycle(env, "get", "/lc_dds").strip() == "active [3]"
    echo = ros2(env, "topic", "echo", "--once", "/lc_dds/out", "std_msgs/msg/String", timeout=30)
    assert "data: tick" in echo, echo
    unknown = lifecycle(env, "set", "/lc_dds", "activate")
    assert "Unknown transition requested" in unknown and "- deactivate [4]" in unknown
    assert "Transitioning successful" in lifecycle(env, "set", "/lc_dds", "deactivate")
    assert lifecycle(env, "get", "/lc_dds").strip() == "inactive [2]"
    for out in (events.output, echo):
        assert "type hash" not in out.lower(), out


def test_robot_control_lifecycle_drives_an_rclpy_lifecycle_node(env, rclpy_probe):
    assert wait_for(lambda: "/lc_rclpy" in robot_control(env, "nodes").stdout.split(), 30)
    assert robot_control(env, "get", "/lc_rclpy").stdout.strip() == "unconfigured [1]"
    for transition in ("configure", "activate"):
        done = robot_control(env, "set", "/lc_rclpy", transition)
        assert done.returncode == 0 and "Transitioning successful" in done.stdout, done.stderr
    assert robot_control(env, "get", "/lc_rclpy").stdout.strip() == "active [3]"
    assert "data: tick" in ros2(env, "topic", "echo", "--once", "/lc_rclpy/out",
                                "std_msgs/msg/String", timeout=30)
    assert rclpy_probe.wait_for_line(r"hook on_activate from inactive", 5)
    # a fault while active: deactivating → errorprocessing → unconfigured, as on DDS
    assert "Set parameter successful" in ros2(env, "param", "set", "/lc_rclpy", "fault",
                                              "plant diverged")
    assert robot_control(env, "get", "/lc_rclpy").stdout.strip() == "unconfigured [1]"
    assert rclpy_probe.wait_for_line(r"hook on_error from active", 5), rclpy_probe.output
    # a hook that raises is an ERROR on rclpy too
    ros2(env, "param", "set", "/lc_rclpy", "raise_on", "on_configure")
    failed = robot_control(env, "set", "/lc_rclpy", "configure")
    assert failed.returncode == 1 and "Transitioning failed" in failed.stderr
    assert robot_control(env, "get", "/lc_rclpy").stdout.strip() == "unconfigured [1]"


def test_both_backends_show_rcls_transition_graph(env, dds_probe, rclpy_probe):
    wait_for(lambda: {"/lc_dds", "/lc_rclpy"} <= set(lifecycle(env, "nodes").split()), 30)
    ours = lifecycle(env, "list", "/lc_dds", "-a")
    theirs = lifecycle(env, "list", "/lc_rclpy", "-a")
    assert ours.count("\n- ") == 24 and ours == theirs
    states = ros2(env, "service", "call", "/lc_dds/get_available_states",
                  "lifecycle_msgs/srv/GetAvailableStates")
    assert states.count("lifecycle_msgs.msg.State(") == 11 and "errorprocessing" in states


def test_the_lifecycle_manager_on_rclpy_brings_up_nodes_of_both_backends(env):
    dds = Watched([dds_python(), PROBE, "--ros-args", "-r", "__node:=m_dds"], without_ros(env))
    rcl = Watched([sys.executable, PROBE, "--ros-args", "-r", "__node:=m_rclpy"],
                  {**env, "ROBOT_CONTROL_BUS": "rclpy"})
    manager = None
    try:
        for probe in (dds, rcl):
            assert probe.wait_for_line("lifecycle probe ready", 60), probe.output
        manager = Watched([sys.executable, "-m", "robot_control.nodes.lifecycle_manager",
                           "--ros-args", "-p", "node_names:=[m_dds, m_rclpy]",
                           "-p", "start_after_loop_closed:=[m_rclpy]",
                           "-p", "loop_topic:=/m_dds/out",
                           "-p", "loop_topic_type:=std_msgs/msg/String"],
                          {**env, "ROBOT_CONTROL_BUS": "rclpy"})
        assert manager.wait_for_line(r"stack active: m_dds, m_rclpy", 90), manager.output
        assert "/m_dds: active [3]" in lifecycle(env, "get")
        assert "/m_rclpy: active [3]" in lifecycle(env, "get")
    finally:
        for proc in (manager, dds, rcl):
            if proc is not None:
                proc.stop()


def test_ros2_lifecycle_drives_the_stack_launched_without_ros(env):
    """``robot-control launch`` (DDS backend): ``ros2 lifecycle`` sees four managed nodes, all
    active; deactivating the controller makes the plant hold, activating it resumes."""
    stack = start_dds_stack(env, "rate:=250")
    try:
        assert stack.wait_for_line(r"stack active", 180), stack.output[-3000:]
        assert set(STACK_NODES) <= set(lifecycle(env, "nodes").split())
        states = lifecycle(env, "get")
        assert all(f"{node}: active [3]" in states for node in STACK_NODES), states
        assert "Transitioning successful" in lifecycle(env, "set", "/controller", "deactivate")
        assert lifecycle(env, "get", "/controller").strip() == "inactive [2]"
        assert stack.wait_for_line(r"\[plant\].*no valid /joint_command", 10), stack.output
        assert "Transitioning successful" in lifecycle(env, "set", "/controller", "activate")
        assert stack.wait_for_line(r"\[plant\].*commands are back", 10), stack.output
        assert lifecycle(env, "get", "/controller").strip() == "active [3]"
    finally:
        stack.stop()


def test_an_invalid_transition_is_refused_with_a_reason_and_the_rclpy_node_lives_on(env):
    """The issue-23 probe: ``change_state`` with a transition the state does not have (activate
    while active) killed an rclpy LifecycleNode (RCLError in the service, ros2/rclpy#1209)."""
    with Watched([sys.executable, PROBE, "--ros-args", "-r", "__node:=lc_guard"],
                 {**env, "ROBOT_CONTROL_BUS": "rclpy"}) as proc:
        assert proc.wait_for_line("lifecycle probe ready", 60), proc.output
        for transition in ("configure", "activate"):
            assert "Transitioning successful" in lifecycle(env, "set", "/lc_guard", transition)
        for request in ("{transition: {id: 3}}", "{transition: {label: configure}}",
                        "{transition: {id: 42}}"):
            answer = ros2(env, "service", "call", "/lc_guard/change_state",
                          "lifecycle_msgs/srv/ChangeState", request, timeout=60)
            assert "success=False" in answer, answer
        assert proc.wait_for_line(r"refused transition 3: not available from state 'active'", 5)
        assert proc.proc.poll() is None, proc.output  # alive, and still serving
        assert lifecycle(env, "get", "/lc_guard").startswith("active [3]")
        assert "Transitioning successful" in lifecycle(env, "set", "/lc_guard", "deactivate")


def test_ctrl_c_of_the_rclpy_manager_while_a_configure_is_never_answered(env):
    """A node that never answers its configure (it hangs, or Ctrl-C killed it first): the rclpy
    manager's SIGINT still ends it within seconds with status 0 (it waited out
    transition_timeout, and ``ros2 launch`` escalated to SIGKILL: CI's failure)."""
    rcl_env = {**env, "ROBOT_CONTROL_BUS": "rclpy"}
    probes = [Watched([sys.executable, PROBE, "--ros-args", "-r", f"__node:={name}",
                       *(["-p", "hang_on:=on_configure"] if name == "h_hangs" else [])], rcl_env)
              for name in ("h_fine", "h_hangs")]
    manager = None
    try:
        for probe in probes:
            assert probe.wait_for_line("lifecycle probe ready", 60), probe.output
        manager = Watched([sys.executable, "-m", "robot_control.nodes.lifecycle_manager",
                           "--ros-args", "-p", "node_names:=[h_fine, h_hangs]",
                           "-p", "transition_timeout:=300"], rcl_env)
        assert manager.wait_for_line(r"h_fine: configured in", 90), manager.output
        assert probes[1].wait_for_line(r"hook on_configure", 30), probes[1].output
        asked = time.monotonic()
        manager.proc.send_signal(signal.SIGINT)
        assert manager.proc.wait(30) == 0, manager.output
        assert time.monotonic() - asked < 5.0, manager.output
    finally:
        for proc in (manager, *probes):
            if proc is not None:
                proc.stop()
