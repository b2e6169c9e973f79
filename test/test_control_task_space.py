"""Task-space laws: resolved acceleration (C5), hybrid position/force (C13), impedance (C14)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from test_control_sim import Wall, quintic, simulate

from robot_control import dynamics as dyn
from robot_control.control import Reference, State, create
from robot_control.control.task_space import orientation_error
from robot_control.model import load_robot


def test_orientation_error_is_huo_3_40_and_the_small_rotation_vector():
    R = Rotation.from_euler("zyx", [0.3, -0.4, 1.1]).as_matrix()
    R_d = Rotation.from_euler("zyx", [0.5, 0.2, -0.7]).as_matrix()
    n, o, a = R.T
    n_d, o_d, a_d = R_d.T
    expected = 0.5 * (np.cross(n, n_d) + np.cross(o, o_d) + np.cross(a, a_d))
    assert np.allclose(orientation_error(R, R_d), expected)
    small = np.array([1e-4, -2e-4, 3e-4])  # R_d = exp(δ)R: e_o ≈ δ in base axes
    R_small = Rotation.from_rotvec(small).as_matrix() @ R
    assert np.allclose(orientation_error(R, R_small), small, atol=1e-10)


def test_resolved_acceleration_tracks_a_pose_on_a_six_axis_arm():
    """C5 on the PUMA 560 (square J): both the task error and the joint error vanish."""
    model = load_robot("puma560")
    qa = np.array([0.0, -0.5, 0.4, 0.1, 0.6, 0.2])
    law = create("resolved_acceleration")
    law.configure(model, {"task": "pose", "kp": 400.0, "kd": 40.0})
    errors = []
    run = simulate(model, law, quintic(qa, qa + [0.2, 0.15, -0.15, 0.15, -0.15, 0.2], 0.4),
                   qa + 0.02, duration=0.6,
                   on_step=lambda k, t, q, qd, law: errors.append(np.linalg.norm(law.task_error)))
    assert errors[0] > 0.01
    # ë + 40ė + 400e = 0 in task space: after 0.2 s at rest, (1 + 20t)e^{−20t} ≈ 1e-3 of it
    assert errors[-1] < 2e-3 * errors[0]
    assert np.abs(run.error[-1]).max() < 2e-3 * 0.02


def test_resolved_acceleration_uses_the_pseudo_inverse_on_a_planar_arm():
    """A 3-link planar arm has rank 3 in a 6-row pose task: J⁺ solves the feasible rows exactly."""
    model = load_robot("three_link_planar")
    q0 = np.array([0.3, 0.8, -0.6])
    T_d = dyn.frame_placement(model, q0 + [0.1, -0.1, 0.05], None)
    law = create("resolved_acceleration")
    law.configure(model, {"task": "pose", "kp": 400.0, "kd": 40.0})
    run = simulate(model, law, lambda t: Reference(q0, pose=T_d), q0, duration=0.8)
    T = dyn.frame_placement(model, run.q[-1], None)
    assert np.abs(T[:3, 3] - T_d[:3, 3]).max() < 1e-4
    assert np.abs(orientation_error(T[:3, :3], T_d[:3, :3])).max() < 1e-4


# ------------------------------------------------------------------- force control
PLANAR_Q0 = np.array([-0.6, 1.6])
NORMAL = np.array([0.0, 1.0, 0.0])  # the surface lies below the tool, gravity pulls onto it


@pytest.fixture(scope="module")
def planar():
    return load_robot("two_axis_planar")


@pytest.fixture(scope="module")
def start(planar):
    return dyn.frame_placement(planar, PLANAR_Q0, None)


def _slide(start, dx: float = 0.2, T: float = 1.0):
    """Cartesian reference: slide dx along the surface (x) by a quintic, holding y."""
    p0 = start[:3, 3]

    def reference(t: float) -> Reference:
        s = min(t / T, 1.0)
        pose = start.copy()
        pose[0, 3] = p0[0] + dx * (10 * s**3 - 15 * s**4 + 6 * s**5)
        twist, accel = np.zeros(6), np.zeros(6)
        if t < T:
            twist[3] = dx * (30 * s**2 - 60 * s**3 + 30 * s**4) / T
            accel[3] = dx * (60 * s - 180 * s**2 + 120 * s**3) / T**2
        return Reference(PLANAR_Q0, pose=pose, twist=twist, accel=accel)

    return reference


def _hybrid(model, plant, start, **extra):
    wall = Wall(NORMAL, start[1, 3], 2e4, 200.0)
    law = create("hybrid_force")
    law.configure(model, {"kp": 100.0, "kd": 20.0, "plane_normal": NORMAL,
                          "plane_offset": start[1, 3], "force_setpoint": 20.0, **extra})
    run = simulate(plant, law, _slide(start), PLANAR_Q0, duration=1.2, wall=wall)
    x = np.array([dyn.frame_placement(plant, q, None)[0, 3] for q in run.q])
    x_d = np.array([_slide(start)(t).pose[0, 3] for t in run.t])
    return law, run, x - x_d


def test_hybrid_force_holds_the_normal_force_while_tracking_the_path(planar, start):
    """C13, exact model: |f_n − 20 N| < 0.1 N after the first 0.3 s, tangential error < 1 mm."""
    law, run, x_err = _hybrid(planar, planar, start)
    normal_force = run.wrench[:, 3:] @ NORMAL
    assert np.abs(normal_force[300:] - 20.0).max() < 0.1
    assert np.abs(x_err).max() < 1e-3
    assert np.abs(run.wrench[:, 3]).max() == 0.0  # a frictionless plane: no tangential force
    assert law.diagnostics()["commanded_normal_force"] == pytest.approx(20.0, abs=0.1)


def test_force_feedback_corrects_a_wrong_model(planar, start):
    """A 20 % heavier plant presses harder open loop; the force loop brings it back to 20 N."""
    heavy = planar.with_inertial_parameters(1.2 * planar.inertial_parameters())
    forces = {}
    for name, extra in (("open", {}), ("feedback", {"force_kp": 1.0, "force_ki": 20.0})):
        _, run, x_err = _hybrid(planar, heavy, start, **extra)
        forces[name] = run.wrench[-300:, 3:] @ NORMAL
        assert np.abs(x_err[-300:]).max() < 0.02  # position: PD against the mismatch
    assert np.abs(forces["open"] - 20.0).min() > 1.0
    assert np.abs(forces["feedback"] - 20.0).max() < 0.05


def test_force_reference_wrench_overrides_the_set_point(planar, start):
    law = create("hybrid_force")
    law.configure(planar, {"plane_normal": NORMAL, "plane_offset": start[1, 3]})
    state = State(0.0, PLANAR_Q0, np.zeros(2))
    ref = Reference(PLANAR_Q0, pose=start, wrench=np.array([0, 0, 0, 0, -35.0, 0]))
    law.update(0.0, state, ref)
    assert law.diagnostics()["commanded_normal_force"] == pytest.approx(35.0)
    with pytest.raises(ValueError, match="wrench"):
        law.set_parameters({"force_kp": 1.0})
        law.update(0.001, state, Reference(PLANAR_Q0, pose=start))


@pytest.mark.parametrize("stiffness", [300.0, 900.0])
def test_impedance_settles_where_the_target_impedance_meets_the_wall(planar, start, stiffness):
    """C14: at rest K_d(X − X_d) = −(f_e − f_eᵈ); X_d 1 cm inside a 2·10⁴ N/m wall."""
    wall = Wall(NORMAL, start[1, 3], 2e4, 200.0)
    target = start.copy()
    target[1, 3] -= 0.01
    law = create("impedance")
    law.configure(planar, {"inertia": 1.0, "damping": 2.0 * np.sqrt(stiffness),
                           "stiffness": stiffness})
    run = simulate(planar, law, lambda t: Reference(PLANAR_Q0, pose=target), PLANAR_Q0,
                   duration=1.0, wall=wall)
    X = dyn.frame_placement(planar, run.q[-1], None)[:3, 3]
    f_e = -run.wrench[-1, 3:]  # the robot's force on the wall
    assert f_e[1] == pytest.approx(stiffness * (target[1, 3] - X[1]), rel=1e-3)
    expected = stiffness * 0.01 * 2e4 / (2e4 + stiffness)  # springs in series
    assert -f_e[1] == pytest.approx(expected, rel=1e-3)
    assert law.diagnostics()["contact_force"][1] == pytest.approx(f_e[1], rel=1e-3, abs=1e-3)


def test_impedance_in_free_space_with_unit_inertia_is_task_space_computed_torque(planar, start):
    """Huo's remark: f_e = f_eᵈ = 0, M_d = I gives τ of resolved acceleration."""
    q, qd = PLANAR_Q0 + [0.05, -0.02], np.array([0.3, -0.1])
    ref = Reference(PLANAR_Q0, pose=start, twist=np.array([0, 0, 0, 0.1, 0.0, 0]))
    imp = create("impedance")
    imp.configure(planar, {"inertia": 1.0, "damping": 20.0, "stiffness": 100.0})
    rac = create("resolved_acceleration")
    rac.configure(planar, {"task": "position", "kp": 100.0, "kd": 20.0})
    state = State(0.0, q, qd, wrench=np.zeros(6))
    assert np.allclose(imp.update(0.0, state, ref), rac.update(0.0, state, ref), atol=1e-9)
    with pytest.raises(ValueError, match="wrench"):
        imp.update(0.0, State(0.0, q, qd), ref)
