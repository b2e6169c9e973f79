"""Adaptive laws on the DDArm: Slotine–Li (C10) and Craig–Hsu–Sastry (C9)."""

from __future__ import annotations

import numpy as np
import pytest
from test_control_sim import Q0, QF, quintic, simulate

from robot_control import dynamics as dyn
from robot_control.control import LocalModelTerms, create, estimated_model
from robot_control.control.acceleration import AccelerationEstimator
from robot_control.dynamics.regressor import parameter_basis
from robot_control.model import load_robot

LAMBDA = np.array([4.0, 4.0, 5.0])  # Ex 3-3 / 3-4
KD = np.array([100.0, 20.0, 10.0])


@pytest.fixture(scope="module")
def truth(ddarm):
    basis = parameter_basis(ddarm, "base")
    return basis, basis.parameters(ddarm.inertial_parameters())


def _wrong(p):
    """A wrong initial estimate: every parameter 30 % off, alternately up and down."""
    return p * np.where(np.arange(p.size) % 2 == 0, 1.3, 0.7)


def _lyapunov_run(model, basis, p, duration: float, rate: float):
    """Slotine–Li from a wrong p̂(0); returns the run and V = ½(rᵀHr + p̃ᵀΓp̃) at every sample."""
    gamma_inv = np.full(basis.size, 10.0)
    law = create("adaptive")
    law.configure(model, {"lambda": LAMBDA, "kd": KD, "parameter_basis": "base",
                          "adaptation_gain": gamma_inv, "initial_estimate": _wrong(p)})
    assert law.estimate_names == list(basis.names)
    reference = quintic(Q0, QF, 1.5)
    estimates = []
    run = simulate(model, law, reference, Q0, duration=duration, rate=rate,
                   on_step=lambda k, t, q, qd, law: estimates.append(law.estimate))
    V = np.empty(len(run.t))
    for k, (t, q, qd, p_hat) in enumerate(zip(run.t, run.q, run.qd, estimates)):
        ref = reference(t)
        r = (ref.qd - qd) + LAMBDA * (ref.q - q)
        p_err = p - p_hat
        V[k] = 0.5 * r @ dyn.mass_matrix(model, q) @ r + 0.5 * p_err @ (p_err / gamma_inv)
    return run, V


def test_slotine_li_tracks_and_its_lyapunov_function_never_increases(ddarm, truth):
    """V = ½(rᵀHr + p̃ᵀΓp̃) has V̇ = −rᵀK_d r ≤ 0 (Huo 3-81 proof); sampled, up to integration error."""
    basis, p = truth
    run, V = _lyapunov_run(ddarm, basis, p, 2.0, 1000.0)
    assert V[-1] < 0.9 * V[0]
    increases = np.diff(V).clip(min=0.0)
    # the only rises: the first milliseconds, where r ≈ 0 makes V̇ ≈ 0 and the Euler/hold error shows
    assert np.all(increases[10:] == 0.0)
    assert increases.sum() < 1e-3 * V[0]
    _, V_fine = _lyapunov_run(ddarm, basis, p, 0.02, 2000.0)
    assert np.diff(V_fine).clip(min=0.0).sum() < 0.5 * increases.sum()  # shrinks with the step
    assert np.abs(run.error[-500:]).max() < 5e-3

    fixed = create("passivity")  # the same law without adaptation, on the wrong parameters
    fixed.configure(ddarm, {"lambda": LAMBDA, "kd": KD},
                    terms=LocalModelTerms(estimated_model(ddarm, basis, _wrong(p))))
    frozen = simulate(ddarm, fixed, quintic(Q0, QF, 1.5), Q0, duration=2.0)
    assert np.abs(frozen.error[-500:]).max() > 3 * np.abs(run.error[-500:]).max()


def test_zero_adaptation_gain_freezes_a_parameter_and_estimates_are_exposed(ddarm, truth):
    basis, p = truth
    gains = np.full(basis.size, 5.0)
    gains[0] = 0.0  # Huo's split Y = [Y₁, Y₂]: the first parameter counts as known
    law = create("adaptive")
    law.configure(ddarm, {"lambda": LAMBDA, "kd": KD, "adaptation_gain": gains,
                          "initial_estimate": _wrong(p)})
    simulate(ddarm, law, quintic(Q0, QF, 1.5), Q0, duration=0.5)
    p_hat = law.estimate
    assert p_hat[0] == _wrong(p)[0]
    assert np.abs(p_hat[1:] - _wrong(p)[1:]).max() > 1e-3  # the others moved
    diag = law.diagnostics()["estimate"]
    assert list(diag) == list(basis.names) and diag[basis.names[1]] == p_hat[1]
    law.reset()  # a reset restarts from p̂(0)
    assert np.array_equal(law.estimate, _wrong(p))


def test_changing_the_basis_while_running_restarts_the_estimate(ddarm):
    law = create("adaptive")
    law.configure(ddarm)
    assert law.estimate.size == parameter_basis(ddarm, "base").size
    law.set_parameters({"parameter_basis": "standard"})
    assert law.estimate.size == 30
    assert np.allclose(law.estimate, ddarm.inertial_parameters())


@pytest.mark.parametrize("measured", [True, False])
def test_adaptive_computed_torque_reduces_the_error_of_a_wrong_model(ddarm, truth, measured):
    """C9 needs q̈: measured (State.qdd) or the filtered finite difference of q̇."""
    basis, p = truth
    late = {}
    for gain in (0.0, 50.0):
        law = create("adaptive_craig")
        law.configure(ddarm, {"kp": [50.0] * 3, "kd": [10.0] * 3, "initial_estimate": _wrong(p),
                              "adaptation_gain": np.full(basis.size, gain)})
        run = simulate(ddarm, law, quintic(Q0, QF, 1.5), Q0, duration=2.0, measure_qdd=measured)
        late[gain] = np.abs(run.error[1500:]).max()
    assert late[50.0] < late[0.0] / 3.0
    assert not law.diagnostics()["estimate_held_singular_H"]


def test_acceleration_estimate_follows_a_sinusoid_with_the_filter_lag():
    dt, fc, w = 1e-3, 50.0, 2.0 * np.pi * 2.0
    est = AccelerationEstimator(1, fc)
    est.reset(np.array([w]))
    for k in range(1, 2001):
        t = k * dt
        out = est.update(np.array([w * np.cos(w * t)]), dt)
    true = -w * w * np.sin(w * t)
    lag = 1.0 / (2 * np.pi * fc) + dt / 2  # first-order filter plus the half-sample of differencing
    assert out[0] == pytest.approx(-w * w * np.sin(w * (t - lag)), rel=0.02)
    assert abs(out[0] - true) > 1e-3  # a lag, not the exact value
    measured = est.update(np.zeros(1), dt, measured=np.array([7.0]))
    assert measured[0] == 7.0


def test_huo_ex_3_4_slotine_li_in_the_p1_to_p9_basis(ddarm):
    """Ex 3-4: p̂(0) and Γ⁻¹ of the book in the group set huo_p; compare C4 and C8 using p̂(0)."""
    basis = parameter_basis(ddarm, "huo_p")
    assert basis.names == tuple(f"P{i}" for i in range(1, 10))
    p = basis.parameters(ddarm.inertial_parameters())
    assert np.allclose(p, [13.0315, 0.4147, -1.3526, 0.8632, 3.0813, -0.2735, -0.0166, 0.39,
                           0.3108])
    p0 = np.array([8.0, 1.0, -1.0, 0.5, 5.0, 0.0, 0.0, 1.0, 1.0])
    gamma_inv = np.array([10.0, 0.2, 0.4, 0.4, 4.0, 0.1, 0.01, 0.2, 1.0])
    law = create("adaptive")
    law.configure(ddarm, {"lambda": LAMBDA, "kd": KD, "parameter_basis": "huo_p",
                          "adaptation_gain": gamma_inv, "initial_estimate": p0})
    run = simulate(ddarm, law, quintic(Q0, QF, 1.5), Q0, duration=2.0)
    adaptive = np.abs(run.error).max(axis=0)
    assert adaptive.max() < 0.06
    assert list(law.diagnostics()["estimate"]) == list(basis.names)
    hat = LocalModelTerms(estimated_model(ddarm, basis, p0))
    for name, gains in (("computed_torque", {"kp": [50.0] * 3, "kd": [10.0] * 3}),
                        ("passivity", {"lambda": LAMBDA, "kd": KD})):
        other = create(name)
        other.configure(ddarm, gains, terms=hat)
        fixed = simulate(ddarm, other, quintic(Q0, QF, 1.5), Q0, duration=2.0)
        assert np.abs(fixed.error[-1]).max() > 2 * np.abs(run.error[-1]).max()


@pytest.mark.parametrize("robot", ["ddarm", "puma560"])
def test_estimated_model_packs_b_p_as_the_models_inertia(robot):
    """adaptive_kernels.estimated_model: θ = B p written into a copy of the packed model. With the
    standard basis and the model's own θ it reproduces the packed inertia (both forms, so every
    kernel agrees); with a wrong estimate Newton–Euler and M on it equal Y_p p and basis.mass_matrix."""
    from robot_control.control.adaptive_kernels import estimated_model
    from robot_control.control.basis import BasisRegressor
    from robot_control.dynamics import kernels as K
    from robot_control.dynamics.packing import Data

    model = load_robot(robot)
    D = Data(model).D
    standard = BasisRegressor(model, "standard")
    Dh = np.zeros_like(D)
    estimated_model(D, np.ascontiguousarray(standard.regressor_map), model.inertial_parameters(), Dh)
    inertial = np.r_[K.INERTIA : K.INERTIA + 36, K.MASS, K.FIRST_MOMENT : K.FIRST_MOMENT + 3,
                     K.ROT_INERTIA : K.ROT_INERTIA + 9]
    assert np.allclose(Dh[:, inertial], D[:, inertial], rtol=0, atol=1e-12)
    assert np.array_equal(Dh[0, K.GRAVITY : K.GRAVITY + 3], D[0, K.GRAVITY : K.GRAVITY + 3])
    basis = BasisRegressor(model, "base")
    p = _wrong(basis.parameters_of(model))
    Dh = D.copy()
    estimated_model(D, np.ascontiguousarray(basis.regressor_map), p, Dh)
    rng = np.random.default_rng(5)
    n = model.nq
    tau, M = np.empty(n), np.empty((n, n))
    for _ in range(3):
        q, qd, qdd = rng.uniform(-2, 2, (3, n))
        K.inverse_dynamics_kernel(Dh, q, qd, qdd, None, tau)
        expected = basis.regressor(q, qd, qdd) @ p
        assert np.allclose(tau, expected, rtol=1e-12, atol=1e-12 * np.abs(expected).max())
        K.mass_matrix_kernel(Dh, q, M)
        assert np.allclose(M, basis.mass_matrix(q, p), rtol=1e-12, atol=1e-12)
