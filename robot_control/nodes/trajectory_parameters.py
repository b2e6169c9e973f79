"""The trajectory generator's parameter tables (bus/param_table.py): its own motion, the
FollowJointTrajectory interface's (joint_trajectory_controller's names, this package's caps)
and what it does with a motion the arm cannot execute (nodes/motion_feasibility.py)."""

from __future__ import annotations

from dataclasses import dataclass

from robot_control.bus.param_table import param

#: what ``infeasible_motion`` may say
POLICIES = ("refuse", "scale")


@dataclass(frozen=True)
class TrajectoryParams:
    """The motion before any goal, and how the reference goes out."""

    default_motion: str = param(
        "sweep", "motion before any goal: 'sweep' through waypoints and back, a named example "
        "trajectory (huo_intended, huo_printed), or 'hold'", read_only=True)
    waypoints: tuple[float, ...] = param(
        (), "sweep waypoints, flattened (k × n); empty: ±0.3 rad about the start", read_only=True)
    segment_duration: float = param(1.5, "sweep segment time, s", range=(0.05, 600.0),
                                    read_only=True)
    loop: bool = param(True, "repeat the sweep", read_only=True)
    monitor_rate: float = param(
        100.0, "real time: rate of the sampled /joint_reference (for rqt, bags), Hz; 0: none "
        "(the controller gets the motion as knots)", range=(0.0, 10000.0), read_only=True)
    knot_interval: float = param(
        0.01, "a reference that is not made of quintics (an excitation) is sent as knots this "
        "far apart, s", range=(1e-4, 1.0), read_only=True)


@dataclass(frozen=True)
class JtcParams:
    """joint_trajectory_controller's goal rules and tolerances (and this package's caps)."""

    action_monitor_rate: float = param(
        20.0, "rate of FollowJointTrajectory feedback and of the checks of a goal without joint "
        "states, Hz (JTC's default 20)", range=(1.0, 1000.0), read_only=True)
    allow_partial_joints_goal: bool = param(
        False, "accept goals naming a subset of the joints (the others hold)")
    allow_nonzero_velocity_at_trajectory_end: bool = param(
        False, "accept trajectories whose last point has a velocity")
    max_trajectory_points: int = param(10_000, "a goal with more points is refused",
                                       range=(2, 1_000_000))
    max_trajectory_duration: float = param(
        600.0, "a goal ending later than this from now is refused, s", range=(0.1, 86_400.0))
    corner_blend: float = param(
        0.02, "a linear or cubic spline's corner is rounded by a quintic this long, s",
        range=(1e-4, 0.5))
    stop_time: float = param(
        0.25, "on cancel or a path violation the reference comes to rest from its current "
        "motion in this time, s (0: holds its position at once, as JTC)", range=(0.0, 5.0))
    stopped_velocity_tolerance: float = param(
        0.01, "a goal is reached only with every joint slower than this (the default goal "
        "velocity tolerance), rad/s or m/s; 0: not checked", range=(0.0, 100.0),
        name="constraints.stopped_velocity_tolerance")
    goal_time: float = param(
        1.0, "time after the trajectory's end for the goal tolerance to be met, s (finite: a "
        "goal always ends; JTC's 0 = forever)", range=(0.001, 60.0),
        name="constraints.goal_time")
    trajectory: tuple[float, ...] = param(
        0.0, "path position tolerance of {joint}; 0: not checked", range=(0.0, 100.0),
        name="constraints.{joint}.trajectory")
    goal: tuple[float, ...] = param(
        0.01, "goal position tolerance of {joint}; 0: not checked", range=(0.0, 100.0),
        name="constraints.{joint}.goal")


def _positive(limits: tuple[float, ...]) -> str | None:
    return None if all(float(a) > 0.0 for a in limits) else "needs values > 0"


@dataclass(frozen=True)
class FeasibilityParams:
    """A goal the arm cannot execute: refused or time-scaled; the acceleration limits."""

    infeasible_motion: str = param(
        "refuse", "a goal needing more torque, velocity or acceleration than the limits: "
        "'refuse' it (ABORTED, INVALID_GOAL, naming joint, time and torque) or 'scale' it "
        "(slowed down uniformly to the fastest feasible timing)", choices=POLICIES)
    acceleration_limits: tuple[float, ...] = param(
        (), "per-joint |q̈| limits a goal must respect, rad/s² or m/s² ({n} values; empty: none)",
        size="joint or empty", check=_positive)
