"""Laws for an inexact model on the DDArm: sliding mode (C11) and Spong's robust law (C12)."""

from __future__ import annotations

import numpy as np
import pytest
from test_control_sim import Q0, QF, quintic, simulate

from robot_control import dynamics as dyn
from robot_control.control import LocalModelTerms, create, estimated_model, saturation
from robot_control.control.robust import Robust
from robot_control.dynamics.regressor import parameter_basis

LAMBDA = [4.0, 4.0, 5.0]


@pytest.fixture(scope="module")
def bounds(ddarm):
    """(p, p̂, a, p̄) in the base basis: p̂ 25 % off, a ≥ |p − p̂|, p̄ ≥ |p| (Ex 3-5's setting)."""
    basis = parameter_basis(ddarm, "base")
    p = basis.parameters(ddarm.inertial_parameters())
    p_hat = p * np.where(np.arange(p.size) % 2 == 0, 1.25, 0.8)
    return p, p_hat, 1.2 * np.abs(p - p_hat) + 1e-3, 1.2 * np.abs(p) + 1e-3


def _sliding(model, bounds, scheme, eps, **extra):
    p, p_hat, a, p_bar = bounds
    law = create("sliding_mode")
    law.configure(model, {"scheme": scheme, "lambda": LAMBDA, "boundary_layer": [eps] * 3,
                          "estimate": p_hat, "uncertainty_bound": a, "parameter_bound": p_bar,
                          **extra})
    s = []
    run = simulate(model, law, quintic(Q0, QF, 1.5), Q0 + [0.05, -0.05, 0.05], duration=1.5,
                   on_step=lambda k, t, q, qd, law: s.append(law.err.r.copy()))
    return law, run, np.abs(np.array(s))


def test_saturation_is_sgn_outside_the_layer_and_linear_inside():
    s = np.array([-2.0, -0.05, 0.0, 0.05, 2.0, 0.3])
    eps = np.array([0.1, 0.1, 0.1, 0.1, 0.1, 0.0])
    assert np.allclose(saturation(s, eps), [-1.0, -0.5, 0.0, 0.5, 1.0, 1.0])


def test_vs1_reaches_its_boundary_layer_and_stays_in_it(ddarm, bounds):
    """VS-1 (3-103) with η: s_i ṡ_i ≤ −η_i|s_i| outside the layer, so |s_i| ≤ ε within |s_i(0)|/η."""
    eps, eta = 0.05, 2.0
    law, run, s = _sliding(ddarm, bounds, "vs1", eps, eta=[eta] * 3)
    assert s[0].max() > 4 * eps  # starts well outside
    inside = np.all(s <= eps, axis=1)
    first = int(np.argmax(inside))
    assert inside[first:].all()
    assert first * 1e-3 < s[0].max() / eta
    assert all(law.diagnostics()["in_boundary_layer"])
    assert np.abs(run.error[-1]).max() < 0.01


def test_boundary_layer_removes_the_chattering_of_sgn(ddarm, bounds):
    """Ex 3-5: with sgn (ε = 0) the torque chatters; a boundary layer makes it smooth."""
    jumps = {}
    for eps in (0.0, 0.05):
        _, run, _ = _sliding(ddarm, bounds, "vs2", eps, kd=[100.0, 20.0, 10.0])
        jumps[eps] = np.abs(np.diff(run.tau[500:], axis=0)).max()
    assert jumps[0.0] > 10 * jumps[0.05]


def test_vs3_thick_boundary_layer_leaves_a_tracking_error(ddarm, bounds):
    """Ex 3-5: VS-3 (model-free, 3-107) with a 0.85 layer shows a q₁ error, a thin one does not."""
    errors = {}
    for eps in (0.05, 0.85):
        _, run, s = _sliding(ddarm, bounds, "vs3", eps)
        errors[eps] = np.abs(run.error[-300:]).max(axis=0)
        assert s[-300:].max() <= eps  # inside the layer either way
    assert errors[0.85][0] > 5 * errors[0.05][0]
    assert errors[0.05].max() < 0.02


class _PrintedSign(Robust):
    """Ex 3-6 as printed: Δv = −ρ[P₂, P₃]x/‖·‖ (B's minus sign dropped)."""

    DELTA_V_SIGN = -1.0


def _robust_run(model, bounds, cls, duration):
    p = bounds[0]
    basis = parameter_basis(model, "base")
    p_hat = p * np.where(np.arange(p.size) % 2 == 0, 1.08, 0.92)  # α must stay well below 1
    hat = estimated_model(model, basis, p_hat)
    ref = quintic(np.zeros(3), QF, 1.5)  # the printed trajectory: e(0) = [0.1, −1.5, −1]
    samples = [ref(t).q for t in np.linspace(0.0, 1.5, 16)] + [Q0]
    alpha = max(np.linalg.norm(np.linalg.solve(dyn.mass_matrix(model, q),
                                               dyn.mass_matrix(hat, q)) - np.eye(3), 2)
                for q in samples)
    h_inv = max(np.linalg.norm(np.linalg.inv(dyn.mass_matrix(model, q)), 2) for q in samples)
    law = cls()
    law.configure(model, {"kp": [400.0, 80.0, 50.0], "kd": [100.0, 20.0, 10.0],
                          "alpha": 1.2 * alpha, "inverse_inertia_bound": 1.2 * h_inv,
                          "qdd_max": 3.3, "uncertainty_bound": 1.2 * np.abs(p - p_hat) + 1e-3,
                          "epsilon": 0.1,
                          "lyapunov_q": 0.1}, terms=LocalModelTerms(hat))
    with np.errstate(all="ignore"):
        return law, simulate(model, law, ref, Q0, duration=duration)


def test_robust_law_converges_with_the_corrected_sign(ddarm, bounds):
    """C12 with Δv = +ρ w/‖w‖, w = P₂ᵀe + P₃ė: uniformly ultimately bounded, small error."""
    law, run = _robust_run(ddarm, bounds, Robust, 2.0)
    assert law.rho > 0.0
    x0 = np.abs(run.error[0]).max()
    assert x0 == pytest.approx(1.5)
    assert np.abs(run.error[-300:]).max() < 0.03 * x0
    assert np.all(np.isfinite(run.tau))


def test_robust_law_with_the_printed_sign_diverges(ddarm, bounds):
    _, run = _robust_run(ddarm, bounds, _PrintedSign, 0.15)
    assert not np.all(np.isfinite(run.q)) or np.abs(run.error).max() > 10.0


# Ex 3-5 / 3-6 in the book's parameter basis P1 … P9 (DDArm group set huo_p)
EX35_P_HAT = np.array([12.0, 0.4, -1.2, 0.7, 2.8, -0.3, -0.01, 0.35, 0.35])
EX35_A = np.array([2.0, 0.2, 0.4, 0.4, 0.5, 0.1, 0.01, 0.1, 0.1])
EX35_P_BAR = np.array([14.0, 0.6, 1.6, 1.1, 3.3, 0.4, 0.02, 0.45, 0.45])


def test_huo_ex_3_5_bounds_hold_for_the_bundled_ddarm(ddarm):
    p = parameter_basis(ddarm, "huo_p").parameters(ddarm.inertial_parameters())
    assert np.all(np.abs(p - EX35_P_HAT) <= EX35_A)
    assert np.all(np.abs(p) <= EX35_P_BAR)


def test_huo_ex_3_5_vs2_with_its_boundary_layer_tracks(ddarm):
    law = create("sliding_mode")
    law.configure(ddarm, {"scheme": "vs2", "lambda": LAMBDA, "parameter_basis": "huo_p",
                          "estimate": EX35_P_HAT, "uncertainty_bound": EX35_A,
                          "boundary_layer": [0.25] * 3})
    run = simulate(ddarm, law, quintic(Q0, QF, 1.5), Q0, duration=2.0)
    assert np.abs(run.error).max() < 0.05
    assert np.abs(np.diff(run.tau[300:], axis=0)).max() < 1.0  # no chattering


def test_huo_ex_3_6_robust_law_with_the_ex_3_5_estimate(ddarm):
    """Ĥ, Ĉ, Ĝ from Ex 3-5's p̂; α = 0.2, ‖H⁻¹‖ ≤ 2.7, q̈_M = 3.3, Q = 0.1I (Ex 3-6).

    With the book's ε = 0.1, ‖w‖ ≪ ε throughout and Δv = ρw/ε adds ~1 % to the PD action: the
    run is computed torque on the wrong model, whose q₂ error (Ĝ's error over K_p) remains. The
    ultimate bound shrinks with ε (Huo 3-125): ε = 10⁻⁴ removes most of that error.
    """
    hat = LocalModelTerms(estimated_model(ddarm, "huo_p", EX35_P_HAT))
    gains = {"kp": [400.0, 80.0, 50.0], "kd": [100.0, 20.0, 10.0]}
    final = {}
    for eps in (0.1, 1e-4):
        law = create("robust")
        law.configure(ddarm, {**gains, "alpha": 0.2, "inverse_inertia_bound": 2.7,
                              "qdd_max": 3.3, "parameter_basis": "huo_p",
                              "uncertainty_bound": EX35_A, "epsilon": eps, "lyapunov_q": 0.1},
                      terms=hat)
        run = simulate(ddarm, law, quintic(Q0, QF, 1.5), Q0, duration=2.0)
        assert np.abs(run.error).max() < 0.05
        final[eps] = np.abs(run.error[-1]).max()
    ct = create("computed_torque")
    ct.configure(ddarm, gains, terms=hat)
    plain = np.abs(simulate(ddarm, ct, quintic(Q0, QF, 1.5), Q0, duration=2.0).error[-1]).max()
    assert final[0.1] <= plain
    assert final[1e-4] < 0.3 * plain
