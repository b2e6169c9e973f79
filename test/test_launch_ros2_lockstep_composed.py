"""Lockstep with ``composed:=true`` under ``ros2 launch`` (the rclpy container: the nodes on one
executor in one process) reproduces the offline simulation to the last bit, as the four node
processes do (test_launch_ros2_lockstep.py, whose scenario, observer and check this reuses)."""

from __future__ import annotations

import pytest
from ros2_env import ros2_missing

if ros2_missing():
    pytest.skip(ros2_missing(), allow_module_level=True)

import launch_pytest  # noqa: E402
from launch_helpers import stack_launch  # noqa: E402
from launch_ros.actions import SetParameter  # noqa: E402
from test_launch_ros2_lockstep import (  # noqa: E402, F401  (fixtures used by name)
    DOMAIN,
    SCENARIO,
    assert_states_equal_offline,
    observer,
    scenario_file,
)

import launch  # noqa: E402

pytestmark = pytest.mark.ros2


@launch_pytest.fixture(scope="module")
def composed_lockstep_stack(scenario_file, observer):  # noqa: F811
    return launch.LaunchDescription([
        # controller and trajectory generator (in the container) and this test's reader: the
        # plant starts once all three are subscribed (the dynamics server listens to states
        # only while a controller subscribes to its terms)
        SetParameter(name="lockstep_start_subscribers", value=3),
        *stack_launch(DOMAIN, scenario=str(scenario_file), lockstep="true", composed="true",
                      rate=str(float(SCENARIO["rate"])), controller=SCENARIO["controller"]["type"]),
        launch_pytest.actions.ReadyToTest(),
    ])


@pytest.mark.launch(fixture=composed_lockstep_stack)
def test_composed_lockstep_launch_equals_offline_simulation(observer, scenario_file):  # noqa: F811
    assert_states_equal_offline(observer, scenario_file)
