"""A motion sent once as quintic knots and evaluated per tick (trajectory/schedule.py): the knots
rebuild the same quintics, the JointTrajectory message carries them both ways, and trajectories
take over at their start stamps."""

from types import SimpleNamespace

import numpy as np
import pytest

from robot_control.bus.dds.messages import message_type
from robot_control.model import load_robot
from robot_control.nodes.convert import Messages
from robot_control.nodes.validation import JointVectors, Rejected
from robot_control.sim.scenario import load_scenario
from robot_control.trajectory import Hold, JointTrajectory, huo_intended
from robot_control.trajectory.schedule import (
    TrajectorySchedule,
    knots_trajectory,
    trajectory_knots,
)

DDARM = load_robot("ddarm")
EPOCH_NS = 1_700_000_000_123_456_789  # a wall-clock stamp: far from 0, as ROS time is
SWEEP = JointTrajectory.through([[-0.1, 1.5, 1.0], [0.6, 1.0, -0.5], [-0.1, 1.5, 1.0]],
                                [1.5, 1.5])


def messages() -> Messages:
    """The DDS backend's message classes (what Messages asks a node for)."""
    return Messages(SimpleNamespace(msg=message_type))


def sampled(traj, times):
    return np.stack(traj.sample(np.asarray(times)), axis=1)


def test_knots_rebuild_the_quintics_to_the_last_bit():
    times = np.linspace(-0.1, 3.2, 997)
    for traj in (SWEEP, huo_intended()):
        rebuilt = knots_trajectory(trajectory_knots(traj, 0.01))
        assert np.array_equal(sampled(rebuilt, times), sampled(traj, times))


def test_a_hold_is_one_knot_at_rest():
    times, q, qd, qdd = trajectory_knots(Hold([0.1, 0.2, 0.3]), 0.01)
    assert times.tolist() == [0.0] and q.tolist() == [[0.1, 0.2, 0.3]]
    rebuilt = knots_trajectory((times, q, qd, qdd))
    assert np.array_equal(np.stack(rebuilt.sample(5.0)), [[0.1, 0.2, 0.3], [0.0] * 3, [0.0] * 3])


def test_an_excitation_is_sent_as_quintics_through_its_samples():
    excitation = load_scenario("identification_ddarm_excitation").trajectory
    knots = trajectory_knots(excitation, 0.01)
    assert knots[0][-1] == pytest.approx(excitation.duration)
    rebuilt = knots_trajectory(knots)
    times = np.linspace(0.0, excitation.duration, 4001) + 0.0037
    times = times[times <= excitation.duration]
    error = np.abs(sampled(rebuilt, times) - sampled(excitation, times)).max(axis=(0, 2))
    # Hermite-quintic interpolation error ~ h⁶ q⁽⁶⁾: far below any tracking error
    assert error[0] < 1e-9 and error[1] < 1e-7 and error[2] < 1e-5, error


def test_the_message_carries_the_knots_both_ways():
    m = messages()
    msg = m.joint_trajectory(EPOCH_NS, DDARM.joint_names, trajectory_knots(SWEEP, 0.01))
    assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == divmod(EPOCH_NS, 10**9)
    assert [(p.time_from_start.sec, p.time_from_start.nanosec) for p in msg.points] == \
        [(0, 0), (1, 500_000_000), (3, 0)]
    msg = type(msg).deserialize(msg.serialize())  # over the wire (CDR)
    times, q, qd, qdd = JointVectors(DDARM).points(msg)
    rebuilt = JointTrajectory(times, q, qd, qdd)
    grid = np.linspace(0.0, 3.0, 301)
    assert np.array_equal(sampled(rebuilt, grid), sampled(SWEEP, grid))


def test_points_in_another_joint_order_or_without_rates():
    m = messages()
    names = DDARM.joint_names
    msg = m.joint_trajectory(0, names[::-1], (np.array([0.0, 2.0]), np.array([[1.0, 2.0, 3.0],
                                               [4.0, 5.0, 6.0]]), np.zeros((2, 3)),
                                               np.zeros((2, 3))))
    for p in msg.points:
        p.velocities, p.accelerations = [], []
    times, q, qd, qdd = JointVectors(DDARM).points(msg)
    assert times.tolist() == [0.0, 2.0] and q.tolist() == [[3.0, 2.0, 1.0], [6.0, 5.0, 4.0]]
    assert qd is None and qdd is None


@pytest.mark.parametrize("spoil, reason", [
    (lambda msg: msg.points.clear(), "at least one point"),
    (lambda msg: setattr(msg.points[1], "positions", [0.0, float("nan"), 0.0]), "nan"),
    (lambda msg: setattr(msg.points[0], "positions", []), "every point needs positions"),
    (lambda msg: setattr(msg, "joint_names", ["a", "b", "c"]), "joint names"),
    (lambda msg: setattr(msg.points[0], "velocities", [1e9, 0.0, 0.0]), "implausible"),
])
def test_unusable_points_are_rejected_with_the_reason(spoil, reason):
    msg = messages().joint_trajectory(0, DDARM.joint_names, trajectory_knots(SWEEP, 0.01))
    spoil(msg)
    with pytest.raises(Rejected, match=reason):
        JointVectors(DDARM).points(msg)


def test_schedule_samples_relative_to_each_start_far_from_the_epoch():
    schedule = TrajectorySchedule(3)
    assert schedule.sample(EPOCH_NS) is None  # nothing yet
    schedule.add(EPOCH_NS, SWEEP)
    assert schedule.sample(EPOCH_NS - 1) is None  # before its start
    for dt in (0.0, 0.000_001, 0.7512, 1.5, 2.999_999_999, 4.0):
        got = schedule.sample(EPOCH_NS + round(dt * 1e9))
        assert np.array_equal(got, np.stack(SWEEP.sample(round(dt * 1e9) * 1e-9)))


def test_a_trajectory_takes_over_at_its_start_and_drops_the_ones_after_it():
    schedule = TrajectorySchedule(3)
    first, second, goal = Hold([1.0, 1.0, 1.0]), Hold([2.0, 2.0, 2.0]), Hold([3.0, 3.0, 3.0])
    as_quintics = [knots_trajectory(trajectory_knots(h, 0.01)) for h in (first, second, goal)]
    schedule.add(100, as_quintics[0])
    schedule.add(300, as_quintics[1])  # sent ahead of its start: the first runs until then
    assert schedule.sample(299)[0, 0] == 1.0 and len(schedule) == 2
    schedule.add(200, as_quintics[2])  # a goal before it: replaces it, from 200 on
    assert len(schedule) == 2
    assert schedule.sample(150)[0, 0] == 1.0
    assert schedule.sample(400)[0, 0] == 3.0 and len(schedule) == 1  # the first is forgotten
