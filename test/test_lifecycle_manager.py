"""The lifecycle_manager brings managed nodes up in order, in real processes on the DDS backend:
all configured before any is activated, the deferred node only after the loop topic flows, the
clock node last in lockstep; a failed transition stops it with status 1 and a reason."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from bus_probe import bus_env
from ros2_env import Watched

from robot_control.bus.backend import create_node

PROBE = str(Path(__file__).with_name("lifecycle_probe.py"))
NAMES = ["lc_a", "lc_b", "lc_c"]
pytestmark = pytest.mark.slow


class Events:
    """Every transition event of the probes and the first /lc_b/out, with the time its writer
    stamped on it (DDS source timestamp: one machine, one clock). Messages of different topics
    may arrive here in any order; when they were sent is what the bring-up order is about."""

    def __init__(self):
        self.node = create_node("lc_events", [], backend="dds")
        self.sent: dict[tuple[str, str, str], int] = {}  # (node, transition, goal) -> ns
        self.lock = threading.Lock()
        for name in NAMES:
            self.node.create_subscription(
                "lifecycle_msgs/msg/TransitionEvent", f"/{name}/transition_event",
                lambda m, name=name: self._add(m, name, m.transition.label, m.goal_state.label))
        self.node.create_subscription("std_msgs/msg/String", "/lc_b/out",
                                      lambda m: self._add(m, "lc_b", "out", ""))
        self.thread = threading.Thread(target=self.node.spin, daemon=True)
        self.thread.start()

    def _add(self, msg, *entry):
        with self.lock:
            self.sent.setdefault(entry, msg.sample_info.source_timestamp)

    def when(self, entry, timeout: float = 5.0) -> int:
        """When entry was sent (its first occurrence), waiting for it up to timeout."""
        deadline = time.monotonic() + timeout
        while entry not in self.sent and time.monotonic() < deadline:
            time.sleep(0.05)
        return self.sent[entry]

    def close(self):
        self.node.shutdown()
        self.thread.join(5)


@pytest.fixture
def env(monkeypatch):
    env = {**os.environ, **bus_env("lifecycle-manager")}
    for key in ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE", "ROBOT_CONTROL_BUS"):
        monkeypatch.setenv(key, env[key])
    return env


@pytest.fixture
def events(env):
    """The transition events of the probes, heard from before the manager starts."""
    heard = Events()
    yield heard
    heard.close()


@contextmanager
def running(env, *manager_params: str, probe_params: dict[str, list[str]] | None = None):
    """The three probes, once ready, and a lifecycle_manager over them; all stopped on exit."""
    probes = [Watched([sys.executable, PROBE, "--ros-args", "-r", f"__node:={name}",
                       *sum((["-p", p] for p in (probe_params or {}).get(name, [])), [])], env)
              for name in NAMES]
    manager = None
    try:
        for probe in probes:
            assert probe.wait_for_line("lifecycle probe ready", 60), probe.output
        manager = Watched([sys.executable, "-m", "robot_control.nodes.lifecycle_manager",
                           "--ros-args", "-p", f"node_names:={NAMES}".replace("'", ""),
                           *sum((["-p", p] for p in manager_params), [])], env)
        yield manager
    finally:
        if manager is not None:
            manager.stop()
        for probe in probes:
            probe.stop()


def test_configures_all_then_activates_in_order_and_waits_for_the_loop(env, events):
    with running(env, "start_after_loop_closed:=[lc_c]", "loop_topic:=/lc_b/out",
                 "loop_topic_type:=std_msgs/msg/String") as manager:
        assert manager.wait_for_line(r"stack active: lc_a, lc_b, lc_c", 60), manager.output
        configured = [events.when((n, "transition_success", "inactive")) for n in NAMES]
        activated = [events.when((n, "transition_success", "active")) for n in NAMES]
        assert max(configured) < min(activated)
        assert activated[0] < activated[1] < activated[2]
        # lc_c waited for the loop topic (which flows only once lc_b is active)
        assert events.when(("lc_b", "out", "")) < events.when(("lc_c", "activate", "activating"))
        assert manager.proc.poll() is None  # it stays up


def test_lockstep_activates_the_clock_node_last(env, events):
    with running(env, "lockstep:=true", "clock_node:=lc_a",
                 "start_after_loop_closed:=[lc_c]") as manager:
        assert manager.wait_for_line(r"stack active", 60), manager.output
        activated = [events.when((n, "transition_success", "active")) for n in NAMES]
        assert activated[1] < activated[2] < activated[0]


def test_a_failed_configure_stops_the_manager_with_the_reason(env):
    with running(env, "start_after_loop_closed:=[lc_c]",
                 probe_params={"lc_b": ["fail_on:=on_configure"]}) as manager:
        assert manager.proc.wait(60) == 1
        assert "bring-up failed: lc_b: configure failed" in manager.output, manager.output


def test_ctrl_c_while_a_configure_is_never_answered_stops_the_manager_at_once(env):
    """A node that never answers its configure (it hangs, or Ctrl-C killed it first): the
    manager's SIGINT still ends it within seconds with status 0, not after transition_timeout."""
    with running(env, "transition_timeout:=300",
                 probe_params={"lc_b": ["hang_on:=on_configure"]}) as manager:
        for name in ("lc_a", "lc_c"):
            assert manager.wait_for_line(rf"{name}: configured in", 60), manager.output
        asked = time.monotonic()
        manager.proc.send_signal(signal.SIGINT)
        assert manager.proc.wait(30) == 0, manager.output
        assert time.monotonic() - asked < 5.0, manager.output
