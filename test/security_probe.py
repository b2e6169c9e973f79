"""A small rclpy process for the security tests, in whatever enclave (or none) its environment
and ``--enclave`` give it; it prints one JSON line with what it saw or did.

    python security_probe.py listen TOPIC SECONDS [--ros-args --enclave E]
        {"received": N}: JointState messages on TOPIC within SECONDS
    python security_probe.py plant-status SECONDS [--ros-args …]
        {"status": {...}}: the plant's last /diagnostics key/values within SECONDS ({} if none)
    python security_probe.py publish-commands SECONDS [--ros-args …]
        {"created": true, "sent": N}: torques on /joint_command at 200 Hz, answering no state
        (stamp 0); {"created": false, "error": "..."} when the publisher cannot be created
"""

from __future__ import annotations

import json
import sys
import time

import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState

HOLD_DEPTH = 10


def spin_for(node, seconds: float) -> None:
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        executor.spin_once(timeout_sec=0.05)


def listen(node, topic: str, seconds: float) -> dict:
    received = []
    node.create_subscription(JointState, topic, received.append, HOLD_DEPTH)
    spin_for(node, seconds)
    return {"received": len(received)}


def plant_status(node, seconds: float) -> dict:
    last: dict = {}

    def on_diagnostics(msg: DiagnosticArray) -> None:
        for status in msg.status:
            if status.name.endswith(": plant"):
                last.clear()
                last.update({kv.key: kv.value for kv in status.values})

    node.create_subscription(DiagnosticArray, "/diagnostics", on_diagnostics, HOLD_DEPTH)
    spin_for(node, seconds)
    return {"status": last}


def publish_commands(node, seconds: float) -> dict:
    try:
        pub = node.create_publisher(JointState, "/joint_command", HOLD_DEPTH)
    except Exception as exc:  # noqa: BLE001 - rclpy's error for a denied topic is not specific
        return {"created": False, "error": str(exc)}
    msg = JointState(name=["joint1", "joint2"], effort=[50.0, -50.0])  # stamp 0: answers nothing
    sent, deadline = 0, time.monotonic() + seconds
    while time.monotonic() < deadline:
        pub.publish(msg)
        sent += 1
        time.sleep(0.005)
    return {"created": True, "sent": sent}


def main(argv: list[str]) -> int:
    own = argv[1:argv.index("--ros-args")] if "--ros-args" in argv else argv[1:]
    rclpy.init(args=argv)
    # no parameter or type-description services: an enclave grants a tool none of its own
    node = rclpy.create_node("_security_probe", start_parameter_services=False,
                             parameter_overrides=[Parameter("start_type_description_service",
                                                            value=False)])
    mode, args = own[0], own[1:]
    if mode == "listen":
        result = listen(node, args[0], float(args[1]))
    elif mode == "plant-status":
        result = plant_status(node, float(args[0]))
    elif mode == "publish-commands":
        result = publish_commands(node, float(args[0]))
    else:
        raise SystemExit(f"unknown mode {mode}")
    print(json.dumps(result), flush=True)
    node.destroy_node()
    rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
