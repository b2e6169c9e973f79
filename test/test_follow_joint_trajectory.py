"""FollowJointTrajectory without a bus: JTC's variable-degree splines as knots, goal checks with
their codes and reasons, tolerances (0 = default, −1 = erase), and the goal's life — success,
path and goal violations, cancel-and-hold, preemption with a continuous reference, feedback.

The reference is the controller's own sampler (TrajectorySchedule) fed with what the follower
sends; goal messages are the rclpy-free route's generated control_msgs types."""

from types import SimpleNamespace

import numpy as np
import pytest

from robot_control.bus.dds.msg import idl_type
from robot_control.model import load_robot
from robot_control.nodes.follow_joint_trajectory import (
    ABORTED,
    CANCELED,
    PREEMPTED,
    SUCCEEDED,
    TrajectoryFollower,
)
from robot_control.trajectory import JointTrajectory
from robot_control.trajectory.jtc_goal import (
    GOAL_TOLERANCE_VIOLATED,
    INVALID_GOAL,
    INVALID_JOINTS,
    OLD_HEADER_TIMESTAMP,
    PATH_TOLERANCE_VIOLATED,
    SUCCESSFUL,
    GoalError,
    GoalRules,
    plan_goal,
)
from robot_control.trajectory.schedule import TrajectorySchedule, trajectory_knots
from robot_control.trajectory.tolerances import MAX_GOAL_TIME, ToleranceError, Tolerances, resolve
from robot_control.trajectory.variable_degree import spline_knots

NS = 1_000_000_000
PUMA = load_robot("puma560")
NAMES = PUMA.joint_names
N = PUMA.nq
T0 = 1_700_000_000 * NS  # a wall-clock "now"
Goal = idl_type("control_msgs/action/FollowJointTrajectory_Goal")
Point = idl_type("trajectory_msgs/msg/JointTrajectoryPoint")
Tolerance = idl_type("control_msgs/msg/JointTolerance")
Duration = idl_type("builtin_interfaces/msg/Duration")


def duration(s: float):
    ns = int(round(s * NS))
    return Duration(sec=ns // NS, nanosec=ns % NS)


def goal(points, names=NAMES, stamp_ns=0, **fields):
    """A FollowJointTrajectory goal; points are (t, q[, q̇[, q̈]])."""
    g = Goal(**fields)
    g.trajectory.joint_names = list(names)
    g.trajectory.header.stamp.sec, g.trajectory.header.stamp.nanosec = divmod(stamp_ns, NS)
    g.trajectory.points = [Point(positions=list(p[1]),
                                 velocities=list(p[2]) if len(p) > 2 else [],
                                 accelerations=list(p[3]) if len(p) > 3 else [],
                                 effort=[], time_from_start=duration(p[0])) for p in points]
    return g


def rules(**kw) -> GoalRules:
    return GoalRules(NAMES, PUMA.lower, PUMA.upper, PUMA.velocity_limit, **kw)


def sampled(knots, times):
    traj = JointTrajectory(*knots)
    return np.stack(traj.sample(np.asarray(times)), axis=1)  # (k, 3, n)


# ------------------------------------------------------------ variable-degree splines
def test_each_segment_is_jtcs_polynomial_and_corners_are_rounded_c2():
    P = np.array([[0.0, 0.0], [1.0, -1.0], [1.5, 0.0]])
    times = np.array([1.0, 2.0, 3.0])
    start = np.array([[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]])
    knots = spline_knots(start, times, P, None, None, blend=0.01)
    # linear between points 0 and 1 (positions only), except the last 10 ms before the corner
    t = np.linspace(1.0, 1.99, 50)
    x = sampled(knots, t)
    assert np.allclose(x[:, 0], P[0] + np.outer(t - 1.0, P[1] - P[0]), atol=1e-12)
    assert np.allclose(x[:, 1], P[1] - P[0], atol=1e-9) and np.allclose(x[:, 2], 0.0, atol=1e-7)
    # the corner: continuous q, q̇, q̈ (finite jerk) through the 10 ms blend
    fine = np.linspace(1.98, 2.02, 4001)
    y = sampled(knots, fine)
    assert np.abs(np.diff(y[:, 0], axis=0)).max() < 1e-4
    assert np.abs(np.diff(y[:, 1], axis=0)).max() < 1e-2
    assert np.abs(y[:, 2]).max() < 1e3
    # the waypoints are passed exactly, the end is held at rest
    for ti, pi in zip(times, P, strict=True):
        assert np.allclose(sampled(knots, [ti])[0, 0], pi, atol=1e-12)
    assert np.allclose(sampled(knots, [9.0])[0], [[1.5, 0.0], [0, 0], [0, 0]])


def test_cubic_and_quintic_segments_are_reproduced_exactly():
    P = np.array([[0.0], [1.0], [0.5]])
    V = np.array([[0.5], [0.2], [0.0]])
    A = np.array([[0.0], [-1.0], [0.0]])
    times = np.array([0.5, 1.5, 3.0])
    start = np.array([[0.0], [0.5], [0.0]])
    cubic = spline_knots(start, times, P, V, None, blend=0.01)
    t = np.linspace(0.5, 1.49, 40)
    T = 1.0
    a2 = (3 * (P[1] - P[0]) / T - 2 * V[0] - V[1]) / T
    a3 = (2 * (P[0] - P[1]) / T + V[0] + V[1]) / T**2
    tau = t - 0.5
    expect = P[0] + V[0] * tau + a2 * tau**2 + a3 * tau**3
    assert np.allclose(sampled(cubic, t)[:, 0, 0], expect, atol=1e-12)
    quintic = spline_knots(start, times, P, V, A, blend=0.01)
    assert len(quintic[0]) == 4  # start + 3 points: no corner to round
    x = sampled(quintic, times)
    assert np.allclose(x[:, 0], P) and np.allclose(x[:, 1], V) and np.allclose(x[:, 2], A)


def test_the_motion_starts_from_the_full_current_reference():
    start = np.array([[0.3, -0.2], [1.0, -0.5], [4.0, 2.0]])
    knots = spline_knots(start, np.array([1.0]), np.array([[0.0, 0.0]]), None, None, 0.01)
    assert np.array_equal(sampled(knots, [0.0])[0], start)


# ------------------------------------------------------------------- goal checks
CURRENT = np.zeros((3, N))


def plan(g, now=T0, current=CURRENT, **kw):
    return plan_goal(g.trajectory, rules(**kw), now, current)


def code_of(g, **kw) -> tuple[int, str]:
    with pytest.raises(GoalError) as info:
        plan(g, **kw)
    return info.value.code, info.value.text


GOOD = [(1.0, [0.1] * N), (2.0, [0.2] * N)]


@pytest.mark.parametrize("names, code, words", [
    ([], INVALID_JOINTS, "no joints"),
    ([*NAMES[:-1], NAMES[0]], INVALID_JOINTS, "given twice"),
    ([*NAMES[:-1], "elbow_x"], INVALID_JOINTS, "unknown joints elbow_x"),
    (NAMES[:3], INVALID_JOINTS, "allow_partial_joints_goal"),
])
def test_joint_names_are_checked_with_a_reason(names, code, words):
    c, text = code_of(goal([(1.0, [0.1] * len(names))], names=names))
    assert c == code and words in text


BAD_POINTS = [
    ([], "no points"),
    ([(1.0, [0.1] * (N - 1))], f"point 0 has {N - 1} positions for {N} joint names"),
    ([(1.0, [0.1] * N, [0.0] * 2)], "velocities for"),
    ([(1.0, [np.nan] * N)], "is nan"),
    ([(1.0, [0.1] * N), (2.0, [np.inf] + [0.0] * (N - 1))], "point 1 positions"),
    ([(1.0, [1e300] * N)], "is outside"),
    ([(1.0, [0.1] * N), (1.0, [0.2] * N)], "must increase strictly: point 1"),
    ([(2.0, [0.1] * N), (1.0, [0.2] * N)], "must increase strictly"),
    ([(1.0, [0.1] * N, [1.0] * N)], "the last point still moves"),
    ([(1.0, [0.1] * N, [1e3] + [0.0] * (N - 1))], "velocity 1000 is outside"),
    ([(1.0, [0.1] * N, [0.0] * N, [1e300] * N)], "acceleration"),
    ([(0.0, [0.5] * N)], "time_from_start 0"),
    ([(0.001, [2.0] + [0.0] * (N - 1))], "leaves the limits"),
    ([(1e4, [0.1] * N)], "max_trajectory_duration"),
]


@pytest.mark.parametrize("points, words", BAD_POINTS)
def test_bad_points_abort_as_invalid_goal_naming_the_problem(points, words):
    c, text = code_of(goal(points))
    assert c == INVALID_GOAL and words in text, text


def test_wrong_types_and_effort_are_invalid_goals():
    g = goal(GOOD)
    g.trajectory.points[0].effort = [1.0] * N
    assert code_of(g) == (INVALID_GOAL, code_of(g)[1]) and "effort" in code_of(g)[1]
    bad = SimpleNamespace(joint_names=NAMES, header=g.trajectory.header, points=[SimpleNamespace(
        positions=["a"] * N, velocities=[], accelerations=[], effort=[],
        time_from_start=duration(1.0))])
    with pytest.raises(GoalError, match="must be numbers"):
        plan_goal(bad, rules(), T0, CURRENT)


def test_a_point_cap_and_an_ended_stamped_trajectory():
    many = goal([(0.01 * (i + 1), [0.0] * N) for i in range(11)])
    assert "max_trajectory_points" in code_of(many, max_points=10)[1]
    old = goal(GOOD, stamp_ns=T0 - 3 * NS)
    c, text = code_of(old)
    assert c == OLD_HEADER_TIMESTAMP and "ended 1.000 s ago" in text


def test_a_stamped_trajectory_under_way_starts_at_its_next_point():
    p = plan(goal(GOOD, stamp_ns=T0 - int(1.5 * NS)))  # point 0 (t = 1 s) is past
    assert p.end_ns == T0 + int(0.5 * NS)
    assert np.allclose(p.trajectory.sample(0.5)[0], 0.2)


def test_a_first_point_at_now_must_be_on_the_reference():
    p = plan(goal([(0.0, [0.005] * N), (1.0, [0.2] * N)]))
    assert np.array_equal(p.trajectory.sample(0.0)[0], CURRENT[0])  # no jump to point 0
    assert np.allclose(p.trajectory.sample(1.0)[0], 0.2)


def test_a_partial_goal_holds_the_other_joints_in_any_order():
    current = np.zeros((3, N))
    current[0] = np.linspace(-0.3, 0.3, N)
    names = [NAMES[2], NAMES[0]]
    p = plan(goal([(1.0, [0.5, -0.4])], names=names), current=current,
             allow_partial_joints_goal=True)
    end = p.trajectory.sample(1.0)[0]
    assert end[2] == pytest.approx(0.5) and end[0] == pytest.approx(-0.4)
    others = [j for j in range(N) if j not in (0, 2)]
    q = np.stack(p.trajectory.sample(np.linspace(0, 1.5, 31))[0])
    assert np.allclose(q[:, others], current[0, others], atol=1e-12)
    assert p.joints.tolist() == [2, 0]


# -------------------------------------------------------------------- tolerances
DEFAULTS = Tolerances(path=np.vstack([np.full(N, 0.1), np.zeros(N), np.zeros(N)]),
                      goal=np.vstack([np.full(N, 0.01), np.full(N, 0.01), np.zeros(N)]),
                      goal_time=1.0)


def test_tolerances_zero_keeps_the_default_minus_one_erases():
    entries = [Tolerance(name=NAMES[1], position=-1.0, velocity=0.5, acceleration=0.0)]
    t = resolve(DEFAULTS, entries, [], 0.0, NAMES)
    assert t.path[0, 1] == 0.0 and t.path[1, 1] == 0.5 and t.path[0, 0] == 0.1
    assert t.goal_time == 1.0
    assert resolve(DEFAULTS, [], [], -1.0, NAMES).goal_time == MAX_GOAL_TIME
    assert resolve(DEFAULTS, [], [], 2.5, NAMES).goal_time == 2.5
    with pytest.raises(ToleranceError, match="unknown joint 'x'"):
        resolve(DEFAULTS, [Tolerance(name="x")], [], 0.0, NAMES)
    with pytest.raises(ToleranceError, match="is not a tolerance"):
        resolve(DEFAULTS, [], [Tolerance(name=NAMES[0], position=-0.5)], 0.0, NAMES)
    with pytest.raises(ToleranceError, match="is not a tolerance"):
        resolve(DEFAULTS, [Tolerance(name=NAMES[0], position=np.nan)], [], 0.0, NAMES)


# ---------------------------------------------------------------- the goal's life
class Controller:
    """The reference as the controller holds it: the knots the follower sends, sampled."""

    def __init__(self, q0) -> None:
        self.schedule = TrajectorySchedule(N)
        self.schedule.add(0, JointTrajectory(np.zeros(1), np.atleast_2d(q0)))
        self.sent = 0

    def desired(self, ns: int) -> np.ndarray:
        return self.schedule.sample(ns).copy()

    def run(self, trajectory, start_ns: int) -> None:
        self.schedule.add(start_ns, JointTrajectory(*trajectory_knots(trajectory, 0.01)))
        self.sent += 1


class Log:
    def __init__(self):
        self.lines = []

    def __getattr__(self, level):
        return lambda text, **kw: self.lines.append((level, text))


def follower(**kw):
    ends = []
    ctl = Controller(np.zeros(N))
    f = TrajectoryFollower(rules(**kw), DEFAULTS, ctl,
                           lambda gid, status, code, text: ends.append((gid, status, code, text)),
                           Log(), feedback_rate=20.0)
    return f, ctl, ends


def track(f, ctl, t0, t1, lag=0.0, step=NS // 1000):
    """Joint states from t0 to t1 (ns), the arm ``lag`` seconds behind the reference."""
    for ns in range(t0, t1, step):
        d = ctl.desired(ns - int(lag * NS))
        f.on_state(ns, d[0], d[1])


def test_a_goal_tracked_well_succeeds_at_its_end():
    f, ctl, ends = follower()
    assert f.submit("g1", goal(GOOD), T0)
    track(f, ctl, T0, T0 + int(1.9 * NS))
    assert ends == []
    track(f, ctl, T0 + int(1.9 * NS), T0 + int(2.1 * NS))
    assert ends == [("g1", SUCCEEDED, SUCCESSFUL, "goal reached")]


def test_a_bad_goal_is_accepted_then_aborted_with_its_code():
    f, ctl, ends = follower()
    assert not f.submit("g", goal([(1.0, [9.0] * N)]), T0)
    assert ends[0][:3] == ("g", ABORTED, INVALID_GOAL) and "outside" in ends[0][3]
    assert ctl.sent == 0  # nothing reached the reference
    assert not f.submit("h", goal(GOOD, path_tolerance=[Tolerance(name="nope")]), T0)
    assert ends[1][2] == INVALID_JOINTS


def test_a_path_violation_aborts_and_holds():
    f, ctl, ends = follower()
    f.submit("g", goal(GOOD), T0)
    track(f, ctl, T0, T0 + NS, lag=0.0)
    stamp = T0 + NS
    d = ctl.desired(stamp)
    f.on_state(stamp, d[0] + 0.2, d[1])  # 0.2 rad off, the default path tolerance is 0.1
    assert ends[0][1:3] == (ABORTED, PATH_TOLERANCE_VIOLATED) and "holding" in ends[0][3]
    held = ctl.desired(stamp + 5 * NS)  # stopped from the reference's motion, then held
    T = rules().stop_time
    assert np.allclose(held[0], d[0] + d[1] * T / 2 + d[2] * T * T / 12) and not held[1:].any()


def test_a_goal_during_which_the_controller_or_plant_fails_never_succeeds():
    """SUCCEEDED means succeeded: a fault reported during the goal ends it at once, ABORTED with
    the reason, the reference held at the measured position (not resumed later)."""
    f, ctl, ends = follower()
    f.submit("g", goal(GOOD), T0)
    track(f, ctl, T0, T0 + NS // 2)
    d = ctl.desired(T0 + NS // 2)
    measured = d[0] - 0.005  # the arm a little behind the reference
    f.on_state(T0 + NS // 2, measured, d[1])
    f.upset(T0 + NS // 2, "the controller reported an error: fault: x")
    assert ends == [("g", ABORTED, PATH_TOLERANCE_VIOLATED,
                     "the controller reported an error: fault: x; holding the measured "
                     "position")]
    held = ctl.desired(T0 + 5 * NS)
    assert np.allclose(held[0], measured) and not held[1:].any()
    track(f, ctl, T0 + NS // 2, T0 + 3 * NS)  # the arm at the target would not make it succeed
    assert len(ends) == 1
    f.upset(T0 + 3 * NS, "nothing running: ignored")
    assert len(ends) == 1


def test_a_tolerance_broken_while_the_controller_saturated_says_so():
    f, ctl, ends = follower()
    f.submit("g", goal(GOOD), T0)
    track(f, ctl, T0, T0 + NS)
    f.saturating("joint1 commanded -527.2, effort limit 500")
    d = ctl.desired(T0 + NS)
    f.on_state(T0 + NS, d[0] + 0.2, d[1])
    assert ends[0][1:3] == (ABORTED, PATH_TOLERANCE_VIOLATED)
    assert "(the controller saturated: joint1 commanded -527.2, effort limit 500)" in ends[0][3]


def test_the_next_goal_starts_from_the_arm_when_it_never_followed_the_reference():
    """The reference at rest away from the arm (the controller was inactive while a goal moved
    it): the next goal starts from the measured position, not from that stale target."""
    f, ctl, ends = follower()
    f.submit("g", goal([(0.5, [0.3] * N)]), T0)
    for ns in range(T0, T0 + 2 * NS, NS // 100):  # the arm stays at 0
        f.on_state(ns, np.zeros(N), np.zeros(N))
    assert ends[0][1] == ABORTED  # (the path tolerance: the reference stopped where it was)
    f.submit("h", goal([(1.0, [0.1] * N)]), T0 + 2 * NS)
    start = ctl.desired(T0 + 2 * NS)
    assert np.allclose(start[0], 0.0) and not start[1:].any()


def test_a_goal_not_reached_aborts_at_the_goal_time_and_a_moving_joint_is_not_reached():
    f, ctl, ends = follower()
    f.submit("g", goal(GOOD), T0)
    track(f, ctl, T0, T0 + 2 * NS)
    end = T0 + 2 * NS
    for ns in range(end, end + int(1.2 * NS), NS // 100):  # on target but still moving
        d = ctl.desired(ns)
        f.on_state(ns, d[0], d[1] + 0.05)
    assert ends[0][1:3] == (ABORTED, GOAL_TOLERANCE_VIOLATED)
    assert "velocity error" in ends[0][3] and "1 s after" in ends[0][3]


def test_a_goal_without_joint_states_still_ends_at_the_second_tick_past_its_goal_time():
    f, ctl, ends = follower()
    f.submit("g", goal(GOOD), T0)
    f.tick(T0 + int(2.9 * NS))
    f.tick(T0 + int(3.1 * NS))  # past end + goal_time: the states may wait behind this tick
    assert ends == []
    f.tick(T0 + int(3.15 * NS))
    assert ends[0][2] == GOAL_TOLERANCE_VIOLATED and "no joint state" in ends[0][3]
    assert "none yet" in ends[0][3]


def test_states_queued_behind_a_late_tick_end_the_goal_by_their_stamps():
    # the node was busy past the goal time: its executor runs the due tick first, then the
    # states that arrived meanwhile, which show the arm on target since the trajectory's end
    f, ctl, ends = follower()
    f.submit("g", goal(GOOD), T0)
    track(f, ctl, T0, T0 + NS)
    f.tick(T0 + int(3.5 * NS))
    assert ends == []
    d = ctl.desired(T0 + int(2.1 * NS))
    f.on_state(T0 + int(2.1 * NS), d[0], 0.0 * d[1])
    assert ends[0][1:3] == (SUCCEEDED, SUCCESSFUL)


def test_cancel_brings_the_reference_to_rest_without_a_jump():
    f, ctl, ends = follower()
    f.submit("g", goal(GOOD), T0)
    now = T0 + int(1.3 * NS)
    before = ctl.desired(now)
    assert before[1].any()  # moving
    assert not f.cancel("other", now)
    assert f.cancel("g", now)
    assert ends == [("g", CANCELED, SUCCESSFUL, "canceled")]
    assert not f.cancel("g", now)  # already ended
    assert np.allclose(ctl.desired(now), before, atol=1e-12)
    q, qd, qdd = before
    T = rules().stop_time
    rest = ctl.desired(now + int(T * NS) + 1)
    assert np.allclose(rest[0], q + qd * T / 2 + qdd * T * T / 12) and not rest[1:].any()
    assert np.array_equal(ctl.desired(now + 5 * NS), rest)


def test_with_no_stop_time_cancel_holds_the_position_at_once():
    f, ctl, ends = follower(stop_time=0.0)
    f.submit("g", goal(GOOD), T0)
    now = T0 + int(1.3 * NS)
    before = ctl.desired(now)
    f.cancel("g", now)
    after = ctl.desired(now + NS)
    assert np.array_equal(after[0], before[0]) and not after[1:].any()


def test_preemption_aborts_the_old_goal_and_keeps_the_reference_continuous():
    f, ctl, ends = follower()
    f.submit("old", goal(GOOD), T0)
    switch = T0 + int(1.25 * NS)
    ticks = [ctl.desired(ns)[2] for ns in range(switch - 5 * NS // 1000, switch, NS // 1000)]
    before = ctl.desired(switch)
    f.submit("new", goal([(1.0, [-0.3] * N)]), switch)
    assert ends == [("old", ABORTED, INVALID_GOAL, PREEMPTED)]
    assert f.active.goal_id == "new"
    assert np.allclose(ctl.desired(switch), before, atol=1e-12)
    # and on the controller's ticks around the switch, q̈ changes no more than along a path
    ticks += [ctl.desired(ns)[2] for ns in range(switch, switch + 5 * NS // 1000, NS // 1000)]
    assert np.abs(np.diff(np.stack(ticks), axis=0)).max() < 0.1


def test_a_flood_of_goals_each_preempts_the_last_and_nothing_jumps():
    f, ctl, ends = follower()
    rng = np.random.default_rng(7)
    previous = ctl.desired(T0)
    for i in range(1000):  # 100 goals/s for 10 s
        now = T0 + i * NS // 100
        prior = ctl.desired(now)
        assert np.allclose(prior[0], previous[0], atol=0.05)
        f.submit(i, goal([(0.5 + rng.random(), rng.uniform(-0.5, 0.5, N))]), now)
        assert np.allclose(ctl.desired(now), prior, atol=1e-9)
        previous = prior
    assert len(ends) == 999 and all(e[3] == PREEMPTED for e in ends)


def test_the_topic_interface_runs_checked_trajectories_and_preempts_goals():
    f, ctl, ends = follower()
    f.submit("g", goal(GOOD), T0)
    assert "outside" in f.command(goal([(1.0, [9.0] * N)]).trajectory, T0 + NS)
    assert ends == []  # a bad topic message changes nothing
    assert f.command(goal([(1.0, [0.3] * N)]).trajectory, T0 + NS) is None
    assert ends[0][1] == ABORTED and "topic" in ends[0][3]
    assert np.allclose(ctl.desired(T0 + 3 * NS)[0], 0.3)


def test_feedback_comes_at_the_monitor_rate_with_desired_actual_and_error():
    f, ctl, ends = follower()
    assert f.feedback_due(T0) is None  # no goal
    f.submit("g", goal(GOOD), T0)
    sent = []
    for ns in range(T0, T0 + NS, NS // 1000):
        d = ctl.desired(ns)
        f.on_state(ns, d[0] - 0.01, d[1])
        fb = f.feedback_due(ns)
        if fb is not None:
            sent.append(fb)
    assert len(sent) == 20
    last = sent[-1]
    assert np.allclose(last.error[0], 0.01) and last.joint_names == NAMES
    assert np.allclose(last.desired, ctl.desired(last.stamp_ns))


def test_multi_dof_goals_are_refused_with_a_reason():
    f, ctl, ends = follower()
    g = goal(GOOD)
    g.multi_dof_trajectory.joint_names = ["base"]
    assert not f.submit("g", g, T0)
    assert ends[0][2] == INVALID_JOINTS and "multi-DOF" in ends[0][3]
