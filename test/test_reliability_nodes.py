"""Issue 23 against the nodes themselves (in this process, real DDS on a private domain): a light
wrist given a few N·m is held, never faulted; the plant's safety parameters are read-only while
it is active, and its overspeed stop holds the arm whatever ``safe_behaviour`` says."""

from __future__ import annotations

import os

import numpy as np
import pytest
from bus_probe import bus_env
from node_harness import Answerer, managed, shut, spin

from robot_control.bus import ParameterError
from robot_control.bus.dds import context as dds_context
from robot_control.nodes.plant_node import PlantNode


@pytest.fixture(scope="module", autouse=True)
def isolated_bus():
    assert dds_context._context is None, "a DDS context from another test is still open"
    saved = {k: os.environ.get(k) for k in bus_env("reliability-nodes")}
    os.environ.update(bus_env("reliability-nodes"))
    yield
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


# --- item 2: never fault where a stop will do ------------------------------------------------------


def test_a_puma_wrist_given_5_nm_per_joint_is_held_not_faulted():
    node, plant = managed(PlantNode, "plant", "robot:=puma560", "rate:=200.0")
    names = list(plant.names)
    # the probe of the issue: a state's stamp copied into 5 N·m per joint, every state answered
    answerer = Answerer("controller", names, lambda msg: [5.0] * len(names))
    try:
        spin([node, answerer.node], 2.0, until=lambda: plant.health.faulted)
        spin([node, answerer.node], 1.0, until=lambda: plant.health.faulted)
        assert answerer.sent > 50
        assert not plant.health.faulted, plant.health.fault_reason
        assert plant.guard.limited > 0  # the runaway commands were stopped by the limiter ...
        assert plant.commanded > 0  # ... while the others applied
        trip = plant.guard.trip
        assert np.all(np.abs(plant.plant.qd) <= trip)
    finally:
        shut(answerer.node, node)


# --- item 4: safety parameters ---------------------------------------------------------------------


def test_safety_parameters_are_read_only_while_the_plant_is_active():
    node, plant = managed(PlantNode, "plant", "robot:=ddarm", "rate:=200.0")
    try:
        for name, value in (("safe_behaviour", "zero_torque"), ("overspeed_factor", 5.0),
                            ("command_timeout", 5.0), ("hold_damping", 0.0)):
            with pytest.raises(ParameterError, match="read-only while it is active"):
                node.set_parameters({name: value})
        assert plant.safe == "hold" and plant.overspeed == 1.2
        assert node.trigger_transition("deactivate").name == "SUCCESS"
        node.set_parameters({"safe_behaviour": "zero_torque", "overspeed_factor": 1.5})
        assert plant.safe == "zero_torque" and plant.overspeed == 1.5
    finally:
        shut(node)


def test_an_overspeed_stop_holds_the_arm_when_the_safe_behaviour_is_zero_torque():
    # no controller: the plant applies its safe behaviour, zero torque, and the arm falls
    node, plant = managed(PlantNode, "plant", "robot:=ddarm", "rate:=200.0",
                          "safe_behaviour:=zero_torque", "initial_q:=[0.0, 0.3, 0.0]")
    fastest = [0.0]

    def watch() -> None:
        fastest[0] = max(fastest[0], float(np.max(np.abs(plant.plant.qd))))

    try:
        spin([node], 4.0, each=watch)
        assert plant.guard.stops >= 1  # it fell fast enough to trip the stop ...
        # ... which held it: never far past the trip (6 rad/s), where zero torque let it reach 11
        assert fastest[0] < 8.0, fastest[0]
        assert not plant.health.faulted
    finally:
        shut(node)
