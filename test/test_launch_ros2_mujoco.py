"""``ros2 launch … engine:=mujoco`` (rclpy nodes, the installed launch file) in lockstep reproduces
the offline simulation on MuJoCo to the last bit, as the internal engine does in
test_launch_ros2_lockstep.py."""

from __future__ import annotations

import pytest
import yaml
from ros2_env import ros2_missing

if ros2_missing():
    pytest.skip(ros2_missing(), allow_module_level=True)
pytest.importorskip("mujoco")

import domains  # noqa: E402
import launch_pytest  # noqa: E402
from launch_helpers import joint_state_observer, lockstep_launch  # noqa: E402
from stack_helpers import LOCKSTEP_SCENARIO as SCENARIO  # noqa: E402
from test_launch_ros2_lockstep import assert_states_equal_offline  # noqa: E402

pytestmark = pytest.mark.ros2
DOMAIN = domains.claim("launch-mujoco")


@pytest.fixture(scope="module")
def scenario_files(tmp_path_factory):
    """(the launched scenario, without an engine; the same on MuJoCo, for the offline run)."""
    folder = tmp_path_factory.mktemp("mujoco")
    plain, mujoco = folder / "lockstep.yaml", folder / "lockstep_mujoco.yaml"
    plain.write_text(yaml.safe_dump(SCENARIO))
    mujoco.write_text(yaml.safe_dump({**SCENARIO, "plant": {**SCENARIO["plant"],
                                                            "engine": "mujoco"}}))
    return plain, mujoco


@pytest.fixture(scope="module")
def observer():
    yield from joint_state_observer(DOMAIN)


@launch_pytest.fixture(scope="module")
def mujoco_stack(scenario_files, observer):
    return lockstep_launch(DOMAIN, str(scenario_files[0]), SCENARIO["rate"],
                           SCENARIO["controller"]["type"], engine="mujoco")


@pytest.mark.launch(fixture=mujoco_stack)
def test_engine_mujoco_launch_equals_offline_simulation_on_mujoco(observer, scenario_files):
    assert_states_equal_offline(observer, scenario_files[1])
