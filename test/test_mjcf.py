"""RobotModel → MJCF: every bundled robot and cell loads in MuJoCo, and MuJoCo's M(q) and bias
forces C q̇ + g agree with the package's (same joint order and signs) to 1e-9 relative."""

import subprocess
import sys

import numpy as np
import pytest

from robot_control import dynamics as dyn
from robot_control.model import bundled_robots, load_robot
from robot_control.model.cell import arms_model, load_cell
from robot_control.model.mjcf import MIN_INERTIA, MIN_MASS, compile_mjcf, loadable, to_mjcf
from robot_control.model.robot_model import ModelError

mujoco = pytest.importorskip("mujoco")

MODELS = [*bundled_robots(), "cell:two_puma560"]


def _model(name):
    return arms_model(load_cell(name[5:])) if name.startswith("cell:") else load_robot(name)


def _mj_terms(m, d, q, qd):
    d.qpos[:], d.qvel[:] = q, qd
    mujoco.mj_forward(m, d)
    M = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, M)
    return M, d.qfrc_bias.copy()


@pytest.mark.parametrize("name", MODELS)
def test_mass_matrix_and_bias_agree(name):
    model = _model(name)
    reference, _ = loadable(model)  # the package's model with MuJoCo's minimums applied
    armature = np.linspace(0.01, 0.2, model.nq)  # rotor inertia J_m: MuJoCo adds it to diag(M)
    m = compile_mjcf(to_mjcf(model, armature=armature, quiet=True))
    assert m.nv == model.nq
    assert [m.joint(i).name for i in range(m.njnt)] == model.joint_names
    d = mujoco.MjData(m)
    rng = np.random.default_rng(26)
    for _ in range(10):
        q = rng.uniform(-np.pi, np.pi, model.nq)
        qd = rng.normal(0.0, 2.0, model.nq)
        M, bias = _mj_terms(m, d, q, qd)
        M_ref = dyn.mass_matrix(reference, q) + np.diag(armature)
        h_ref = dyn.bias_torques(reference, q, qd)
        assert np.abs(M - M_ref).max() <= 1e-9 * np.abs(M_ref).max()
        assert np.abs(bias - h_ref).max() <= 1e-9 * np.abs(h_ref).max()


def test_minimums_change_only_what_mujoco_refuses(caplog):
    puma = load_robot("puma560")
    changed, changes = loadable(puma)
    assert len(changes) == 1 and "link1" in changes[0] and "mass 0 -> 1e-06 kg" in changes[0]
    assert changed.bodies[0].inertia.mass == MIN_MASS
    np.testing.assert_array_equal(changed.inertial_parameters()[10:], puma.inertial_parameters()[10:])
    point = loadable(load_robot("rr_point_mass"))[0]
    assert np.allclose(np.linalg.eigvalsh(point.bodies[0].inertia.inertia_com), MIN_INERTIA)
    with caplog.at_level("WARNING"):
        to_mjcf(puma)
    assert "link 'link1': mass 0 -> 1e-06 kg" in caplog.text
    assert loadable(load_robot("ddarm"))[1] == []  # nothing to change: the model itself is used


def test_sites_and_gravity_and_timestep():
    model = load_robot("three_link_planar")
    m = compile_mjcf(to_mjcf(model, timestep=2.5e-4, integrator="RK4", quiet=True))
    assert m.opt.timestep == 2.5e-4 and m.opt.integrator == mujoco.mjtIntegrator.mjINT_RK4
    np.testing.assert_array_equal(m.opt.gravity, model.gravity)
    d = mujoco.MjData(m)
    q = np.array([0.3, -0.5, 0.9])
    d.qpos[:] = q
    mujoco.mj_kinematics(m, d)
    T = dyn.frame_placement(model, q, "tool")
    np.testing.assert_allclose(d.site("tool").xpos, T[:3, 3], atol=1e-14)
    np.testing.assert_allclose(d.site("tool").xmat.reshape(3, 3), T[:3, :3], atol=1e-14)


def test_refusals_are_one_line():
    with pytest.raises(ModelError, match="integrator must be one of"):
        to_mjcf(load_robot("one_axis"), integrator="huo_2_107")
    with pytest.raises(ModelError, match=r"^MuJoCo refuses the model: .*link1"):
        compile_mjcf(to_mjcf(load_robot("one_axis"), quiet=True).replace('mass="1"', 'mass="0"'))


def test_cli_export(tmp_path):
    out = tmp_path / "puma.xml"
    run = subprocess.run([sys.executable, "-m", "robot_control.cli", "model", "export", "puma560",
                          "--format", "mjcf", "-o", str(out)], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert "link 'link1': mass 0 -> 1e-06 kg" in run.stderr
    assert mujoco.MjModel.from_xml_path(str(out)).nv == 6
    urdf = subprocess.run([sys.executable, "-m", "robot_control.cli", "model", "export", "ddarm"],
                          capture_output=True, text=True, timeout=120)
    assert urdf.returncode == 0 and urdf.stdout.startswith("<?xml") and "<robot" in urdf.stdout


def test_missing_mujoco_is_one_line():
    code = ("import sys; sys.modules['mujoco'] = None\n"
            "from robot_control.model.mjcf import require_mujoco\n"
            "try:\n    require_mujoco()\nexcept ImportError as e:\n    print(e)\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.stdout.strip() == "engine 'mujoco' needs the mujoco package: pip install mujoco"


def test_simulate_without_mujoco_is_one_line():
    code = ("import sys; sys.modules['mujoco'] = None\n"
            "from robot_control.cli import main\n"
            "sys.exit(main(['simulate', 'huo_3_1_pd', '--engine', 'mujoco', '--quiet']))\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr == ("robot-control simulate: engine 'mujoco' needs the mujoco package: "
                          "pip install mujoco\n")
