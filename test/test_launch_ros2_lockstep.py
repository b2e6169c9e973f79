"""Lockstep under ``ros2 launch`` (launch_pytest, the installed package's launch file, rclpy nodes)
reproduces the offline simulation of the same scenario to the last bit, as the rclpy-free route
does in test_stack_lockstep.py."""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from ros2_env import ros2_missing, wait_for

if ros2_missing():
    pytest.skip(ros2_missing(), allow_module_level=True)

import domains  # noqa: E402
import launch_pytest  # noqa: E402
from launch_helpers import joint_state_observer, lockstep_launch  # noqa: E402
from stack_helpers import LOCKSTEP_SCENARIO as SCENARIO  # noqa: E402

pytestmark = pytest.mark.ros2
DOMAIN = domains.claim("launch-lockstep")
# the launch file loads config/stack.ddarm.yaml after the scenario's defaults: its passivity gains
# and initial pose equal the scenario's, so the scenario and the launched stack agree


@pytest.fixture(scope="module")
def scenario_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("lockstep") / "lockstep.yaml"
    path.write_text(yaml.safe_dump(SCENARIO))
    return path


@pytest.fixture(scope="module")
def observer():
    yield from joint_state_observer(DOMAIN)


@launch_pytest.fixture(scope="module")
def lockstep_stack(scenario_file, observer):
    return lockstep_launch(DOMAIN, str(scenario_file), SCENARIO["rate"],
                           SCENARIO["controller"]["type"])


@pytest.mark.launch(fixture=lockstep_stack)
def test_lockstep_launch_equals_offline_simulation(observer, scenario_file):
    assert_states_equal_offline(observer, scenario_file)


def assert_states_equal_offline(observer, scenario_file) -> None:
    """The observer's /joint_states equal the offline simulation's states to the last bit."""
    from robot_control.sim.simulate import run

    offline = run(str(scenario_file))
    steps = offline.summary["steps"]
    period = 1_000_000_000 // SCENARIO["rate"]

    def have_all() -> bool:
        with observer.lock:
            return all(k * period in observer.states for k in range(steps + 1))

    assert wait_for(have_all, 240.0), f"{len(observer.states)} of {steps + 1} states arrived"
    with observer.lock:
        bus = np.array([observer.states[k * period] for k in range(steps + 1)])
    # the same arithmetic in the same order: equal to the last bit, not just to a tolerance
    assert np.array_equal(bus, offline.q), np.abs(bus - offline.q).max()
