"""The two-arm cell (Huo C15) in the compiled offline loop: the numbers of the per-period Python
loop, to the bit — the bundled scenario and variants (no noise, a set-point force, other weights
and shares, no saturation, an approach that closes the contact with a plastic impact)."""

import copy
from pathlib import Path

import numpy as np
import pytest
import yaml

from robot_control.control.load_sharing import LoadSharing, average_pose
from robot_control.control.registry import create
from robot_control.foundation.spatial import rpy_to_matrix
from robot_control.model.cell import arms_model
from robot_control.sim import cell_kernels as CK
from robot_control.sim.cell_simulate import has_compiled_loop, load_cell_scenario, run_cell
from robot_control.sim.engine import make_cell_plant

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "config" / "scenarios" / "huo_3_13_load_sharing.yaml"
SERIES = ("t", "q", "tau", "pose_error", "contact_force", "desired_force", "arm_forces")


def bundled(duration: float) -> dict:
    d = yaml.safe_load(SCENARIO.read_text())
    return d | {"duration": duration}


def both_routes(d: dict):
    """(Python loop, compiled loop) runs of a scenario document."""
    return (run_cell(load_cell_scenario(copy.deepcopy(d)), compiled=False),
            run_cell(load_cell_scenario(copy.deepcopy(d)), compiled=True))


def assert_same_cell_run(a, b) -> None:
    for key in SERIES:
        assert np.array_equal(getattr(a, key), getattr(b, key)), key
    strip = ("wall_time_s", "realtime_factor")
    assert ({k: v for k, v in a.summary.items() if k not in strip}
            == {k: v for k, v in b.summary.items() if k not in strip})


def test_bundled_cell_scenario_compiled_equals_the_python_loop_bit_for_bit():
    a, b = both_routes(bundled(0.3))
    assert_same_cell_run(a, b)
    assert a.summary["steps"] == 300 and np.all(a.contact_force > 29.0)  # pressing all along


def without_noise(d: dict) -> dict:
    d = copy.deepcopy(d)
    d["plant"].pop("noise")
    return d


def set_point_force(d: dict) -> dict:
    """No force reference: the law's force_setpoint (20 N) is what it presses with."""
    d = copy.deepcopy(d)
    d.pop("force_reference")
    d["controller"]["params"]["force_setpoint"] = 20.0
    return d


def other_split(d: dict) -> dict:
    """Equal force weights, a 70/30 load split, softer gains, no torque saturation."""
    d = copy.deepcopy(d)
    d["controller"]["params"] |= {"force_weights": [1.0, 1.0], "load_shares": [0.7, 0.3],
                                  "kp": [60] * 6, "kd": [15] * 6}
    d["plant"]["saturate"] = False
    d["plant"]["noise"] = {"position": 2e-4, "velocity": 0.0, "seed": 7}
    return d


@pytest.mark.parametrize("variant", [without_noise, set_point_force, other_split])
def test_cell_variants_compiled_equal_the_python_loop_bit_for_bit(variant):
    d = variant(bundled(0.2))
    a, b = both_routes(d)
    assert_same_cell_run(a, b)
    assert a.desired_force[0] == (20.0 if variant is set_point_force else 30.0)


def test_an_approach_closes_the_contact_with_an_impact_on_both_routes_alike():
    """E starts 4 mm above the table; the pressing force pulls the object down until E lands
    (a plastic impact, then constrained motion): both routes, bit for bit."""
    d = without_noise(bundled(0.12))
    d["initial"]["object"] = {"xyz": [0.0, 0.0, 0.254]}
    a, b = both_routes(d)
    assert_same_cell_run(a, b)
    assert a.contact_force[0] == 0.0  # off the table at first
    assert a.contact_force[-1] > 0.0  # then on it, pressing


def test_the_selection_is_explicit_other_engines_and_laws_run_the_python_loop():
    """The compiled loop needs the internal engine's CellPlant and the load-sharing law itself:
    a MuJoCo cell or a law that changes compute() takes the per-period loop."""
    pytest.importorskip("mujoco")
    sc = load_cell_scenario(bundled(0.01))
    law = create(sc.controller_type)
    law.configure(arms_model(sc.cell), sc.controller_params)

    class Changed(LoadSharing):
        def compute(self, t, state, reference):
            return super().compute(t, state, reference)

    changed = Changed()
    changed.configure(arms_model(sc.cell), sc.controller_params)
    internal = make_cell_plant(sc.cell, sc.plant, sc.physics_dt)
    mujoco = make_cell_plant(sc.cell, sc.plant | {"engine": "mujoco"}, sc.physics_dt)
    assert has_compiled_loop(internal, law)
    assert not has_compiled_loop(mujoco, law)
    assert not has_compiled_loop(internal, changed)


def test_compiled_average_pose_is_the_rotation_nearest_the_mean():
    T = np.eye(4)
    T[:3, :3] = rpy_to_matrix([0.3, -0.2, 1.1])
    T[:3, 3] = [0.1, 0.2, 0.3]
    tilt = np.eye(4)
    tilt[:3, :3] = rpy_to_matrix([0.0, 0.0, 0.02])
    Ta, Tb = T @ tilt, T @ np.linalg.inv(tilt)
    np.testing.assert_allclose(average_pose([Ta, Tb]), T, atol=1e-12)
    np.testing.assert_allclose(average_pose([T, T]), T, atol=1e-15)


def test_pressing_forces_kernel_is_the_formula():
    F = np.array([[1.0, -2.0, -25.0], [0.5, 2.0, -12.0]])
    a, g, n, s = np.array([0.1, 0.0, -0.2]), np.array([0, 0, -9.81]), np.array([0, 0, 1.0]), \
        np.array([0.5, 0.5])
    out = np.empty(2)
    CK.pressing_forces(F, 5.0, a, g, n, s, out)
    np.testing.assert_allclose(out, -(F - s[:, None] * 5.0 * (a - g)) @ n, rtol=1e-15)
