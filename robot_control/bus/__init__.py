"""The ROS 2 transport of robot_control: rclpy when a ROS 2 installation is sourced, else Cyclone
DDS speaking the ROS 2 wire conventions (docs/architecture.md, bus/).

Nodes use ``create_node(default_name, argv)`` (or a container's ``create_node``) and the
:class:`~robot_control.bus.node.Node` interface only; importing this package imports neither
rclpy nor cyclonedds (the backend is loaded when a node is created).
"""

from robot_control.bus.backend import BACKEND_ENV, choose_backend, create_container, create_node
from robot_control.bus.node import Container, Logger, Node, ParameterError

__all__ = ["BACKEND_ENV", "Container", "Logger", "Node", "ParameterError", "choose_backend",
           "create_container", "create_node"]
