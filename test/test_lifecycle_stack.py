"""The managed stack, live (``robot-control launch`` on the DDS backend): ordered bring-up, the
lifecycle states on the bus, and bumpless hand-overs at a gain change, a controller swap, a
deactivation (the plant's hold) and a reactivation of the controller.

A hand-over by the controller is checked exactly, where load jitter cannot blur it: the first
command after the change equals the torque the plant reports applying in the state it answers
(every other command differs from it: the torque moves). The plant's hold after a deactivation
is checked by its steps: none larger than a fraction of the jump it blends away.
"""

from __future__ import annotations

import logging
import threading
import time

import numpy as np
import pytest
from launch_run import Stack, stack_env

from robot_control.bus.dds.client import BusClient
from robot_control.bus.dds.lifecycle_client import change_state, get_state, managed_nodes
from robot_control.control import create
from robot_control.model import load_robot
from robot_control.nodes.controller_node import RESUME_AFTER_S
from robot_control.nodes.law_compiler import compile_law

pytestmark = pytest.mark.slow
RATE = 250  # Hz: five Python processes on a busy 2-core test machine
STACK = ["/controller", "/dynamics_server", "/plant", "/trajectory_generator"]


class Recorder:
    """(header stamp in s, effort) of every message on a JointState topic, in a thread."""

    def __init__(self, topic: str) -> None:
        self.topic = topic
        self.samples: list[tuple[float, np.ndarray]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        with BusClient(discovery_s=1.0) as client:
            for msg in client.iter_topic(self.topic, timeout_s=5.0, discovery_s=30.0):
                stamp = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
                self.samples.append((stamp, np.asarray(msg.effort, dtype=float)))
                if self._stop.is_set():
                    return

    def stop(self) -> dict[float, np.ndarray]:
        self._stop.set()
        self._thread.join(10.0)
        return dict(self.samples)


def prewarm(law: str) -> None:
    """Compile a law for the DDArm here as a controller does (the nodes share the cache and see
    it compiled): the stack's configure then loads it, and the swap is instant."""
    model = load_robot("ddarm")
    instance = create(law)
    instance.configure(model, {})
    compile_law(logging.getLogger("prewarm"), model, law, instance)


def hand_overs(states: dict, commands: dict, start: float, end: float) -> list[float]:
    """Stamps in [start, end) of the states answered with exactly the torque they report."""
    return [s for s, tau in sorted(commands.items())
            if start <= s < end and s in states and np.array_equal(tau, states[s])]


def after_stalls(commands: dict, stamps: list[float]) -> list[float]:
    """Those of ``stamps`` that answer the first state after the controller's loop stood still
    longer than RESUME_AFTER_S (a starved process): it takes over from the plant's hold then,
    as after an activation, so its command equals the applied torque there too."""
    answered = sorted(commands)
    stalled = {b for a, b in zip(answered, answered[1:])
               if b - a > RESUME_AFTER_S + 1.0 / RATE}
    return [s for s in stamps if s in stalled]


def test_gain_change_swap_and_lifecycle_transitions_are_bumpless(monkeypatch):
    env = stack_env("lifecycle-stack")
    for key in ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE"):
        monkeypatch.setenv(key, env[key])
    prewarm("pd_gravity")
    stack = Stack(env, f"rate:={RATE}")
    events: dict[str, tuple[float, float]] = {}  # name -> wall time before and after the request

    def event(name: str, request) -> None:
        before = time.time()
        assert request()
        events[name] = (before, time.time())

    try:
        assert stack.wait_for("stack active", 120), "\n".join(stack.lines[-40:])
        with BusClient(discovery_s=2.0) as client:
            assert set(STACK) <= set(managed_nodes(client))
            assert all(get_state(client, n) == (3, "active") for n in STACK)
            states, commands = Recorder("/joint_states"), Recorder("/joint_command")
            time.sleep(3.0)  # tracking: the reference period
            event("gains", lambda: client.param_set("/controller", "computed_torque.kp",
                                                    "[80.0, 80.0, 80.0]")[0])
            time.sleep(1.5)
            event("swap", lambda: client.param_set("/controller", "controller", "pd_gravity")[0])
            time.sleep(1.5)
            event("deactivate", lambda: change_state(client, "/controller", "deactivate"))
            assert get_state(client, "/controller") == (2, "inactive")
            time.sleep(1.0)
            event("activate", lambda: change_state(client, "/controller", "activate"))
            time.sleep(1.5)
            states, commands = states.stop(), commands.stop()
    finally:
        stack.stop()
    output = "\n".join(stack.lines)
    assert "no valid /joint_command" in output, output[-3000:]  # the plant held meanwhile
    first = min(commands)
    # ordinary commands are not hand-overs, except after a stall of the loop (a loaded machine)
    ordinary = hand_overs(states, commands, first, events["gains"][0])
    assert ordinary == after_stalls(commands, ordinary), ordinary
    print(f"{len(ordinary)} take-overs after a stall of the loop before the gain change")
    for name in ("gains", "swap", "activate"):
        before, after = events[name]
        found = hand_overs(states, commands, before, after + 0.5)
        assert found, f"{name}: no command took over from the applied torque"
    # the plant's hold blends in from the last command (time constant safe_blend_time, 50 ms):
    # the applied torque moves at most at the blend's initial rate, excursion / T, where a switch
    # without the blend would move it by the whole excursion within one 4 ms period
    last = max(s for s in commands if s < events["activate"][0])  # the controller's last answer
    stamps = np.array(sorted(s for s in states if last < s < last + 0.5))
    hold = np.array([states[s] for s in stamps])
    excursion = hold.max(axis=0) - hold.min(axis=0)
    # over three periods: a loaded machine's tick jitter (stamps are wall-clock publication
    # times) must not read as a jump; a switch without the blend still moves far faster
    rate = (np.abs(hold[3:] - hold[:-3]) / (stamps[3:] - stamps[:-3])[:, None]).max(axis=0)
    assert excursion.max() > 5.0, excursion  # a hand-over worth checking
    assert np.all(rate <= 2.0 * excursion / 0.05 + 50.0), (rate, excursion)
