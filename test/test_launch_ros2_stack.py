"""The stack as a ROS 2 user runs it: the installed package's ``control.launch.yaml`` under
launch_pytest (launch_ros starts the four node executables; on a sourced ROS 2 they use rclpy).
The nodes come up, managed, and ``ros2 lifecycle`` sees them brought up in order by the
lifecycle_manager; /joint_states arrives at the requested rate; ``ros2 param set`` swaps the law
and a refused value comes back with its reason; ``ros2 bag record`` records the stack.

The rate is checked at a modest 250 Hz (four Python nodes and this test share two cores with
whatever else runs) by counting messages over 5 s windows; a window spoiled by a stall of the
machine is measured again, at most three windows.
"""

from __future__ import annotations

import re
import threading
import time

import pytest
from ros2_env import (
    MOTION_ECHO,
    bag_topics,
    echoed_knots,
    record_bag,
    ros2,
    ros2_missing,
    wait_for,
)

if ros2_missing():
    pytest.skip(ros2_missing(), allow_module_level=True)

import domains  # noqa: E402
import launch_pytest  # noqa: E402
from launch.actions import RegisterEventHandler  # noqa: E402
from launch.event_handlers import OnProcessExit  # noqa: E402
from launch_helpers import Observer, check_managed_and_active, cli_env, stack_launch  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

import launch  # noqa: E402

pytestmark = pytest.mark.ros2
RATE_HZ = 250.0
NODES = {"/controller", "/dynamics_server", "/plant", "/trajectory_generator"}
UP_S = 180.0  # a fresh install compiles its kernels on the first start
DOMAIN = domains.claim("launch-stack")


EXITS: dict[str, int] = {}  # node process name -> exit code, as launch saw them end


@launch_pytest.fixture(scope="module")
def stack():
    record_exit = RegisterEventHandler(OnProcessExit(
        on_exit=lambda event, _context: EXITS.update({event.action.name: event.returncode})))
    return launch.LaunchDescription([record_exit, *stack_launch(DOMAIN, rate=str(RATE_HZ)),
                                     launch_pytest.actions.ReadyToTest()])


@pytest.fixture(scope="module")
def observer():
    node = Observer(DOMAIN)
    yield node
    node.close()


@pytest.fixture(scope="module")
def running(observer):
    """The stack is up and the loop closed: the controller answers the plant."""
    commands = []
    sub = observer.node.create_subscription(JointState, "/joint_command",
                                            lambda m: commands.append(m), 10)
    assert wait_for(lambda: NODES <= observer.node_names(), UP_S), observer.node_names()
    assert wait_for(lambda: len(commands) > 10, UP_S), "no /joint_command: the loop never closed"
    observer.node.destroy_subscription(sub)
    return observer


@pytest.mark.launch(fixture=stack)
def test_the_four_nodes_come_up(running):
    env = cli_env(DOMAIN)
    listed = set(ros2(env, "node", "list", "--no-daemon").split())
    assert NODES <= listed, listed
    info = ros2(env, "node", "info", "/plant", "--no-daemon")
    assert "/joint_states: sensor_msgs/msg/JointState" in info, info


@pytest.mark.launch(fixture=stack)
def test_ros2_lifecycle_sees_four_managed_nodes_brought_up_in_order(running):
    env = cli_env(DOMAIN)
    check_managed_and_active(env, NODES)
    assert "- deactivate [4]" in ros2(env, "lifecycle", "list", "/controller", "--no-daemon")
    assert wait_for(lambda: running.logged("lifecycle_manager", "stack active"), 30)
    # the motion started once the loop was closed
    assert running.logged("lifecycle_manager", "loop closed")


@pytest.mark.launch(fixture=stack)
def test_joint_states_arrive_at_the_requested_rate(running):
    arrivals = []
    lock = threading.Lock()

    def on_state(_msg) -> None:
        with lock:
            arrivals.append(time.monotonic())

    sub = running.node.create_subscription(JointState, "/joint_states", on_state, 100)
    try:
        rates = []
        for _ in range(3):
            with lock:
                arrivals.clear()
            time.sleep(5.0)
            with lock:
                rates.append((len(arrivals) - 1) / (arrivals[-1] - arrivals[0]))
            if abs(rates[-1] - RATE_HZ) <= 0.1 * RATE_HZ:
                break
    finally:
        running.node.destroy_subscription(sub)
    print(f"/joint_states at {RATE_HZ:.0f} Hz requested: measured {[round(r, 1) for r in rates]} Hz")
    assert abs(rates[-1] - RATE_HZ) <= 0.1 * RATE_HZ, rates


@pytest.mark.launch(fixture=stack)
def test_ros2_param_set_swaps_the_law_and_refusals_carry_reasons(running):
    env = cli_env(DOMAIN)
    assert "String value is: computed_torque" in ros2(env, "param", "get", "/controller",
                                                       "controller", "--no-daemon")
    out = ros2(env, "param", "set", "/controller", "controller", "adaptive", "--no-daemon")
    assert "Set parameter successful" in out, out
    assert wait_for(lambda: running.logged("controller",
                                           "controller swapped: computed_torque → adaptive"), 30)
    refused = ros2(env, "param", "set", "/controller", "controller", "warp_drive", "--no-daemon")
    assert "Setting parameter failed: unknown controller 'warp_drive'" in refused, refused
    refused = ros2(env, "param", "set", "/controller", "adaptive.kd", "[1.0, 2.0]", "--no-daemon")
    assert re.search(r"Setting parameter failed: adaptive: kd: wrong length 2: expected 3",
                     refused), refused
    assert "String value is: adaptive" in ros2(env, "param", "get", "/controller", "controller",
                                               "--no-daemon")
    kd = ros2(env, "param", "get", "/controller", "adaptive.kd", "--no-daemon")
    assert "[100.0, 20.0, 10.0]" in kd, kd  # untouched by the refusal


@pytest.mark.launch(fixture=stack)
def test_ros2_bag_records_the_launched_stack(running, tmp_path):
    topics = {"/joint_states": "sensor_msgs/msg/JointState",
              "/joint_command": "sensor_msgs/msg/JointState",
              "/controller/state": "sensor_msgs/msg/JointState"}
    info = record_bag(cli_env(DOMAIN), tmp_path / "launched", topics)
    assert re.search(r"Storage id:\s+mcap", info), info
    recorded = bag_topics(info)
    assert {t: recorded.get(t, ("?", 0))[0] for t in topics} == topics, info
    assert min(recorded[t][1] for t in topics) > 100, info  # 3 s at 250 Hz: hundreds each


@pytest.mark.launch(fixture=stack)
def test_the_motion_is_sent_once_as_knots_a_late_echo_still_gets(running):
    """rclpy route: the generator's motion on /controller/joint_trajectory (transient local)."""
    assert wait_for(lambda: running.logged("trajectory_generator", "reference starts from"), 60)
    out = ros2(cli_env(DOMAIN), *MOTION_ECHO, "--no-daemon", timeout=60)
    names, times = echoed_knots(out)
    assert names == ["joint1", "joint2", "joint3"] and times == [0.0, 1.5, 3.0], out


@pytest.mark.launch(fixture=stack, shutdown=True)
def test_every_node_exits_cleanly_when_launch_stops():
    """launch_pytest stops the launch after the tests: SIGINT to each node, as Ctrl-C does."""
    assert sorted(name.rsplit("-", 1)[0] for name in EXITS) == sorted(
        [n.lstrip("/") for n in NODES] + ["lifecycle_manager"]), EXITS
    assert set(EXITS.values()) == {0}, EXITS
