"""Torque-feasible motions (trajectory/feasibility.py): the effort check along the interpolated
reference with the package's own inverse dynamics, its sampling, the uniform slowdown that makes
a motion exactly feasible, and a FollowJointTrajectory goal refused or time-scaled by
``infeasible_motion`` (nodes/motion_feasibility.py) in the follower."""

import subprocess
import sys
import time

import numpy as np
import pytest
import yaml
from test_follow_joint_trajectory import NS, T0, Controller, Log, goal, rules, track

from robot_control.dynamics import inverse_dynamics
from robot_control.model import load_robot
from robot_control.nodes.follow_joint_trajectory import ABORTED, SUCCEEDED, TrajectoryFollower
from robot_control.nodes.motion_feasibility import MotionCheck, check_feasible
from robot_control.nodes.trajectory_parameters import FeasibilityParams
from robot_control.nodes.validation import Rejected
from robot_control.sim.scenario import load_scenario
from robot_control.trajectory import Hold, JointTrajectory
from robot_control.trajectory.feasibility import (
    MIN_INTERVALS,
    TOLERANCE,
    Limits,
    check_motion_feasible,
    scaled_to_limits,
    time_scaled,
)
from robot_control.trajectory.jtc_goal import INVALID_GOAL, SUCCESSFUL
from robot_control.trajectory.tolerances import Tolerances

PUMA = load_robot("puma560")
DDARM = load_robot("ddarm")
Q0 = np.array([0.0, 0.5, -1.0, 0.0, 0.5, 0.0])


def dense_torque(model, trajectory, count=20_001):
    """|τ| at ``count`` times over the motion: the truth the check's samples stand for."""
    t = np.linspace(0.0, trajectory.duration, count)
    q, qd, qdd = trajectory.sample(t)
    return np.array([inverse_dynamics(model, *x) for x in zip(q, qd, qdd, strict=True)]), t


def test_a_slow_move_is_feasible_and_5_mrad_in_4_ms_is_not():
    slow = JointTrajectory([0.0, 2.0], [Q0, Q0 + 0.3])
    verdict = check_motion_feasible(PUMA, slow)
    assert verdict.feasible and verdict.violation is None and verdict.slowdown == 1.0
    assert 0.0 < verdict.peak_effort_ratio < 1.0
    fast = JointTrajectory([0.0, 0.004], [Q0, Q0 + 0.005])
    # inside every position and velocity limit: only the torque says no
    assert fast.check_limits(PUMA.lower, PUMA.upper, PUMA.velocity_limit) == []
    verdict = check_motion_feasible(PUMA, fast)
    v = verdict.violation
    assert not verdict.feasible and v.kind == "effort" and v.unit == "N·m"
    assert v.joint in PUMA.joint_names and 0.0 <= v.time <= 0.004
    j = PUMA.joint_names.index(v.joint)
    assert abs(v.needed) > PUMA.effort_limit[j] == v.limit
    tau = inverse_dynamics(PUMA, *(x for x in fast.sample(v.time)))
    assert tau[j] == pytest.approx(v.needed, rel=1e-9)  # the torque named is the real one
    assert f"joint '{v.joint}' needs torque" in str(v) and "effort limit" in str(v)
    assert verdict.slowdown > 5.0


def test_a_short_violent_segment_between_slow_ones_is_found():
    """A 4 ms step between 1 s segments: sampling the whole motion uniformly (200 samples over
    3 s) steps over it; sampling every segment does not."""
    P = [Q0, Q0 + 0.1, Q0 + 0.105, Q0 + 0.2]
    spike = JointTrajectory([0.0, 1.0, 1.004, 2.004], P, [np.zeros(6)] * 4, [np.zeros(6)] * 4)
    t = np.linspace(0.0, spike.duration, 200)
    q, qd, qdd = spike.sample(t)
    uniform = np.array([inverse_dynamics(PUMA, *x) for x in zip(q, qd, qdd, strict=True)])
    assert (np.abs(uniform) <= PUMA.effort_limit).all()  # what a coarse check would pass
    verdict = check_motion_feasible(PUMA, spike)
    assert not verdict.feasible and 1.0 <= verdict.violation.time <= 1.004


def test_a_peak_between_the_first_samples_is_found_by_refinement():
    """A rest-to-rest quintic's torque peaks between its 8-interval samples; with the limit
    just under the true peak the first samples are all within it, the refined ones are not."""
    motion = JointTrajectory([0.0, 0.5], [Q0, Q0 + np.array([0.4, 0, 0, 0, 0, 0])])
    tau, t = dense_torque(PUMA, motion)
    truth = np.abs(tau[:, 0]).max()
    coarse = motion.sample(np.linspace(0.0, 0.5, MIN_INTERVALS + 1))
    first = max(abs(inverse_dynamics(PUMA, *x)[0]) for x in zip(*coarse, strict=True))
    limit = truth * (1.0 - TOLERANCE / 2)
    assert first < limit < truth  # the first samples alone would pass it
    limits = Limits(PUMA.joint_names, np.r_[limit, np.full(5, np.inf)], np.full(6, np.inf),
                    np.full(6, np.inf), ["N·m"] * 6)
    verdict = check_motion_feasible(PUMA, motion, limits)
    assert not verdict.feasible and verdict.violation.joint == "joint1"
    assert abs(verdict.violation.needed) > limit
    # with the limit TOLERANCE above the truth it passes: the refinement is not just "refuse"
    limits = Limits(PUMA.joint_names, np.r_[truth * (1 + TOLERANCE), np.full(5, np.inf)],
                    np.full(6, np.inf), np.full(6, np.inf), ["N·m"] * 6)
    assert check_motion_feasible(PUMA, motion, limits).feasible


@pytest.mark.parametrize("model, q0, step", [(PUMA, Q0, 0.005),
                                              (DDARM, np.array([-0.1, 1.5, 1.0]), 0.005)])
def test_the_uniform_slowdown_makes_the_motion_exactly_feasible(model, q0, step):
    fast = JointTrajectory([0.0, 0.004, 0.008], [q0, q0 + step, q0])
    scaled, k, first = scaled_to_limits(model, fast)
    assert not first.feasible and k > 1.0
    assert scaled.duration == pytest.approx(0.008 * k)
    verdict = check_motion_feasible(model, scaled)
    assert verdict.feasible and verdict.peak_effort_ratio == pytest.approx(1.0, abs=1e-6)
    tau, _ = dense_torque(model, scaled)
    assert (np.abs(tau) / model.effort_limit).max() <= 1.0 + TOLERANCE  # between samples too
    assert not check_motion_feasible(model, time_scaled(fast, 0.99 * k)).feasible


def test_gravity_beyond_the_limit_cannot_be_scaled_away():
    weak = Limits.of(PUMA)  # joint 2 holds the arm against gravity with far more than 1 N·m
    weak = Limits(weak.names, np.ones(6), weak.velocity, weak.acceleration, weak.units)
    motion = JointTrajectory([0.0, 0.01], [Q0, Q0 + 0.001])
    verdict = check_motion_feasible(PUMA, motion, weak)
    assert not verdict.feasible and verdict.slowdown == np.inf
    with pytest.raises(ValueError, match="no slower timing"):
        scaled_to_limits(PUMA, motion, weak)


def test_velocity_and_acceleration_limits_are_checked_exactly():
    move = JointTrajectory([0.0, 1.0], [Q0, Q0 + np.r_[1.0, np.zeros(5)]])  # peak 15/8 rad/s
    free = np.full(6, np.inf)  # effort unlimited: these limits alone
    slow = Limits(PUMA.joint_names, free, np.full(6, 1.5), free, ["N·m"] * 6)
    verdict = check_motion_feasible(PUMA, move, slow)
    assert verdict.violation.kind == "velocity" and verdict.violation.unit == "rad/s"
    assert verdict.violation.needed == pytest.approx(15 / 8)
    assert verdict.slowdown == pytest.approx(15 / 8 / 1.5)
    steep = Limits(PUMA.joint_names, free, free, np.full(6, 2.0), ["N·m"] * 6)
    verdict = check_motion_feasible(PUMA, move, steep)  # the peak is 10/√3 rad/s²
    assert verdict.violation.kind == "acceleration"
    assert verdict.violation.needed == pytest.approx(10 / np.sqrt(3), rel=1e-6)
    assert verdict.slowdown == pytest.approx(np.sqrt(10 / np.sqrt(3) / 2.0), rel=1e-6)
    scaled, k, _ = scaled_to_limits(PUMA, move, steep)
    assert k == pytest.approx(verdict.slowdown, rel=1e-6)
    assert Limits.of(PUMA, [2.0] * 6).acceleration.tolist() == [2.0] * 6  # the node's parameter
    assert Limits.of(PUMA, []).acceleration.tolist() == [np.inf] * 6


def test_a_scenario_whose_motion_needs_too_much_torque_is_loaded_with_a_one_line_warning(
        tmp_path):
    """A warning, not a refusal: an offline run may study saturation on purpose
    (test_mujoco_engine's fast move does)."""
    doc = {"robot": "ddarm", "duration": 0.05, "rate": 200, "physics_dt": 0.001,
           "controller": {"type": "computed_torque"}, "initial": {"q": [-0.1, 1.5, 1.0]},
           "trajectory": {"type": "quintic", "waypoints": [[-0.1, 1.5, 1.0], [0.5, 1.0, 0.5]],
                          "durations": [0.05]}}
    warning = load_scenario(doc).motion_warning
    assert warning.startswith("the trajectory needs more than the arm's limits: joint 'joint")
    assert "needs torque" in warning and "slower would fit" in warning and "\n" not in warning
    path = tmp_path / "fast.yaml"
    path.write_text(yaml.safe_dump(doc))
    run = subprocess.run([sys.executable, "-m", "robot_control.cli", "simulate", str(path),
                          "--quiet"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    lines = [x for x in run.stderr.splitlines() if "warning" in x]
    assert len(lines) == 1 and "the plant saturates" in lines[0], run.stderr
    doc["trajectory"]["durations"] = [3.0]
    assert load_scenario(doc).motion_warning == ""
    for name in ("huo_3_2_computed_torque_intended", "identification_ddarm_excitation"):
        assert load_scenario(name).motion_warning == "", name  # bundled: all feasible


# ------------------------------------------------- the follower with infeasible_motion
def follower(policy: str):
    ends = []
    ctl = Controller(Q0)
    f = TrajectoryFollower(rules(), Tolerances(np.zeros((3, 6)), np.full((3, 6), 0.01), 1.0),
                           ctl, lambda gid, status, code, text: ends.append((status, code, text)),
                           Log(), feedback_rate=20.0)
    f.motion_check = MotionCheck(FeasibilityParams(infeasible_motion=policy), PUMA, f.log)
    return f, ctl, ends


FAST = [(0.004, list(Q0 + [0.005, 0, 0, 0, 0, 0]))]


def test_refuse_aborts_an_infeasible_goal_with_invalid_goal_naming_joint_time_and_torque():
    f, ctl, ends = follower("refuse")
    assert not f.submit("g", goal(FAST), T0)
    status, code, text = ends[0]
    assert (status, code) == (ABORTED, INVALID_GOAL) and ctl.sent == 0
    assert "the arm cannot execute this motion: joint 'joint" in text
    assert "needs torque" in text and "at t = " in text and "effort limit" in text
    assert f.command(goal(FAST).trajectory, T0).startswith("the arm cannot execute")


def test_scale_runs_the_same_goal_slower_and_says_so_in_the_result():
    f, ctl, ends = follower("scale")
    assert f.submit("g", goal(FAST), T0)
    plan = f.active.plan
    duration = (plan.end_ns - plan.start_ns) / NS
    assert duration > 0.02  # ×5 or more the 4 ms asked for
    assert check_motion_feasible(PUMA, plan.trajectory).feasible
    assert any("infeasible_motion: scale: time-scaled" in text for _, text in f.log.lines)
    track(f, ctl, T0, T0 + int((duration + 0.1) * NS))
    status, code, text = ends[0]
    assert (status, code) == (SUCCEEDED, SUCCESSFUL)
    assert text.startswith("goal reached; time-scaled ×") and f"to {duration:.4g} s" in text


def test_the_controller_refuses_an_infeasible_motion_and_takes_one_scaled_to_its_limit():
    fast = JointTrajectory([0.0, 0.004], [Q0, Q0 + 0.005])
    with pytest.raises(Rejected, match=r"the arm cannot execute it: joint 'joint\d' needs "
                                       r"torque .* beyond its effort limit"):
        check_feasible(fast, PUMA)
    scaled, _, _ = scaled_to_limits(PUMA, fast)
    start = scaled.sample(0.0)  # re-anchored at the reference, as the controller does
    assert check_feasible(scaled.starting_from(*start, 0.0), PUMA)


@pytest.mark.parametrize("policy", ["refuse", "scale"])
def test_the_generators_own_motion_is_held_or_slowed_when_infeasible(policy):
    log = Log()
    check = MotionCheck(FeasibilityParams(infeasible_motion=policy), PUMA, log)
    sweep = JointTrajectory.through([Q0, Q0 + 0.3, Q0], [0.05, 0.05])  # the shortest segments
    assert check.own_motion(JointTrajectory.through([Q0, Q0 + 0.3, Q0], [1.5, 1.5]), Q0) \
        is not None and log.lines == []
    own = check.own_motion(sweep, Q0)
    if policy == "refuse":
        assert isinstance(own, Hold) and np.array_equal(own.q, Q0)
        assert log.lines[0][0] == "error" and "needs torque" in log.lines[0][1]
    else:
        assert own.duration > 0.1 and check_motion_feasible(PUMA, own).feasible
        assert np.array_equal(own.positions, sweep.positions)  # the same path, slower
        assert log.lines[0][0] == "warn" and "time-scaled" in log.lines[0][1]


def test_scale_from_a_moving_reference_keeps_it_continuous_and_feasible():
    f, ctl, ends = follower("scale")
    assert f.submit("first", goal([(2.0, list(Q0 + 0.4))]), T0)
    now = T0 + NS  # mid-motion: the reference moves at its fastest
    track(f, ctl, T0, now)
    moving = ctl.desired(now)
    assert np.abs(moving[1]).max() > 0.1
    jolt = [(0.004, list(moving[0] + [0.005, 0, 0, 0, 0, 0]))]
    assert f.submit("second", goal(jolt), now)
    motion = f.active.plan.trajectory
    assert np.allclose(np.stack(motion.sample(0.0)), moving, atol=1e-9)  # no step in q, q̇, q̈
    assert check_motion_feasible(PUMA, motion).feasible
    assert motion.duration > 0.02


def test_acceleration_limits_from_the_node_refuse_a_goal_that_needs_more():
    f, ctl, ends = follower("refuse")
    f.motion_check.settings = FeasibilityParams("refuse", (0.3,) * 6)
    assert not f.submit("g", goal([(2.0, list(Q0 + 0.3))]), T0)  # peak 10/√3·0.3/4 = 0.43 rad/s²
    assert ends[0][1] == INVALID_GOAL and "acceleration limit 0.3 rad/s²" in ends[0][2]


# ------------------------------------------ the trajectory generator's own motion (real DDS)
@pytest.mark.parametrize("policy", ["refuse", "scale"])
def test_the_generator_holds_or_slows_a_sweep_it_cannot_execute(policy):
    from bus_probe import isolated_bus_env
    from node_harness import managed, shut, spin

    from robot_control.bus.backend import create_node
    from robot_control.nodes.convert import Messages
    from robot_control.nodes.trajectory_node import TrajectoryNode

    with isolated_bus_env(f"feasibility-{policy}"):
        # the sweep is stretched to 0.8× the velocity limits by construction (JointTrajectory.
        # sweep): 0.1 rad out and back in 0.05 s segments (0.057 s once stretched) still needs
        # 4× joint 1's effort limit
        waypoint = ", ".join(f"{v:.6f}" for v in Q0 + 0.1)
        motion = (["segment_duration:=0.05", f"waypoints:=[{waypoint}]"] if policy == "refuse"
                  else ["segment_duration:=0.05"])
        node, gen = managed(TrajectoryNode, "trajectory_generator", "robot:=puma560", *motion,
                            f"infeasible_motion:={policy}")
        sender = create_node("sender", ["prog"], backend="dds")
        states = sender.create_publisher("sensor_msgs/msg/JointState", "/joint_states")
        m = Messages(sender)
        try:
            assert spin([node, sender], 10.0, until=lambda: states.get_subscription_count() > 0)
            states.publish(m.joint_state(time.time_ns(), list(PUMA.joint_names), list(Q0),
                                         [0.0] * 6))
            assert spin([node, sender], 10.0, until=lambda: gen.trajectory is not None)
            if policy == "refuse":
                assert isinstance(gen.trajectory, Hold) and np.allclose(gen.trajectory.q, Q0)
            else:  # the ±0.3 rad sweep and back: 4 segments of 0.05 s, slowed down
                assert gen.trajectory.duration > 4 * 0.05
                assert check_motion_feasible(PUMA, gen.trajectory).feasible
        finally:
            shut(sender, node)
