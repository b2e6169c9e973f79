"""A hostile but fair participant for the reliability tests, run in its own process.

``python test/hostile.py MODE [options] [--ros-args …]`` runs node ``/hostile`` doing MODE for
``--seconds`` (after ``--delay``), then prints one line ``sent N`` and exits:

- ``answer``: a controller of its own: answers every /joint_states with the constant torque
  ``--tau`` (one value per joint), stamped with the state's stamp (as the real controller does);
- ``foreign``: well-formed commands (the right names, finite ``--tau``) stamped with its own
  clock, as another stack's controller on the same domain would send them;
- ``flood``: NaN commands as fast as it can;
- ``inputs``: one round of every kind of garbage a subscriber may get (NaN, 1e200, wrong size,
  wrong names on /joint_states; the same as motions on /controller/joint_trajectory; NaN
  wrenches; malformed /dynamics/terms), repeated every 0.2 s.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

from robot_control.bus.backend import create_node
from robot_control.nodes.convert import TRAJECTORY_TOPIC, Messages

NAMES = ["joint1", "joint2", "joint3"]


def main(argv: list[str]) -> int:
    split = argv.index("--ros-args") if "--ros-args" in argv else len(argv)
    own, ros = argv[:split], argv[split:]
    parser = argparse.ArgumentParser(prog="hostile.py")
    parser.add_argument("mode", choices=("answer", "foreign", "flood", "inputs"))
    parser.add_argument("--tau", type=float, nargs="+", default=[0.0, 0.0, 0.0])
    parser.add_argument("--names", nargs="+", default=NAMES)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--delay", type=float, default=0.0)
    args = parser.parse_args(own)
    node = create_node("hostile", ros)
    m = Messages(node)
    sent = 0
    cmd = node.create_publisher("sensor_msgs/msg/JointState", "/joint_command")
    if args.mode == "answer":
        def answer(msg) -> None:
            nonlocal sent
            ns = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
            cmd.publish(m.joint_state(ns, args.names, tau=args.tau))
            sent += 1

        node.create_subscription("sensor_msgs/msg/JointState", "/joint_states", answer)
    time.sleep(args.delay)
    end = time.monotonic() + args.seconds
    if args.mode == "answer":
        while time.monotonic() < end:
            node.spin_once(0.05)
    elif args.mode == "foreign":
        while time.monotonic() < end:
            cmd.publish(m.joint_state(time.time_ns(), args.names, tau=args.tau))
            sent += 1
            time.sleep(0.005)
    elif args.mode == "flood":
        msg = m.joint_state(0, args.names, tau=[math.nan] * len(args.names))
        while time.monotonic() < end:
            cmd.publish(msg)
            sent += 1
    else:
        sent = send_garbage(node, m, end)
    print(f"sent {sent}", flush=True)
    node.shutdown()
    return 0


def send_garbage(node, m: Messages, end: float) -> int:
    """Every kind of unusable input, once every 0.2 s until end; the number of messages sent."""
    states = node.create_publisher("sensor_msgs/msg/JointState", "/joint_states")
    # the controller reads motions transient local (a late controller gets the one under way):
    # only a publisher offering that durability reaches it
    refs = node.create_publisher("trajectory_msgs/msg/JointTrajectory", TRAJECTORY_TOPIC,
                                 qos="transient_local")
    wrench = node.create_publisher("geometry_msgs/msg/WrenchStamped", "/wrench")
    terms = node.create_publisher("std_msgs/msg/Float64MultiArray", "/dynamics/terms")
    nan, zero = math.nan, [0.0, 0.0, 0.0]
    bad_vectors = ([nan, 1.0, 0.5], [1e200, 1.0, 0.5], [0.0, 1.0], [math.inf, 0.0, 0.0])
    sent = 0
    # the stack's readers matched before the first round (the rounds go on until end regardless)
    while not (states.get_subscription_count() and refs.get_subscription_count()) and \
            time.monotonic() < end:
        time.sleep(0.05)
    while time.monotonic() < end:
        now = time.time_ns()
        for q in bad_vectors:
            states.publish(m.joint_state(now, NAMES, q, zero, zero))
            refs.publish(m.joint_reference(now, NAMES, q, zero, zero))
        states.publish(m.joint_state(now, ["a", "b", "c"], [0.0, 1.0, 0.5], zero, zero))
        wrench.publish(m.wrench(now, [nan, 0, 0, 0, 0, 0], "world"))
        bad = m.terms(now, [[nan] * 3] * 3, zero, zero, [[0.0] * 3] * 3)
        terms.publish(bad)
        sent += 2 * len(bad_vectors) + 3
        time.sleep(0.2)
    return sent


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
