"""Huo §3.13 (C15): the cell model identities, the force split, the law and the bundled scenario.

The oracle for the decomposed model is the cell as one closed chain integrated by Kim's
constrained dynamics (robot_control.sim.cell): the arms and the object as a free body, welded at
the grasps, a rigid plane under E. Huo's per-arm augmented models must reproduce its energies
(3-148, 3-154), its task-space dynamics in object coordinates (3-155, 3-156) and its contact force.
"""

from __future__ import annotations

import copy
import functools
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from robot_control import dynamics as dyn
from robot_control.control import ConfigurationError, ParameterError, Reference, State, create
from robot_control.control.load_sharing import average_pose, force_split
from robot_control.foundation.spatial import rotation_exp, transform
from robot_control.model.cell import (
    OBJECT_JOINTS,
    arms_model,
    augmented_arm_model,
    closed_chain_model,
    load_cell,
)
from robot_control.sim.cell import CellPlant, grasp_constraints
from robot_control.sim.cell_simulate import load_cell_scenario, run_cell

REPO = Path(__file__).resolve().parents[1]
SCENARIO = REPO / "config" / "scenarios" / "huo_3_13_load_sharing.yaml"
Q_GRASP = np.array([0.0, 0.1261, -3.0543, 0.0, -0.2134, 0.0])
TABLE = {"type": "rigid", "normal": [0, 0, 1], "offset": 0.15}


@pytest.fixture(scope="module")
def cell():
    return load_cell("two_puma560")


def consistent_state(cell, seed: int, shift=(0.0, 0.0, 0.0), on_table: bool = False):
    """(q, q̇) of the closed chain: grasps closed, q̇ in the null space of the loop rows."""
    rng = np.random.default_rng(seed)
    plant = CellPlant(cell, {"environment": TABLE})
    pose = transform(rotation_exp(np.zeros(3) if on_table else rng.normal(0, 0.1, 3)),
                     np.array([0.0, 0.0, 0.25]) + np.asarray(shift))
    q = plant.assemble(np.tile(Q_GRASP, 2), pose)
    rows = plant._touching if on_table else plant._free
    A = dyn.constraint_terms(plant.model, q, np.zeros(plant.n), rows)[0]
    _, s, Vt = np.linalg.svd(A)
    null = Vt[int((s > 1e-9 * s[0]).sum()):]
    qd = null.T @ rng.normal(0.0, 0.5, null.shape[0])
    return plant, q, qd, rng


def task_terms(model, q, qd):
    """(H̲, N̲, J, J̇q̇) of frame E (rows v, ω) for one augmented arm: Huo's H̲ⁱ, N̲ⁱ (3-156)."""
    rows = [3, 4, 5, 0, 1, 2]
    J = dyn.jacobian(model, q, "contact")[rows]
    Jd_qd = dyn.jacobian_dot_qd(model, q, qd, "contact")[rows]
    Jinv = np.linalg.inv(J)
    H = Jinv.T @ dyn.mass_matrix(model, q) @ Jinv
    N = Jinv.T @ dyn.bias_torques(model, q, qd) - H @ Jd_qd
    return H, N, J, Jd_qd


def cell_task_model(cell, q, qd, shares):
    """Σ over the arms of H̲ⁱ, N̲ⁱ, and the maps τⁱ ↦ uⁱ = J_i⁻ᵀτⁱ."""
    H, N, maps = np.zeros((6, 6)), np.zeros(6), []
    for i, s in enumerate(cell.joint_slices()):
        Hi, Ni, J, _ = task_terms(augmented_arm_model(cell, i, shares[i]), q[s], qd[s])
        H, N = H + Hi, N + Ni
        maps.append(np.linalg.inv(J).T)
    return H, N, maps


# ------------------------------------------------------------------------ model identities
@pytest.mark.parametrize("shares", [(0.5, 0.5), (0.2, 0.8)])
def test_kinetic_and_potential_energy_split_over_the_augmented_arms(cell, shares):
    plant, q, qd, _ = consistent_state(cell, seed=1)
    T = dyn.kinetic_energy(plant.model, q, qd)
    V = dyn.potential_energy(plant.model, q)
    T_sum = V_sum = 0.0
    for i, s in enumerate(cell.joint_slices()):
        model = augmented_arm_model(cell, i, shares[i])
        T_sum += dyn.kinetic_energy(model, q[s], qd[s])
        V_sum += dyn.potential_energy(model, q[s])
    assert T > 1e-2  # a real motion, not a state at rest
    np.testing.assert_allclose(T_sum, T, rtol=1e-12)  # T = Σ T̃ⁱ (3-148)
    np.testing.assert_allclose(V_sum, V, rtol=1e-12)  # V = Σ Ṽⁱ (3-154)


@pytest.mark.parametrize("seed", [2, 3])
def test_object_space_model_is_the_sum_of_the_arms_models(cell, seed):
    """H̲Ẍ + N̲ = u (3-155) with H̲ = ΣH̲ⁱ, N̲ = ΣN̲ⁱ (3-156) predicts the closed chain's Ẍ."""
    plant, q, qd, rng = consistent_state(cell, seed)
    shares = (0.3, 0.7)  # any split of the object gives the same sum
    H, N, maps = cell_task_model(cell, q, qd, shares)
    tau = rng.normal(0.0, 5.0, cell.nq)
    u = sum(Jt @ tau[s] for Jt, s in zip(maps, cell.joint_slices()))
    xdd_model = np.linalg.solve(H, u - N)
    tau_full = np.concatenate([tau, np.zeros(6)])
    qdd, _ = dyn.constrained_forward_dynamics(plant.model, q, qd, tau_full, plant._free)
    rows = [3, 4, 5, 0, 1, 2]
    xdd_chain = (dyn.jacobian(plant.model, q, "contact")[rows] @ qdd
                 + dyn.jacobian_dot_qd(plant.model, q, qd, "contact")[rows])
    np.testing.assert_allclose(xdd_model, xdd_chain, rtol=1e-8, atol=1e-8)
    assert np.abs(xdd_chain).max() > 0.1
    H_other, N_other, _ = cell_task_model(cell, q, qd, (0.5, 0.5))
    np.testing.assert_allclose(H_other, H, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(N_other, N, rtol=1e-12, atol=1e-12)


def test_compliant_frame_terms_add_up_and_give_the_contact_force(cell):
    """H_c = ΣH_cⁱ, N_c = ΣN_cⁱ (3-157); f_c = Aᵀ(AH_c⁻¹Aᵀ)⁻¹AH_c⁻¹(u_c − N_c) is the plane's push."""
    plant, q, qd, rng = consistent_state(cell, seed=4, on_table=True)
    plant.q, plant.qd, plant.in_contact = q, qd, True
    shares = (0.5, 0.5)
    H, N, maps = cell_task_model(cell, q, qd, shares)
    n = np.array(TABLE["normal"], float)
    t1 = np.cross(n, [1.0, 0.0, 0.0])
    t1 /= np.linalg.norm(t1)
    E_lin = np.vstack([t1, np.cross(n, t1), n])  # compliant frame: tangents, then the normal
    E = np.zeros((6, 6))
    E[:3, :3] = E_lin
    E[3:, 3:] = np.eye(3)
    E = E[[0, 1, 3, 4, 5, 2]]  # E_p (5 rows: tangents and rotations) then E_f (the normal)
    parts = [task_terms(augmented_arm_model(cell, i, shares[i]), q[s], qd[s])
             for i, s in enumerate(cell.joint_slices())]
    Hc_sum = sum(E @ Hi @ E.T for Hi, *_ in parts)
    Nc_sum = sum(E @ Ni for _, Ni, *_ in parts)
    np.testing.assert_allclose(E @ H @ E.T, Hc_sum, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(E @ N, Nc_sum, rtol=1e-12, atol=1e-12)
    tau = rng.normal(0.0, 5.0, cell.nq) - 20.0 * np.concatenate([m[:, 2] for m in
                                                                 map(np.linalg.inv, maps)])
    u_c = E @ sum(Jt @ tau[s] for Jt, s in zip(maps, cell.joint_slices()))
    A = np.zeros((1, 6))
    A[0, 5] = 1.0
    Hc_inv = np.linalg.inv(Hc_sum)
    f_c = A.T @ np.linalg.solve(A @ Hc_inv @ A.T, A @ Hc_inv @ (u_c - Nc_sum))
    plant.acceleration(q, qd, tau)
    lam = plant.contact_force()
    assert lam > 1.0
    np.testing.assert_allclose(f_c[5], -lam, rtol=1e-7)  # f_c: the object on the plane


def test_closed_chain_model_layout(cell):
    model = closed_chain_model(cell)
    assert model.joint_names[-6:] == list(OBJECT_JOINTS)
    assert model.joint_names[:12] == arms_model(cell).joint_names
    assert arms_model(cell).joint_names[0] == "arm1_joint1"
    assert sum(c.m for c in grasp_constraints(cell, model)) == 12
    mass = sum(b.inertia.mass for b in model.bodies)
    assert mass == pytest.approx(2 * sum(b.inertia.mass for b in cell.arms[0].model.bodies) + 5.0)


# ------------------------------------------------------------------------------ force split
def test_force_split_is_the_minimiser_of_3_161():
    rng = np.random.default_rng(5)
    k, m = 3, 3
    Ws = []
    for _ in range(m):
        X = rng.normal(size=(k, k))
        Ws.append(X @ X.T + k * np.eye(k))
    f_d = rng.normal(size=k)
    F = force_split(Ws, f_d)
    np.testing.assert_allclose(sum(F), f_d, atol=1e-12)  # 3-159
    W = np.zeros((m * k, m * k))
    for i, Wi in enumerate(Ws):
        W[i * k:(i + 1) * k, i * k:(i + 1) * k] = Wi
    U = np.hstack([np.eye(k)] * m)
    W_inv = np.linalg.inv(W)
    stacked = W_inv @ U.T @ np.linalg.solve(U @ W_inv @ U.T, f_d)  # 3-161 as printed
    np.testing.assert_allclose(np.concatenate(F), stacked, atol=1e-12)
    Fv = np.concatenate(F)
    cost = Fv @ W @ Fv
    for _ in range(20):  # any other split of f_d costs more
        d = rng.normal(size=(m, k))
        d -= d.mean(axis=0)
        Fo = Fv + 0.1 * d.ravel()
        assert Fo @ W @ Fo > cost


def test_scalar_weights_split_inversely_and_bad_weights_are_refused():
    f = force_split([[[1.0]], [[2.0]]], 30.0)
    np.testing.assert_allclose([f[0][0], f[1][0]], [20.0, 10.0])
    with pytest.raises(ValueError, match="positive definite"):
        force_split([[[1.0]], [[0.0]]], 30.0)
    with pytest.raises(ValueError, match="W_2"):
        force_split([np.eye(2), np.ones((2, 2))], [1.0, 2.0])


def test_average_pose_of_the_arms_estimates():
    T = transform(rotation_exp([0.3, -0.2, 0.5]), [0.1, 0.2, 0.3])
    np.testing.assert_allclose(average_pose([T, T, T]), T, atol=1e-12)
    d = np.array([0.0, 0.0, 0.02])
    Ta = transform(T[:3, :3] @ rotation_exp(d), [0.1, 0.2, 0.31])
    Tb = transform(T[:3, :3] @ rotation_exp(-d), [0.1, 0.2, 0.29])
    np.testing.assert_allclose(average_pose([Ta, Tb]), T, atol=1e-12)


# --------------------------------------------------------------------------------- the law
def test_law_refuses_a_model_or_parameters_that_do_not_fit_the_cell(cell):
    law = create("load_sharing")
    with pytest.raises(ParameterError, match="cell"):
        law.configure(arms_model(cell), {})
    with pytest.raises(ConfigurationError, match="joints"):
        law.configure(cell.arms[0].model, {"cell": "two_puma560"})
    with pytest.raises(ParameterError, match="force_weights"):
        law.configure(arms_model(cell), {"cell": "two_puma560", "force_weights": [1, 2, 3]})
    with pytest.raises(ParameterError, match="sum to 1"):
        law.configure(arms_model(cell), {"cell": "two_puma560", "load_shares": [0.5, 0.6]})
    law.configure(arms_model(cell), {"cell": "two_puma560", "force_weights": [1, 3]})
    np.testing.assert_allclose(law.diagnostics()["force_fractions"], [0.75, 0.25])


def test_law_reuses_the_cell_its_model_was_built_from(cell, tmp_path):
    """Configured on arms_model(cell) of the file it names, the law keeps that Cell (no second
    read); another file, or a model not built from that file, is read anew — same torques."""
    from robot_control.control.load_sharing import cell_of
    from robot_control.model.cell import resolve_cell_path

    model = arms_model(cell)
    assert cell.source == str(resolve_cell_path("two_puma560").resolve())
    assert cell_of(model, "two_puma560") is cell
    copy_file = tmp_path / "my_cell.yaml"
    copy_file.write_text(resolve_cell_path("two_puma560").read_text())
    other = cell_of(model, str(copy_file))
    assert other is not cell and other.source == str(copy_file.resolve())
    assert cell_of(cell.arms[0].model, "two_puma560") is not cell
    q = np.random.default_rng(2).uniform(-0.5, 0.5, cell.nq)
    torques = []
    for name in ("two_puma560", str(copy_file)):
        law = create("load_sharing")
        law.configure(model, {"cell": name})
        pose = dyn.frame_placement(augmented_arm_model(cell, 0, 0.5), q[:6], "contact")
        ref = Reference(q, pose=pose, twist=np.zeros(6), accel=np.zeros(6),
                        wrench=np.array([0, 0, 0, 0, 0, -30.0]))
        torques.append(law.update(0.0, State(0.0, q, np.zeros(cell.nq)), ref))
    np.testing.assert_array_equal(torques[0], torques[1])


def test_law_torque_is_c13_on_each_augmented_arm(cell):
    """u_cⁱ of arm i is C13's hybrid torque for its augmented model and its force share."""
    law = create("load_sharing")
    law.configure(arms_model(cell), {"cell": "two_puma560", "force_weights": [1, 2],
                                     "kp": [100] * 6, "kd": [20] * 6})
    plant, q, qd, _ = consistent_state(cell, seed=6, on_table=True)
    q, qd = q[:12], qd[:12]
    T_E = dyn.frame_placement(augmented_arm_model(cell, 0, 0.5), q[:6], "contact")
    ref = Reference(q, pose=T_E, wrench=np.array([0, 0, 0, 0, 0, -30.0]))
    tau = law.update(0.0, State(0.0, q, qd), ref)
    for i, s in enumerate(cell.joint_slices()):
        single = create("hybrid_force")
        single.configure(augmented_arm_model(cell, i, 0.5),
                         {"frame": "contact", "task": "pose", "kp": [100] * 6, "kd": [20] * 6,
                          "force_setpoint": 30.0 * (2 / 3 if i == 0 else 1 / 3),
                          "bumpless_time_constant": 0.0})
        T_i = dyn.frame_placement(single.model, q[s], "contact")
        # the averaged pose equals each arm's own when the grasps are closed exactly
        np.testing.assert_allclose(T_i, T_E, atol=1e-9)
        tau_i = single.update(0.0, State(0.0, q[s], qd[s]),
                              Reference(q[s], pose=T_E, twist=np.zeros(6), accel=np.zeros(6)))
        np.testing.assert_allclose(tau[s], tau_i, rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------------- the closed loop
def scenario_doc() -> dict:
    return yaml.safe_load(SCENARIO.read_text())


@functools.cache
def bundled_run():
    return run_cell(load_cell_scenario(str(SCENARIO)))


def test_bundled_scenario_tracks_presses_and_shares_as_w_prescribes():
    text = SCENARIO.read_text()
    assert text.startswith("# ") and "This run:" in text
    doc = scenario_doc()
    assert doc["cell"] == "two_puma560" and doc["controller"]["type"] == "load_sharing"
    assert doc["plant"]["noise"]["position"] > 0.0  # the sensors are noisy
    s = bundled_run().summary
    assert s["steps"] == 3000
    assert s["object_pose_error"]["position_m"]["max"] < 1e-4
    assert s["object_pose_error"]["orientation_rad"]["max"] < 2e-4
    f = s["normal_force"]
    assert f["desired_final"] == 30.0
    assert f["error"]["max"] < 0.05 and f["min_actual"] > 29.9  # never lifts off
    shares = s["force_shares"]
    assert shares["arm1"]["prescribed_fraction"] == pytest.approx(2 / 3)
    assert shares["arm2"]["prescribed_fraction"] == pytest.approx(1 / 3)
    for arm in ("arm1", "arm2"):
        assert abs(shares[arm]["measured_fraction_mean"]
                   - shares[arm]["prescribed_fraction"]) < 1e-3
        assert shares[arm]["max_deviation"] < 0.05  # N
    result = bundled_run()
    np.testing.assert_allclose(result.arm_forces.sum(axis=1), result.contact_force, atol=1e-6)
    travelled = np.ptp(result.pose_error[:, 0])  # errors stay small while E travels 10 cm
    assert travelled < 1e-4


def test_exact_model_without_noise_reproduces_force_and_shares_to_round_off():
    doc = scenario_doc()
    doc["plant"].pop("noise", None)
    doc["duration"] = 1.0
    s = run_cell(load_cell_scenario(doc)).summary
    assert s["normal_force"]["error"]["max"] < 1e-6
    for share in s["force_shares"].values():
        assert share["max_deviation"] < 1e-6


def test_an_unknown_object_mass_shows_as_a_force_error_open_loop():
    """Huo's law is open loop in force: 1 kg of object it does not know is ≈ 9.81 N missing."""
    doc = copy.deepcopy(scenario_doc())
    doc["plant"].pop("noise", None)
    doc["duration"] = 0.5
    cell = yaml.safe_load((REPO / "config" / "cells" / "two_puma560.yaml").read_text())
    cell["object"]["mass"] = 6.0
    sc = load_cell_scenario(doc)
    sc.cell = load_cell(cell)  # the plant's cell: heavier object; the law keeps the 5 kg one
    s = run_cell(sc).summary
    assert s["normal_force"]["error"]["final"] == pytest.approx(-9.81, abs=0.2)


def test_simulate_command_runs_a_cell_scenario(tmp_path):
    doc = scenario_doc()
    doc["duration"] = 0.1
    path = tmp_path / "cell.yaml"
    path.write_text(yaml.safe_dump(doc))
    out = tmp_path / "out.json"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    png = tmp_path / "cell.png"
    proc = subprocess.run([sys.executable, "-m", "robot_control.cli", "simulate", str(path),
                           "--out", str(out), "--plot", str(png)], capture_output=True,
                          text=True, timeout=300, env=env, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert png.stat().st_size > 10_000
    summary = json.loads(proc.stdout)
    assert summary["steps"] == 100 and set(summary["force_shares"]) == {"arm1", "arm2"}
    assert len(json.loads(out.read_text())["series"]["contact_force"]) == 101
    doc["trajectory"] = {"type": "quintic"}
    path.write_text(yaml.safe_dump(doc))
    proc = subprocess.run([sys.executable, "-m", "robot_control.cli", "simulate", str(path)],
                          capture_output=True, text=True, timeout=300, env=env, cwd=REPO)
    assert proc.returncode == 2 and "cartesian" in proc.stderr


def test_contact_closes_on_arrival_and_opens_when_the_law_pulls():
    """E starts 1 cm above the table: pushed down, it lands (plastic impact) and then presses
    f_nᵈ; asked to pull (f_nᵈ < 0), the table lets go and E leaves it."""
    doc = scenario_doc()
    doc["plant"].pop("noise", None)
    doc["initial"]["object"]["xyz"] = [0.0, 0.0, 0.26]
    doc["duration"] = 1.0
    doc["trajectory"] = {"type": "cartesian", "positions": [[0.0, 0.0, 0.15]],
                         "durations": [0.5]}
    result = run_cell(load_cell_scenario(doc))
    lam = result.contact_force
    landed = int(np.argmax(lam > 0.0))
    assert 50 < landed < 500 and np.all(lam[:landed] == 0.0)  # in flight, then on the table
    assert abs(result.pose_error[landed - 1, 2]) > 5e-3  # it was still above the table
    assert abs(lam[-1] - 30.0) < 1e-3 and abs(result.pose_error[-1, 2]) < 1e-5
    doc = scenario_doc()
    doc["plant"].pop("noise", None)
    doc["duration"] = 0.3
    doc["force_reference"] = [0.0, 0.0, 10.0]  # pull the object off the table
    result = run_cell(load_cell_scenario(doc))
    assert np.all(result.contact_force[5:] == 0.0)
    assert result.pose_error[-1, 2] < -1e-3  # E above where the reference keeps it


def test_cell_scenario_errors_name_the_key():
    from robot_control.sim.scenario import ScenarioError

    doc = scenario_doc()
    doc["initial"]["arms"].pop("arm2")
    with pytest.raises(ScenarioError, match="initial.arms"):
        load_cell_scenario(doc)
    doc = scenario_doc()
    doc["gravity"] = [0, 0, -1]
    with pytest.raises(ScenarioError, match="gravity"):
        load_cell_scenario(doc)
    doc = scenario_doc()
    doc["cell"] = "no_such_cell"
    with pytest.raises(ScenarioError, match="no_such_cell"):
        load_cell_scenario(doc)
    doc = scenario_doc()
    doc["plant"]["environment"]["type"] = "compliant"
    with pytest.raises(ScenarioError, match="rigid"):
        run_cell(load_cell_scenario(doc))
    doc = scenario_doc()
    doc["initial"]["object"]["xyz"] = [0.0, 0.0, 0.2]  # E 5 cm inside the table
    with pytest.raises(ScenarioError, match="inside the plane"):
        run_cell(load_cell_scenario(doc))
