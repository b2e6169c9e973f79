"""The simulated plant: integration accuracy, energy balance, mismatch terms, limits, contact."""

import numpy as np
import pytest
from model_samples import two_link_urdf

from robot_control import dynamics as dyn
from robot_control.model import load_urdf
from robot_control.sim.plant import Plant

TWO_LINK = two_link_urdf(elbow_limit=2.5)


@pytest.fixture(scope="module")
def model():
    return load_urdf(TWO_LINK)


def total_energy(model, q, qd):
    return dyn.kinetic_energy(model, q, qd) + dyn.potential_energy(model, q)


def test_gravity_compensation_holds_still(model):
    plant = Plant(model, {}, physics_dt=1e-3)
    q0 = np.array([0.3, -0.7])
    plant.reset(q0)
    for _ in range(200):
        plant.step(dyn.gravity_torques(model, plant.q), 1e-3)
    assert np.abs(plant.q - q0).max() < 1e-10
    assert np.abs(plant.qd).max() < 1e-10


@pytest.mark.parametrize("integrator,tol", [("rk4", 1e-8), ("semi_implicit_euler", 2e-2),
                                            ("huo_2_107", 5e-2)])
def test_free_swing_conserves_energy(model, integrator, tol):
    plant = Plant(model, {"integrator": integrator, "joint_limits": False}, physics_dt=1e-3)
    plant.reset([0.4, 0.2], [1.0, -0.5])
    e0 = total_energy(model, plant.q, plant.qd)
    for _ in range(100):
        plant.step(np.zeros(2), 1e-2)
    drift = abs(total_energy(model, plant.q, plant.qd) - e0) / abs(e0)
    assert drift < tol


def test_rk4_converges_at_fourth_order(model):
    finals = []
    for dt in (4e-3, 2e-3, 1e-3):
        plant = Plant(model, {"joint_limits": False}, physics_dt=dt)
        plant.reset([0.4, 0.2], [1.0, -0.5])
        plant.step(np.array([1.0, -0.3]), 0.4)
        finals.append(plant.q.copy())
    ratio = np.linalg.norm(finals[0] - finals[1]) / np.linalg.norm(finals[1] - finals[2])
    assert 12.0 < ratio < 20.0  # 2⁴ = 16 for a fourth-order method


def test_saturation_clips_to_effort_limits(model):
    plant = Plant(model, {}, physics_dt=1e-3)
    plant.reset([0.0, 0.0])
    applied = plant.step(np.array([100.0, -100.0]), 1e-3)
    assert np.allclose(applied, [50.0, -30.0])
    assert plant.saturated.tolist() == [True, True]
    unsat = Plant(model, {"saturate": False}, physics_dt=1e-3)
    assert np.allclose(unsat.step(np.array([100.0, -100.0]), 1e-3), [100.0, -100.0])


def test_friction_dissipates_energy(model):
    plant = Plant(model, {"friction": {"viscous": 0.5, "coulomb": 0.2}, "joint_limits": False},
                  physics_dt=1e-3)
    plant.reset([0.4, 0.2], [1.0, -0.5])
    e_prev = total_energy(model, plant.q, plant.qd)
    for _ in range(50):
        plant.step(np.zeros(2), 1e-2)
        e = total_energy(model, plant.q, plant.qd)
        assert e <= e_prev + 1e-9
        e_prev = e


def test_payload_changes_gravity_load(model):
    plant = Plant(model, {"payload": {"mass": 2.0, "com": [1.0, 0.0, 0.0]}})
    g_nom = dyn.gravity_torques(model, np.zeros(2))
    g_pl = dyn.gravity_torques(plant.model, np.zeros(2))
    # a 2 kg point at the tip (2 m from joint 1, 1 m from joint 2) adds m·g·r about each axis
    assert np.allclose(np.abs(g_pl - g_nom), [2 * 9.81 * 2.0, 2 * 9.81 * 1.0])


def test_actuator_inertia_slows_response(model):
    fast = Plant(model, {"joint_limits": False})
    slow = Plant(model, {"actuator_inertia": [5.0, 5.0], "joint_limits": False})
    for p in (fast, slow):
        p.reset([0.0, 0.0])
        p.step(dyn.gravity_torques(model, np.zeros(2)) + [1.0, 1.0], 0.01)
    assert np.all(np.abs(slow.q) < np.abs(fast.q))


def test_joint_limit_stop_pushes_back(model):
    plant = Plant(model, {"joint_limits": {"stiffness": 1e4, "damping": 50}}, physics_dt=1e-4)
    plant.reset([0.0, 2.45], [0.0, 2.0])
    peak = 0.0
    for _ in range(300):
        plant.step(dyn.gravity_torques(model, plant.q), 1e-3)
        peak = max(peak, plant.q[1])
    assert peak < 2.5 + 0.05
    assert plant.q[1] < 2.5 + 1e-3


def test_bounded_disturbance(model):
    plant = Plant(model, {"disturbance": {"amplitude": [0.5, 0.2], "frequency": 3.0}})
    ts = np.linspace(0.0, 1.0, 500)
    d = np.array([plant.disturbance(t) for t in ts])
    assert np.all(np.abs(d) <= [0.5, 0.2])
    assert np.all(np.abs(d).max(axis=0) > [0.45, 0.18])


def test_seeded_noise_is_reproducible(model):
    a = Plant(model, {"noise": {"position": 1e-3, "seed": 7}})
    b = Plant(model, {"noise": {"position": 1e-3, "seed": 7}})
    for p in (a, b):
        p.reset([0.1, 0.2])
    assert np.array_equal(a.measure()[0], b.measure()[0])
    assert not np.array_equal(a.measure()[0], np.array([0.1, 0.2]))


def test_compliant_surface_reports_contact_wrench(model):
    # tool starts 2 m along x at q = 0; a wall at x = 1.9 facing −x is penetrated by 0.1 m
    env = {"type": "compliant", "normal": [-1, 0, 0], "offset": -1.9, "stiffness": 1000,
           "damping": 0}
    plant = Plant(model, {"environment": env, "joint_limits": False})
    tau_env, wrench = plant.contact(np.zeros(2), np.zeros(2))
    assert np.allclose(wrench[3:], [-100.0, 0.0, 0.0])
    J = dyn.jacobian(model, np.zeros(2), "tool")
    assert np.allclose(tau_env, J[3:].T @ wrench[3:])


@pytest.mark.parametrize("bad,match", [
    ({"integrator": "euler"}, "integrator"),
    ({"friction": {"viscuous": 1}}, "friction"),
    ({"actuator_inertia": [1, 2, 3]}, "actuator_inertia"),
    ({"payload": {"mass": -1}}, "payload"),
    ({"bogus": 1}, "unknown keys"),
    ({"environment": {"type": "foam"}}, "type"),
])
def test_bad_plant_config_is_refused_with_reason(model, bad, match):
    with pytest.raises(ValueError, match=match):
        Plant(model, bad)


def test_rigid_surface_stops_the_tool_and_pushes_back(model):
    # the tool falls onto a floor at z = −0.5; under gravity alone it must rest on it
    env = {"type": "rigid", "normal": [0, 0, 1], "offset": -0.5}
    plant = Plant(model, {"environment": env, "joint_limits": False}, physics_dt=5e-4)
    plant.reset([0.0, 0.0])
    for _ in range(400):
        plant.step(np.zeros(2), 5e-3)
    tool_z = dyn.frame_placement(plant.model, plant.q, "tool")[2, 3]
    assert plant.in_contact
    assert tool_z == pytest.approx(-0.5, abs=2e-3)
    assert plant.wrench[5] > 0.0  # the floor pushes up
    # lifting the arm with a strong torque breaks the contact
    for _ in range(100):
        plant.step(dyn.gravity_torques(model, plant.q) + np.array([-20.0, 0.0]), 5e-3)
    assert not plant.in_contact
    assert not np.any(plant.wrench)
