"""A small node for the bus tests, run in its own process, and a round-trip latency benchmark.

``python test/bus_probe.py [--ros-args …]`` runs node ``/probe``:
- echoes every sensor_msgs/JointState on ``ping`` to ``pong`` (a ping named "raise" makes the
  callback raise instead; a ping named "log" logs its position[0] at info level);
- declares ``gain`` (double in [0, 10]), ``mode`` (string, validator: "a" or "b"), ``count``
  (read-only integer) and ``extra_sub`` (bool: creates/destroys a subscription on ``extra``);
- logs "probe ready" once everything exists.

``python test/bus_probe.py --check`` (DDS backend) pings a running probe until it answers and
gets, sets and is refused its parameters through the DDS client; it prints the results as JSON.

``python test/bus_probe.py --bench N`` starts such a probe in a subprocess and measures N
ping→pong round trips of a 6-joint JointState from this process; it prints the median, p99
and max in microseconds (environment as for any node: ROS_DOMAIN_ID, …).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time

import numpy as np

from robot_control.bus.backend import create_node

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import domains  # noqa: E402  (test/ helper, also when this file runs as a script)

JOINTS = [f"joint_{i + 1}" for i in range(6)]


def domain_id(tag: str) -> int:
    """A ROS_DOMAIN_ID for one test module of this pytest process, claimed machine-wide."""
    return domains.claim(tag)


def bus_env(tag: str) -> dict[str, str]:
    """Environment of an isolated test bus: own domain, loopback discovery, DDS backend."""
    return {"ROS_DOMAIN_ID": str(domain_id(tag)), "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST",
            "ROBOT_CONTROL_BUS": "dds"}


@contextlib.contextmanager
def isolated_bus_env(tag: str):
    """This process on an isolated test bus (``bus_env``) while the block runs, with no DDS
    context left open by another test; the environment restored after."""
    from robot_control.bus.dds import context as dds_context

    assert dds_context._context is None, "a DDS context from another test is still open"
    saved = {k: os.environ.get(k) for k in bus_env(tag)}
    os.environ.update(bus_env(tag))
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run_probe(argv: list[str]) -> None:
    node = create_node("probe", argv)
    log = node.get_logger()
    JointState = node.msg("sensor_msgs/msg/JointState")
    pong = node.create_publisher("sensor_msgs/msg/JointState", "pong")

    def on_ping(msg) -> None:
        if list(msg.name) == ["raise"]:
            raise RuntimeError("ping asked the callback to raise")
        if list(msg.name) == ["log"]:
            log.info(f"logged ping {msg.position[0]}")
        pong.publish(JointState(header=msg.header, name=msg.name, position=msg.position,
                                velocity=msg.velocity, effort=msg.effort))

    node.create_subscription("sensor_msgs/msg/JointState", "ping", on_ping)
    node.declare_parameter("gain", 1.0, "a gain", floating_point_range=(0.0, 10.0))
    node.declare_parameter("mode", "a", "the mode, a or b")
    node.declare_parameter("count", 3, "a constant", read_only=True)
    node.declare_parameter("extra_sub", False, "subscribe to 'extra' while true")
    node.add_parameter_validator(
        lambda changes: None if changes.get("mode", "a") in ("a", "b")
        else f"mode must be 'a' or 'b', not '{changes['mode']}'")
    extra = []

    def on_change(new: dict, old: dict) -> None:
        log.info(f"parameters changed: {sorted(new)}")
        if "extra_sub" in new:
            if new["extra_sub"] and not extra:
                extra.append(node.create_subscription("std_msgs/msg/String", "extra",
                                                      lambda m: None))
            elif not new["extra_sub"] and extra:
                extra.pop().destroy()

    node.add_parameter_listener(on_change)
    log.info("probe ready")
    node.spin()


def start_probe(env: dict[str, str], *args: str, python: str = sys.executable) -> subprocess.Popen:
    """The probe in a subprocess, once it has logged that it is ready; its stderr lines keep
    being collected in ``proc.lines`` (a thread drains the pipe so the probe never blocks)."""
    proc = subprocess.Popen([python, __file__, "--ros-args", *args], env=env,
                            stderr=subprocess.PIPE, text=True)
    proc.lines = []
    ready = threading.Event()

    def drain() -> None:
        for line in proc.stderr:
            proc.lines.append(line)
            if "probe ready" in line:
                ready.set()
        ready.set()

    threading.Thread(target=drain, daemon=True).start()
    if not ready.wait(30) or proc.poll() is not None:
        proc.kill()
        raise RuntimeError("probe did not start:\n" + "".join(proc.lines))
    return proc


def round_trips(node, count: int, timeout_s: float = 10.0) -> np.ndarray:
    """Round-trip times (s) of ``count`` pings answered by a probe, one at a time, after a
    warm-up ping has come back (both directions matched)."""
    JointState = node.msg("sensor_msgs/msg/JointState")
    ping = node.create_publisher("sensor_msgs/msg/JointState", "/ping")
    got: list[float] = []
    node.create_subscription("sensor_msgs/msg/JointState", "/pong",
                             lambda m: got.append(time.perf_counter()))
    q = np.linspace(0.1, 0.6, 6)

    def send(i: int) -> None:
        ping.publish(JointState(name=JOINTS, position=(q + i).tolist(), velocity=q.tolist(),
                                effort=q.tolist()))

    deadline = time.monotonic() + timeout_s
    while not got and time.monotonic() < deadline:
        send(-1)
        node.spin_once(0.05)
    rtt = []
    for i in range(count if got else 0):
        n = len(got)
        sent = time.perf_counter()
        send(i)
        give_up = time.monotonic() + 1.0
        while len(got) == n and time.monotonic() < give_up:
            node.spin_once(0.01)
        if len(got) > n:
            rtt.append(got[-1] - sent)
    return np.array(rtt)


def bench(count: int) -> None:
    probe = start_probe(dict(os.environ))
    node = create_node("bench", [])
    try:
        rtt = round_trips(node, count) * 1e6
        print(f"{len(rtt)} JointState round trips (6 joints): median {np.median(rtt):.0f} us, "
              f"p99 {np.percentile(rtt, 99):.0f} us, max {rtt.max():.0f} us "
              f"[backend {node.backend}]")
    finally:
        node.shutdown()
        probe.terminate()
        probe.wait(10)


def check_probe(target: str = "/probe", timeout_s: float = 90.0) -> dict:
    """What a node of this process's backend gets from a probe: ping round trips (waiting up to
    timeout_s for the first pong), then the probe's ``gain`` got, set and read back, and the
    reason a refused ``mode`` comes back with — parameters through the DDS client."""
    from robot_control.bus.dds.client import BusClient

    node = create_node("checker", [])
    try:
        rtt = round_trips(node, 5, timeout_s)
        with BusClient(discovery_s=1.0) as client:
            before = client.param_get(target, "gain")
            accepted = client.param_set(target, "gain", 4.5)
            after = client.param_get(target, "gain")
            refused = client.param_set(target, "mode", "q")
    finally:
        node.shutdown()
    return {"backend": node.backend, "round_trips": len(rtt), "gain_before": before,
            "set": list(accepted), "gain_after": after, "refused": list(refused)}


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--bench":
        bench(int(sys.argv[2]))
    elif len(sys.argv) >= 2 and sys.argv[1] == "--check":
        import json

        print(json.dumps(check_probe()), flush=True)
    else:
        run_probe(sys.argv)
