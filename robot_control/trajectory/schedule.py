"""A reference sent once as quintic knots and evaluated at every control tick.

The trajectory generator sends a motion when it starts, as the knots of its quintic segments —
positions, velocities, accelerations and time from start per knot, the start time beside them —
the way a trajectory_msgs/JointTrajectory carries it to ros2_control's joint_trajectory_controller.
The receiver rebuilds the same piecewise quintic (Huo Ex. 3-7: each segment matches the states of
its two knots, :class:`~robot_control.trajectory.JointTrajectory`) and samples it at each
measured state's time with the compiled kernel every sampler shares (trajectory/sampling.py), so
only the control loop itself crosses processes every tick.

Times are integer nanoseconds (ROS stamps): a trajectory is evaluated at ``(stamp − start)`` s,
which keeps full double precision however far the wall clock is from its epoch.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from robot_control.trajectory.joint_trajectory import Hold, JointTrajectory
from robot_control.trajectory.sampling import sample_into

Array = NDArray[np.float64]
Knots = tuple[Array, Array, Array, Array]  # (times from start (k,), q, q̇, q̈ (k, n))


def trajectory_knots(trajectory, sample_interval: float) -> Knots:
    """The knots (times from the motion's start, q, q̇, q̈) that rebuild ``trajectory``.

    A quintic trajectory (JointTrajectory, Hold) gives its own knots, and the rebuilt quintics
    are its segments. Any other smooth reference (a Fourier excitation) is sampled every
    ``sample_interval`` s; the quintic through those samples matches q, q̇ and q̈ at each of them
    (what joint_trajectory_controller does between the points it is given).
    """
    if isinstance(trajectory, JointTrajectory):
        times = trajectory.times_from_start - trajectory.times_from_start[0]
        return (times, trajectory.positions, trajectory.velocities, trajectory.accelerations)
    if isinstance(trajectory, Hold):
        zero = np.zeros((1, trajectory.dof))
        return np.zeros(1), trajectory.q[None, :].copy(), zero, zero.copy()
    if not sample_interval > 0.0:
        raise ValueError(f"sample_interval must be > 0, got {sample_interval}")
    count = max(1, int(np.ceil(trajectory.duration / sample_interval)))
    times = np.linspace(0.0, trajectory.duration, count + 1)
    q, qd, qdd = trajectory.sample(trajectory.start_time + times)
    return times, q, qd, qdd


def knots_trajectory(knots: Knots) -> JointTrajectory:
    """The piecewise quintic through the knots, on its own clock (start time 0)."""
    times, q, qd, qdd = knots
    return JointTrajectory(times, q, qd, qdd)


class TrajectorySchedule:
    """Trajectories that each take over at their start time, sampled at state stamps.

    A trajectory added with start s replaces, from s on, whatever was to run then: those that
    start at or after s are dropped, the one running keeps running until s. So the next cycle of
    a looping motion can be sent ahead of its start, and a goal sent after it still wins.
    """

    def __init__(self, dof: int) -> None:
        # (start ns, sampling arrays, end ns), by start
        self._entries: list[tuple[int, tuple, int]] = []
        self.out = np.zeros((3, dof))  # (q_d; q̇_d; q̈_d) of the last sample, reused

    def add(self, start_ns: int, trajectory: JointTrajectory) -> None:
        """Run ``trajectory`` (on its own clock: time 0 is its start) from ``start_ns`` on."""
        end_ns = int(start_ns) + int(round((trajectory.start_time + trajectory.duration) * 1e9))
        entry = (int(start_ns), trajectory.sampling_arrays(), end_ns)
        self._entries = [e for e in self._entries if e[0] < entry[0]] + [entry]

    def clear(self) -> None:
        self._entries = []

    def ended(self, stamp_ns: int) -> bool:
        """Every trajectory received has ended by ``stamp_ns`` (none starts later): what is left
        is a stale target — an aborted or cancelled goal's end, a past hold — not a motion."""
        return all(end <= stamp_ns for _, _, end in self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def sample(self, stamp_ns: int) -> Array | None:
        """(q_d; q̇_d; q̈_d) at ``stamp_ns`` as a (3, n) array this object reuses, or None before
        the first trajectory starts. Trajectories whose successor has started are forgotten."""
        entries = self._entries
        while len(entries) > 1 and entries[1][0] <= stamp_ns:
            entries.pop(0)
        if not entries or entries[0][0] > stamp_ns:
            return None
        start, arrays, _ = entries[0]
        sample_into(*arrays, (stamp_ns - start) * 1e-9, self.out)
        return self.out
