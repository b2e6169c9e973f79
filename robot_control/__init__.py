"""robot_control: model-based manipulator control on a ROS 2 bus (or none)."""

__version__ = "0.1.0"
