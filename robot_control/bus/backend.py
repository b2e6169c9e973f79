"""The choice of a node's transport: rclpy when a sourced ROS 2 installation makes it importable,
else Cyclone DDS speaking the ROS 2 wire conventions; ``ROBOT_CONTROL_BUS=rclpy|dds`` forces it.

Nodes call ``create_node`` / ``create_container`` here; the backends (bus/dds/, bus/ros/) import
only the interface (bus/node.py), so the choice is the one module that knows both.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Sequence

from robot_control.bus.node import Container, Node

BACKEND_ENV = "ROBOT_CONTROL_BUS"
BACKENDS = ("rclpy", "dds")


def rclpy_available() -> bool:
    return importlib.util.find_spec("rclpy") is not None


def choose_backend(backend: str | None = None) -> str:
    """The backend to use: the argument, else $ROBOT_CONTROL_BUS, else rclpy if importable."""
    choice = backend or os.environ.get(BACKEND_ENV, "").strip().lower() or None
    if choice is None:
        return "rclpy" if rclpy_available() else "dds"
    if choice not in BACKENDS:
        raise ValueError(f"unknown bus backend {choice!r} (from {BACKEND_ENV} or the argument); "
                         f"choose one of {BACKENDS}")
    return choice


def create_node(default_name: str, argv: Sequence[str] | None = None, *,
                backend: str | None = None, managed: bool = False) -> Node:
    """A node named ``default_name`` (unless ``__node:=`` renames it) on the chosen backend;
    ``managed``: a lifecycle node, starting unconfigured."""
    argv = list(sys.argv if argv is None else argv)
    if choose_backend(backend) == "rclpy":
        from robot_control.bus.ros.node import RclpyNode

        return RclpyNode(default_name, argv, managed=managed)
    from robot_control.bus.dds.node import DdsNode

    return DdsNode(default_name, argv, managed=managed)


def create_container(argv: Sequence[str] | None = None, *,
                     backend: str | None = None) -> Container:
    """A container for several nodes of this process on the chosen backend (see Container)."""
    argv = list(sys.argv if argv is None else argv)
    if choose_backend(backend) == "rclpy":
        from robot_control.bus.ros.node import RclpyContainer

        return RclpyContainer(argv)
    from robot_control.bus.dds.container import DdsContainer

    return DdsContainer(argv)
