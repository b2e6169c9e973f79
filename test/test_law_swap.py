"""The law swap's state machine (nodes/law_swap.py): every transition of its table, on real laws
compiled by the controller's own compile_law; and through a real controller node (in this
process, real DDS on a private domain): each law made once per swap, a refused law, a swap
while inactive and while unconfigured, a swap during a swap and a compile failure."""

from __future__ import annotations

import logging
import threading

import numpy as np
import pytest
from bus_probe import isolated_bus_env
from node_harness import managed, shut

from robot_control.bus import ParameterError
from robot_control.control import Controller, Reference, State, create, register, unregister
from robot_control.model import load_robot
from robot_control.nodes import law_host
from robot_control.nodes.controller_node import ControllerNode
from robot_control.nodes.law_compiler import compile_law
from robot_control.nodes.law_swap import LawSwap, Phase, Takeover

LOG = logging.getLogger("test_law_swap")
WAIT_S = 120.0  # a worker compiling a law on a loaded machine


@pytest.fixture(scope="module")
def ddarm():
    return load_robot("ddarm")


def made(model, name: str):
    law = create(name)
    law.configure(model)
    return law


class Gate:
    """The real compile, held back until ``open()`` (to order a swap during a swap)."""

    def __init__(self, model) -> None:
        self.model = model
        self.opened = threading.Event()
        self.compiled: list[str] = []

    def __call__(self, law, name: str) -> None:
        assert self.opened.wait(WAIT_S), "the gate was never opened"
        compile_law(LOG, self.model, name, law)
        self.compiled.append(name)

    def open(self) -> None:
        self.opened.set()


def running(model, gate) -> tuple[LawSwap, object]:
    swap = LawSwap(LOG, "pd", gate)
    law = made(model, "pd")
    swap.install(law, "pd")
    return swap, law


def test_empty_select_then_install_runs_unchecked(ddarm):
    swap = LawSwap(LOG, "pd", Gate(ddarm))
    assert swap.phase is Phase.EMPTY and swap.law is None
    swap.select("passivity")
    assert swap.phase is Phase.EMPTY and swap.selected == "passivity"
    law = made(ddarm, "passivity")
    swap.install(law, swap.selected)
    assert swap.phase is Phase.RUNNING and swap.law is law and swap.name == "passivity"
    assert not swap.checked and swap.tick() is None
    with pytest.raises(RuntimeError, match="swap instead"):
        swap.select("pd")


def test_a_swap_makes_then_readies_then_takes_over_at_the_next_tick(ddarm):
    gate = Gate(ddarm)
    swap, old = running(ddarm, gate)
    new = made(ddarm, "computed_torque")
    swap.swap(new, "computed_torque")
    assert swap.phase is Phase.MAKING and swap.selected == "computed_torque"
    assert swap.tick() is None and swap.law is old  # the running law keeps the loop
    gate.open()
    assert swap.wait(WAIT_S) and swap.phase is Phase.READY and swap.law is old
    assert swap.tick() is Takeover.SWAP
    assert swap.phase is Phase.RUNNING and swap.law is new and swap.name == "computed_torque"
    assert swap.tick() is None and gate.compiled == ["computed_torque"]


def test_a_swap_to_the_running_law_does_nothing_and_back_to_it_cancels(ddarm):
    gate = Gate(ddarm)
    swap, old = running(ddarm, gate)
    swap.swap(None, "pd")
    assert swap.phase is Phase.RUNNING and swap.law is old
    swap.swap(made(ddarm, "pd_gravity"), "pd_gravity")
    assert swap.phase is Phase.MAKING
    swap.swap(None, "pd")  # back before it is made: its law is dropped when it is
    assert swap.phase is Phase.RUNNING and swap.selected == "pd"
    gate.open()
    assert swap.wait(WAIT_S)
    assert swap.phase is Phase.RUNNING and swap.tick() is None and swap.law is old


def test_a_swap_during_a_swap_keeps_only_the_latest(ddarm):
    gate = Gate(ddarm)
    swap, old = running(ddarm, gate)
    swap.swap(made(ddarm, "pd_gravity"), "pd_gravity")
    first = swap._worker
    latest = made(ddarm, "passivity")
    swap.swap(latest, "passivity")
    assert swap.phase is Phase.MAKING and swap.selected == "passivity"
    gate.open()
    first.join(WAIT_S)
    assert swap.wait(WAIT_S) and swap.phase is Phase.READY
    assert swap.tick() is Takeover.SWAP and swap.law is latest and swap.name == "passivity"


def test_a_swap_while_ready_drops_the_made_law(ddarm):
    gate = Gate(ddarm)
    gate.open()
    swap, old = running(ddarm, gate)
    swap.swap(made(ddarm, "pd_gravity"), "pd_gravity")
    assert swap.wait(WAIT_S) and swap.phase is Phase.READY
    latest = made(ddarm, "pd_fixed_gravity")
    swap.swap(latest, "pd_fixed_gravity")
    assert swap.wait(WAIT_S) and swap.phase is Phase.READY
    assert swap.tick() is Takeover.SWAP and swap.law is latest
    swap.swap(made(ddarm, "pd_gravity"), "pd_gravity")
    assert swap.wait(WAIT_S)
    swap.swap(None, "pd_fixed_gravity")  # READY, back to the running law: cancelled
    assert swap.phase is Phase.RUNNING and swap.tick() is None and swap.law is latest


def test_a_compile_failure_abandons_the_swap_and_the_running_law_stays(ddarm):
    def failing(law, name):
        raise RuntimeError("numba says no")

    swap = LawSwap(LOG, "pd", failing)
    old = made(ddarm, "pd")
    swap.install(old, "pd")
    swap.swap(made(ddarm, "passivity"), "passivity")
    assert swap.wait(WAIT_S)
    assert swap.phase is Phase.RUNNING and swap.law is old and swap.selected == "pd"
    assert swap.failed == "swap to passivity failed: numba says no"
    assert swap.tick() is None


def test_install_and_clear_drop_a_swap_under_way(ddarm):
    gate = Gate(ddarm)
    swap, old = running(ddarm, gate)
    swap.swap(made(ddarm, "passivity"), "passivity")
    swap.activate()
    swap.clear()
    assert swap.phase is Phase.EMPTY and swap.law is None and swap.tick() is None
    assert swap.selected == "passivity"  # what configure makes next
    with pytest.raises(RuntimeError, match="before a law is installed"):
        swap.swap(made(ddarm, "pd"), "pd")
    again = made(ddarm, "passivity")
    swap.install(again, swap.selected)
    swap.swap(made(ddarm, "pd"), "pd")
    swap.install(again, "passivity")  # a reconfigure while making: the swap is dropped
    gate.open()
    assert swap.wait(WAIT_S) and swap.phase is Phase.RUNNING and swap.law is again


def test_takeovers_owed_keep_the_stronger_one(ddarm):
    swap, _ = running(ddarm, Gate(ddarm))
    swap.gains()
    assert swap.tick() is Takeover.GAINS and swap.tick() is None
    swap.activate()
    swap.gains()  # a gain change does not downgrade an owed activation
    assert swap.tick() is Takeover.ACTIVATE
    swap.gains()
    swap.stalled()  # a stall keeps any take-over owed
    assert swap.tick() is Takeover.GAINS
    swap.stalled()
    assert swap.tick() is Takeover.ACTIVATE


# --------------------------------------------------------------- through a controller node
@pytest.fixture(scope="module")
def isolated_bus():
    with isolated_bus_env("law-swap"):
        yield


class Uncompilable(Controller):
    """A law whose first update fails: its compile (the swap's warm-up) fails."""

    name = "uncompilable"
    formula = "test"

    def compute(self, t, state, reference):
        raise RuntimeError("cannot compile")


@pytest.fixture
def counted(monkeypatch):
    """The laws the controller's host makes (the real ``create``), by name."""
    names: list[str] = []
    real = law_host.create

    def create_counted(name):
        names.append(name)
        return real(name)

    monkeypatch.setattr(law_host, "create", create_counted)
    return names


def tick(ctrl, t: float = 0.0):
    q = np.array([-0.1, 1.5, 1.0])
    return ctrl.laws.update(t, State(t, q, np.zeros(3)), Reference(q), None)


def test_through_the_node_each_law_is_made_once_per_swap(isolated_bus, counted):
    register(Uncompilable.name, Uncompilable)
    node, ctrl = managed(ControllerNode, "controller", "robot:=ddarm", "rate:=200.0",
                         "precompile_laws:=false", start=False)
    try:
        host = ctrl.laws
        # unconfigured: a swap only selects
        node.set_parameters({"controller": "pd_gravity"})
        assert host.swap.phase is Phase.EMPTY and host.selected == "pd_gravity"
        assert node.trigger_transition("configure").name == "SUCCESS"
        assert host.name == "pd_gravity" and host.swap.phase is Phase.RUNNING
        # inactive: the swap is made (once: by its validation) and compiled; it takes over at
        # the first tick after the activation
        counted.clear()
        node.set_parameters({"controller": "passivity"})
        assert counted == ["passivity"]
        assert host.swap.wait(WAIT_S) and host.swap.phase is Phase.READY
        assert counted == ["passivity"] and host.name == "pd_gravity"
        assert node.trigger_transition("activate").name == "SUCCESS"
        assert tick(ctrl) is not None and host.name == "passivity"
        assert host.swap.phase is Phase.RUNNING
        # a refused law: the reason comes back, nothing changes
        with pytest.raises(ParameterError, match="force reference"):
            node.set_parameters({"controller": "hybrid_force"})
        assert host.swap.phase is Phase.RUNNING and host.selected == "passivity"
        # a swap during a swap: the latest wins, each made once
        counted.clear()
        node.set_parameters({"controller": "computed_torque"})
        node.set_parameters({"controller": "pd"})
        assert counted == ["computed_torque", "pd"]
        assert host.swap.wait(WAIT_S) and host.swap.phase is Phase.READY
        tick(ctrl, 0.005)
        assert host.name == "pd" and host.law.name == "pd"
        # a compile failure: the swap is abandoned, the running law keeps the loop, status says
        node.set_parameters({"controller": "uncompilable"})
        assert host.swap.wait(WAIT_S) and host.swap.phase is Phase.RUNNING
        assert tick(ctrl, 0.010) is not None and host.name == "pd"
        assert "uncompilable failed: cannot compile" in host.status()[2]["swap_failed"]
    finally:
        unregister(Uncompilable.name)
        shut(node)
