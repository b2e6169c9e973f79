"""Constrained forward dynamics through the mass matrix factored along the tree
(dynamics.constrained_mass, the cell plant's dynamics) against the dense KKT solve and Kim's
unit-pass version on every case of test_constrained (point and surface contacts, the five-bar,
a weld, a loop across branches) and on the two-arm cell (18 joints, 12 and 13 rows, three root
branches); its plastic impact against ``impact_velocity``; the LᵀDL factor against M."""

from __future__ import annotations

import numpy as np
import pytest
from test_constrained import CASES, kkt
from test_hybrid import dense_mass_matrix

from robot_control import dynamics as dyn
from robot_control.dynamics import constrained_mass as CM
from robot_control.dynamics.contact import as_constraint_set, body_motion, constraint_rows
from robot_control.dynamics.packing import Data
from robot_control.sim.cell_simulate import load_cell_scenario
from robot_control.sim.engine import make_cell_plant


def cell_cases():
    """The bundled two-arm cell at its grasp (q̇ random): grasps alone, grasps + surface."""
    sc = load_cell_scenario("huo_3_13_load_sharing")
    plant = make_cell_plant(sc.cell, sc.plant, sc.physics_dt)
    plant.reset(sc.arm_guess, sc.object_pose)
    return [("cell grasps", plant.model, plant._free, plant.q),
            ("cell touching", plant.model, plant._touching, plant.q)]


ALL = CASES + cell_cases()


@pytest.fixture(params=ALL, ids=[c[0] for c in ALL])
def case(request):
    return request.param[1:]


def test_factor_is_the_mass_matrix(case):
    """Lᵀ D L rebuilt from the factor equals M (zero where no ancestor relation: no fill-in)."""
    model, _, q = case
    d = Data(model)
    n = model.nq
    W = np.zeros(CM.work_size(n))
    G = W[: n * CM.BWORK].reshape(n, CM.BWORK)
    M = W[n * CM.BWORK : n * CM.BWORK + n * n].reshape(n, n)
    body_motion(d.P, q, np.zeros(n), G)
    CM.composite_mass(d.P, G, M)
    assert CM.tree_factor(d.P, M)
    L, D = np.eye(n), np.diag(np.diag(M))
    for k in range(n):
        i = int(model.parent[k])
        while i >= 0:
            L[k, i] = M[k, i]
            i = int(model.parent[i])
    np.testing.assert_allclose(L.T @ D @ L, dense_mass_matrix(model, q), rtol=1e-10, atol=1e-10)


def test_forward_dynamics_match_kkt_and_kims_passes(case):
    model, cs, q = case
    rng = np.random.default_rng(3)
    qd = rng.uniform(-1.0, 1.0, model.nq)
    tau = rng.uniform(-5.0, 5.0, model.nq)
    qdd, lam = CM.constrained_forward_dynamics_mass(model, q, qd, tau, cs)
    qdd_ref, lam_ref = kkt(model, q, qd, tau, cs)
    scale = 1.0 + np.abs(qdd_ref).max()
    np.testing.assert_allclose(qdd, qdd_ref, atol=1e-8 * scale)
    np.testing.assert_allclose(lam, lam_ref, atol=1e-8 * (1.0 + np.abs(lam_ref).max()))
    f_ext = rng.uniform(-3.0, 3.0, (model.nq, 6))
    for gains in (None, (3.0, 7.0)):
        got = CM.constrained_forward_dynamics_mass(model, q, qd, tau, cs, f_ext, gains)
        ref = dyn.constrained_forward_dynamics(model, q, qd, tau, cs, f_ext, gains)
        for a, b in zip(got, ref):
            np.testing.assert_allclose(a, b, atol=1e-9 * (1.0 + np.abs(b).max()))


def test_plastic_impact_matches_impact_velocity(case):
    model, cs, q = case
    qd = np.random.default_rng(5).uniform(-2.0, 2.0, model.nq)
    got_qd, got_impulse = CM.plastic_impact_velocity(model, q, qd, cs)
    ref_qd, ref_impulse = dyn.impact_velocity(model, q, qd, cs)
    np.testing.assert_allclose(got_qd, ref_qd, atol=1e-9 * (1.0 + np.abs(ref_qd).max()))
    np.testing.assert_allclose(got_impulse, ref_impulse,
                               atol=1e-9 * (1.0 + np.abs(ref_impulse).max()))


def test_dependent_rows_are_refused():
    """The same constraint twice: A M⁻¹ Aᵀ is singular, a LinAlgError (not NaNs)."""
    _, model, cs, q = CASES[-1]
    once = as_constraint_set(cs).constraints
    twice = dyn.ConstraintSet([*once, *once])
    with pytest.raises(np.linalg.LinAlgError):
        CM.constrained_forward_dynamics_mass(model, q, np.zeros(model.nq), np.zeros(model.nq),
                                             twice)
    with pytest.raises(np.linalg.LinAlgError):
        CM.plastic_impact_velocity(model, q, np.ones(model.nq), twice)


def test_gram_is_a_m_inverse_a_transpose(case):
    """``constraint_gram`` (rank-one updates over the joints, zero rows skipped): Y = L⁻ᵀAᵀ solves
    LᵀY = Aᵀ and the Gram matrix equals the dense A M⁻¹ Aᵀ to 1e-12, symmetric to the bit."""
    model, cs, q = case
    cs = as_constraint_set(cs)
    d = Data(model)
    n, m = model.nq, cs.m
    qd = np.random.default_rng(7).uniform(-1.0, 1.0, n)
    W, S = np.zeros(CM.work_size(n)), np.zeros(CM.row_work_size(n, m))
    G = W[: n * CM.BWORK].reshape(n, CM.BWORK)
    M = W[n * CM.BWORK : n * CM.BWORK + n * n].reshape(n, n)
    At, Y, Z = (S[k * m * n : (k + 1) * m * n].reshape(n, m) for k in range(3))
    Gm = S[3 * m * n : 3 * m * n + m * m].reshape(m, m)
    bias, phi = np.empty(m), np.empty(m)
    body_motion(d.P, q, qd, G)
    constraint_rows(d.P, cs.packed, G, At.T, bias, phi)
    A = At.T.copy()
    A_ref, _, _ = dyn.constraint_terms(model, q, qd, cs)
    np.testing.assert_array_equal(A, A_ref)
    CM.composite_mass(d.P, G, M)
    assert CM.tree_factor(d.P, M)
    CM.constraint_gram(d.P, M, At, Y, Z, Gm)
    L = np.eye(n)
    for k in range(n):
        i = int(model.parent[k])
        while i >= 0:
            L[k, i] = M[k, i]
            i = int(model.parent[i])
    np.testing.assert_allclose(L.T @ Y, A.T, atol=1e-12 * (1.0 + np.abs(A).max()))
    np.testing.assert_array_equal(Z, Y / np.diag(M)[:, None])
    dense = A @ np.linalg.solve(dense_mass_matrix(model, q), A.T)
    np.testing.assert_allclose(Gm, dense, rtol=1e-12, atol=1e-12 * np.abs(dense).max())
    np.testing.assert_array_equal(Gm, Gm.T)


def test_matrix_view_is_a_reshape_sharing_memory():
    """``kernels.matrix_view`` (numba's reshape without its helper) views the same entries."""
    from numba import njit

    from robot_control.dynamics.kernels import matrix_view

    @njit
    def view_and_write(flat, rows, cols):
        X = matrix_view(flat[2 : 2 + rows * cols], rows, cols)
        X[rows - 1, 0] = -1.0
        return X.copy()

    flat = np.arange(20.0)
    got = view_and_write(flat, 3, 4)
    expected = np.arange(20.0)
    expected[2 + 8] = -1.0
    np.testing.assert_array_equal(got, expected[2:14].reshape(3, 4))
    np.testing.assert_array_equal(flat, expected)
