"""The managed-node state machine (robot_control.bus.lifecycle) on its own: rcl_lifecycle's
default graph, the hooks and their outcomes, events, faults, and publishers gated by the state."""

from __future__ import annotations

import pytest

from robot_control.bus import lifecycle as lc
from robot_control.bus.lifecycle import CallbackReturn, LifecycleHooks, ManagedPublisher

S, F, E = CallbackReturn.SUCCESS, CallbackReturn.FAILURE, CallbackReturn.ERROR


class Log:
    def __init__(self):
        self.lines = []

    def error(self, msg):
        self.lines.append(("error", msg))

    def warn(self, msg):
        self.lines.append(("warn", msg))


class Recorder:
    """A state machine whose hooks record their calls and return what ``results`` says."""

    def __init__(self, **results):
        self.log = Log()
        self.hooks = LifecycleHooks(self.log)
        self.calls: list[tuple[str, str]] = []
        self.events: list[tuple[str, str, str]] = []
        self.results = results
        self.hooks.set(**{name: self._hook(name) for name in lc.HOOK_NAMES})
        self.machine = lc.StateMachine(self.hooks, self._event, self.log)

    def _hook(self, name):
        def run(previous):
            self.calls.append((name, previous.label))
            result = self.results.get(name, S)
            if isinstance(result, Exception):
                raise result
            return result
        return run

    def _event(self, edge, start, goal):
        self.events.append((edge.label, lc.STATE_LABELS[start], lc.STATE_LABELS[goal]))

    def go(self, label):
        tid = self.machine.transition_id(label)
        return None if tid is None else self.machine.change_state(tid)

    @property
    def label(self):
        return self.machine.state.label


def test_graph_is_rcl_lifecycles_default():
    graph = lc.TRANSITION_GRAPH
    assert len(graph) == 25
    assert len({(t.id, t.start) for t in graph}) == 25
    public = {(t.label, lc.STATE_LABELS[t.start]) for t in graph if t.id < 10}
    assert public == {("configure", "unconfigured"), ("cleanup", "inactive"),
                      ("activate", "inactive"), ("deactivate", "active"),
                      ("shutdown", "unconfigured"), ("shutdown", "inactive"),
                      ("shutdown", "active")}
    # every transition state has exactly the three outcomes, ids 10k, 10k+1, 10k+2
    for state, base in ((lc.CONFIGURING, 10), (lc.CLEANINGUP, 20), (lc.ACTIVATING, 30),
                        (lc.DEACTIVATING, 40), (lc.SHUTTINGDOWN, 50), (lc.ERRORPROCESSING, 60)):
        out = sorted((t.id, t.label) for t in graph if t.start == state)
        assert out == [(base, "transition_success"), (base + 1, "transition_failure"),
                       (base + 2, "transition_error")]
    assert all(t.start != lc.FINALIZED for t in graph)


def test_full_cycle_calls_each_hook_with_the_state_it_left():
    r = Recorder()
    assert r.label == "unconfigured"
    for label, after in (("configure", "inactive"), ("activate", "active"),
                         ("deactivate", "inactive"), ("cleanup", "unconfigured"),
                         ("configure", "inactive"), ("activate", "active"),
                         ("shutdown", "finalized")):
        assert r.go(label) == S
        assert r.label == after
    assert r.calls == [("on_configure", "unconfigured"), ("on_activate", "inactive"),
                       ("on_deactivate", "active"), ("on_cleanup", "inactive"),
                       ("on_configure", "unconfigured"), ("on_activate", "inactive"),
                       ("on_shutdown", "active")]
    assert r.events[:2] == [("configure", "unconfigured", "configuring"),
                            ("transition_success", "configuring", "inactive")]
    assert r.events[-2:] == [("shutdown", "active", "shuttingdown"),
                             ("transition_success", "shuttingdown", "finalized")]
    assert r.machine.available_transitions() == []
    assert r.go("configure") is None  # finalized is final


def test_failure_returns_to_the_start_state():
    r = Recorder(on_activate=F, on_deactivate=F)
    r.go("configure")
    assert r.go("activate") == F and r.label == "inactive"
    r.results["on_activate"] = S
    assert r.go("activate") == S and r.label == "active"
    assert r.go("deactivate") == F and r.label == "active"
    assert ("transition_failure", "deactivating", "active") in r.events


@pytest.mark.parametrize("error", [E, RuntimeError("boom"), "not a CallbackReturn", None])
def test_error_exception_or_bad_result_goes_through_errorprocessing(error):
    r = Recorder(on_configure=error)
    assert r.go("configure") == E
    assert r.label == "unconfigured"  # on_error succeeded
    assert r.calls == [("on_configure", "unconfigured"), ("on_error", "unconfigured")]
    assert r.events == [("configure", "unconfigured", "configuring"),
                        ("transition_error", "configuring", "errorprocessing"),
                        ("transition_success", "errorprocessing", "unconfigured")]
    if error is not E:
        assert r.log.lines and r.log.lines[0][0] == "error"


def test_on_error_failure_finalizes():
    r = Recorder(on_activate=E, on_error=F)
    r.go("configure")
    assert r.go("activate") == E
    assert r.label == "finalized"


def test_invalid_transitions_change_nothing():
    r = Recorder()
    assert r.go("activate") is None and r.go("deactivate") is None
    assert r.machine.change_state(lc.ACTIVE_SHUTDOWN) is None  # shutdown's id for active
    assert r.machine.change_state(10) is None  # an internal transition is not requestable
    assert r.label == "unconfigured" and r.calls == [] and r.events == []
    assert r.machine.transition_id("shutdown") == lc.UNCONFIGURED_SHUTDOWN
    r.go("configure")
    assert r.machine.transition_id("shutdown") == lc.INACTIVE_SHUTDOWN


def test_managed_publisher_publishes_only_while_active():
    r = Recorder()
    sent = []

    class Pub:
        topic_name = "/x"

        def publish(self, msg):
            sent.append(msg)

    pub = ManagedPublisher(Pub(), r.hooks)
    seen_in_activate = []
    r.hooks.set(on_activate=lambda prev: (pub.publish("from on_activate"),
                                          seen_in_activate.append(pub.is_activated), S)[-1])
    pub.publish(0)
    r.go("configure")
    pub.publish(1)
    r.go("activate")
    pub.publish(2)
    r.go("deactivate")
    pub.publish(3)
    assert sent == ["from on_activate", 2] and pub.dropped == 3
    assert seen_in_activate == [True] and pub.topic_name == "/x"
    r.results["on_deactivate"] = F
    r.go("activate")
    r.go("deactivate")  # refused: still active, still publishing
    pub.publish(4)
    r.hooks.set(on_activate=lambda prev: F)
    r.results["on_deactivate"] = S
    r.go("deactivate")
    r.go("activate")  # failed activation leaves the publisher off
    pub.publish(5)
    assert sent[-1] == 4 and not pub.is_activated


def test_fault_while_active_takes_the_deactivate_path_to_errorprocessing():
    r = Recorder()
    r.go("configure")
    r.go("activate")
    transition = r.hooks.fault_transition(r.machine.current, "plant diverged")
    assert transition == lc.DEACTIVATE
    assert r.machine.change_state(transition) == E
    assert r.label == "unconfigured" and not r.hooks.active and r.hooks.fault is None
    assert r.calls[-2:] == [("on_deactivate", "active"), ("on_error", "active")]
    assert ("transition_error", "deactivating", "errorprocessing") in r.events


def test_fault_inside_a_hook_makes_it_an_error_and_idle_states_ignore_faults():
    r = Recorder()
    assert r.hooks.fault_transition(lc.UNCONFIGURED, "nothing runs") is None
    assert r.hooks.fault is None
    r.go("configure")

    def faulting_activate(prev):
        assert r.hooks.fault_transition(lc.ACTIVATING, "diverged while activating") is None
        return S

    r.hooks.set(on_activate=faulting_activate)
    assert r.go("activate") == E
    assert r.label == "unconfigured"


def test_unknown_hook_names_are_refused():
    with pytest.raises(lc.LifecycleError, match="on_confgure"):
        LifecycleHooks(Log()).set(on_confgure=lambda prev: S)
