"""Identities every rigid-body dynamics implementation must satisfy, on random states.

Robots: UR5 and Panda (example-robot-data URDFs), a random branching tree with general
screws, and every bundled robot that loads. The identities tie the algorithms to each other
and to the energy, so they need no reference implementation:

    ABA(q, q̇, RNEA(q, q̇, q̈)) = q̈           ABA and the Cholesky solve agree
    M = Mᵀ ≻ 0                              Ṁ − 2C skew (Ṁ by central differences)
    RNEA = M q̈ + C q̇ + g                    C q̇ + g = RNEA(q, q̇, 0)
    RNEA(q, 0, 0) = g = ∂U/∂q               RNEA(…, F) − RNEA(…) = −Jᵀ F (world-aligned J)
    ½ q̇ᵀ M q̇ = T(q, q̇)
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from model_samples import EXAMPLE_URDFS, random_screw_tree, sample_robot

from robot_control import dynamics as dyn
from robot_control.model import RobotModel, bundled_robots

# slow (scripts/test.sh --slow): the identities on every arm (a tenth of the default, measured)
pytestmark = pytest.mark.slow

ROBOTS = list(EXAMPLE_URDFS) + ["random_screw_tree"] + bundled_robots()
_MODELS: dict[str, RobotModel] = {}


@pytest.fixture(params=ROBOTS)
def model(request) -> RobotModel:
    if request.param not in _MODELS:
        _MODELS[request.param] = sample_robot(request.param)
    return _MODELS[request.param]


MAX_JOINTS = 12


def vectors(bound: float):
    return hnp.arrays(np.float64, MAX_JOINTS, elements=st.floats(
        -bound, bound, allow_nan=False, allow_subnormal=False))


Q, QD, QDD = vectors(np.pi), vectors(3.0), vectors(10.0)
SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def _cut(model: RobotModel, *vectors: np.ndarray) -> list[np.ndarray]:
    if model.nq > MAX_JOINTS:
        pytest.skip(f"strategies are sized for up to {MAX_JOINTS} joints")
    return [v[: model.nq].copy() for v in vectors]


def assert_small(err: np.ndarray, tol: float, what: str) -> None:
    worst = float(np.abs(err).max())
    assert worst <= tol, f"{what}: max error {worst:.3e} > {tol:.1e}"


def _scale(*xs) -> float:
    return max(1.0, *(float(np.abs(x).max()) for x in xs))


# ------------------------------------------------------------- dynamics round trips
@SETTINGS
@given(q=Q, qd=QD, qdd=QDD)
def test_aba_inverts_rnea(model, q, qd, qdd):
    q, qd, qdd = _cut(model, q, qd, qdd)
    tau = dyn.inverse_dynamics(model, q, qd, qdd)
    # the error of a solve grows with the conditioning of M
    tol = 1e-12 * np.linalg.cond(dyn.mass_matrix(model, q)) * _scale(qdd)
    assert_small(dyn.forward_dynamics(model, q, qd, tau) - qdd, tol, "ABA(RNEA(q̈)) − q̈")
    assert_small(dyn.forward_dynamics_cholesky(model, q, qd, tau) - qdd, tol,
                 "Cholesky(RNEA(q̈)) − q̈")


@SETTINGS
@given(q=Q, qd=QD, tau=vectors(50.0), f=vectors(20.0))
def test_forward_dynamics_methods_agree(model, q, qd, tau, f):
    q, qd, tau = _cut(model, q, qd, tau)
    F = np.zeros((model.nq, 6))
    F[-1] = f[:6]
    for f_ext in (None, F):
        a = dyn.forward_dynamics(model, q, qd, tau, f_ext)
        b = dyn.forward_dynamics_cholesky(model, q, qd, tau, f_ext)
        tol = 1e-12 * np.linalg.cond(dyn.mass_matrix(model, q)) * _scale(a)
        assert_small(a - b, tol, "ABA − Cholesky")


# ----------------------------------------------------------------- joint-space terms
@SETTINGS
@given(q=Q)
def test_mass_matrix_symmetric_positive_definite(model, q):
    (q,) = _cut(model, q)
    M = dyn.mass_matrix(model, q)
    assert np.all(np.isfinite(M))
    assert_small(M - M.T, 1e-12 * _scale(M), "M − Mᵀ")
    assert np.linalg.eigvalsh(M)[0] > 0.0, "M is not positive definite"


@SETTINGS
@given(q=Q, qd=QD)
def test_mdot_minus_2c_is_skew(model, q, qd):
    q, qd = _cut(model, q, qd)
    h = 1e-6
    Mdot = (dyn.mass_matrix(model, q + h * qd) - dyn.mass_matrix(model, q - h * qd)) / (2 * h)
    N = Mdot - 2.0 * dyn.coriolis_matrix(model, q, qd)
    # central differences: O(h²) truncation, O(ε/h) rounding
    assert_small(N + N.T, 1e-6 * _scale(Mdot), "(Ṁ − 2C) + (Ṁ − 2C)ᵀ")


@SETTINGS
@given(q=Q, qd=QD, qdd=QDD)
def test_equation_of_motion_terms(model, q, qd, qdd):
    q, qd, qdd = _cut(model, q, qd, qdd)
    M = dyn.mass_matrix(model, q)
    Cqd = dyn.coriolis_matrix(model, q, qd) @ qd
    g = dyn.gravity_torques(model, q)
    tau = dyn.inverse_dynamics(model, q, qd, qdd)
    tol = 1e-12 * _scale(tau, M) * _scale(qd, qdd) ** 2
    assert_small(Cqd + g - dyn.inverse_dynamics(model, q, qd, np.zeros(model.nq)), tol,
                 "C q̇ + g − RNEA(q, q̇, 0)")
    assert_small(Cqd + g - dyn.bias_torques(model, q, qd), tol, "C q̇ + g − bias_torques")
    assert_small(M @ qdd + Cqd + g - tau, tol, "M q̈ + C q̇ + g − RNEA")


# ------------------------------------------------------------------------- energy
@SETTINGS
@given(q=Q)
def test_gravity_is_the_gradient_of_potential_energy(model, q):
    (q,) = _cut(model, q)
    g = dyn.inverse_dynamics(model, q, np.zeros(model.nq), np.zeros(model.nq))
    assert_small(g - dyn.gravity_torques(model, q), 1e-12 * _scale(g), "RNEA(q,0,0) − g(q)")
    h = 1e-6
    grad = np.array([(dyn.potential_energy(model, q + h * e) - dyn.potential_energy(model, q - h * e))
                     / (2 * h) for e in np.eye(model.nq)])
    assert_small(g - grad, 1e-6 * _scale(g), "RNEA(q,0,0) − ∂U/∂q")


@SETTINGS
@given(q=Q, qd=QD)
def test_kinetic_energy_is_the_mass_matrix_quadratic_form(model, q, qd):
    q, qd = _cut(model, q, qd)
    T = dyn.kinetic_energy(model, q, qd)
    quad = 0.5 * qd @ dyn.mass_matrix(model, q) @ qd
    assert T >= 0.0
    assert_small(np.array(T - quad), 1e-12 * _scale(quad), "T − ½ q̇ᵀ M q̇")


# ---------------------------------------------------------------- external wrenches
@SETTINGS
@given(q=Q, qd=QD, qdd=QDD, f=vectors(20.0), body=st.integers(0, 100))
def test_external_wrench_acts_through_the_jacobian_transpose(model, q, qd, qdd, f, body):
    q, qd, qdd = _cut(model, q, qd, qdd)
    b = body % model.nq
    F_body = f[:6]
    F = np.zeros((model.nq, 6))
    F[b] = F_body
    # world-aligned J maps q̇ to (ω, v of the body origin) in base axes; the same wrench in
    # base axes about the body origin is (R n, R f), so its joint torque is Jᵀ (R n, R f)
    R = dyn.forward_kinematics(model, q)[b, :3, :3]
    F_world = np.concatenate([R @ F_body[:3], R @ F_body[3:]])
    J = dyn.jacobian(model, q, model.body_names[b], "world")
    effect = dyn.inverse_dynamics(model, q, qd, qdd, F) - dyn.inverse_dynamics(model, q, qd, qdd)
    tol = 1e-12 * _scale(dyn.inverse_dynamics(model, q, qd, qdd), J.T @ F_world)
    assert_small(effect + J.T @ F_world, tol, "RNEA effect of F + Jᵀ F")
    # the same wrench in forward dynamics is the torque Jᵀ F
    tau = dyn.inverse_dynamics(model, q, qd, qdd)
    a = dyn.forward_dynamics(model, q, qd, tau, F)
    b_ = dyn.forward_dynamics(model, q, qd, tau + J.T @ F_world)
    tol = 1e-12 * np.linalg.cond(dyn.mass_matrix(model, q)) * _scale(a)
    assert_small(a - b_, tol, "ABA(τ, F) − ABA(τ + Jᵀ F)")


# --------------------------------------------------------------------- bad inputs
CALLS = {
    "inverse_dynamics": lambda m, q, v: dyn.inverse_dynamics(m, q, v, v),
    "bias_torques": lambda m, q, v: dyn.bias_torques(m, q, v),
    "mass_matrix": lambda m, q, v: dyn.mass_matrix(m, q),
    "coriolis_matrix": lambda m, q, v: dyn.coriolis_matrix(m, q, v),
    "gravity_torques": lambda m, q, v: dyn.gravity_torques(m, q),
    "forward_dynamics": lambda m, q, v: dyn.forward_dynamics(m, q, v, v),
    "forward_dynamics_cholesky": lambda m, q, v: dyn.forward_dynamics_cholesky(m, q, v, v),
    "forward_kinematics": lambda m, q, v: dyn.forward_kinematics(m, q),
    "jacobian": lambda m, q, v: dyn.jacobian(m, q),
    "jacobian_dot_qd": lambda m, q, v: dyn.jacobian_dot_qd(m, q, v),
    "kinetic_energy": lambda m, q, v: dyn.kinetic_energy(m, q, v),
    "potential_energy": lambda m, q, v: dyn.potential_energy(m, q),
}


@pytest.mark.parametrize("call", list(CALLS))
@pytest.mark.parametrize("length", [-1, +1])
def test_wrong_length_q_raises_value_error(call, length):
    model = random_screw_tree()
    good = np.zeros(model.nq)
    bad = np.zeros(model.nq + length)
    with pytest.raises(ValueError, match="length"):
        CALLS[call](model, bad, good)


@pytest.mark.parametrize("call", ["inverse_dynamics", "coriolis_matrix", "forward_dynamics",
                                  "kinetic_energy", "jacobian_dot_qd"])
def test_wrong_length_velocity_raises_value_error(call):
    model = random_screw_tree()
    with pytest.raises(ValueError, match="length"):
        CALLS[call](model, np.zeros(model.nq), np.zeros(model.nq - 1))


@pytest.mark.parametrize("shape", [(7,), (6, 6), (7, 3), (8, 6)])
def test_wrong_shape_f_ext_raises_value_error(shape):
    model = random_screw_tree()
    z = np.zeros(model.nq)
    with pytest.raises(ValueError, match="f_ext"):
        dyn.inverse_dynamics(model, z, z, z, np.zeros(shape))
    with pytest.raises(ValueError, match="f_ext"):
        dyn.forward_dynamics(model, z, z, z, np.zeros(shape))


def test_matrix_q_is_not_taken_for_a_vector():
    model = random_screw_tree()
    with pytest.raises(ValueError):
        dyn.mass_matrix(model, np.zeros((1, model.nq)))
