"""Start real node processes on a private ROS domain for the multi-process tests."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import domains
import numpy as np

# a short DDArm run (Huo's passivity example) that lockstep over the bus must reproduce bit for bit
LOCKSTEP_SCENARIO = {
    "robot": "ddarm",
    "duration": 0.4,
    "rate": 200,
    "physics_dt": 0.001,
    "initial": {"q": [-0.1, 1.5, 1.0]},
    "trajectory": {"type": "named", "name": "huo_intended"},
    "controller": {"type": "passivity", "params": {"lambda": [4, 4, 5], "kd": [100, 20, 10]}},
    "plant": {"inertia_scale": [1.1, 1.1, 1.1], "friction": {"viscous": 0.2}},
}

NODES = {
    "plant": "robot_control.nodes.plant_node",
    "controller": "robot_control.nodes.controller_node",
    "trajectory_generator": "robot_control.nodes.trajectory_node",
    "dynamics_server": "robot_control.nodes.dynamics_server_node",
    "cell_plant": "robot_control.nodes.cell_plant_node",
    "cell_controller": "robot_control.nodes.cell_controller_node",
}


def private_domain(offset: int) -> dict[str, str]:
    """Environment for a test's own ROS domain (1…200), discovery on this host only."""
    env = dict(os.environ)
    env["ROS_DOMAIN_ID"] = str(domains.claim(f"stack-{offset}"))
    env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    env["ROBOT_CONTROL_BUS"] = "dds"
    return env


def lockstep_states(client, steps: int, timeout_s: float = 60.0,
                    discovery_s: float = 20.0) -> dict[int, np.ndarray]:
    """Positions of /joint_states by stamp (ns) until more than ``steps`` arrived or timeout_s."""
    received: dict[int, np.ndarray] = {}
    deadline = time.monotonic() + timeout_s
    for msg in client.iter_topic("/joint_states", timeout_s=timeout_s, discovery_s=discovery_s):
        ns = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        received[ns] = np.asarray(msg.position, dtype=float)
        if len(received) > steps or time.monotonic() > deadline:
            break
    return received


def states_on_the_period_grid(received: dict[int, np.ndarray], steps: int,
                              rate: float) -> np.ndarray:
    """The states at t_k = k / rate, k = 0 … steps, in order (KeyError if one is missing)."""
    period = int(1_000_000_000 // rate)
    return np.array([received[k * period] for k in range(steps + 1)])


def wait_until(predicate, timeout_s: float, every_s: float = 0.1):
    """Poll predicate() until it returns something truthy or the deadline passes; its last value."""
    deadline = time.monotonic() + timeout_s
    while not (value := predicate()) and time.monotonic() < deadline:
        time.sleep(every_s)
    return value


def node_is_active(client, node: str) -> bool:
    """Whether the managed node answers its lifecycle state as active (False while it is not
    discovered yet or does not answer)."""
    from robot_control.bus.dds.client import BusClientError
    from robot_control.bus.dds.lifecycle_client import get_state

    try:
        return get_state(client, node)[0] == 3
    except BusClientError:
        return False


def lockstep_over_the_bus(env: dict[str, str], scenario: str, steps: int,
                          plant_params: tuple[str, ...] = ()
                          ) -> tuple[dict[int, np.ndarray], dict[str, str]]:
    """A lockstep run of ``scenario`` by node processes on env's domain: controller and
    trajectory generator first, the plant once both are active (it starts once they and this
    test's reader subscribe to /joint_states); (the positions of /joint_states by stamp, each
    node's log)."""
    os.environ.update({k: env[k] for k in ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE")})
    from robot_control.bus.dds.client import BusClient

    common = [f"scenario:={scenario}", "lockstep:=true"]
    with BusClient(discovery_s=1.0) as client:
        with Stack(env, {"controller": common, "trajectory_generator": common}) as stack:
            up = wait_until(lambda: all(node_is_active(client, n)
                                        for n in ("/controller", "/trajectory_generator")), 120)
            assert up, f"controller and trajectory generator not active: {stack.stop()}"
            # three listeners: controller, trajectory generator and this test's reader
            plant = Stack(env, {"plant": [*common, "lockstep_start_subscribers:=3",
                                          *plant_params]})
            try:
                received = lockstep_states(client, steps)
            finally:
                logs = plant.stop()
        logs.update(stack.stop())
    return received, logs


def messages_within(client, topic: str, within_s: float, discovery_s: float = 20.0):
    """A topic's messages for at most within_s seconds (after discovery), however many come."""
    deadline = None
    for msg in client.iter_topic(topic, timeout_s=within_s, discovery_s=discovery_s):
        deadline = deadline or time.monotonic() + within_s
        yield msg
        if time.monotonic() > deadline:
            return


class Stack:
    """Node processes started with --ros-args; stopped with SIGINT (then killed) on exit. Each
    brings itself up (``autostart``: configured and activated at start, in the order the test
    starts them), as a managed node run on its own does."""

    def __init__(self, env: dict[str, str], nodes: dict[str, list[str]]) -> None:
        self.env = env
        self.procs: dict[str, subprocess.Popen] = {}
        for name, params in nodes.items():
            args = [sys.executable, "-m", NODES[name], "--ros-args"]
            for p in ["autostart:=true", *params]:
                args += ["-p", p]
            self.procs[name] = subprocess.Popen(args, env=env, stdout=subprocess.PIPE,
                                                stderr=subprocess.STDOUT, text=True)

    def __enter__(self) -> Stack:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> dict[str, str]:
        for p in self.procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
        deadline = time.monotonic() + 10
        out = {}
        for name, p in self.procs.items():
            try:
                out[name] = p.communicate(timeout=max(0.1, deadline - time.monotonic()))[0]
            except subprocess.TimeoutExpired:
                p.kill()
                out[name] = p.communicate()[0]
        return out
