"""A node that publishes a known sequence, for the recording tests and bench/recording.py.

``python test/bag_publisher.py --count N --rate HZ [--subscribers K] [--ros-args …]`` runs node
``/bag_publisher``: 0.5 s after K subscribers have matched on each topic (default 1; ``--awaited
TOPIC …``: on those) it publishes N
messages at HZ on ``/joint_states`` (sensor_msgs/JointState: position = [k, k/2, -k], velocity,
effort; stamp = k/HZ s) and ``/joint_command`` (effort = [k, 2k, 3k], same stamp), one of each
per period, waits until its reliable subscribers have acknowledged everything, prints
``published N`` and exits. It prints ``publishing`` when it starts.
"""

from __future__ import annotations

import argparse
import sys
import time

from robot_control.bus.backend import create_node

JOINTS = ["joint1", "joint2", "joint3"]
SETTLE_S = 0.5
TOPICS = ("/joint_states", "/joint_command")


def expected_state(k: int) -> tuple[list[float], list[float], list[float]]:
    """(position, velocity, effort) of the k-th /joint_states message."""
    return [float(k), k / 2.0, -float(k)], [0.5, 0.25, -0.5], [1.0, 2.0, 3.0]


def expected_command(k: int) -> list[float]:
    """effort of the k-th /joint_command message."""
    return [float(k), 2.0 * k, 3.0 * k]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--rate", type=float, default=1000.0)
    parser.add_argument("--subscribers", type=int, default=1)
    parser.add_argument("--awaited", nargs="+", default=["/joint_states", "/joint_command"],
                        help="the topics whose subscribers --subscribers counts")
    args, ros_args = parser.parse_known_args(argv)
    node = create_node("bag_publisher", ros_args)
    JointState = node.msg("sensor_msgs/msg/JointState")
    Header, Time = node.msg("std_msgs/msg/Header"), node.msg("builtin_interfaces/msg/Time")
    pubs = [node.create_publisher("sensor_msgs/msg/JointState", t)
            for t in TOPICS]
    state = {"k": 0, "started": False, "matched_at": None}

    def stamp(k: int):
        ns = round(k * 1e9 / args.rate)
        return Header(stamp=Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000))

    def tick() -> None:
        if not state["started"]:
            # our writers see the readers first; a reader that has not yet matched the writer
            # would miss the first samples of a volatile topic, so give its side a moment
            if not all(p.get_subscription_count() >= args.subscribers
                       for p, topic in zip(pubs, TOPICS) if topic in args.awaited):
                state["matched_at"] = None
            elif state["matched_at"] is None:
                state["matched_at"] = time.monotonic()
            elif time.monotonic() - state["matched_at"] >= SETTLE_S:
                state["started"] = True
                print("publishing", flush=True)
            return
        k = state["k"]
        if k >= args.count:
            return
        q, qd, tau = expected_state(k)
        pubs[0].publish(JointState(header=stamp(k), name=JOINTS, position=q, velocity=qd,
                                   effort=tau))
        pubs[1].publish(JointState(header=stamp(k), name=JOINTS, position=[], velocity=[],
                                   effort=expected_command(k)))
        state["k"] = k + 1
        if state["k"] == args.count:
            for p in pubs:  # the DDS backend's writer: nothing is lost when this process ends
                if hasattr(p, "writer"):
                    p.writer.wait_for_acks(10_000_000_000)
            print(f"published {args.count}", flush=True)
            node.shutdown()

    node.create_timer(1.0 / args.rate, tick)
    node.spin()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
