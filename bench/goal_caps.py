"""What an oversized goal costs a node: the caps read before decoding against the decoding (issue 35).

    python bench/goal_caps.py [--points 250000 20000 10000] [--joints 3]

For FollowJointTrajectory SendGoal requests of the given numbers of points (the rclpy-free
route's generated types, serialised as Cyclone sends them), prints the serialised size, the time
``validation.refuse_sizes`` takes to read the declared counts and refuse (what the generator
pays now), and the time decoding the request takes (what it paid before the cap applied). The
rclpy route reads the same counts from rcl's C message before rclpy converts it:
``python3 bench/goal_caps_rclpy.py`` (ROS 2 sourced) measures that route.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from robot_control.bus.cdr_prefix import GOAL_START, CdrMotion  # noqa: E402
from robot_control.bus.dds.messages import MESSAGE_TYPES  # noqa: E402
from robot_control.nodes.validation import MAX_MOTION_POINTS, refuse_sizes  # noqa: E402

TYPE = "control_msgs/action/FollowJointTrajectory"


def serialised_goal(points: int, joints: int) -> bytes:
    """A SendGoal request of ``points`` identical points for ``joints`` joints, serialised."""
    request = MESSAGE_TYPES[TYPE + "_SendGoal_Request"]()
    point = MESSAGE_TYPES["trajectory_msgs/msg/JointTrajectoryPoint"](
        positions=[0.1] * joints,
        time_from_start=MESSAGE_TYPES["builtin_interfaces/msg/Duration"](sec=1))
    request.goal.trajectory.joint_names = [f"joint{i + 1}" for i in range(joints)]
    request.goal.trajectory.points = [point] * points
    return request.serialize()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, nargs="+", default=[250_000, 20_000, 10_000])
    parser.add_argument("--joints", type=int, default=3)
    args = parser.parse_args(argv)
    Request = MESSAGE_TYPES[TYPE + "_SendGoal_Request"]
    print(f"{'points':>8} {'MB':>6} {'screen µs':>10} {'decode s':>9}  verdict")
    for points in args.points:
        data = serialised_goal(points, args.joints)
        repeats = 200
        t = time.perf_counter()
        for _ in range(repeats):
            reason = refuse_sizes(CdrMotion(data, GOAL_START), args.joints, MAX_MOTION_POINTS)
        screen = (time.perf_counter() - t) / repeats
        t = time.perf_counter()
        Request.deserialize(data)
        decode = time.perf_counter() - t
        print(f"{points:>8} {len(data) / 1e6:>6.2f} {screen * 1e6:>10.1f} {decode:>9.3f}  "
              f"{reason or 'decoded, then checked'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
