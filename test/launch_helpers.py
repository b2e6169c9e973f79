"""Pieces the ROS 2 tests share: the package's launch file through launch_ros (launch_pytest
tests), and an rclpy node of the test's own on a given domain (own context, spun by a thread)."""

from __future__ import annotations

import os
import threading

import rclpy
from ament_index_python.packages import get_package_share_directory
from launch.actions import IncludeLaunchDescription, SetEnvironmentVariable
from launch.launch_description_sources import AnyLaunchDescriptionSource
from rcl_interfaces.msg import Log
from rclpy.executors import SingleThreadedExecutor
from ros2_env import ros2, wait_for


def stack_launch(domain: int, file: str = "control.launch.yaml", /, **arguments: str) -> list:
    """Actions that run a launch file of the installed package (``launch/control.launch.yaml``
    unless told) with arguments, on a private domain and loopback discovery."""
    share = get_package_share_directory("robot_control")
    return [
        SetEnvironmentVariable("ROS_DOMAIN_ID", str(domain)),
        SetEnvironmentVariable("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST"),
        IncludeLaunchDescription(
            AnyLaunchDescriptionSource(os.path.join(share, "launch", file)),
            launch_arguments=list(arguments.items())),
    ]


def cli_env(domain: int) -> dict[str, str]:
    """Environment for ``ros2`` commands on the launched stack's domain."""
    return {**os.environ, "ROS_DOMAIN_ID": str(domain),
            "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}


def check_managed_and_active(env: dict[str, str], nodes: set[str]) -> None:
    """``ros2 lifecycle nodes`` lists exactly ``nodes`` and ``ros2 lifecycle get`` has each
    active."""
    assert set(ros2(env, "lifecycle", "nodes", "--no-daemon").split()) == nodes
    states = ros2(env, "lifecycle", "get", "--no-daemon")
    assert all(f"{node}: active [3]" in states for node in nodes), states


class Observer:
    """An rclpy node in its own context on ``domain``, spinning in a thread; it keeps every
    /rosout line it hears in ``logs`` as (node name, message)."""

    def __init__(self, domain: int, name: str = "launch_test"):
        os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"  # rcl reads it at init
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = rclpy.create_node(name, context=self.context)
        self.logs: list[tuple[str, str]] = []
        self.node.create_subscription(Log, "/rosout",
                                      lambda m: self.logs.append((m.name, m.msg)), 1000)
        self._executor = SingleThreadedExecutor(context=self.context)
        self._executor.add_node(self.node)
        self._thread = threading.Thread(target=self._executor.spin, daemon=True)
        self._thread.start()

    def in_spin_thread(self, call, *args, timeout: float = 30.0, **kwargs):
        """``call(*args, **kwargs)`` run by the spinning thread; its return value."""
        task = self._executor.create_task(call, *args, **kwargs)
        assert wait_for(task.done, timeout, every=0.001), \
            f"the spin thread did not run {call} in {timeout} s"
        return task.result()

    def node_names(self) -> set[str]:
        return {ns.rstrip("/") + "/" + name
                for name, ns in self.node.get_node_names_and_namespaces()}

    def logged(self, node: str, text: str) -> bool:
        return any(n == node and text in m for n, m in self.logs)

    def keep_joint_states(self) -> None:
        """Keep every /joint_states position by stamp (ns) in ``states``, under ``lock``: kept
        until taken, since the test's offline run (compiling in this process) can hold this
        node's executor off for seconds while a lockstep stack runs on."""
        import numpy as np
        from sensor_msgs.msg import JointState

        self.states: dict[int, np.ndarray] = {}
        self.lock = threading.Lock()

        def on_state(msg) -> None:
            with self.lock:
                self.states[msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec] = \
                    np.asarray(msg.position, dtype=float)

        self.node.create_subscription(JointState, "/joint_states", on_state, 1_000_000)

    def close(self) -> None:
        self._executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)
        self._thread.join(5)


def joint_state_observer(domain: int):
    """A module fixture's body: an Observer keeping /joint_states, made before the launch (a
    lockstep plant waits for it: ``lockstep_launch``), closed after."""
    node = Observer(domain)
    node.keep_joint_states()
    yield node
    node.close()


def lockstep_launch(domain: int, scenario: str, rate: float, controller: str, **arguments: str):
    """The launch file in lockstep on a scenario, its plant starting once controller,
    trajectory generator and the test's observer are subscribed, so no state is lost (the
    dynamics server listens to states only while a controller subscribes to its terms)."""
    import launch_pytest
    from launch_ros.actions import SetParameter

    import launch

    return launch.LaunchDescription([
        SetParameter(name="lockstep_start_subscribers", value=3),
        *stack_launch(domain, scenario=scenario, lockstep="true", rate=str(float(rate)),
                      controller=controller, **arguments),
        launch_pytest.actions.ReadyToTest(),
    ])
