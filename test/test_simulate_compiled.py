"""The compiled offline loop and batch runs give the numbers of the Python loop, to the bit."""

import copy

import numpy as np
import pytest

from robot_control.control import Reference, State
from robot_control.sim.batch import parameter_grid, simulate_batch, with_overrides
from robot_control.sim.plant import Plant
from robot_control.sim.scenario import load_scenario
from robot_control.sim.simulate import make_controller, run

SERIES = ("t", "q", "qd", "q_ref", "tau", "wrench")

PERTURBED_PLANT = {
    "noise": {"position": 1e-4, "velocity": 1e-3, "seed": 3},
    "disturbance": {"amplitude": 0.3, "frequency": 2.0, "seed": 5},
    "friction": {"viscous": 0.2, "coulomb": 0.1},
    "inertia_scale": 1.1,
}


def doc(law: str, params: dict, plant: dict | None = None, duration: float = 0.4) -> dict:
    return {"robot": "ddarm", "duration": duration, "rate": 1000, "physics_dt": 5e-4,
            "initial": {"q": [-0.1, 1.5, 1.0]},
            "trajectory": {"type": "named", "name": "huo_intended"},
            "controller": {"type": law, "params": params}, "plant": dict(plant or {})}


LAWS = [
    ("pd", {"kp": [100, 100, 100], "kd": [20, 20, 20]}),
    ("pd_gravity", {"kp": [100, 100, 100], "kd": [20, 20, 20]}),
    ("pd_fixed_gravity", {"kp": [100, 100, 100], "kd": [20, 20, 20]}),
    ("computed_torque", {"kp": [50, 50, 50], "kd": [10, 10, 10]}),
    ("passivity", {"lambda": [4, 4, 5], "kd": [100, 20, 10]}),
]
# Huo Ex 3-4 … 3-6 in the P1…P9 basis (config/scenarios/huo_3_*): every scheme, sgn and layers
HUO_P = {"parameter_basis": "huo_p"}
P_HAT = [12, 0.4, -1.2, 0.7, 2.8, -0.3, -0.01, 0.35, 0.35]
BOUND = [2, 0.2, 0.4, 0.4, 0.5, 0.1, 0.01, 0.1, 0.1]
STATEFUL_LAWS = [
    ("adaptive", {"lambda": [4, 4, 5], "kd": [100, 20, 10], **HUO_P,
                  "initial_estimate": [8, 1, -1, 0.5, 5, 0, 0, 1, 1],
                  "adaptation_gain": [10, 0.2, 0.4, 0.4, 4, 0.1, 0.01, 0.2, 1]}),
    ("adaptive_craig", {"kp": [50, 50, 50], "kd": [10, 10, 10], **HUO_P,
                        "adaptation_gain": [0.5] * 9}),
    ("adaptive_craig", {"kp": [50, 50, 50], "kd": [10, 10, 10], **HUO_P, "initial_estimate": P_HAT,
                        "acceleration_cutoff_hz": 0.0}),
    ("sliding_mode", {"scheme": "vs1", "lambda": [4, 4, 5], **HUO_P, "estimate": P_HAT,
                      "uncertainty_bound": BOUND, "boundary_layer": [0.05] * 3}),
    ("sliding_mode", {"scheme": "vs2", "lambda": [4, 4, 5], **HUO_P, "estimate": P_HAT,
                      "uncertainty_bound": BOUND}),
    ("sliding_mode", {"scheme": "vs2", "lambda": [4, 4, 5], **HUO_P, "estimate": P_HAT,
                      "uncertainty_bound": BOUND, "boundary_layer": [0.05] * 3}),
    ("sliding_mode", {"scheme": "vs3", "lambda": [4, 4, 5], **HUO_P, "boundary_layer": [0.5] * 3,
                      "parameter_bound": [14, 0.6, 1.6, 1.1, 3.3, 0.4, 0.02, 0.45, 0.45]}),
    ("robust", {"kp": [400, 80, 50], "kd": [100, 20, 10], "alpha": 0.2,
                "inverse_inertia_bound": 2.7, "qdd_max": 3.3, **HUO_P,
                "uncertainty_bound": BOUND}),
    ("robust", {"kp": [400, 80, 50], "kd": [100, 20, 10], "phi_bound": 5.0}),
]


def assert_same_run(a, b) -> None:
    for key in SERIES:
        assert np.array_equal(getattr(a, key), getattr(b, key)), key
    assert a.diagnostics == b.diagnostics
    strip = ("wall_time_s", "realtime_factor")
    assert ({k: v for k, v in a.summary.items() if k not in strip}
            == {k: v for k, v in b.summary.items() if k not in strip})


@pytest.mark.parametrize("law,params", LAWS + STATEFUL_LAWS)
@pytest.mark.parametrize("plant", [{}, PERTURBED_PLANT, {"actuator_inertia": 0.05,
                                                         "integrator": "huo_2_107"},
                                   {"integrator": "semi_implicit_euler",
                                    "joint_limits": {"stiffness": 5e3}}])
def test_compiled_run_equals_the_python_loop_bit_for_bit(law, params, plant):
    scenario = doc(law, params, plant)
    assert make_controller(load_scenario(copy.deepcopy(scenario))).compiled() is not None
    compiled = run(load_scenario(copy.deepcopy(scenario)))
    stepwise = run(load_scenario(copy.deepcopy(scenario)), compiled=False)
    assert_same_run(compiled, stepwise)


#: identification runs (config/scenarios/identification_ddarm_excitation): an optimised Fourier
#: excitation on a plant with a payload the law does not know and sensor noise
EXCITATION = {"type": "excitation", "period": 2.0, "harmonics": 3, "cycles": 2, "basis": "huo_p",
              "samples": 30, "maxiter": 3}
IDENTIFICATION_PLANT = {"payload": {"mass": 0.5, "com": [0.1, 0.0, 0.05]},
                        "noise": {"position": 1e-4, "velocity": 1e-3, "seed": 3}}


@pytest.mark.parametrize("law,params", [LAWS[3], STATEFUL_LAWS[0]])
@pytest.mark.parametrize("plant", [IDENTIFICATION_PLANT, {"integrator": "huo_2_107"}])
def test_an_excitation_run_compiled_equals_the_python_loop_bit_for_bit(law, params, plant,
                                                                       monkeypatch):
    from robot_control.sim import run_kernels

    scenario = doc(law, params, plant) | {"trajectory": EXCITATION}
    sc = load_scenario(copy.deepcopy(scenario))
    assert type(sc.trajectory).__name__ == "FourierExcitation"
    calls = []  # the compiled loop did run (not the Python fallback)
    compiled_periods = run_kernels.compiled_periods
    monkeypatch.setattr(run_kernels, "compiled_periods",
                        lambda *args: calls.append(args[-1]) or compiled_periods(*args))
    compiled = run(sc)
    assert calls and calls[0] is sc.trajectory.table
    stepwise = run(load_scenario(copy.deepcopy(scenario)), compiled=False)
    assert_same_run(compiled, stepwise)
    assert np.abs(compiled.q_ref - compiled.q_ref[0]).max() > 1e-3  # the series did move
    assert np.array_equal(compiled.q_measured, stepwise.q_measured)
    assert np.array_equal(compiled.tau_command, stepwise.tau_command)


@pytest.mark.parametrize("law,params", LAWS + STATEFUL_LAWS)
def test_compiled_law_update_equals_update(law, params):
    from robot_control.control.compiled import law_update

    sc = load_scenario(doc(law, params))
    python_law, spec_law = make_controller(sc), make_controller(sc)
    spec = spec_law.compiled()
    rng = np.random.default_rng(1)
    tau = np.empty(3)
    for k in range(20):
        q, qd, qr, qdr, qddr = (rng.uniform(-1, 1, 3) for _ in range(5))
        expected = python_law.update(0.001 * k, State(0.001 * k, q, qd), Reference(qr, qdr, qddr))
        assert law_update(spec.kind, spec.arrays, 0.001 * k, q, qd, qr, qdr, qddr, tau)
        assert np.array_equal(tau, expected)
    spec_law.finish_compiled(spec, 0.019, 0.018)
    assert spec_law.diagnostics() == python_law.diagnostics()


def test_a_non_finite_estimate_recovers_alike_in_both_forms():
    """p̂ overflowed (test_reliability_laws): both forms reset it to p̂(0), count it and say when."""
    from robot_control.control.compiled import law_update

    sc = load_scenario(doc(*STATEFUL_LAWS[0]))
    python_law, spec_law = make_controller(sc), make_controller(sc)
    spec = spec_law.compiled()
    q, tau = np.array([-0.1, 1.5, 1.0]), np.empty(3)
    for k in range(5):
        if k == 3:
            python_law.p_hat[2] = spec_law.p_hat[2] = np.inf
        expected = python_law.update(0.001 * k, State(0.001 * k, q, np.zeros(3)),
                                     Reference(q + 0.1))
        assert law_update(spec.kind, spec.arrays, 0.001 * k, q, np.zeros(3), q + 0.1,
                          np.zeros(3), np.zeros(3), tau)
        assert np.array_equal(tau, expected)
    spec_law.finish_compiled(spec, 0.004, 0.003)
    assert python_law.recoveries == spec_law.recoveries == 1
    assert spec_law.last_recovery == python_law.last_recovery
    assert np.array_equal(spec_law.estimate, python_law.estimate)


def test_laws_without_a_compiled_form_run_in_python_with_the_same_results():
    from robot_control.control.computed_torque import ComputedTorque
    from robot_control.control.registry import register, unregister

    class Halved(ComputedTorque):  # a plug-in law: its own compute, no compiled form
        name = "halved_computed_torque"

        def compute(self, t, state, reference):
            return 0.5 * super().compute(t, state, reference)

    register(Halved.name, Halved)
    try:
        sc = doc(Halved.name, LAWS[3][1], PERTURBED_PLANT)
        assert make_controller(load_scenario(copy.deepcopy(sc))).compiled() is None
        assert_same_run(run(load_scenario(copy.deepcopy(sc))),
                        run(load_scenario(copy.deepcopy(sc)), compiled=False))
    finally:
        unregister(Halved.name)


def test_a_subclass_that_changes_compute_is_not_compiled():
    from robot_control.control.computed_torque import ComputedTorque

    class Doubled(ComputedTorque):
        def compute(self, t, state, reference):
            return 2.0 * super().compute(t, state, reference)

    sc = load_scenario(doc(*LAWS[3]))
    law = Doubled()
    law.configure(sc.controller_model, sc.controller_params)
    assert law.compiled() is None


def test_compiled_plant_step_keeps_the_plants_public_state():
    sc = load_scenario(doc("pd", {}, PERTURBED_PLANT))
    plant = Plant(sc.robot, sc.plant, 1e-3)
    plant.reset(sc.q0)
    q_before = plant.q
    applied = plant.step(np.array([1e3, -1e3, 0.5]), 2e-3)
    assert plant.compiled and plant.t == pytest.approx(2e-3)
    assert q_before is not plant.q and np.array_equal(q_before, sc.q0)  # fresh arrays, as before
    assert np.array_equal(applied, np.clip([1e3, -1e3, 0.5], -plant._effort, plant._effort))
    assert plant.saturated.tolist() == [True, True, False]
    with pytest.raises(ValueError):
        plant.step(np.zeros(2), 1e-3)


def test_batch_runs_equal_one_by_one_runs():
    base = doc("computed_torque", {"kp": [50, 50, 50], "kd": [10, 10, 10]}, PERTURBED_PLANT, 0.3)
    grid = parameter_grid({"controller.params.kd": [[10, 10, 10], [20, 20, 20]],
                           "plant.noise.seed": [3, 4]})
    sliding = doc("sliding_mode", {"scheme": "vs2", "lambda": [5, 5, 5],
                                   "boundary_layer": [0.05] * 3}, None, 0.2)
    batch = simulate_batch([base, sliding], grid, workers=2)
    assert len(batch) == 2 * len(grid)
    singles = [run(load_scenario(with_overrides(d, ov))) for d in (base, sliding) for ov in grid]
    for a, b in zip(batch, singles, strict=True):
        assert_same_run(a, b)
    assert not np.array_equal(batch[0].tau, batch[1].tau)  # the sweep did change the runs


def test_a_failing_batch_run_reports_which_one():
    from robot_control.sim.scenario import ScenarioError

    bad = doc("sliding_mode", {"scheme": "vs3"}, None, 0.1)  # vs3 needs parameter bounds
    with pytest.raises(ScenarioError, match="parameter_bound"):
        simulate_batch([bad, bad], workers=2)


class _Terminal:
    """A stand-in stderr that says it is a terminal and keeps what is written."""

    def __init__(self, tty: bool) -> None:
        self.tty, self.text = tty, ""

    def isatty(self) -> bool:
        return self.tty

    def write(self, s: str) -> int:
        self.text += s
        return len(s)

    def flush(self) -> None:
        pass


@pytest.mark.parametrize("tty", [True, False])
def test_progress_bar_only_on_a_terminal(monkeypatch, tty):
    import sys

    from robot_control.sim import progress

    err = _Terminal(tty)
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(progress, "DELAY_S", 0.0)  # show at once instead of after 2 s
    run(load_scenario(doc(*LAWS[3], duration=0.2)), progress=True)
    assert ("/0.20 s" in err.text) == tty  # tqdm drew the bar of a 0.2 s run
    quiet = _Terminal(True)
    monkeypatch.setattr(sys, "stderr", quiet)
    run(load_scenario(doc(*LAWS[3], duration=0.2)), progress=False)
    assert quiet.text == ""
