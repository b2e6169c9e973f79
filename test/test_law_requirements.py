"""Laws that need more than a joint reference: they run on the stack's defaults or a
swap to them is refused with the reason, never a silent drift (control/requirements.py)."""

from __future__ import annotations

import numpy as np
import pytest
from launch_run import Stack, stack_env

from robot_control.control.registry import create
from robot_control.control.requirements import refusal, task_rank
from robot_control.model import load_robot

DDARM_Q0 = np.array([-0.1, 1.5, 1.0])


def configured(law: str, robot: str, params: dict):
    instance = create(law)
    instance.configure(load_robot(robot), params)
    return instance


def test_a_position_task_on_the_ddarm_leaves_two_joints_to_drift_and_is_refused():
    law = configured("resolved_acceleration", "ddarm", {"task": "position", "kp": [100.0] * 3,
                                                         "kd": [20.0] * 3})
    # the hand frame sits on the axes of joints 2 and 3: only q1 moves its position
    assert task_rank(law, DDARM_Q0) == (1, 3)
    why = refusal(law, DDARM_Q0, None)
    assert why is not None and "controls 1 of the 3 joints" in why and "task to pose" in why
    pose = configured("resolved_acceleration", "ddarm", {"task": "pose"})
    assert task_rank(pose, DDARM_Q0) == (3, 3) and refusal(pose, DDARM_Q0, None) is None


def test_a_position_task_on_a_six_joint_arm_leaves_the_wrist_free():
    law = configured("impedance", "puma560", {})  # the law's default task: position
    q = np.array([0.0, 0.5, -1.0, 0.0, 0.5, 0.0])
    assert task_rank(law, q) == (3, 6)
    assert "the other 3 would drift" in refusal(law, q, None)


def test_hybrid_control_needs_a_force_reference():
    law = configured("hybrid_force", "puma560", {"task": "pose", "kp": [100.0] * 6,
                                                 "kd": [20.0] * 6})
    q = np.array([0.0, 0.1261, -3.0543, 0.0, -0.2134, 0.0])  # its bundled scenario's start
    assert refusal(law, q, None).startswith("hybrid_force needs a force reference: publish")
    assert refusal(law, q, np.array([0, 0, 0, 0, 0, -20.0])) is None


def test_joint_space_laws_need_nothing_more():
    for name in ("pd", "computed_torque", "passivity"):
        assert refusal(configured(name, "ddarm", {}), DDARM_Q0, None) is None


@pytest.mark.parametrize("robot", ["ddarm", "puma560", "three_link_planar", "two_axis_planar"])
def test_the_stacks_task_space_defaults_hold_every_joint(robot):
    from robot_control.sim.stack_scenario import stack_scenario

    for law in ("resolved_acceleration", "impedance"):
        sc = stack_scenario(robot, law, 1000.0, 0.1)
        instance = configured(law, robot, sc.controller_params)
        assert refusal(instance, sc.q0, None) is None, (robot, law)


@pytest.mark.slow  # a stack launch
def test_a_stack_started_with_a_law_it_cannot_feed_stops_with_the_reason():
    stack = Stack(stack_env("needs-force"), "controller:=hybrid_force", "rate:=250",
                  "--duration", "3")
    code = stack.finish(timeout_s=150.0)
    log = "\n".join(stack.lines[-30:])
    assert code == 1, log
    assert "hybrid_force needs a force reference" in stack.final_line, log
    assert stack.final_line.startswith("robot-control launch: FAILED: fault on /controller")
