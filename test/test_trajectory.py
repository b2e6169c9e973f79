"""Trajectories: Huo Ex. 3-7 quintic, C² waypoint paths, limits, task-space quintic, examples."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from robot_control.foundation.spatial import rpy_to_matrix, transform
from robot_control.trajectory import (
    CartesianQuintic,
    Hold,
    JointTrajectory,
    Quintic,
    Trajectory,
    huo_intended,
    huo_printed,
    named_trajectory,
    quintic_coefficients,
    rotation_exp,
    rotation_log,
    via_acceleration_heuristic,
    via_velocity_heuristic,
)

finite = st.floats(-3.0, 3.0, allow_nan=False)
vec3 = arrays(np.float64, 3, elements=finite)
durations = st.floats(0.2, 5.0)
fast = settings(max_examples=40, deadline=None)


def boundary_matrix(T):
    """Rows: q, q̇, q̈ at τ = 0 and τ = T of Σ a_k τ^k — the conditions Huo's formula solves."""
    rows = []
    for tau in (0.0, T):
        rows.append([tau**k for k in range(6)])
        rows.append([k * tau ** (k - 1) if k >= 1 else 0.0 for k in range(6)])
        rows.append([k * (k - 1) * tau ** (k - 2) if k >= 2 else 0.0 for k in range(6)])
    return np.array([rows[0], rows[1], rows[2], rows[3], rows[4], rows[5]])


# ----------------------------------------------------------------------------- single quintic
@fast
@given(vec3, vec3, vec3, vec3, vec3, vec3, durations)
def test_quintic_meets_arbitrary_boundary_states(q0, qd0, qdd0, qf, qdf, qddf, T):
    traj = Quintic(q0, qf, T, qd0, qdd0, qdf, qddf)
    for t, state in ((0.0, (q0, qd0, qdd0)), (T, (qf, qdf, qddf))):
        for got, want in zip(traj.sample(t), state):
            np.testing.assert_allclose(got, want, atol=1e-9 * (1.0 + 1.0 / T**2))


@fast
@given(vec3, vec3, vec3, vec3, vec3, vec3, durations)
def test_huo_coefficients_solve_the_boundary_system(q0, qd0, qdd0, qf, qdf, qddf, T):
    a = quintic_coefficients(q0, qd0, qdd0, qf, qdf, qddf, T)
    b = np.vstack((q0, qd0, qdd0, qf, qdf, qddf))
    expected = np.linalg.solve(boundary_matrix(T), b)
    np.testing.assert_allclose(a, expected, rtol=1e-8, atol=1e-8 * np.abs(expected).max())


def test_rest_to_rest_coefficients_are_10_15_6():
    a = quintic_coefficients(0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 1.5)[:, 0]
    np.testing.assert_allclose(a, [0, 0, 0, 2 * 10 / 1.5**3, -2 * 15 / 1.5**4, 2 * 6 / 1.5**5])


def test_quintic_rates_are_derivatives_of_position():
    traj = Quintic([0.3, -1.0], [1.2, 0.5], 1.3, qd0=[0.5, -0.2], qdd0=[1.0, 0.0],
                   qdf=[0.1, 0.3], qddf=[-2.0, 0.4])
    t, h = np.linspace(0.05, 1.25, 17), 1e-6
    q, qd, qdd = traj.sample(t)
    qp, qdp, _ = traj.sample(t + h)
    qm, qdm, _ = traj.sample(t - h)
    np.testing.assert_allclose(qd, (qp - qm) / (2 * h), atol=1e-6)
    np.testing.assert_allclose(qdd, (qdp - qdm) / (2 * h), atol=1e-6)


def test_quintic_start_state_before_and_hold_after():
    traj = Quintic([0.0, 1.0], [1.0, 2.0], 2.0, qd0=[0.5, 0.0], qdf=[0.3, -0.2],
                   qddf=[1.0, 1.0], start_time=1.0)
    q, qd, qdd = traj.sample(0.2)
    np.testing.assert_allclose(q, [0.0, 1.0])
    np.testing.assert_allclose(qd, [0.5, 0.0])
    for t in (3.0 + 1e-9, 4.0, 100.0):
        q, qd, qdd = traj.sample(t)
        np.testing.assert_allclose(q, [1.0, 2.0])
        assert not qd.any() and not qdd.any()
    ts = np.array([0.0, 1.5, 2.9, 3.5])
    batch = traj.sample(ts)
    for i, t in enumerate(ts):
        for b, s in zip(batch, traj.sample(t)):
            np.testing.assert_allclose(b[i], s, atol=1e-12)


def test_quintic_rejects_bad_duration():
    with pytest.raises(ValueError):
        Quintic([0.0], [1.0], 0.0)
    with pytest.raises(ValueError):
        Quintic([0.0], [np.nan], 1.0)


# ------------------------------------------------------------------- multi-waypoint trajectories
waypoint_sets = st.integers(3, 6).flatmap(lambda m: st.tuples(
    arrays(np.float64, (m, 2), elements=st.floats(-2.0, 2.0)),
    arrays(np.float64, m - 1, elements=st.floats(0.2, 2.0))))


@fast
@given(waypoint_sets, st.sampled_from(["parabola", "zero"]))
def test_velocity_and_acceleration_continuous_at_vias(data, rule):
    P, T = data
    traj = JointTrajectory.through(P, T, via_accelerations=rule)
    knots = traj.knot_times
    # close enough that the jerk of a short, steep segment cannot open a gap of 1e-4 (q̈ moves by
    # 2·eps·jerk across the knot), far enough to land on each side's own segment
    eps = 1e-12 * knots[-1]
    for k, t in enumerate(knots[1:-1], start=1):
        left, right = traj.sample(t - eps), traj.sample(t + eps)
        np.testing.assert_allclose(left[0], P[k], atol=1e-6)
        np.testing.assert_allclose(right[0], P[k], atol=1e-6)
        np.testing.assert_allclose(left[1], right[1], atol=1e-5)
        np.testing.assert_allclose(left[2], right[2], atol=1e-4)
    end = traj.sample(knots[-1])
    np.testing.assert_allclose(end[0], P[-1], atol=1e-9)
    np.testing.assert_allclose(end[1], 0.0, atol=1e-9)


def test_via_rules():
    P = np.array([[0.0], [1.0], [3.0], [2.0]])
    T = np.array([1.0, 1.0, 2.0])
    v = via_velocity_heuristic(P, T)[:, 0]
    np.testing.assert_allclose(v, [0.0, 1.5, 0.0, 0.0])       # mean of 1 and 2; sign change → 0
    a = via_acceleration_heuristic(P, T)[:, 0]
    np.testing.assert_allclose(a, [0.0, 1.0, 2 * (-0.5 - 2.0) / 3.0, 0.0])
    assert not via_acceleration_heuristic(P, T, "zero").any()
    with pytest.raises(ValueError, match="parabola"):
        via_acceleration_heuristic(P, T, "cubic")


def test_parabola_rule_reproduces_a_parabola_at_the_vias():
    t = np.arange(5.0)
    P = (0.5 * t**2 - t)[:, None]                          # q = t²/2 − t, q̇ = t − 1, q̈ = 1
    traj = JointTrajectory.through(P, np.ones(4))
    np.testing.assert_allclose(traj.velocities[1:-1, 0], t[1:-1] - 1.0)
    np.testing.assert_allclose(traj.accelerations[1:-1, 0], 1.0)


def test_given_via_velocities_and_accelerations_are_used():
    traj = JointTrajectory.from_points([[0.0, 0.0], [1.0, 1.0], [0.0, 2.0]], [0.0, 1.0, 2.5],
                                       velocities=[[], [0.3, -0.4], None],
                                       accelerations=[None, [1.0, 2.0], []])
    _, qd, qdd = traj.sample(1.0)
    np.testing.assert_allclose(qd, [0.3, -0.4])
    np.testing.assert_allclose(qdd, [1.0, 2.0])


def test_hold_after_the_end_and_vectorised_sampling():
    traj = JointTrajectory.through([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0]], [1.0, 1.5])
    for t in (2.5 + 1e-12, 3.0, 50.0):
        q, qd, qdd = traj.sample(t)
        np.testing.assert_allclose(q, [2.0, 2.0])
        assert not qd.any() and not qdd.any()
    ts = np.linspace(-1.0, 4.0, 41)
    batch = traj.sample(ts)
    for i, t in enumerate(ts):
        for b, s in zip(batch, traj.sample(t)):
            np.testing.assert_allclose(b[i], s, atol=1e-12)


def test_trajectory_input_errors():
    with pytest.raises(ValueError, match="increasing"):
        JointTrajectory.from_points([[0.0], [1.0]], [1.0, 1.0])
    with pytest.raises(ValueError, match="durations"):
        JointTrajectory.through([[0.0], [1.0], [2.0]], [1.0])
    with pytest.raises(ValueError, match="velocities"):
        JointTrajectory.from_points([[0.0, 0.0], [1.0, 1.0]], [0.0, 1.0],
                                    velocities=[[0.0, 0.0], [1.0]])
    with pytest.raises(ValueError, match="names"):
        JointTrajectory.through([[0.0, 0.0], [1.0, 1.0]], [1.0], joint_names=["a"])


# ------------------------------------------------------------------------------------ limits
def test_rest_to_rest_limit_duration_is_the_closed_form_minimum():
    vmax, amax = np.array([1.0, 2.0]), np.array([10.0, 0.5])
    traj = JointTrajectory.with_limits([[0.0, 0.0], [1.0, 0.2]], vmax, amax)
    T_v = 15.0 / 8.0 * 1.0 / 1.0                           # joint 0 velocity-bound: 1.875 s
    T_a = np.sqrt(10.0 / np.sqrt(3.0) * 0.2 / 0.5)         # joint 1 acceleration-bound: 1.52 s
    assert traj.duration == pytest.approx(max(T_v, T_a), rel=1e-9)
    _, qd, _ = traj.sample(np.linspace(0.0, traj.duration, 2001))
    assert np.abs(qd[:, 0]).max() == pytest.approx(1.0, rel=1e-6)   # the binding limit is met


@fast
@given(st.integers(2, 6).flatmap(lambda m: arrays(np.float64, (m, 3), elements=finite)),
       arrays(np.float64, 3, elements=st.floats(0.2, 3.0)),
       arrays(np.float64, 3, elements=st.floats(0.2, 5.0)))
def test_limit_derived_durations_respect_the_limits(P, vmax, amax):
    traj = JointTrajectory.with_limits(P, vmax, amax)
    _, qd, qdd = traj.sample(np.linspace(0.0, traj.duration, 4001))
    assert np.all(np.abs(qd) <= vmax * (1 + 1e-9))
    assert np.all(np.abs(qdd) <= amax * (1 + 1e-9))
    assert traj.check_limits(velocity=vmax, acceleration=amax) == []
    np.testing.assert_allclose(traj.sample(traj.duration)[0], P[-1], atol=1e-9)


def test_check_limits_names_joint_value_time_and_limit():
    traj = JointTrajectory.through([[0.0, 0.0], [1.5, 0.1]], [1.0], joint_names=["base", "elbow"])
    problems = traj.check_limits(lower=[-1, -1], upper=[1.2, 1.0], velocity=[2.0, 1.0],
                                 acceleration=[20.0, 20.0])
    # rest-to-rest quintic: peak q̇ = 15/8·1.5/1 = 2.8125 at T/2; q = 1.5 at the end
    assert problems == [
        "joint 'base' (#0): position 1.5 at t = 1 s is above the upper limit 1.2",
        "joint 'base' (#0): velocity 2.8125 at t = 0.5 s exceeds the limit ±2",
    ]
    with pytest.raises(ValueError, match="'base'.*velocity 2.8125"):
        traj.validate(velocity=[2.0, 1.0])
    traj.validate(velocity=[3.0, 1.0])                       # within limits: no error


def test_check_limits_finds_an_overshoot_between_samples():
    # the via velocity carried into a short last step makes the joint overshoot its goal
    traj = JointTrajectory.through([[0.0], [1.0], [1.05]], [1.0, 1.0])
    t = np.linspace(0.0, traj.duration, 200001)
    q, _, _ = traj.sample(t)
    peak, when = q.max(), t[np.argmax(q)]
    assert peak > 1.09
    (message,) = traj.check_limits(upper=[1.05])
    assert message.startswith(f"joint #0: position {peak:.6g} at t = {when:.4g} s")
    assert traj.check_limits(upper=[peak + 1e-7]) == []


def test_hold():
    hold = Hold([0.1, -0.2], joint_names=["a", "b"])
    q, qd, qdd = hold.sample(3.0)
    np.testing.assert_allclose(q, [0.1, -0.2])
    assert not qd.any() and not qdd.any()
    assert hold.sample(np.arange(4.0))[0].shape == (4, 2)
    assert hold.check_limits(upper=[0.0, 0.0]) == [
        "joint 'a' (#0): position 0.1 at t = 0 s is above the upper limit 0"]


def test_all_trajectories_share_the_protocol():
    for traj in (Hold([0.0]), Quintic([0.0], [1.0], 1.0), huo_intended()):
        assert isinstance(traj, Trajectory)


# ------------------------------------------------------------------------- re-anchoring goals
@pytest.mark.parametrize("first_time", [0.0, 0.8])
def test_starting_from_keeps_the_reference_continuous(first_time):
    running = huo_intended()
    t_now = 0.6
    state = running.sample(t_now)
    goal = JointTrajectory.from_points([[0.2, 0.5, 0.0], [0.0, 0.0, 0.5]],
                                       [first_time, first_time + 1.0])
    new = goal.starting_from(*state, t_now)
    for got, want in zip(new.sample(t_now), state):
        np.testing.assert_allclose(got, want, atol=1e-12)
    eps = 1e-7
    for got, want in zip(new.sample(t_now + eps), running.sample(t_now + eps)):
        np.testing.assert_allclose(got, want, atol=1e-4)  # differ only at O(ε·jerk)
    np.testing.assert_allclose(new.sample(t_now + first_time + 1.0)[0], [0, 0, 0.5], atol=1e-12)
    if first_time > 0:
        np.testing.assert_allclose(new.sample(t_now + first_time)[0], [0.2, 0.5, 0.0])
        assert np.abs(new.sample(t_now + first_time)[1]).max() > 0.0   # now a true via point


def test_starting_from_a_lone_point_at_time_zero_is_refused():
    goal = JointTrajectory.from_points([[1.0]], [0.0])
    with pytest.raises(ValueError, match="jump"):
        goal.starting_from([0.0], [0.0], [0.0], 2.0)
    lone_ahead = JointTrajectory.from_points([[1.0]], [2.0]).starting_from([0.0], [0.0], [0.0], 1.0)
    np.testing.assert_allclose(lone_ahead.sample(3.0)[0], [1.0])


# --------------------------------------------------------------------------------- task space
def rotation_angle(R):
    return np.arccos(np.clip((np.trace(R) - 1) / 2, -1, 1))


@pytest.fixture
def cartesian():
    start = transform(rpy_to_matrix([0.1, 0.2, 0.3]), [0.4, 0.0, 0.6])
    goal = transform(rpy_to_matrix([1.0, -0.5, 2.0]), [0.5, 0.3, 0.2])
    return CartesianQuintic(start, goal, 2.0, start_time=0.5)


def test_cartesian_endpoints(cartesian):
    for t, pose in ((0.0, cartesian.start), (0.5, cartesian.start), (2.5, cartesian.goal),
                    (9.0, cartesian.goal)):
        T, twist, acc = cartesian.sample(t)
        np.testing.assert_allclose(T, pose, atol=1e-12)
        np.testing.assert_allclose(twist, 0.0, atol=1e-12)
        np.testing.assert_allclose(acc, 0.0, atol=1e-12)


def test_cartesian_path_is_a_line_and_a_geodesic(cartesian):
    R0, R1 = cartesian.start[:3, :3], cartesian.goal[:3, :3]
    w = rotation_log(R0.T @ R1)
    theta = np.linalg.norm(w)
    p0, p1 = cartesian.start[:3, 3], cartesian.goal[:3, 3]
    Ts, _, _ = cartesian.sample(np.linspace(0.5, 2.5, 21))
    for T in Ts:
        rel = R0.T @ T[:3, :3]
        step = rotation_log(rel)
        s = np.linalg.norm(step) / theta                     # fraction of the angle covered
        np.testing.assert_allclose(step, s * w, atol=1e-10)  # same fixed axis
        # on the geodesic the angles to both ends add up to the whole angle
        assert rotation_angle(rel) + rotation_angle(T[:3, :3].T @ R1) == pytest.approx(theta)
        np.testing.assert_allclose(T[:3, 3], p0 + s * (p1 - p0), atol=1e-10)


def test_cartesian_twist_and_acceleration_are_derivatives(cartesian):
    h = 1e-6
    for t in (0.7, 1.3, 2.1):
        T, twist, acc = cartesian.sample(t)
        Tp, twp, _ = cartesian.sample(t + h)
        Tm, twm, _ = cartesian.sample(t - h)
        Rdot = (Tp[:3, :3] - Tm[:3, :3]) / (2 * h)
        W = Rdot @ T[:3, :3].T                               # [ω] in the base frame
        omega = np.array([W[2, 1], W[0, 2], W[1, 0]])
        np.testing.assert_allclose(twist[:3], omega, atol=1e-7)
        np.testing.assert_allclose(twist[3:], (Tp[:3, 3] - Tm[:3, 3]) / (2 * h), atol=1e-7)
        np.testing.assert_allclose(acc, (twp - twm) / (2 * h), atol=1e-6)


def test_cartesian_rejects_non_rigid_poses():
    with pytest.raises(ValueError, match="rigid"):
        CartesianQuintic(np.diag([1.0, 1.0, -1.0, 1.0]), np.eye(4), 1.0)


@pytest.mark.parametrize("angle", [0.0, 1e-9, 1e-4, 1.0, 3.0, np.pi - 1e-6, np.pi])
def test_rotation_log_inverts_exp(angle):
    axis = np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8])
    R = rotation_exp(angle * axis)
    np.testing.assert_allclose(rotation_exp(rotation_log(R)), R, atol=1e-12)
    assert np.linalg.norm(rotation_log(R)) == pytest.approx(angle, abs=1e-12)


# ---------------------------------------------------------------------- Huo Ex. 3-7 trajectory
QF = np.array([0.6, 1.0, -0.5])


def test_huo_printed_is_the_printed_formula():
    traj = named_trajectory("huo_printed")
    t = np.linspace(0.0, 1.5, 31)
    tau = t / 1.5
    np.testing.assert_allclose(traj.sample(t)[0],
                               np.outer(10 * tau**3 - 15 * tau**4 + 6 * tau**5, QF), atol=1e-12)
    np.testing.assert_allclose(traj.sample(0.0)[0], 0.0)


def test_huo_printed_peak_acceleration_matches_the_book():
    _, _, qdd = huo_printed().sample(np.linspace(0.0, 1.5, 30001))
    assert np.linalg.norm(qdd, axis=1).max() == pytest.approx(3.256, abs=5e-4)  # q̈_M = 3.3


def test_huo_intended_goes_from_q0_to_qf_and_holds():
    traj = named_trajectory("huo_intended")
    np.testing.assert_allclose(traj.sample(0.0)[0], [-0.1, 1.5, 1.0])
    np.testing.assert_allclose(traj.sample(1.5)[0], QF, atol=1e-12)
    q, qd, qdd = traj.sample(2.0)
    np.testing.assert_allclose(q, QF)
    assert not qd.any() and not qdd.any()


def test_unknown_trajectory_name_lists_the_known_ones():
    with pytest.raises(ValueError, match="huo_intended, huo_printed"):
        named_trajectory("huo")
