"""How ``robot-control launch`` judges a run, on real stacks: a stack whose
controller drops every trajectory the generator sends ends FAILED with the controller's reason
(it used to end "ok: ok" with "max tracking error -"); one whose plant saturates a torque is
"degraded" with the figures, and ``--strict`` makes that exit 1; so is one that dropped part
of its motion (a trajectory the controller dropped, one the generator refused). The stacks
differ from the bundled one in one node's robot file only: a copy of the DDArm with other
limits."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from launch_run import Stack, stack_env

from robot_control.bringup.runner import resolve_launch_file
from robot_control.bus.backend import create_node
from robot_control.model.resources import share_path
from robot_control.nodes.convert import TRAJECTORY_TOPIC, Messages

# slow (scripts/test.sh --slow): a stack launch per test
pytestmark = pytest.mark.slow

RATE = "250.0"
NAMES = ["joint1", "joint2", "joint3"]


def launch_with(tmp_path: Path, node: str, limits: dict[str, float],
                links: tuple[int, ...] = (0, 1, 2)) -> Path:
    """The bundled launch file with ``node`` on a DDArm whose D-H rows ``links`` have these
    limits (velocity, effort) instead."""
    robot = yaml.safe_load(share_path("config/robots/ddarm.yaml").read_text())
    for i in links:
        robot["links"][i].update(limits)
    robot_file = tmp_path / "ddarm.yaml"
    robot_file.write_text(yaml.safe_dump(robot))
    launch = yaml.safe_load(resolve_launch_file(None).read_text())
    entity = next(e["node"] for e in launch["launch"] if e.get("node", {}).get("exec") == node)
    for param in entity["param"]:
        if param.get("name") == "robot":
            param["value"] = f"'{robot_file}'"
    path = tmp_path / "changed.launch.yaml"
    path.write_text(yaml.safe_dump(launch, sort_keys=False))
    return path


def test_a_run_whose_controller_drops_every_trajectory_fails_with_the_reason(tmp_path):
    # the controller's model allows 0.05 rad/s: the generator's sweep (~1 rad/s) is refused
    launch = launch_with(tmp_path, "controller", {"velocity": 0.05})
    stack = Stack(stack_env("verdict-dropped"), str(launch), f"rate:={RATE}", "--duration", "3")
    code = stack.finish(timeout_s=240)
    output = "\n".join(stack.lines[-40:])
    assert code == 1, output
    summary = stack.summary()
    assert summary["tracking_samples"] == 0 and summary["outcome"] == "FAILED", output
    assert stack.final_line.startswith(
        "robot-control launch: FAILED: no tracking samples: the controller dropped "), output
    assert "/controller/joint_trajectory (" in stack.final_line
    assert "velocity" in stack.final_line, stack.final_line  # the controller's own reason


def test_a_run_whose_plant_saturates_is_degraded_and_strict_fails_it(tmp_path):
    # the plant's joint 1 gives 22 N·m of the 25 the sweep's acceleration peaks ask for
    launch = launch_with(tmp_path, "plant", {"effort": 22.0}, links=(0,))
    stack = Stack(stack_env("verdict-saturated"), str(launch), f"rate:={RATE}", "--duration",
                  "4", "--strict")
    code = stack.finish(timeout_s=240)
    output = "\n".join(stack.lines[-40:])
    summary = stack.summary()
    assert summary["plant"]["saturation_events"] > 0, output
    assert summary["outcome"] == "FAILED" and code == 1, output
    assert stack.final_line.startswith("robot-control launch: FAILED: degraded (--strict): "), \
        output
    assert "torque saturated at the effort limits (/plant: " in stack.final_line
    assert any(line.startswith("[launch] achieved") and "| saturated /plant " in line
               for line in stack.lines), output


def test_a_run_that_dropped_part_of_its_motion_is_degraded_with_the_figures(monkeypatch):
    """The controller drops one trajectory (its first knot 1.5 rad off the arm) and the
    generator refuses one on its topic (more names than joints) while the sweep runs: the run
    held and tracked, but not all it was sent ran — "degraded" with the counts, never "ok"."""
    env = stack_env("verdict-partial")
    for key in ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE"):
        monkeypatch.setenv(key, env[key])
    stack = Stack(env, f"rate:={RATE}", "--duration", "5")
    try:
        assert stack.wait_for("stack active", 180), "\n".join(stack.lines[-40:])
        node = create_node("verdict_probe", [], backend="dds")
        try:
            m = Messages(node)
            knots = node.create_publisher("trajectory_msgs/msg/JointTrajectory",
                                          "/" + TRAJECTORY_TOPIC, qos="transient_local")
            topic = node.create_publisher("trajectory_msgs/msg/JointTrajectory",
                                          "/trajectory_generator/joint_trajectory")
            time.sleep(1.5)  # matched
            far = np.full((2, 3), 1.5)
            knots.publish(m.joint_trajectory(0, NAMES, (np.array([0.0, 1.0]), far,
                                                        np.zeros((2, 3)), np.zeros((2, 3)))))
            topic.publish(m.JointTrajectory(joint_names=[f"joint{i}" for i in range(10)]))
            code = stack.finish(timeout_s=240)
        finally:
            node.shutdown()
    finally:
        stack.stop()
    output = "\n".join(stack.lines[-40:])
    summary = stack.summary()
    assert summary["tracking_samples"] > 0, output  # it tracked the sweep meanwhile
    assert code == 0 and summary["outcome"] == "degraded", output
    assert "the controller dropped 1 trajectory message(s) on /controller/joint_trajectory " \
           "(last: " in stack.final_line, stack.final_line
    assert "/trajectory_generator refused 1 trajectory message(s)" in stack.final_line
