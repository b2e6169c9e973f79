"""Reference trajectories: quintic polynomials (Huo Ex. 3-7) in joint and task space."""

# first: numba fixes a kernel's cache folder when the kernel is defined, so the user cache
# (dynamics/compile_cache.py) is set before this room's kernels, whatever a process imports
from robot_control.dynamics import compile_cache  # noqa: F401, I001

# isort: split
from robot_control.foundation.spatial import rotation_exp, rotation_log
from robot_control.trajectory.cartesian import CartesianQuintic
from robot_control.trajectory.examples import (
    NAMED_TRAJECTORIES,
    huo_intended,
    huo_printed,
    named_trajectory,
)
from robot_control.trajectory.joint_trajectory import (
    Hold,
    JointTrajectory,
    Trajectory,
    rest_to_rest_durations,
    via_acceleration_heuristic,
    via_velocity_heuristic,
)
from robot_control.trajectory.limits import limit_violations, pieces_extrema, segment_extrema
from robot_control.trajectory.quintic import Quintic, quintic_coefficients

__all__ = [
    "NAMED_TRAJECTORIES",
    "CartesianQuintic",
    "Hold",
    "JointTrajectory",
    "Quintic",
    "Trajectory",
    "huo_intended",
    "huo_printed",
    "limit_violations",
    "named_trajectory",
    "pieces_extrema",
    "quintic_coefficients",
    "rest_to_rest_durations",
    "rotation_exp",
    "rotation_log",
    "segment_extrema",
    "via_acceleration_heuristic",
    "via_velocity_heuristic",
]
