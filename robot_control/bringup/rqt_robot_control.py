"""``rqt:=true`` (launch/control.launch.yaml): wait for the stack's controller, write the rqt
perspective for its joints (bringup/rqt_perspective.py), then become rqt_gui with it.

rqt_plot resolves each curve's topic once, when it starts, and silently drops one not yet in the
graph; so rqt starts only once the controller publishes ``~/controller_state``. The joint names
come from that message and their units from ``robot_description`` (the dynamics server's,
transient local), so any robot, scenario or namespace gets a perspective of its own. Needs ROS 2
(rclpy, rqt_gui, control_msgs); the launch file starts it with the stack's namespace:

    ros2 run robot_control rqt_robot_control [--namespace NS] [--timeout S] [--output FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from robot_control.bringup.rqt_layout import window_layout
from robot_control.bringup.rqt_perspective import (
    docks,
    joint_units,
    perspective,
    plot_docks,
    prefix,
    state_topic,
)
from robot_control.model.resources import user_cache_dir
from robot_control.model.robot_model import ModelError
from robot_control.model.urdf import parse_urdf

#: how long to wait for the controller by default: a first start compiles the stack's kernels
WAIT_S = 600.0
#: how long robot_description may lag behind the controller's first state (it comes first)
DESCRIPTION_S = 3.0


def wait_for_stack(namespace: str, timeout: float, ros_args: list[str]
                   ) -> tuple[list[str], str | None]:
    """The controller's joint names (from its first ~/controller_state) and robot_description
    (None if it did not come); TimeoutError when the controller says nothing within timeout."""
    import rclpy
    from control_msgs.msg import JointTrajectoryControllerState
    from rclpy.executors import ExternalShutdownException
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
    from std_msgs.msg import String

    rclpy.init(args=["rqt_robot_control", *ros_args])
    try:
        node = rclpy.create_node("rqt_robot_control")
        got: dict[str, object] = {}
        node.create_subscription(JointTrajectoryControllerState, state_topic(namespace),
                                 lambda m: got.setdefault("names", list(m.joint_names)),
                                 qos_profile_sensor_data)
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                             reliability=ReliabilityPolicy.RELIABLE)
        node.create_subscription(String, f"{prefix(namespace)}/robot_description",
                                 lambda m: got.setdefault("urdf", m.data), latched)
        _spin_until(node, lambda: "names" in got, timeout)
        if "names" not in got:
            raise TimeoutError(f"no {state_topic(namespace)} within {timeout:g} s: is the stack "
                               "running on this ROS_DOMAIN_ID "
                               f"({os.environ.get('ROS_DOMAIN_ID', '0')})?")
        _spin_until(node, lambda: "urdf" in got, DESCRIPTION_S)
        node.destroy_node()
    except ExternalShutdownException:  # Ctrl-C: rclpy's handler shut the context down
        raise KeyboardInterrupt from None
    finally:
        rclpy.try_shutdown()
    return got["names"], got.get("urdf")


def _spin_until(node, done, timeout: float) -> None:
    """Take the node's callbacks until done() or the timeout."""
    import rclpy

    deadline = time.monotonic() + timeout
    while not done() and time.monotonic() < deadline:
        rclpy.spin_once(node, timeout_sec=0.2)


def joint_types(urdf: str | None) -> dict[str, str]:
    """Joint name → URDF joint type of a robot_description ({} without one, or unreadable)."""
    if urdf is None:
        print("rqt_robot_control: no robot_description: every joint taken as revolute (rad)",
              file=sys.stderr)
        return {}
    try:
        return {j.name: j.type for j in parse_urdf(urdf)[2]}
    except ModelError as exc:
        print(f"rqt_robot_control: robot_description unreadable ({exc}): every joint taken as "
              "revolute (rad)", file=sys.stderr)
        return {}


def default_output(namespace: str) -> Path:
    """Where the perspective goes: the user cache, one file per namespace."""
    suffix = "_" + namespace.strip("/").replace("/", "_") if namespace.strip("/") else ""
    return user_cache_dir() / "rqt" / f"robot_control{suffix}.perspective"


def write_perspective(path: Path, names: list[str], urdf: str | None, namespace: str) -> Path:
    """The perspective for these joints, written whole (a reader never sees half of it)."""
    plots = plot_docks(state_topic(namespace), names, joint_units(names, joint_types(urdf)))
    data = perspective(plots, namespace, window_layout(*docks(plots)))
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(path.name + f".{os.getpid()}.part")
    part.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(part, path)
    return path


def rqt_gui() -> str:
    """rqt_gui's executable, from the ament index."""
    from ament_index_python.packages import get_package_prefix

    return str(Path(get_package_prefix("rqt_gui")) / "lib" / "rqt_gui" / "rqt_gui")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ros_args = argv[argv.index("--ros-args"):] if "--ros-args" in argv else []
    parser = argparse.ArgumentParser(prog="rqt_robot_control", description=__doc__.split("\n")[0])
    parser.add_argument("--namespace", default="", help="the stack's namespace ('' for none)")
    parser.add_argument("--timeout", type=float, default=WAIT_S,
                        help="seconds to wait for the controller's first state")
    parser.add_argument("--output", type=Path, help="the perspective file to write "
                        "(default: the user cache, rqt/robot_control[_NS].perspective)")
    parser.add_argument("--no-gui", action="store_true",
                        help="write the perspective and print its path, without starting rqt")
    args = parser.parse_args(argv[:len(argv) - len(ros_args)])
    print(f"rqt_robot_control: waiting for {state_topic(args.namespace)} (a first start of the "
          "stack compiles its kernels)", flush=True)
    try:
        names, urdf = wait_for_stack(args.namespace, args.timeout, ros_args)
    except TimeoutError as exc:
        print(f"rqt_robot_control: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # Ctrl-C of the launch before the stack was up: as its nodes do
        return 0
    path = write_perspective(args.output or default_output(args.namespace), names, urdf,
                             args.namespace)
    print(f"rqt_robot_control: {len(names)} joints ({', '.join(names)}): {path}", flush=True)
    if args.no_gui:
        return 0
    # on the Python running this (ROS 2's): rqt_gui's "env python3" may find another on PATH
    os.execv(sys.executable, [sys.executable, rqt_gui(), "--perspective-file", str(path)])
    return 0  # not reached: rqt_gui replaced this process


if __name__ == "__main__":
    sys.exit(main())
