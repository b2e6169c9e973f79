"""What an oversized goal costs an rclpy node: the caps read from the serialised request before
the rmw decodes it, from the C message the rmw decoded, and rclpy's conversion to Python first
(issue 35, item 5).

    source /opt/ros/jazzy/setup.bash
    RMW_IMPLEMENTATION=rmw_cyclonedds_cpp /usr/bin/python3 bench/goal_caps_rclpy.py \
        [--points 250000 20000 10000 100] [--joints 3] [--servers screened c_screened converted]

This process serves control_msgs/action/FollowJointTrajectory with the package's
RclpyActionServer (bus/ros/action.py): ``~/screened`` by a handler that screens goals as the
trajectory generator does (on rmw_cyclonedds from the serialised request: bus/ros/raw_request.py),
``~/c_screened`` by the same handler with the raw reading switched off (the sizes read from the C
message the rmw decoded: bus/ros/goal_screen.py), ``~/converted`` by one that checks the
converted goal (what rclpy alone allows); and it keeps a 10 ms timer: its longest silence is how
long the node was blocked. A second process sends each goal with an rclpy ActionClient, each
size to every server in turn (so they share the machine's load); its own conversion of the goal
is not counted (the clock starts when ``send_goal_async`` returned, the request handed to DDS).
Printed per goal: the answer's delay at the client; when the server's take of it began (the
request complete at the reader: the rest of the transport and the wake-up) and how long it took
(screen included); when the goal was ended; the timer's longest silence while it was on its
way; the ending. Times are CLOCK_MONOTONIC, shared by both processes.
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
SERVERS = ("screened", "c_screened", "converted")
BEAT_S = 0.01


class Converted(ActionHandler):
    """Checks the point count of the goal rclpy converted."""

    def __init__(self, joints: int) -> None:
        self.joints = joints
        self.server = None
        self.ended: list[float] = []  # when each goal was ended here (monotonic, as the client's)

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
        self.ended.append(time.monotonic())
        status = "aborted" if reason else "succeeded"
        self.server.finish(goal_id, status, self.server.Result(error_string=reason or ""))


class Screened(Converted):
    """Refuses a goal by the sizes it declares, before rclpy converts it."""

    def screen_goal(self, declared) -> str | None:
        return refuse_sizes(declared, self.joints, MAX_MOTION_POINTS)

    def refused(self, goal_id: bytes, reason: str) -> None:
        self.end(goal_id, reason + " (refused before conversion)")


def timed_goal_takes(server) -> list[tuple[float, float]]:
    """(start, end) of each take of a goal request by rclpy's ``server`` (its take_data while
    a goal request is ready), appended as they happen."""
    spans: list[tuple[float, float]] = []
    take_data = server.take_data

    def timed():
        if not getattr(server, "_is_goal_request_ready", False):
            return take_data()
        start = time.monotonic()
        data = take_data()
        if "goal" in data:
            spans.append((start, time.monotonic()))
        return data

    server.take_data = timed
    return spans


def client(points: list[int], joints: int, names: list[str]) -> None:
    """The sending process: one JSON line per goal."""
    import rclpy
    from builtin_interfaces.msg import Duration
    from control_msgs.action import FollowJointTrajectory
    from rclpy.action import ActionClient
    from trajectory_msgs.msg import JointTrajectoryPoint

    rclpy.init()
    node = rclpy.create_node("goal_caps_client")
    actions = {name: ActionClient(node, FollowJointTrajectory, name) for name in names}
    for name, action in actions.items():
        assert action.wait_for_server(timeout_sec=30), name
    for n in points:
        for name, action in actions.items():
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
    parser.add_argument("--servers", nargs="+", choices=SERVERS, default=list(SERVERS))
    parser.add_argument("--client", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--names", nargs="*", default=[], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    os.environ.setdefault("ROS_DOMAIN_ID", "97")
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    if args.client:
        client(args.points, args.joints, args.names)
        return 0
    node = create_node("goal_caps", [], backend="rclpy")
    kinds = {"screened": Screened, "c_screened": Screened, "converted": Converted}
    handlers = {name: kinds[name](args.joints) for name in args.servers}
    takes: dict[str, list[tuple[float, float]]] = {}
    for name, handler in handlers.items():
        handler.server = node.create_action_server(ACTION, f"~/{name}", handler)
        takes[name] = timed_goal_takes(handler.server._server)
        if name == "c_screened":
            handler.server._server.raw = None  # the C message's screen only
        if name != "converted":
            raw = getattr(handler.server._server, "raw", None)
            print(f"{name}: sizes read from the", "serialised request (before the rmw decodes "
                  "it)" if raw is not None else "C message (after the rmw decoded it)")
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
    print(f"{'server':>10} {'points':>8} {'answered ms':>12} {'taken at ms':>12} "
          f"{'take ms':>8} {'ended at ms':>12} {'longest silence ms':>19}  ending")
    seen = dict.fromkeys(handlers, 0)
    for line in lines:
        name = line["name"].rsplit("/", 1)[-1]
        k, seen[name] = seen[name], seen[name] + 1
        start, end = takes[name][k] if k < len(takes[name]) else (float("nan"),) * 2
        ended = handlers[name].ended[k] if k < len(handlers[name].ended) else float("nan")
        during = [t for t in beats if line["sent"] - 0.1 <= t <= line["answered"] + 0.1]
        silence = max((b - a for a, b in zip(during, during[1:], strict=False)), default=0.0)
        print(f"{name:>10} {line['points']:>8} "
              f"{(line['answered'] - line['sent']) * 1e3:>12.0f} "
              f"{(start - line['sent']) * 1e3:>12.0f} {(end - start) * 1e3:>8.1f} "
              f"{(ended - line['sent']) * 1e3:>12.0f} {silence * 1e3:>19.0f}  "
              f"{'aborted' if line['status'] == 6 else line['status']}: {line['error']}")
    return 0 if len(lines) == len(args.points) * len(handlers) else 1


if __name__ == "__main__":
    sys.exit(main())
