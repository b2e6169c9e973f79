"""The C15 cell on MuJoCo (sim/mujoco_cell.py): two PUMA 560s welded to a bar on a table.

The reference is the internal engine's closed chain (Kim's constrained dynamics, exact grasps and
contact): MuJoCo's soft welds and contact must give the same force split (C15's shares within 5 %,
in fact to 1e-5), the same forces at a state, Newton's law for the object from MuJoCo's own
forces, a landing without rebound, bit-identical repeated runs, and the same run on the bus.
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
from robot_control.model.cell import load_cell
from robot_control.sim.cell_simulate import load_cell_scenario, run_cell
from robot_control.sim.engine import make_cell_plant

pytest.importorskip("mujoco")

REPO = Path(__file__).resolve().parents[1]
SCENARIO = REPO / "config" / "scenarios" / "huo_3_13_load_sharing.yaml"
ARMS = ("arm1", "arm2")


def scenario_doc(engine: str, **changes) -> dict:
    doc = yaml.safe_load(SCENARIO.read_text())
    doc["plant"]["engine"] = engine
    doc.update(changes)
    return doc


@functools.cache
def bundled(engine: str):
    return run_cell(load_cell_scenario(scenario_doc(engine)))


def test_c15_force_shares_on_mujoco_within_5_percent_of_the_internal_engine():
    """The bundled scenario (noisy sensors, 3 s): each arm's share of the pressing force, on
    average and at every period, as on the internal engine (and as W prescribes: 20 N / 10 N)."""
    mj, ref = bundled("mujoco"), bundled("internal")
    for arm in ARMS:
        got = mj.summary["force_shares"][arm]
        want = ref.summary["force_shares"][arm]
        assert got["measured_fraction_mean"] == pytest.approx(want["measured_fraction_mean"],
                                                              rel=0.05)
        assert got["measured_fraction_mean"] == pytest.approx(want["prescribed_fraction"],
                                                              rel=0.05)
    assert np.all(np.abs(mj.arm_forces - ref.arm_forces) <= 0.05 * np.abs(ref.arm_forces))
    assert np.all(np.abs(mj.arm_forces - [20.0, 10.0]) <= 0.05 * np.array([20.0, 10.0]))
    assert np.all(np.abs(mj.contact_force - 30.0) <= 0.05 * 30.0)
    assert mj.summary["object_pose_error"]["position_m"]["max"] < 1e-4
    assert mj.summary["object_pose_error"]["orientation_rad"]["max"] < 2e-4
    # the same command sequence drives another physics: the runs are not copies
    assert not np.array_equal(mj.q, ref.q)


def test_forces_obey_newtons_law_for_the_object():
    """Σp_i = λ_E: the grasp forces (from the welds' rows), the table's push (mj_contactForce)
    and the object's acceleration (MuJoCo's q̈) balance on the bar of mass Mᴼ."""
    result = bundled("mujoco")
    np.testing.assert_allclose(result.arm_forces.sum(axis=1), result.contact_force, atol=1e-3)


def test_grasp_wrenches_and_table_force_under_a_static_load_equal_the_internal_engines():
    """Each arm carries half the bar and presses it on the table with 15 N: a static load, whose
    constraint forces are unique. After 50 ms of it, the forces MuJoCo's soft rows carry equal
    Kim's exact λ: the welds' rows read as world wrenches at the grasp points, as the internal
    engine's (n, f). (Right after a change of load they differ by the rows' softness, up to
    1.7 N·m of 45 here: the steady violation takes a few physics steps to build.)"""
    from robot_control.model.cell import augmented_arm_model

    cell = load_cell("two_puma560")
    sc = load_cell_scenario(scenario_doc("internal"))
    plants = [make_cell_plant(cell, {**sc.plant, "engine": e, "noise": {}}, 1e-3)
              for e in ("internal", "mujoco")]
    for plant in plants:
        plant.reset(sc.arm_guess, sc.object_pose)
    q = plants[0].q
    tau = np.concatenate([
        dyn.gravity_torques(augmented_arm_model(cell, i, 0.5), q[s])
        + dyn.jacobian(plants[0].model, q, f"{arm}_ee")[3:, s].T @ [0.0, 0.0, -15.0]
        for i, (arm, s) in enumerate(zip(ARMS, cell.joint_slices()))])
    for plant in plants:
        for _ in range(50):
            plant.evaluate(tau)
            plant.step(tau, 1e-3)
        plant.evaluate(tau)
    internal, mj = plants
    assert np.abs(internal.qd).max() < 1e-9  # the load is static: nothing moves
    w_ref, w = internal.grasp_wrenches(), mj.grasp_wrenches()
    assert np.abs(w_ref[:, 3:]).max() > 9.0 and np.abs(w_ref[:, :3]).max() > 1.0
    np.testing.assert_allclose(w, w_ref, rtol=0, atol=1e-4 * np.abs(w_ref).max())
    assert internal.contact_force() == pytest.approx(30.0, rel=1e-6)
    # the object's five massless coordinate links weigh MIN_MASS = 1e-6 kg each in MuJoCo: 5e-5 N
    assert mj.contact_force() == pytest.approx(internal.contact_force(), abs=1e-4)


def test_the_bar_lands_without_rebound_and_lifts_off_when_pulled():
    """E 1 cm above the table: pushed down it lands and stays down (the internal engine's plastic
    impact: the soft contact is overdamped), then presses 30 N; asked to pull, it lifts off."""
    doc = scenario_doc("mujoco", duration=1.0)
    doc["plant"].pop("noise")
    doc["initial"]["object"]["xyz"] = [0.0, 0.0, 0.26]
    doc["trajectory"] = {"type": "cartesian", "positions": [[0.0, 0.0, 0.15]],
                         "durations": [0.5]}
    result = run_cell(load_cell_scenario(doc))
    lam = result.contact_force
    landed = int(np.argmax(lam > 0.0))
    assert 50 < landed < 500 and np.all(lam[:landed] == 0.0)
    assert np.all(lam[landed:] > 0.0)  # no rebound
    assert abs(lam[-1] - 30.0) < 1e-3 and abs(result.pose_error[-1, 2]) < 1e-5
    doc = scenario_doc("mujoco", duration=0.3, force_reference=[0.0, 0.0, 10.0])
    result = run_cell(load_cell_scenario(doc))
    assert np.all(result.contact_force[5:] == 0.0)
    assert result.pose_error[-1, 2] < -1e-3
    assert not result.contact_force.any()  # it never touched: no force share to measure
    shares = result.summary["force_shares"]
    assert all(v["measured_fraction_mean"] is None for v in shares.values()), shares  # not inf


def test_same_commands_give_bit_identical_runs():
    runs = [run_cell(load_cell_scenario(scenario_doc("mujoco", duration=0.2))) for _ in range(2)]
    for name in ("q", "tau", "contact_force", "arm_forces", "pose_error"):
        assert np.array_equal(getattr(runs[0], name), getattr(runs[1], name)), name


def test_bad_cell_settings_are_refused_by_name():
    cell = load_cell("two_puma560")
    table = {"type": "rigid", "normal": [0, 0, 1], "offset": 0.15}
    with pytest.raises(ValueError, match="plant.engine must be one of"):
        make_cell_plant(cell, {"engine": "bullet", "environment": table}, 1e-3)
    with pytest.raises(ValueError, match="friction"):
        make_cell_plant(cell, {"engine": "mujoco", "environment": {**table, "friction": 0.5}},
                        1e-3)
    with pytest.raises(ValueError, match="rigid plane"):
        make_cell_plant(cell, {"engine": "mujoco", "environment": {
            "type": "compliant", "stiffness": 1e4, "damping": 10.0}}, 1e-3)
    from robot_control.sim.cell import CellPlant

    with pytest.raises(ValueError, match="CellPlant is engine 'internal'"):
        CellPlant(cell, {"engine": "mujoco", "environment": table})
    doc = scenario_doc("mujoco", duration=0.1)
    doc["initial"]["object"]["xyz"] = [0.0, 0.0, 0.2]  # E 5 cm inside the table
    with pytest.raises(ValueError, match="inside the plane"):
        run_cell(load_cell_scenario(doc))


def test_simulate_command_runs_the_cell_on_mujoco(tmp_path):
    doc = scenario_doc("internal", duration=0.1)
    path = tmp_path / "cell.yaml"
    path.write_text(yaml.safe_dump(doc))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    proc = subprocess.run([sys.executable, "-m", "robot_control.cli", "simulate", str(path),
                           "--engine", "mujoco", "--quiet"], capture_output=True, text=True,
                          timeout=300, env=env, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    offline = run_cell(load_cell_scenario(scenario_doc("mujoco", duration=0.1))).summary
    assert summary["normal_force"] == offline["normal_force"]  # the CLI ran MuJoCo
    assert summary["normal_force"] != run_cell(load_cell_scenario(doc)).summary["normal_force"]


@pytest.mark.slow
def test_lockstep_cell_stack_on_mujoco_equals_the_offline_run(tmp_path, monkeypatch):
    """``cell.launch.yaml engine:=mujoco lockstep:=true``: the cell plant node on MuJoCo gives the
    offline MuJoCo run to the bit (commands, contact force, pressing forces, errors)."""
    from cell_helpers import check_equals_offline
    from test_cell_stack import lockstep_cell_samples
    from test_launch_runner import stack_env

    doc = scenario_doc("internal", duration=0.3)
    path = tmp_path / "cell_short.yaml"
    path.write_text(yaml.safe_dump(doc))
    sc = load_cell_scenario(copy.deepcopy(doc))
    sc.plant["engine"] = "mujoco"
    offline = run_cell(sc)
    env = stack_env("cell-mujoco")
    for key in ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE"):
        monkeypatch.setenv(key, env[key])
    period = 1_000_000_000 // int(sc.rate)
    samples = lockstep_cell_samples(env, [k * period for k in range(offline.summary["steps"] + 1)],
                                    180.0, f"scenario:={path}", "engine:=mujoco")
    check_equals_offline(samples, sc, offline)
