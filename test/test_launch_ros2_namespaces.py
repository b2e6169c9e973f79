"""Two robots on one ROS domain as a ROS 2 user starts them: ``ros2 launch
robot_control control.launch.yaml namespace:=left composed:=true`` (one container) and
``namespace:=right`` (five processes), rclpy nodes, seen and driven with the real ``ros2`` CLI —
node list, a parameter set on one stack only, one stack's states echoed — and the ROS naming
rules enforced by rcl for a namespace that breaks them.
"""

from __future__ import annotations

import pytest
from ros2_env import Watched, ros2, ros2_missing, ros_env, wait_for

if ros2_missing():
    pytest.skip(ros2_missing(), allow_module_level=True)

pytestmark = pytest.mark.ros2
UP_S = 240.0  # two stacks compile and come up on a shared 2-core machine
STACK = ("controller", "plant", "trajectory_generator", "dynamics_server", "lifecycle_manager")


def _launch(env, *args: str) -> Watched:
    return Watched(["ros2", "launch", "robot_control", "control.launch.yaml", "rate:=250", *args],
                   env)


@pytest.fixture(scope="module")
def two_stacks():
    env = ros_env("ros2-namespaces")
    left = _launch(env, "namespace:=left", "composed:=true")  # one container: -r __ns:= for all
    right = _launch(env, "namespace:=right")  # five processes
    try:
        yield env, left, right
    finally:
        right.stop(30.0)
        left.stop(30.0)


def _param(env, node: str, name: str) -> str:
    return ros2(env, "param", "get", node, name, "--no-daemon")


@pytest.mark.timeout(600)
def test_ros2_launch_namespace_left_and_right_share_one_domain_without_cross_talk(two_stacks):
    env, left, right = two_stacks
    expected = {f"/{ns}/{n}" for ns in ("left", "right") for n in STACK}
    listed: set[str] = set()

    def all_listed() -> bool:
        listed.update(ros2(env, "node", "list", "--no-daemon").split())
        return expected <= listed

    assert wait_for(all_listed, UP_S, every=2.0), (sorted(listed), left.output[-3000:],
                                                  right.output[-3000:])
    for stack in (left, right):  # each manager brings up its own namespace's nodes
        assert stack.wait_for_line("stack active", UP_S), stack.output[-3000:]
    echo = ros2(env, "topic", "echo", "/left/joint_states", "--once", "--no-daemon", timeout=60)
    assert "name:" in echo and "joint1" in echo, echo
    out = ros2(env, "param", "set", "/right/controller", "controller", "adaptive", "--no-daemon")
    assert "Set parameter successful" in out, out
    assert "String value is: adaptive" in _param(env, "/right/controller", "controller")
    assert "String value is: computed_torque" in _param(env, "/left/controller", "controller")
    # the prefix of each stack's frames is its namespace (robot_state_publisher's convention)
    assert "String value is: left/" in _param(env, "/left/plant", "frame_prefix")
    # the params files' /**/<node> sections reached the namespaced nodes
    assert "Double value is: 0.05" in _param(env, "/right/plant", "command_timeout")
    assert left.proc.poll() is None and right.proc.poll() is None


@pytest.mark.timeout(300)
def test_ros2_launch_of_an_invalid_namespace_fails_with_the_naming_rule():
    env = ros_env("ros2-namespaces-invalid")
    with _launch(env, "namespace:=1arm") as bad:
        line = wait_for(lambda: bad.proc.poll() is not None or
                        any("must not start with a number" in x or "digit" in x
                            for x in bad.lines), 120.0)
        assert line, bad.output[-3000:]
        assert any("namespace" in x.lower() and ("number" in x or "digit" in x)
                   for x in bad.lines), bad.output[-3000:]
