"""Rigid-body dynamics on a RobotModel: Newton–Euler, composite bodies, articulated bodies, …"""

# first: it tells numba where to cache before any kernel is decorated
from robot_control.dynamics import compile_cache  # noqa: F401
from robot_control.dynamics.constrained import (
    constrained_forward_dynamics,
    constrained_hybrid_dynamics,
    constrained_inverse_dynamics,
    impact_velocity,
)
from robot_control.dynamics.contact import (
    ConstraintSet,
    constraint_terms,
    load_loop_constraints,
    loop_closure,
    point_contact,
    project_to_constraints,
    surface_contact,
)
from robot_control.dynamics.derivatives import (
    forward_dynamics_derivatives,
    hybrid_dynamics_derivatives,
    inverse_dynamics_derivatives,
    linearize,
)
from robot_control.dynamics.energy import kinetic_energy, potential_energy
from robot_control.dynamics.friction import friction_torques
from robot_control.dynamics.hybrid import hybrid_dynamics
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
    "ConstraintSet",
    "constrained_forward_dynamics",
    "constrained_hybrid_dynamics",
    "constrained_inverse_dynamics",
    "constraint_terms",
    "forward_dynamics_derivatives",
    "hybrid_dynamics",
    "hybrid_dynamics_derivatives",
    "impact_velocity",
    "inverse_dynamics_derivatives",
    "linearize",
    "load_loop_constraints",
    "loop_closure",
    "point_contact",
    "project_to_constraints",
    "surface_contact",
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
