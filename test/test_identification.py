"""Identification from recordings (Huo 2.5): excitation, filtering, bags, estimates, the command.

Recordings are offline runs written as the nodes publish them (test/bag_helpers.py): computed
torque tracks an optimised Fourier excitation on a plant whose parameters differ from the
nominal model the controller and the identification start from, with or without the plant's
joint sensor noise. The estimates are compared with the plant's own parameters in the basis.
"""

from __future__ import annotations

import copy
import functools
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from bag_helpers import record_scenario

from robot_control.control import Reference, State, create
from robot_control.dynamics.regressor import parameter_basis
from robot_control.foundation.spatial import parameters_to_inertia
from robot_control.identification import (
    FilterSpec,
    RecordingError,
    centred_torque,
    identification_samples,
    identify,
    read_joint_bag,
)
from robot_control.identification.estimation import (
    log_cholesky_of_pseudo_inertia,
    parameters_of_pseudo_inertia,
    pseudo_inertia,
    pseudo_inertia_of_log_cholesky,
)
from robot_control.identification.recording import JointRecording
from robot_control.identification.signals import central_difference, zero_phase_lowpass
from robot_control.model import load_robot
from robot_control.model.robot_model import check_inertia
from robot_control.sim.plant_config import parse_plant_config, plant_model
from robot_control.sim.scenario import load_scenario
from robot_control.trajectory.excitation import FourierExcitation, optimise_excitation

REPO = Path(__file__).resolve().parents[1]
#: the joint sensors' noise in these runs (1σ): 0.1 mrad and 1 mrad/s
NOISE = {"position": 1e-4, "velocity": 1e-3, "seed": 3}
DDARM_Q0 = [-0.1, 1.5, 1.0]
PUMA_Q0 = [0.0, 0.5, -2.5, 0.0, -0.5, 0.0]
#: the DDArm plant carries a 0.5 kg load the nominal model does not know (in huo_p's span)
DDARM_PLANT = {"payload": {"mass": 0.5, "com": [0.1, 0.0, 0.05]}}
#: the PUMA plant's links are 10 % heavier or lighter than the nominal model
PUMA_PLANT = {"inertia_scale": [1.0, 1.1, 0.9, 1.1, 0.9, 1.1]}


def excitation_doc(robot: str, q0, plant: dict, maxiter: int = 20) -> dict:
    n = len(q0)
    return {"robot": robot, "duration": 20.0, "rate": 1000, "physics_dt": 0.001,
            "initial": {"q": list(q0)},
            "trajectory": {"type": "excitation", "period": 10.0, "harmonics": 5, "cycles": 2,
                           "maxiter": maxiter},
            "controller": {"type": "computed_torque", "params": {"kp": [100.0] * n,
                                                                 "kd": [20.0] * n}},
            "plant": plant}


@functools.cache
def excitation_scenario(robot: str):
    """The scenario with its optimised excitation (optimised once per robot)."""
    if robot == "ddarm":
        return load_scenario(excitation_doc("ddarm", DDARM_Q0, DDARM_PLANT))
    return load_scenario(excitation_doc("puma560", PUMA_Q0, PUMA_PLANT, maxiter=10))


@functools.cache
def recorded(robot: str, noisy: bool, friction: bool, tmp: str) -> Path:
    """A bag of the robot's excitation run (cached per variant)."""
    sc = copy.copy(excitation_scenario(robot))
    sc.plant = dict(sc.plant)
    if noisy:
        sc.plant["noise"] = dict(NOISE)
    if friction:
        sc.plant["friction"] = {"viscous": [0.5, 0.3, 0.2], "coulomb": [0.4, 0.3, 0.2]}
    name = f"{robot}_{'noisy' if noisy else 'clean'}{'_friction' if friction else ''}"
    return record_scenario(sc, Path(tmp) / name)


@pytest.fixture(scope="module")
def bag_dir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("bags"))


def true_parameters(robot: str, basis: str) -> np.ndarray:
    sc = excitation_scenario(robot)
    plant = plant_model(sc.robot, parse_plant_config(sc.plant, sc.robot))
    return parameter_basis(sc.robot, basis).parameters(plant.inertial_parameters())


def estimate_from(bag: Path, robot: str, basis: str, **options):
    model = load_robot(robot)
    rec = read_joint_bag(bag, model.joint_names)
    valid, tau, _ = centred_torque(rec)
    samples = identification_samples(rec.t, rec.q, rec.qd, tau, valid, FilterSpec())
    return identify(model, basis, samples, **options)


def relative_errors(estimate: np.ndarray, truth: np.ndarray) -> np.ndarray:
    return np.abs(estimate - truth) / np.abs(truth)


# --------------------------------------------------------------------------------- excitation
def test_excitation_starts_and_ends_at_rest_inside_the_limits_and_beats_a_random_start():
    model = load_robot("puma560")
    ex = optimise_excitation(model, PUMA_Q0, period=8.0, harmonics=4, maxiter=8, seed=2)
    t = np.linspace(0.0, ex.duration, 2001)
    q, qd, qdd = ex.sample(t)
    np.testing.assert_allclose(q[0], PUMA_Q0, atol=1e-12)
    np.testing.assert_allclose(q[-1], PUMA_Q0, atol=1e-9)
    assert np.abs(qd[[0, -1]]).max() < 1e-9 and np.abs(qdd[[0, -1]]).max() < 1e-9
    assert np.all(q >= model.lower + 0.05 - 1e-3) and np.all(q <= model.upper - 0.05 + 1e-3)
    assert np.all(np.abs(qd) <= 0.5 * model.velocity_limit + 1e-3)
    assert np.all(np.abs(qdd) <= 3.0 + 1e-2)
    # derivatives are consistent with the positions
    np.testing.assert_allclose(central_difference(q, t[1] - t[0])[5:-5], qd[5:-5], atol=1e-3)
    q1, qd1, qdd1 = ex.sample(1.234)
    assert q1.shape == (6,) and np.allclose(q1, ex.sample(np.array([1.234]))[0][0])
    from robot_control.identification.estimation import condition_number, observation_matrix

    basis = parameter_basis(model, "base")
    grid = np.linspace(0.0, ex.period, 200)
    optimised = condition_number(observation_matrix(model, basis.regressor_map,
                                                    *ex.sample(grid), False))
    first = optimise_excitation(model, PUMA_Q0, period=8.0, harmonics=4, maxiter=1, seed=2)
    start = condition_number(observation_matrix(model, basis.regressor_map,
                                                *first.sample(grid), False))
    assert optimised < 0.8 * start


def test_the_compiled_series_sampler_evaluates_the_fourier_series():
    """sampling.series_sample_into (both routes of a run) against the series written in numpy."""
    rng = np.random.default_rng(4)
    a, b, q0 = rng.normal(size=(2, 4)), rng.normal(size=(2, 4)), rng.normal(size=2)
    ex = FourierExcitation(a, b, q0, period=3.0, cycles=1.5, start_time=0.25)
    t = np.linspace(-0.5, 5.5, 601)
    q, qd, qdd = ex.sample(t)
    tau = np.clip(t - 0.25, 0.0, 4.5)[:, None, None]  # held before the start and after the end
    w = 2.0 * np.pi / 3.0 * np.arange(1, 5)
    s, c = np.sin(w * tau), np.cos(w * tau)
    np.testing.assert_allclose(q, q0 + (a / w * s - b / w * c).sum(axis=2), rtol=0, atol=1e-13)
    np.testing.assert_allclose(qd, (a * c + b * s).sum(axis=2), rtol=0, atol=1e-13)
    np.testing.assert_allclose(qdd, (w * (b * c - a * s)).sum(axis=2), rtol=0, atol=1e-12)
    for k in (0, 77, 300, 600):  # one time at a time: the same bits
        assert all(np.array_equal(x, y[k]) for x, y in zip(ex.sample(t[k]), (q, qd, qdd)))
    assert np.array_equal(q[0], q[1]) and np.array_equal(q[-1], ex.sample(4.75)[0])


def test_excitation_is_a_scenario_trajectory_type_and_bad_options_are_refused():
    sc = excitation_scenario("ddarm")
    assert sc.trajectory.dof == 3 and sc.trajectory.duration == pytest.approx(20.0)
    doc = excitation_doc("ddarm", DDARM_Q0, {})
    doc["trajectory"]["harmonic"] = 3
    from robot_control.sim.scenario import ScenarioError

    with pytest.raises(ScenarioError, match="harmonic"):
        load_scenario(doc)


# ---------------------------------------------------------------------------------- signals
def test_zero_phase_filter_keeps_the_passband_without_lag():
    rate = 1000.0
    t = np.arange(0.0, 10.0, 1.0 / rate)
    x = np.sin(2 * np.pi * 0.5 * t)[:, None]
    noise = 0.01 * np.random.default_rng(0).normal(size=x.shape)
    y = zero_phase_lowpass(x + noise, rate, 10.0, 4)
    inner = slice(500, -500)
    assert np.abs(y - x)[inner].max() < 6e-3  # what is left is the filtered noise
    from scipy.signal import butter, lfilter

    causal = lfilter(*butter(4, 10.0 / 500.0), x, axis=0)  # the same filter run once: it lags
    assert np.abs(causal - x)[inner].max() > 0.05
    dy = central_difference(zero_phase_lowpass(x, rate, 10.0, 4), 1.0 / rate)
    np.testing.assert_allclose(dy[inner, 0], (np.pi * np.cos(2 * np.pi * 0.5 * t))[inner],
                               atol=1e-4)
    with pytest.raises(ValueError, match="Nyquist"):
        zero_phase_lowpass(x, rate, 600.0, 4)


def test_held_torques_are_centred_on_the_state_samples():
    t = np.arange(6) * 0.001
    held = np.arange(6, dtype=float)[:, None]  # τ_k held over [t_k, t_k+1)
    effort = np.vstack([[0.0], held[:-1]])  # a state's effort: the torque of the period before
    rec = JointRecording(["j"], t, np.zeros((6, 1)), np.zeros((6, 1)), effort, t.copy(), held)
    for source in ("state", "command"):
        valid, tau, used = centred_torque(rec, source)
        assert used == source
        np.testing.assert_allclose(tau[1:5, 0], [0.5, 1.5, 2.5, 3.5])  # (τ_{k−1} + τ_k)/2
        assert valid[1:5].all() and not valid.all()
    assert centred_torque(rec)[2] == "state"


# ------------------------------------------------------------------------------------- bags
def test_bag_reader_orders_joints_by_name_and_explains_what_is_missing(bag_dir):
    bag = recorded("ddarm", False, False, bag_dir)
    model = load_robot("ddarm")
    rec = read_joint_bag(bag, model.joint_names)
    assert rec.t.size == 20001 and rec.rate == pytest.approx(1000.0)
    assert rec.command.shape == (20001, 3) and rec.effort.shape == (20001, 3)
    swapped = read_joint_bag(bag, model.joint_names[::-1])
    np.testing.assert_array_equal(swapped.q, rec.q[:, ::-1])
    with pytest.raises(RecordingError, match="joint9"):
        read_joint_bag(bag, ["joint1", "joint9"])
    with pytest.raises(RecordingError, match="/states"):
        read_joint_bag(bag, model.joint_names, state_topic="/states")
    with pytest.raises(RecordingError, match="no bag"):
        read_joint_bag(Path(bag_dir) / "missing", model.joint_names)


# -------------------------------------------------------------------------------- estimates
@pytest.mark.parametrize(("noisy", "tolerance"), [(False, 0.01), (True, 0.05)])
def test_ddarm_p1_to_p9_of_a_loaded_plant(bag_dir, noisy, tolerance):
    est = estimate_from(recorded("ddarm", noisy, False, bag_dir), "ddarm", "huo_p")
    truth = true_parameters("ddarm", "huo_p")
    nominal = parameter_basis(load_robot("ddarm"), "huo_p").parameters(
        load_robot("ddarm").inertial_parameters())
    assert est.names == [f"P{k}" for k in range(1, 10)]
    assert relative_errors(nominal, truth).max() > 0.05  # the load is worth identifying
    assert relative_errors(est.values, truth).max() < tolerance
    if noisy:  # the reported standard deviations are honest: errors within a few σ
        assert np.all(np.abs(est.values - truth) < 6.0 * est.std)
    assert 1.0 < est.condition_number < 10.0


@pytest.mark.parametrize(("noisy", "tolerance"), [(False, 0.01), (True, 0.05)])
def test_puma560_base_parameters_of_a_mismatched_plant(bag_dir, noisy, tolerance):
    est = estimate_from(recorded("puma560", noisy, False, bag_dir), "puma560", "base")
    truth = true_parameters("puma560", "base")
    assert est.values.size == truth.size == 36  # Huo 2.5: PUMA 36 base parameters
    nonzero = np.abs(truth) > 1e-9
    assert relative_errors(est.values[nonzero], truth[nonzero]).max() < tolerance
    # parameters that are zero for this arm (products of inertia, offsets of the wrist) come
    # out as zero: to round-off without noise, within 4σ of the reported uncertainty with it
    zero = np.abs(est.values[~nonzero])
    assert np.all(zero < (4.0 * est.std[~nonzero] if noisy else 1e-6))


def test_friction_is_identified_with_the_inertial_parameters(bag_dir):
    est = estimate_from(recorded("ddarm", True, True, bag_dir), "ddarm", "huo_p",
                        friction=True)
    truth = true_parameters("ddarm", "huo_p")
    assert relative_errors(est.inertial, truth).max() < 0.02
    friction = est.friction
    np.testing.assert_allclose(friction[:, 0], [0.5, 0.3, 0.2], rtol=0.1)  # viscous
    np.testing.assert_allclose(friction[:, 1], [0.4, 0.3, 0.2], rtol=0.1)  # Coulomb
    assert relative_errors(friction[1:].ravel(), np.array([0.3, 0.3, 0.2, 0.2])).max() < 0.01


def test_pseudo_inertia_parametrisation_round_trips():
    theta = load_robot("puma560").inertial_parameters()[10:20]
    np.testing.assert_allclose(parameters_of_pseudo_inertia(pseudo_inertia(theta)), theta,
                               atol=1e-12)
    x = log_cholesky_of_pseudo_inertia(pseudo_inertia(theta))
    np.testing.assert_allclose(parameters_of_pseudo_inertia(pseudo_inertia_of_log_cholesky(x)),
                               theta, rtol=1e-6, atol=1e-8)
    rng = np.random.default_rng(0)
    for _ in range(20):  # every x gives a physically consistent body
        m, c, Ic = parameters_to_inertia(parameters_of_pseudo_inertia(
            pseudo_inertia_of_log_cholesky(rng.normal(size=10))))
        from robot_control.model.robot_model import Inertia

        check_inertia("random", Inertia(m, c, Ic))


def test_physically_consistent_estimate(bag_dir):
    est = estimate_from(recorded("ddarm", True, False, bag_dir), "ddarm", "huo_p",
                        physical=True)
    assert est.physical
    truth = true_parameters("ddarm", "huo_p")
    assert relative_errors(est.values, truth).max() < 0.05
    from robot_control.model.robot_model import Inertia

    for k, body in enumerate(np.asarray(est.theta).reshape(-1, 10)):
        check_inertia(f"body {k}", Inertia(*parameters_to_inertia(body)))


# ---------------------------------------------------------------------------------- command
def identify_command(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-m", "robot_control.cli", "identify", *args],
                          capture_output=True, text=True, timeout=300, env=env, cwd=REPO)


def test_identify_command_prints_estimates_and_writes_files_a_controller_loads(bag_dir,
                                                                              tmp_path):
    bag = recorded("ddarm", True, False, bag_dir)
    params, report, urdf = tmp_path / "p.yaml", tmp_path / "r.yaml", tmp_path / "id.urdf"
    proc = identify_command(str(bag), "--robot", "ddarm", "--basis", "huo_p", "--physical",
                            "--params", str(params), "--report", str(report),
                            "--model-out", str(urdf))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "condition number" in out and "Butterworth" in out and "P9" in out
    assert "std" in out
    doc = yaml.safe_load(params.read_text())
    adaptive = doc["/**/controller"]["ros__parameters"]["adaptive"]
    assert adaptive["parameter_basis"] == "huo_p"
    truth = true_parameters("ddarm", "huo_p")
    assert relative_errors(np.array(adaptive["initial_estimate"]), truth).max() < 0.05
    law = create("adaptive")  # the estimate configures the adaptive law
    model = load_robot("ddarm")
    law.configure(model, adaptive)
    q = np.array(DDARM_Q0)
    assert np.all(np.isfinite(law.update(0.0, State(0.0, q, np.zeros(3)), Reference(q))))
    full = yaml.safe_load(report.read_text())
    assert full["condition_number"] > 1.0 and len(full["parameters"]) == 9
    identified = load_robot(str(urdf))  # a loadable, physically consistent corrected model
    from robot_control import dynamics as dyn
    from robot_control.dynamics.regressor import regressor_in_basis

    rng = np.random.default_rng(1)
    for _ in range(5):  # its dynamics are those of the printed estimate
        x = rng.normal(size=(3, 3))
        np.testing.assert_allclose(dyn.inverse_dynamics(identified, *x),
                                   regressor_in_basis(model, "huo_p", *x)
                                   @ adaptive["initial_estimate"], rtol=1e-7, atol=1e-7)


def test_identify_command_refuses_a_bag_without_states(tmp_path):
    proc = identify_command(str(tmp_path / "nothing"), "--robot", "ddarm")
    assert proc.returncode == 2 and "no bag" in proc.stderr


def test_a_recording_with_late_and_lost_samples_is_resampled_from_its_stamps():
    """A live recording's states come late or go missing: the samples are interpolated onto a
    uniform grid from their stamps and filter like the uniform recording's; a gap the filter
    cannot bridge is refused with where it is."""
    rate, n = 500.0, 4000
    t = np.arange(n) / rate
    q = np.column_stack([np.sin(2 * np.pi * 0.5 * t), np.cos(2 * np.pi * 0.3 * t)])
    qd = np.gradient(q, t, axis=0)
    tau = 3.0 * q + 0.5 * qd
    valid = np.ones(n, dtype=bool)
    uniform = identification_samples(t, q, qd, tau, valid, FilterSpec())
    rng = np.random.default_rng(4)
    keep = np.sort(rng.choice(n, size=int(0.9 * n), replace=False))  # 10 % lost
    keep = np.union1d(keep, [0, n - 1])
    jitter = t[keep] + rng.uniform(0.0, 0.2 / rate, keep.size)  # and stamped late
    jitter[[0, -1]] = t[[0, -1]]
    live = identification_samples(jitter, q[keep], qd[keep], tau[keep], valid[keep],
                                  FilterSpec())
    assert abs(live.t.size - uniform.t.size) < 0.02 * uniform.t.size  # the stamps' own period

    def on_uniform_grid(x):
        return np.column_stack([np.interp(uniform.t, live.t, x[:, j]) for j in range(2)])

    inner = (uniform.t > live.t[0]) & (uniform.t < live.t[-1])
    np.testing.assert_allclose(on_uniform_grid(live.q)[inner], uniform.q[inner], atol=5e-3)
    np.testing.assert_allclose(on_uniform_grid(live.tau)[inner], uniform.tau[inner], atol=2e-2)
    gap = np.concatenate([np.arange(1000), np.arange(1100, n)])  # 0.2 s lost in one piece
    with pytest.raises(ValueError, match="gap of 0.202 s"):
        identification_samples(t[gap], q[gap], qd[gap], tau[gap], valid[gap], FilterSpec())


def test_identify_reads_a_namespaced_stack_s_bag_with_its_namespace(bag_dir, tmp_path):
    from test_plot_figures import namespaced_copy

    left = namespaced_copy(recorded("ddarm", False, False, bag_dir), tmp_path / "left", "left")
    found = identify_command(str(left), "--robot", "ddarm", "--namespace", "left",
                             "--params", str(tmp_path / "p.yaml"))
    assert found.returncode == 0 and "condition number" in found.stdout, found.stderr
    missing = identify_command(str(left), "--robot", "ddarm")  # the root namespace's topics
    assert missing.returncode == 2 and "/joint_states" in missing.stderr, missing.stderr
