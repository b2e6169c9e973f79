"""What an oversized goal costs an rclpy node: the caps read from the taken C message against
rclpy's conversion to Python first (issue 35, item 5).

    source /opt/ros/jazzy/setup.bash
    python3 bench/goal_caps_rclpy.py [--points 250000 20000 10000 100] [--joints 3]

This process serves control_msgs/action/FollowJointTrajectory twice with the package's
RclpyActionServer (bus/ros/action.py): ``~/screened`` by a handler that screens goals (as the
trajectory generator does: bus/ros/goal_screen.py) and ``~/converted`` by one that checks the
converted goal (what rclpy alone allows), and keeps a 10 ms timer: its longest silence is how
long the node was blocked. A second process sends each goal with an rclpy ActionClient; its own
conversion of the goal is not counted (the clock starts when ``send_goal_async`` returned, the
request handed to DDS). Printed per goal: the answer's delay at the client, the timer's longest
silence while it was on its way, and the ending.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from robot_control.bus.backend import create_node  # noqa: E402
from robot_control.bus.node import ActionHandler  # noqa: E402
from robot_control.nodes.validation import MAX_MOTION_POINTS, refuse_sizes  # noqa: E402

ACTION = "control_msgs/action/FollowJointTrajectory"
BEAT_S = 0.01


class Converted(ActionHandler):
    """Checks the point count of the goal rclpy converted."""

    def __init__(self, joints: int) -> None:
        self.joints = joints
        self.server = None

    def accept(self, goal) -> str | None:
        return None

    def accepted(self, goal_id: bytes, goal) -> None:
        points = len(goal.trajectory.points)
        reason = f"{points} points exceed the cap of {MAX_MOTION_POINTS}" \
            if points > MAX_MOTION_POINTS else None
        self.end(goal_id, reason)

    def cancel(self, goal_id: bytes) -> bool:
        return False

    def end(self, goal_id: bytes, reason: str | None) -> None:
        status = "aborted" if reason else "succeeded"
        self.server.finish(goal_id, status, self.server.Result(error_string=reason or ""))


class Screened(Converted):
    """Refuses a goal by the sizes it declares, before rclpy converts it."""

    def screen_goal(self, declared) -> str | None:
        return refuse_sizes(declared, self.joints, MAX_MOTION_POINTS)

    def refused(self, goal_id: bytes, reason: str) -> None:
        self.end(goal_id, reason + " (refused before conversion)")


def client(points: list[int], joints: int, names: list[str]) -> None:
    """The sending process: one JSON line per goal."""
    import rclpy
    from builtin_interfaces.msg import Duration
    from control_msgs.action import FollowJointTrajectory
    from rclpy.action import ActionClient
    from trajectory_msgs.msg import JointTrajectoryPoint

    rclpy.init()
    node = rclpy.create_node("goal_caps_client")
    for name in names:
        action = ActionClient(node, FollowJointTrajectory, name)
        assert action.wait_for_server(timeout_sec=30), name
        for n in points:
            goal = FollowJointTrajectory.Goal()
            goal.trajectory.joint_names = [f"joint{i + 1}" for i in range(joints)]
            goal.trajectory.points = [JointTrajectoryPoint(
                positions=[0.1] * joints, time_from_start=Duration(sec=1))] * n
            future = action.send_goal_async(goal)
            sent = time.monotonic()
            rclpy.spin_until_future_complete(node, future, timeout_sec=60)
            answered = time.monotonic()
            result = future.result().get_result_async()
            rclpy.spin_until_future_complete(node, result, timeout_sec=60)
            print(json.dumps({"name": name, "points": n, "sent": sent, "answered": answered,
                              "status": result.result().status,
                              "error": result.result().result.error_string[:80]}), flush=True)
    node.destroy_node()
    rclpy.shutdown()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, nargs="+", default=[250_000, 20_000, 10_000, 100])
    parser.add_argument("--joints", type=int, default=3)
    parser.add_argument("--client", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--names", nargs="*", default=[], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    os.environ.setdefault("ROS_DOMAIN_ID", "97")
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    if args.client:
        client(args.points, args.joints, args.names)
        return 0
    node = create_node("goal_caps", [], backend="rclpy")
    handlers = {"screened": Screened(args.joints), "converted": Converted(args.joints)}
    for name, handler in handlers.items():
        handler.server = node.create_action_server(ACTION, f"~/{name}", handler)
    beats: list[float] = []
    node.create_timer(BEAT_S, lambda: beats.append(time.monotonic()))
    names = [f"{node.fqn}/{name}" for name in handlers]
    proc = subprocess.Popen([sys.executable, __file__, "--client", "--joints", str(args.joints),
                             "--points", *map(str, args.points), "--names", *names],
                            stdout=subprocess.PIPE, text=True)
    lines: list[dict] = []
    reader = threading.Thread(target=lambda: lines.extend(json.loads(x) for x in proc.stdout))
    reader.start()
    deadline = time.monotonic() + 60 + 20 * len(args.points)
    while proc.poll() is None and time.monotonic() < deadline:
        node.spin_once(0.005)
    proc.kill()
    reader.join(5)
    node.shutdown()
    print(f"{'server':>10} {'points':>8} {'answered ms':>12} {'longest silence ms':>19}  ending")
    for line in lines:
        during = [t for t in beats if line["sent"] - 0.1 <= t <= line["answered"] + 0.1]
        silence = max((b - a for a, b in zip(during, during[1:], strict=False)), default=0.0)
        print(f"{line['name'].rsplit('/', 1)[-1]:>10} {line['points']:>8} "
              f"{(line['answered'] - line['sent']) * 1e3:>12.0f} {silence * 1e3:>19.0f}  "
              f"{'aborted' if line['status'] == 6 else line['status']}: {line['error']}")
    return 0 if len(lines) == len(args.points) * len(handlers) else 1


if __name__ == "__main__":
    sys.exit(main())
