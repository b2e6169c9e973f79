"""Rigid-body dynamics on a RobotModel: Newton–Euler, composite bodies, articulated bodies, …"""

from robot_control.dynamics.energy import kinetic_energy, potential_energy
from robot_control.dynamics.friction import friction_torques
from robot_control.dynamics.kinematics import (
    forward_kinematics,
    frame_placement,
    jacobian,
    jacobian_dot_qd,
    task_space_dynamics,
)
from robot_control.dynamics.regressor import (
    ParameterBasis,
    base_parameters,
    parameter_basis,
    reference_regressor,
    regressor,
    slotine_li_torque,
)
from robot_control.dynamics.rigid_body import (
    bias_torques,
    coriolis_matrix,
    forward_dynamics,
    forward_dynamics_cholesky,
    gravity_torques,
    inverse_dynamics,
    mass_matrix,
)

__all__ = [
    "ParameterBasis",
    "base_parameters",
    "parameter_basis",
    "reference_regressor",
    "regressor",
    "slotine_li_torque",
    "forward_kinematics",
    "frame_placement",
    "friction_torques",
    "jacobian",
    "jacobian_dot_qd",
    "kinetic_energy",
    "potential_energy",
    "task_space_dynamics",
    "bias_torques",
    "coriolis_matrix",
    "forward_dynamics",
    "forward_dynamics_cholesky",
    "gravity_torques",
    "inverse_dynamics",
    "mass_matrix",
]
