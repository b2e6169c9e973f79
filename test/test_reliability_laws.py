"""Garbage in, without the bus: a law never takes a non-finite input into its state, a law
whose state turns non-finite anyway resets to its initial estimate and says so, and the launch
summary stays standard JSON whatever the errors were."""

from __future__ import annotations

import json

import numpy as np
import pytest

from robot_control.bringup.summary import ErrorStatistics, json_safe
from robot_control.control.base import Reference, State
from robot_control.control.registry import create
from robot_control.model import load_robot

Q = np.array([-0.1, 1.5, 1.0])


@pytest.fixture
def adaptive():
    law = create("adaptive")
    law.configure(load_robot("ddarm"), {"parameter_basis": "huo_p"})
    return law


def test_a_non_finite_state_is_refused_before_it_reaches_the_estimate(adaptive):
    adaptive.update(0.0, State(0.0, Q, np.zeros(3)), Reference(Q + 0.1))
    before = adaptive.estimate
    with pytest.raises(ValueError, match="non-finite state or reference"):
        adaptive.update(0.001, State(0.001, np.array([np.nan, 1.5, 1.0]), np.zeros(3)),
                        Reference(Q))
    assert np.array_equal(adaptive.estimate, before)  # untouched
    tau = adaptive.update(0.002, State(0.002, Q, np.zeros(3)), Reference(Q + 0.1))
    assert np.all(np.isfinite(tau)) and np.all(np.isfinite(adaptive.estimate))
    assert adaptive.recoveries == 0


def test_an_estimate_that_turns_non_finite_resets_to_the_initial_one_and_says_so(adaptive):
    for k in range(3):
        adaptive.update(0.001 * k, State(0.001 * k, Q, np.zeros(3)), Reference(Q + 0.1))
    adaptive.p_hat[2] = np.inf  # what an overflowing update law leaves behind
    tau = adaptive.update(0.004, State(0.004, Q, np.zeros(3)), Reference(Q + 0.1))
    assert np.all(np.isfinite(tau))
    assert adaptive.recoveries == 1
    assert "adaptive" in adaptive.last_recovery and "reset" in adaptive.last_recovery
    assert np.array_equal(adaptive.estimate, adaptive.cfg.p0)
    assert adaptive.diagnostics()["recoveries"] == 1


@pytest.mark.parametrize("law", ["pd", "computed_torque", "passivity", "sliding_mode", "robust"])
def test_every_law_refuses_a_non_finite_reference(law):
    controller = create(law)
    controller.configure(load_robot("ddarm"))
    with pytest.raises(ValueError, match="non-finite"):
        controller.update(0.0, State(0.0, Q, np.zeros(3)),
                          Reference(Q, qd=np.array([0.0, np.inf, 0.0])))


def test_the_summary_of_an_overflowed_error_is_null_with_the_reason():
    stats = ErrorStatistics()
    stats.add(["a", "b"], np.array([0.1, 0.2]))
    stats.add(["a", "b"], np.array([np.nan, 0.2]))  # left out, counted
    stats.add(["a", "b"], np.array([1e200, 0.2]))  # its square overflows
    notes: dict[str, str] = {}
    summary = json_safe(stats.summary(), notes=notes)
    text = json.dumps(summary, allow_nan=False)  # standard JSON, or this raises
    assert json.loads(text)["rms_error"][0] is None
    assert summary["rms_error"][1] == pytest.approx(0.2)
    assert notes == {"rms_error[0]": "inf"}
    assert summary["non_finite_error_samples"] == 1
