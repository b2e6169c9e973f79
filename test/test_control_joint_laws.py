"""Joint-space laws with an exact model: PD family (C1–C3), computed torque (C4, C6, C7), C8."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import solve_continuous_are
from test_control_sim import Q0, QF, hold, quintic, simulate

from robot_control import dynamics as dyn
from robot_control.control import create
from robot_control.control.gain_design import error_system_matrix, lyapunov_matrix

# critically damped on the DDArm so that 2 s reach the steady state to ~1e-8
FAST_PD = {"kp": [2000.0, 200.0, 100.0], "kd": [330.0, 28.0, 13.0]}


@pytest.fixture(scope="module")
def pd_runs(ddarm):
    runs = {}
    for name in ("pd", "pd_gravity", "pd_fixed_gravity"):
        law = create(name)
        law.configure(ddarm, FAST_PD)
        runs[name] = simulate(ddarm, law, hold(QF), Q0, duration=2.0)
    return runs


def test_pd_with_gravity_settles_at_kp_inverse_g(pd_runs, ddarm):
    """Huo 3-9: at the set-point steady state of C1, K_p e = G(q), i.e. e = K_p⁻¹G(q)."""
    run = pd_runs["pd"]
    q_ss, e_ss = run.q[-1], run.error[-1]
    assert np.abs(run.qd[-1]).max() < 1e-5  # at rest
    kp = np.array(FAST_PD["kp"])
    g = dyn.gravity_torques(ddarm, q_ss)
    assert np.allclose(e_ss, g / kp, atol=1e-6)
    assert abs(e_ss[1]) > 0.05  # Ex 3-1: a visible q₂ error


def test_fixed_gravity_compensation_removes_the_steady_state_error(pd_runs):
    """C3 (Takegaki–Arimoto): τ = G(q_d) + K_d ė + K_p e has its equilibrium at q_d."""
    assert np.abs(pd_runs["pd_fixed_gravity"].error[-1]).max() < 1e-6
    assert np.abs(pd_runs["pd_gravity"].error[-1]).max() < 1e-6


def test_computed_torque_with_the_exact_model_drives_the_error_to_zero(ddarm):
    """C4: ë + K_d ė + K_p e = 0. Printed Ex 3-7 trajectory (starts at 0) from q₀: e(0) ≠ 0."""
    law = create("computed_torque")
    law.configure(ddarm, {"kp": [100.0] * 3, "kd": [20.0] * 3})
    run = simulate(ddarm, law, quintic(np.zeros(3), QF, 1.5), Q0, duration=2.0)
    e0 = np.abs(run.error[0]).max()
    assert e0 == pytest.approx(1.5)
    # ë + 20ė + 100e = 0 with ė(0) = 0: e(t) = e₀(1 + 10t)e^{−10t}, whatever q_d(t) is; the
    # zero-order hold of τ over 1 ms perturbs this by ~1e-4 while the reference moves
    for t in (0.1, 0.3, 0.6):
        predicted = run.error[0] * (1 + 10 * t) * np.exp(-10 * t)
        assert np.allclose(run.error[int(t * 1000)], predicted, rtol=0.01, atol=5e-4)
    assert np.abs(run.error[-1]).max() < 1e-5 * e0  # 0.5 s after the reference stopped


def test_lqr_gains_equal_the_riccati_solution(ddarm):
    """C6: per joint Q = diag(q₁, q₂), R = r on the double integrator of the error."""
    q1, q2, r = np.array([100.0, 400.0, 30.0]), np.array([1.0, 0.0, 12.0]), np.array([1.0, 2.0, 0.3])
    law = create("computed_torque")
    law.configure(ddarm, {"gain_design": "lqr", "lqr_q1": q1, "lqr_q2": q2, "lqr_r": r})
    A = np.array([[0.0, 1.0], [0.0, 0.0]])
    B = np.array([[0.0], [1.0]])
    for i in range(3):
        P = solve_continuous_are(A, B, np.diag([q1[i], q2[i]]), np.array([[r[i]]]))
        K = (B.T @ P / r[i]).ravel()
        assert law.cfg.kp[i] == pytest.approx(K[0], rel=1e-9)
        assert law.cfg.kd[i] == pytest.approx(K[1], rel=1e-9)


def test_pole_placement_puts_the_error_poles_where_asked(ddarm):
    """C7 (Freund): s² + α₁s + α₀ has the requested roots, real or a conjugate pair."""
    re = [-2.0, -5.0, -3.0, -3.0, -10.0, -10.0]
    im = [0.0, 0.0, 4.0, -4.0, 0.0, 0.0]
    law = create("computed_torque")
    law.configure(ddarm, {"gain_design": "pole_placement", "poles_real": re, "poles_imag": im})
    assert np.allclose(law.cfg.kp, [10.0, 25.0, 100.0])
    assert np.allclose(law.cfg.kd, [7.0, 6.0, 20.0])
    eig = np.linalg.eigvals(error_system_matrix(law.cfg.kp, law.cfg.kd))
    wanted = np.array(re) + 1j * np.array(im)
    assert np.allclose(np.sort_complex(eig), np.sort_complex(wanted))


def test_lyapunov_matrix_reproduces_huo_ex_3_6():
    """AᵀP + PA = −0.1 I for Ex 3-1 gains gives Huo's (rounded) P₂ and P₃."""
    P = lyapunov_matrix([400.0, 80.0, 50.0], [100.0, 20.0, 10.0], np.full(6, 0.1))
    assert np.allclose(np.diag(P[:3, 3:]), [1.25e-4, 6.25e-4, 1.0e-3])
    assert np.allclose(np.diag(P[3:, 3:]), [5.0125e-4, 2.53125e-3, 5.1e-3])
    assert np.all(np.linalg.eigvalsh(P) > 0)


def test_passivity_tracks_ex_3_3(ddarm):
    """C8 with Ex 3-3's Λ = diag(4, 4, 5), K_d = diag(100, 20, 10) on the q₀ → q_f quintic."""
    law = create("passivity")
    law.configure(ddarm, {"lambda": [4.0, 4.0, 5.0], "kd": [100.0, 20.0, 10.0]})
    run = simulate(ddarm, law, quintic(Q0, QF, 1.5), Q0, duration=1.6)
    assert np.abs(run.error).max() < 1e-4  # exact model: only the zero-order hold disturbs


def test_pd_gravity_leaves_a_tracking_error_computed_torque_does_not(ddarm):
    """Ex 3-2: C2 on the trajectory has a large e₁ error, C4 none."""
    errors = {}
    for name, gains in (("pd_gravity", {"kp": [400.0, 80.0, 50.0], "kd": [100.0, 20.0, 10.0]}),
                        ("computed_torque", {"kp": [50.0] * 3, "kd": [10.0] * 3})):
        law = create(name)
        law.configure(ddarm, gains)
        run = simulate(ddarm, law, quintic(Q0, QF, 1.5), Q0, duration=1.5)
        errors[name] = np.abs(run.error).max(axis=0)
    assert errors["pd_gravity"][0] > 0.01
    assert errors["computed_torque"].max() < 0.01 * errors["pd_gravity"][0]
