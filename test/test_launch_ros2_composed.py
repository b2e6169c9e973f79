"""``ros2 launch robot_control control.launch.yaml composed:=true`` (launch_pytest, the installed
package, rclpy): the four nodes and the lifecycle manager run in one process, the
robot_control_container executable, and ROS 2's tools still see five separate nodes — ``ros2 node
list``, ``ros2 lifecycle get``, ``ros2 param get`` — and the topics (``ros2 topic echo``); the
loop closes, and Ctrl-C ends the one process cleanly."""

from __future__ import annotations

import pytest
from ros2_env import ros2, ros2_missing, wait_for

if ros2_missing():
    pytest.skip(ros2_missing(), allow_module_level=True)

import domains  # noqa: E402
import launch_pytest  # noqa: E402
from launch.actions import RegisterEventHandler  # noqa: E402
from launch.event_handlers import OnProcessExit  # noqa: E402
from launch_helpers import Observer, cli_env, stack_launch  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

import launch  # noqa: E402

pytestmark = pytest.mark.ros2
MANAGED = {"/controller", "/dynamics_server", "/plant", "/trajectory_generator"}
NODES = MANAGED | {"/lifecycle_manager"}
UP_S = 180.0  # a fresh install compiles its kernels on the first start
DOMAIN = domains.claim("launch-composed")
EXITS: dict[str, int] = {}  # process name -> exit code, as launch saw it end


@launch_pytest.fixture(scope="module")
def stack():
    record_exit = RegisterEventHandler(OnProcessExit(
        on_exit=lambda event, _context: EXITS.update({event.action.name: event.returncode})))
    return launch.LaunchDescription([record_exit,
                                     *stack_launch(DOMAIN, composed="true", rate="250.0"),
                                     launch_pytest.actions.ReadyToTest()])


@pytest.fixture(scope="module")
def running():
    node = Observer(DOMAIN)
    commands = []
    sub = node.node.create_subscription(JointState, "/joint_command",
                                        lambda m: commands.append(m), 10)
    try:
        assert wait_for(lambda: NODES <= node.node_names(), UP_S), node.node_names()
        assert wait_for(lambda: len(commands) > 10, UP_S), "no /joint_command: no closed loop"
        node.node.destroy_subscription(sub)
        yield node
    finally:
        node.close()


@pytest.mark.launch(fixture=stack)
def test_ros2_tools_see_five_nodes_in_the_one_process(running):
    env = cli_env(DOMAIN)
    assert NODES <= set(ros2(env, "node", "list", "--no-daemon").split())
    states = ros2(env, "lifecycle", "get", "--no-daemon")
    assert all(f"{node}: active [3]" in states for node in MANAGED), states
    assert "String value is: computed_torque" in ros2(env, "param", "get", "/controller",
                                                       "controller", "--no-daemon")
    info = ros2(env, "node", "info", "/plant", "--no-daemon")
    assert "/joint_states: sensor_msgs/msg/JointState" in info, info
    echo = ros2(env, "topic", "echo", "/joint_states", "--once", "--no-daemon", timeout=60)
    assert "name:" in echo and "- joint1" in echo, echo
    assert wait_for(lambda: running.logged("lifecycle_manager", "stack active"), 30)


@pytest.mark.launch(fixture=stack, shutdown=True)
def test_the_container_exits_cleanly_when_launch_stops():
    assert [name.rsplit("-", 1)[0] for name in EXITS] == ["robot_control_container"], EXITS
    assert set(EXITS.values()) == {0}, EXITS
