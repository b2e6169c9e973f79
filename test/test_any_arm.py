"""Any arm a user brings: example-robot-data's arms run every model-based joint-space law with
the derived defaults, offline (the stack's own run, sim/stack_scenario.py) and live in lockstep;
tool joints are held; descriptions that cannot run are refused naming the joint.

example-robot-data is in the test extra: its absence fails these tests rather than skipping them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from launch_run import Stack, stack_env
from model_samples import EXAMPLE_ARMS, example_urdf

from robot_control.control.tuning import COUPLING_MAX, coupling, default_initial_pose
from robot_control.model import load_robot
from robot_control.model.arm import load_arm, tool_joints
from robot_control.model.robot_model import ModelError
from robot_control.model.urdf import parse_urdf
from robot_control.sim import matrix
from robot_control.sim.arm_check import description_problems
from robot_control.sim.stack_scenario import stack_scenario
from robot_control.sim.step_size import VISCOUS_STEP, viscous_rate

ARMS = sorted(EXAMPLE_ARMS)


def arm(name: str) -> str:
    path = example_urdf(name)
    assert path is not None, f"example-robot-data (test extra) has no {EXAMPLE_ARMS[name]}"
    return str(path)


@pytest.mark.parametrize("name", ARMS)
def test_every_model_based_law_holds_on_the_arm_at_both_rates(name):
    failed = []
    for rate in matrix.RATES:
        for label in matrix.MODEL_BASED:
            cell = matrix.run_cell(arm(name), label, rate)
            if cell.verdict or cell.speed_ratio > 1.0:
                failed.append(f"{label} at {rate:g} Hz: {cell.verdict or 'over speed'} "
                              f"(max|e| {cell.max_error:.3g}, q̇/limit {cell.speed_ratio:.3g})")
    assert not failed, f"{name}: " + "; ".join(failed)


def test_grippers_fingers_and_mimics_are_tools_and_the_wrist_is_not():
    def tools(name):
        return tool_joints(parse_urdf(arm(name))[2])

    assert tools("panda") == ["panda_finger_joint1", "panda_finger_joint2"]  # one mimics
    assert tools("z1") == ["jointGripper"]
    assert tools("so101") == ["gripper"]  # its wrist_roll moves a link named gripper: arm
    assert tools("ur5") == [] and tools("xarm7") == []
    panda = load_arm(arm("panda"))
    assert panda.nq == 7 and panda.held_joints == {"panda_finger_joint1": 0.01,
                                                    "panda_finger_joint2": 0.01}
    assert load_robot(arm("panda")).nq == 9  # the library loads the whole tree, as Pinocchio


def test_arm_joints_chosen_by_hand_and_their_refusals():
    panda = arm("panda")
    joints = [f"panda_joint{i}" for i in range(1, 7)]
    model = load_arm(panda, joints)  # joint 7 held too
    assert model.joint_names == joints and "panda_joint7" in model.held_joints
    with pytest.raises(ModelError, match="'panda_finger_joint2' mimics 'panda_finger_joint1'"):
        load_arm(panda, [*joints, "panda_finger_joint2"])
    with pytest.raises(ModelError, match="'elbow' is not a movable joint"):
        load_arm(panda, ["elbow"])


def test_the_default_pose_leaves_aligned_axes_and_the_step_the_damping():
    xarm = load_arm(arm("xarm7"))
    zero_like = np.clip(np.zeros(7), *tuning_box(xarm))  # zero, inside the limits
    assert coupling(xarm, zero_like) > COUPLING_MAX  # stretched up: joints 1 and 3 aligned
    q0 = default_initial_pose(xarm)
    assert coupling(xarm, q0) <= COUPLING_MAX
    assert np.all((q0 > xarm.lower) & (q0 < xarm.upper))
    sc = stack_scenario(arm("xarm7"), "computed_torque", 500.0, 0.01)
    assert sc.physics_dt * viscous_rate(xarm, sc.q0) <= VISCOUS_STEP
    assert round(1 / (500.0 * sc.physics_dt), 9) == int(round(1 / (500.0 * sc.physics_dt)))
    ur5 = load_arm(arm("ur5"))
    assert stack_scenario(arm("ur5"), "pd", 500.0, 0.01).physics_dt == 5e-4  # no damping
    assert np.array_equal(default_initial_pose(ur5), np.clip(np.zeros(6), *tuning_box(ur5)))


def tuning_box(model):
    from robot_control.control.tuning import pose_box

    return pose_box(model)


def _broken(tmp_path: Path, name: str, edit) -> Path:
    text = edit(Path(arm(name)).read_text())
    out = tmp_path / f"{name}_broken.urdf"
    out.write_text(text)
    return out


def weak_shoulder(text: str) -> str:
    """The UR5 with a shoulder-lift motor of 1 N·m: it cannot hold the arm at zero."""
    import re

    return re.sub(r'(<joint name="shoulder_lift_joint".*?effort=")150.0', r"\g<1>1.0", text,
                  count=1, flags=re.S)


def test_descriptions_that_cannot_run_are_refused_naming_the_joint(tmp_path):
    # a moving link without mass: wrist_3's link loses its <inertial>
    import re

    massless = _broken(tmp_path, "ur5", lambda t: re.sub(
        r'(<link name="wrist_3_link">.*?)<inertial>.*?</inertial>', r"\1", t, flags=re.S))
    with pytest.raises(ModelError, match="joint 'wrist_3_joint' moves no mass"):
        load_arm(str(massless))
    # gravity beyond the shoulder's effort limit
    weak = _broken(tmp_path, "ur5", weak_shoulder)
    weak_model = load_arm(str(weak))
    problems = description_problems(weak_model, default_initial_pose(weak_model))
    assert any("joint 'shoulder_lift_joint'" in p and "effort limit 1" in p for p in problems), \
        problems
    # the check command says so and exits 1
    out = subprocess.run([sys.executable, "-m", "robot_control.cli", "check", str(weak),
                          "--law", "computed_torque"], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 1
    assert "shoulder_lift_joint" in out.stdout and "FAILED" in out.stderr
    # an inertia that is not positive semi-definite is refused by the loader, naming the link
    bad = _broken(tmp_path, "ur5", lambda t: t.replace('ixx="0.0171364731454"',
                                                       'ixx="-0.5"', 1))
    with pytest.raises(ModelError, match="link"):
        load_arm(str(bad))


@pytest.mark.slow
def test_a_live_lockstep_panda_holds_its_fingers_and_tracks(tmp_path):
    out = tmp_path / "summary.json"
    stack = Stack(stack_env("arm-panda"), f"robot:={arm('panda')}", "controller:=computed_torque",
                  "rate:=500.0", "lockstep:=true", "--duration", "3", "--summary", str(out))
    code = stack.finish(timeout_s=200.0)
    log = "\n".join(stack.lines[-40:])
    assert code == 0, log
    assert not any("is not a file: skipped" in line for line in stack.lines), log
    assert any("tool joints held" in line and "panda_finger_joint1" in line
               for line in stack.lines), log
    summary = json.loads(out.read_text())
    assert summary["velocity_stops"] == 0 and summary["commands_rejected"] == 0, log
    assert summary["tracking_samples"] > 0 and len(summary["max_error"]) == 7
    assert max(summary["max_error"]) <= matrix.families()["model"].bound, summary["max_error"]


@pytest.mark.slow  # a stack launch
@pytest.mark.slow
def test_a_stack_on_a_description_that_cannot_run_fails_at_configure_with_the_reason(tmp_path):
    weak = _broken(tmp_path, "ur5", weak_shoulder)
    stack = Stack(stack_env("arm-weak"), f"robot:={weak}", "lockstep:=true", "--duration", "2")
    code = stack.finish(timeout_s=150.0)
    text = "\n".join(stack.lines)
    assert code == 1, text[-3000:]
    assert "the description cannot run" in text and "shoulder_lift_joint" in text, text[-3000:]
    assert "ok: ok" not in stack.lines[-1]


@pytest.mark.parametrize("label", ["computed_torque", "adaptive", "sliding_mode.vs2"])
def test_the_friction_feedforward_runs_alike_compiled_and_stepwise(label):
    """The Z1's description carries 1 N·m of Coulomb friction per joint: the model-based laws
    feed it forward (Craig's F(Θ, Θ̇)), the same bits in the compiled loop and the Python one."""
    from robot_control.sim.simulate import run

    law, extra = matrix.law_row(label).law, matrix.law_row(label).extra
    compiled = run(stack_scenario(arm("z1"), law, 500.0, 0.5, extra))
    stepwise = run(stack_scenario(arm("z1"), law, 500.0, 0.5, extra), compiled=False)
    assert np.array_equal(compiled.tau_command, stepwise.tau_command)
    assert np.array_equal(compiled.q, stepwise.q)


def test_only_laws_with_a_model_feed_friction_forward():
    from robot_control.control.base import Reference, State
    from robot_control.control.registry import create

    model = load_arm(arm("z1"))
    q, qd = default_initial_pose(model), np.zeros(model.nq)
    ref = Reference(q, np.full(model.nq, 0.2), np.zeros(model.nq))
    expected = model.friction[:, 0] * 0.2 + model.friction[:, 1]  # viscous q̇_d + Coulomb
    vs3 = stack_scenario(arm("z1"), "sliding_mode", 500.0, 0.01, {"scheme": "vs3"})
    for name, params, feeds in (("computed_torque", {}, True), ("pd", {}, False),
                                ("sliding_mode", vs3.controller_params, False)):
        with_f, without = create(name), create(name)
        with_f.configure(model, params)
        without.configure(model, params)
        without._friction = None
        diff = (with_f.update(0.0, State(0.0, q, qd), ref)
                - without.update(0.0, State(0.0, q, qd), ref))
        assert np.allclose(diff, expected if feeds else 0.0, rtol=1e-3), name
