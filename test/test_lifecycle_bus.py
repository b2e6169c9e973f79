"""Managed nodes on the DDS backend, in real processes: the lifecycle probe serves the standard
lifecycle_msgs services and /lc_probe/transition_event, its lifecycle publisher publishes only
while active, hooks decide the outcome (FAILURE, ERROR through errorprocessing), a fault takes it
to errorprocessing, SIGINT shuts it down through on_shutdown; ``robot-control lifecycle`` drives
it as ``ros2 lifecycle`` would."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from bus_probe import bus_env
from ros2_env import Watched, wait_for

from robot_control.bus.backend import create_node
from robot_control.bus.dds.client import BusClient, BusClientError
from robot_control.bus.dds.lifecycle_client import change_state, get_state, managed_nodes, transitions

PROBE = str(Path(__file__).with_name("lifecycle_probe.py"))
pytestmark = pytest.mark.slow


class Watcher:
    """An in-process node that records /lc_probe/transition_event and /lc_probe/out."""

    def __init__(self):
        self.node = create_node("lc_watcher", [], backend="dds")
        self.events: list[tuple[str, str, str]] = []
        self.out: list[tuple[float, str]] = []
        self.node.create_subscription(
            "lifecycle_msgs/msg/TransitionEvent", "/lc_probe/transition_event",
            lambda m: self.events.append((m.transition.label, m.start_state.label,
                                          m.goal_state.label)))
        self.node.create_subscription("std_msgs/msg/String", "/lc_probe/out",
                                      lambda m: self.out.append((time.monotonic(), m.data)))
        self.thread = threading.Thread(target=self.node.spin, daemon=True)
        self.thread.start()

    def out_since(self, t: float) -> int:
        return sum(1 for stamp, _ in self.out if stamp >= t)

    def close(self):
        self.node.shutdown()
        self.thread.join(5)


@pytest.fixture(scope="module")
def env():
    import os

    return {**os.environ, **bus_env("lifecycle-bus")}


@pytest.fixture(scope="module")
def probe(env):
    with Watched([sys.executable, PROBE], env) as proc:
        assert proc.wait_for_line("lifecycle probe ready", 60), proc.output
        yield proc


@pytest.fixture(scope="module")
def bus(env, probe, monkeypatch_module):
    for key, value in env.items():
        monkeypatch_module.setenv(key, value)
    client = BusClient(discovery_s=3.0)
    watcher = Watcher()
    assert wait_for(lambda: "/lc_probe" in managed_nodes(client), 20)
    yield client, watcher
    watcher.close()
    client.close()


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def reset(client) -> None:
    """Back to unconfigured, with no hook told to fail."""
    for name in ("fail_on", "raise_on", "fault"):
        assert client.param_set("/lc_probe", name, "''")[0]
    label = get_state(client, "/lc_probe")[1]
    if label == "active":
        assert change_state(client, "/lc_probe", "deactivate")
        label = "inactive"
    if label == "inactive":
        assert change_state(client, "/lc_probe", "cleanup")
    assert get_state(client, "/lc_probe") == (1, "unconfigured")


def test_starts_unconfigured_and_lists_its_transitions(bus):
    client, watcher = bus
    reset(client)
    assert get_state(client, "lc_probe") == (1, "unconfigured")
    available = [(t.transition.label, t.transition.id, t.goal_state.label)
                 for t in transitions(client, "/lc_probe")]
    assert available == [("configure", 1, "configuring"), ("shutdown", 5, "shuttingdown")]
    assert len(transitions(client, "/lc_probe", everything=True)) == 25
    assert watcher.out == []  # nothing published before it was ever active


def test_cycle_publishes_only_while_active_and_announces_every_step(bus, probe):
    client, watcher = bus
    reset(client)
    watcher.events.clear()
    assert change_state(client, "/lc_probe", "configure")
    t0 = time.monotonic()
    time.sleep(0.5)
    assert watcher.out_since(t0) == 0  # inactive: the lifecycle publisher is silent
    assert change_state(client, "/lc_probe", "activate")
    assert get_state(client, "/lc_probe") == (3, "active")
    assert wait_for(lambda: watcher.out_since(t0) >= 5, 10)
    assert change_state(client, "/lc_probe", "deactivate")
    time.sleep(0.3)  # what was in flight
    t1 = time.monotonic()
    time.sleep(0.5)
    assert watcher.out_since(t1) == 0
    assert wait_for(lambda: len(watcher.events) >= 6, 5)
    assert watcher.events[:6] == [
        ("configure", "unconfigured", "configuring"),
        ("transition_success", "configuring", "inactive"),
        ("activate", "inactive", "activating"),
        ("transition_success", "activating", "active"),
        ("deactivate", "active", "deactivating"),
        ("transition_success", "deactivating", "inactive")]
    assert probe.wait_for_line(r"hook on_deactivate from active", 5)


def test_transition_by_id_and_an_unknown_one(bus):
    client, _ = bus
    reset(client)
    assert change_state(client, "/lc_probe", "1")  # configure by id
    assert get_state(client, "/lc_probe")[1] == "inactive"
    with pytest.raises(BusClientError, match=r"available ones are:\n- cleanup \[2\]"):
        change_state(client, "/lc_probe", "deactivate")


def test_a_failing_hook_leaves_the_state_and_an_error_goes_through_errorprocessing(bus, probe):
    client, watcher = bus
    reset(client)
    assert change_state(client, "/lc_probe", "configure")
    assert client.param_set("/lc_probe", "fail_on", "on_activate")[0]
    assert not change_state(client, "/lc_probe", "activate")
    assert get_state(client, "/lc_probe")[1] == "inactive"
    assert client.param_set("/lc_probe", "fail_on", "''")[0]
    assert client.param_set("/lc_probe", "raise_on", "on_activate")[0]
    watcher.events.clear()
    assert not change_state(client, "/lc_probe", "activate")
    assert get_state(client, "/lc_probe")[1] == "unconfigured"
    assert wait_for(lambda: len(watcher.events) >= 3, 5)
    assert watcher.events[1:3] == [("transition_error", "activating", "errorprocessing"),
                                   ("transition_success", "errorprocessing", "unconfigured")]
    assert probe.wait_for_line(r"on_activate raised RuntimeError", 5)
    assert probe.wait_for_line(r"hook on_error from inactive", 5)


def test_a_fault_while_active_ends_in_errorprocessing_then_unconfigured(bus, probe):
    client, watcher = bus
    reset(client)
    assert change_state(client, "/lc_probe", "configure")
    assert change_state(client, "/lc_probe", "activate")
    # the reply can overtake the activation's events on their way to the watcher: let them land
    assert wait_for(lambda: ("transition_success", "activating", "active") in watcher.events, 5)
    watcher.events.clear()
    assert client.param_set("/lc_probe", "fault", "plant diverged")[0]
    assert get_state(client, "/lc_probe")[1] == "unconfigured"
    assert probe.wait_for_line(r"\[ERROR\].*fault: plant diverged", 5)
    assert wait_for(lambda: len(watcher.events) >= 3, 5)
    assert watcher.events[:3] == [("deactivate", "active", "deactivating"),
                                  ("transition_error", "deactivating", "errorprocessing"),
                                  ("transition_success", "errorprocessing", "unconfigured")]


def test_cli_get_set_list_and_nodes(bus, env):
    client, _ = bus
    reset(client)

    def cli(*args):
        out = subprocess.run([sys.executable, "-m", "robot_control.cli", "lifecycle", *args],
                             env=env, capture_output=True, text=True, timeout=60)
        return out.returncode, out.stdout, out.stderr

    assert cli("nodes")[1].split() == ["/lc_probe"]
    assert cli("get", "/lc_probe")[1].strip() == "unconfigured [1]"
    assert cli("set", "/lc_probe", "configure")[:2] == (0, "Transitioning successful\n")
    assert cli("get")[1].strip() == "/lc_probe: inactive [2]"
    code, out, err = cli("set", "/lc_probe", "deactivate")
    assert code == 1 and "- activate [3]" in err and "- shutdown [6]" in err
    code, out, _ = cli("list", "/lc_probe")
    assert out.startswith("- cleanup [2]\n\tStart: inactive\n\tGoal: cleaningup\n")
    code, out, err = cli("get", "/nobody")
    assert code == 1 and "/nobody not found" in err


def test_sigint_shuts_an_active_node_down_through_on_shutdown(bus, env):
    client, _ = bus
    with Watched([sys.executable, PROBE, "--ros-args", "-r", "__node:=lc_probe2"], env) as proc:
        assert proc.wait_for_line("lifecycle probe ready", 60)
        assert wait_for(lambda: "/lc_probe2" in managed_nodes(client), 20)
        assert change_state(client, "/lc_probe2", "configure")
        assert change_state(client, "/lc_probe2", "activate")
        assert proc.stop() == 0
        assert proc.wait_for_line(r"hook on_shutdown from active", 1), proc.output


LATE_NODE = """
import time
from robot_control.bus.backend import create_node
node = create_node("lc_late", ["prog"], managed=True, backend="dds")
print("late node up", flush=True)
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    node.spin_once(0.05)
"""


def test_a_named_node_seen_after_the_graph_settled_is_waited_for(bus, env):
    """A node named on the command line may show its lifecycle services after the client's
    graph settled (a loaded machine): it is waited for, up to FIND_WITHIN_S, not called
    missing at once."""
    client, _ = bus
    assert "/lc_late" not in managed_nodes(client)  # the graph settled without it
    with Watched([sys.executable, "-c", LATE_NODE], env) as late:
        # asked at once: the process is still importing (about a second), well within the wait
        assert get_state(client, "/lc_late") == (1, "unconfigured"), late.output
