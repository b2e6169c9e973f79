"""The plant on MuJoCo (engine: mujoco): the internal plant's interface, its physics by MuJoCo."""


import numpy as np
import pytest
import yaml
from model_samples import two_link_urdf

from robot_control import dynamics as dyn
from robot_control.model import load_robot, load_urdf
from robot_control.sim.engine import make_plant
from robot_control.sim.mujoco_contact import SOFT
from robot_control.sim.scenario import load_scenario
from robot_control.sim.simulate import run

pytest.importorskip("mujoco")

TWO_LINK = two_link_urdf(elbow_limit=0.5)


def _pair(model, cfg, dt, **mujoco_cfg):
    internal = make_plant(model, dict(cfg), dt)
    mj = make_plant(model, {**cfg, "engine": "mujoco", **mujoco_cfg}, dt)
    return internal, mj


def test_free_fall_matches_the_internal_engine_with_rk4():
    """Same equations, same RK4: two codes agree to integration round-off (PUMA, 0.3 s)."""
    model = load_robot("puma560")
    internal, mj = _pair(model, {"joint_limits": False}, 1e-3, integrator="rk4")
    q0 = np.array([0.2, -0.4, 0.3, 0.1, 0.5, -0.2])
    for plant in (internal, mj):
        plant.reset(q0)
        for _ in range(300):
            plant.step(np.zeros(6), 1e-3)
    # MuJoCo's link 1 carries 1e-6 kg more (MIN_MASS, on its axis): no effect at this level
    assert np.abs(mj.q - internal.q).max() < 1e-9
    assert np.abs(mj.qd - internal.qd).max() < 1e-8
    assert mj.t == internal.t


def test_same_commands_give_bit_identical_states():
    model = load_robot("ddarm")
    cfg = {"engine": "mujoco", "friction": {"viscous": 0.3, "coulomb": 0.5},
           "disturbance": {"amplitude": 1.0, "frequency": 3.0}}
    torques = np.random.default_rng(1).normal(0.0, 20.0, (200, 3))
    runs = []
    for _ in range(2):
        plant = make_plant(model, cfg, 1e-3)
        plant.reset([0.1, 0.5, -0.3])
        states = []
        for tau in torques:
            plant.step(tau, 2e-3)
            states.append(np.concatenate([plant.q, plant.qd]))
        runs.append(np.array(states))
    assert np.array_equal(runs[0], runs[1])
    plant.reset([0.1, 0.5, -0.3])  # a reset starts the same run again (warm start cleared)
    plant.step(torques[0], 2e-3)
    assert np.array_equal(np.concatenate([plant.q, plant.qd]), runs[0][0])


def test_compiled_offline_loop_on_mujoco_equals_the_python_loop_bit_for_bit():
    """The offline loop's compiled route (mj_step called from run_periods, integrator code MUJOCO)
    and the per-period Python loop (MujocoPlant.step) give the same bits, noise and saturation
    included; so does a second plant stepped by hand with the logged torques."""
    doc = {"robot": "puma560", "rate": 500, "physics_dt": 0.001, "duration": 1.0,
           "initial": {"q": [0.0, 0.5, -0.5, 0.0, 0.3, 0.0]},
           "trajectory": {"type": "quintic", "from_initial": True, "durations": [0.15],
                          "waypoints": [[0.5, 0.8, -0.2, 0.4, 0.6, -0.5]]},
           "controller": {"type": "computed_torque", "params": {"kp": 400, "kd": 40}},
           "plant": {"engine": "mujoco", "noise": {"position": 1e-4, "velocity": 1e-3},
                     "inertia_scale": 1.1}}
    sc = load_scenario(doc)
    assert make_plant(sc.robot, sc.plant, sc.physics_dt).compiled
    fast, slow = run(sc), run(load_scenario(doc), compiled=False)
    for name in ("q", "qd", "tau", "q_measured", "qd_measured", "tau_command"):
        assert np.array_equal(getattr(fast, name), getattr(slow, name)), name
    assert np.any(np.abs(fast.tau) >= sc.robot.effort_limit)  # saturated during the fast move
    plant = make_plant(sc.robot, sc.plant, sc.physics_dt)
    plant.reset(sc.q0)
    for k in range(sc.steps):
        plant.step(fast.tau_command[k], 2e-3)
        assert np.array_equal(plant.q, fast.q[k + 1])


def test_saturation_noise_and_nan_as_the_internal_plant():
    model = load_urdf(TWO_LINK)
    cfg = {"noise": {"position": 1e-3, "velocity": 1e-2, "seed": 5}}
    internal, mj = _pair(model, cfg, 1e-3)
    for plant in (internal, mj):
        plant.reset([0.0, 0.0])
        applied = plant.step([80.0, -10.0], 1e-3)
        np.testing.assert_array_equal(applied, [50.0, -10.0])
        np.testing.assert_array_equal(plant.saturated, [True, False])
    internal.reset([0.0, 0.0])
    mj.reset([0.0, 0.0])
    np.testing.assert_array_equal(np.subtract(*internal.measure()), np.subtract(*mj.measure()))
    with pytest.raises(FloatingPointError, match="diverged"):
        mj.step([np.nan, 0.0], 1e-3)


def test_joint_stop_is_the_internal_spring_damper():
    """Pushed into its limit, joint 2 settles where the stop's spring balances the push."""
    model = load_urdf(TWO_LINK)
    internal, mj = _pair(model, {"joint_limits": {"stiffness": 2000.0, "damping": 20.0}}, 1e-3)
    q0 = np.array([np.pi / 2, 0.45])  # link 1 up: gravity does not load joint 2 much
    for plant in (internal, mj):
        plant.reset(q0)
        for _ in range(1500):
            tau = dyn.gravity_torques(model, plant.q) + np.array([0.0, 10.0])
            plant.step(tau, 1e-3)
    over = internal.q[1] - 0.5
    assert over > 3e-3  # pressed 10 N·m / 2000 N·m/rad = 5 mrad into the stop
    assert abs(mj.q[1] - internal.q[1]) < 0.02 * over


def test_payload_and_mismatch_are_in_the_mujoco_model():
    model = load_robot("ddarm")
    cfg = {"engine": "mujoco", "inertia_scale": [1.2, 1.0, 0.9],
           "payload": {"mass": 2.0, "com": [0.1, 0.0, 0.0]}, "actuator_inertia": 0.05}
    plant = make_plant(model, cfg, 1e-3)
    import mujoco

    q = np.array([0.3, -0.2, 0.7])
    plant.mj_data.qpos[:] = q
    mujoco.mj_forward(plant.mj, plant.mj_data)
    M = np.zeros((3, 3))
    mujoco.mj_fullM(plant.mj, plant.mj_data, M)
    expected = dyn.mass_matrix(plant.model, q) + 0.05 * np.eye(3)
    np.testing.assert_allclose(M, expected, rtol=1e-12)
    assert plant.mj.body_mass[1:].sum() == pytest.approx(
        0.9 * model.bodies[2].inertia.mass + 2.0 + model.bodies[1].inertia.mass
        + 1.2 * model.bodies[0].inertia.mass)


def test_compliant_surface_force_is_k_delta_and_pushes_out():
    """At rest 1 mm into the floor, MuJoCo's contact force is the scenario's k δ, along +n."""
    sc = load_scenario("impedance_three_link_planar_surface")
    env = sc.plant["environment"]
    plant = make_plant(sc.robot, {**sc.plant, "engine": "mujoco"}, sc.physics_dt)
    for depth, q in ((1e-3, sc.q0), (2e-3, sc.q0 + [0.05, -0.05, 0.0])):
        p = dyn.frame_placement(sc.robot, q, plant.contact_frame)[:3, 3]
        # place the floor `depth` above the tool by rebuilding with that offset
        cfg = {**sc.plant, "engine": "mujoco",
               "environment": {**env, "offset": float(p[1]) + depth}}
        plant = make_plant(sc.robot, cfg, sc.physics_dt)
        plant.reset(q)
        expected = env["stiffness"] * depth
        # O(SOFT) of the row's force and of the free acceleration's share (the arm's weight)
        weight = sum(b.inertia.mass for b in sc.robot.bodies) * 9.81
        assert abs(plant.wrench[4] - expected) < 2 * SOFT * (expected + weight)
        assert abs(plant.wrench[3]) < 2 * SOFT * weight and plant.in_contact  # friction rows: a₀ only


@pytest.mark.parametrize("engine", ["internal", "mujoco"])
def test_rigid_floor_bears_the_push_without_sinking(engine):
    """Pressed down with 10 N (gravity compensated), the rigid floor pushes back 10 N."""
    sc = load_scenario("impedance_three_link_planar_surface")
    env = {"type": "rigid", "normal": [0, 1, 0], "offset": -0.3}
    plant = make_plant(sc.robot, {"environment": env, "engine": engine}, 1e-3)
    plant.reset(sc.q0)
    for _ in range(500):
        J = dyn.jacobian(sc.robot, plant.q, plant.contact_frame, "world")[3:]
        tau = dyn.gravity_torques(sc.robot, plant.q) + J.T @ [0.0, -10.0, 0.0] - 5.0 * plant.qd
        plant.step(tau, 1e-3)
    depth = -0.3 - dyn.frame_placement(sc.robot, plant.q, plant.contact_frame)[1, 3]
    assert plant.in_contact and plant.wrench[4] == pytest.approx(10.0, rel=1e-3)
    assert abs(depth) < 1e-5


def test_force_scenario_steady_normal_force_within_5_percent():
    sc = load_scenario("hybrid_force_puma560_surface")
    sc.plant["engine"] = "mujoco"
    result = run(sc)
    normal = result.wrench[:, 5]  # the table's push along +z; the reference presses 20 N
    settled = normal[result.t >= 2.5]
    assert np.all(np.abs(settled - 20.0) < 0.05 * 20.0), (settled.min(), settled.max())


def test_bad_engine_settings_are_refused_by_name():
    model = load_robot("ddarm")
    with pytest.raises(ValueError, match="plant.integrator must be one of .* on engine 'mujoco'"):
        make_plant(model, {"engine": "mujoco", "integrator": "huo_2_107"}, 1e-3)
    with pytest.raises(ValueError, match="plant.engine must be one of"):
        make_plant(model, {"engine": "bullet"}, 1e-3)


def test_lockstep_bus_run_on_mujoco_equals_offline_simulation(tmp_path):
    """The plant node with engine:=mujoco in lockstep reproduces simulate to the last bit."""
    from stack_helpers import (
        LOCKSTEP_SCENARIO,
        lockstep_over_the_bus,
        private_domain,
        states_on_the_period_grid,
    )

    scenario = {**LOCKSTEP_SCENARIO, "plant": {**LOCKSTEP_SCENARIO["plant"], "engine": "mujoco"}}
    path = tmp_path / "lockstep_mujoco.yaml"
    path.write_text(yaml.safe_dump(scenario))
    offline = run(str(path))
    steps = offline.summary["steps"]
    bus_path = tmp_path / "lockstep_bus.yaml"  # the same scenario without the key: the parameter
    bus_path.write_text(yaml.safe_dump(LOCKSTEP_SCENARIO))

    received, logs = lockstep_over_the_bus(private_domain(26), str(bus_path), steps,
                                           ("engine:=mujoco",))
    assert len(received) > steps, f"only {len(received)} states; plant log:\n{logs.get('plant')}"
    bus = states_on_the_period_grid(received, steps, scenario["rate"])
    assert np.array_equal(bus, offline.q), np.abs(bus - offline.q).max()
    internal = run(str(bus_path))
    assert not np.array_equal(internal.q, offline.q)  # the engine did change the physics


def test_the_acceleration_the_velocity_guard_predicts_with_agrees_between_engines():
    model = load_robot("puma560")
    internal, mj = _pair(model, {"saturate": False, "joint_limits": False}, 1e-3)
    rng = np.random.default_rng(7)
    for _ in range(5):
        q, qd, tau = rng.uniform(-1, 1, (3, model.nq))
        expected = internal.acceleration(0.0, q, qd, tau)
        np.testing.assert_allclose(mj.acceleration(0.0, q, qd, tau), expected,
                                   rtol=1e-6, atol=1e-6 * np.abs(expected).max())
    assert mj.t == 0.0 and not mj.q.any()  # the plant's own state untouched
