"""Robot models: the kinematic tree, its loaders and the bundled robots."""

from robot_control.model.dh import load_dh_yaml
from robot_control.model.loader import bundled_robots, load_robot
from robot_control.model.robot_model import (
    Body,
    Frame,
    Inertia,
    Joint,
    JointFriction,
    ModelError,
    RobotModel,
)
from robot_control.model.urdf import load_urdf

__all__ = [
    "Body",
    "Frame",
    "Inertia",
    "Joint",
    "JointFriction",
    "ModelError",
    "RobotModel",
    "bundled_robots",
    "load_dh_yaml",
    "load_robot",
    "load_urdf",
]
