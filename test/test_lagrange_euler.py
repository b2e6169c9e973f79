"""The Lagrange–Euler oracle (Schilling Alg. 6-4-1, Huo's pseudo-inertias) vs the compiled code.

D, c, h and τ of ``reference.lagrange_euler`` must equal the Newton–Euler / composite-body kernels
on random states of every bundled robot, UR5 and a random branching tree with general screws;
its Christoffel C must equal ``coriolis_matrix``, with Ṁ − 2C skew-symmetric for Ṁ taken by
finite differences of the compiled mass matrix. Schilling's two-axis arm pins it to the book.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from model_samples import SAMPLE_ROBOTS, SETTINGS, close, dh_link, sample_robot, states

from robot_control import dynamics as dyn
from robot_control.dynamics.reference.lagrange_euler import (
    lagrange_euler,
    link_kinematics,
    pseudo_inertia,
    velocity_coupling_matrices,
)
from robot_control.model import bundled_robots
from robot_control.model.dh import load_dh_yaml

ROBOTS = SAMPLE_ROBOTS
robot = cache(sample_robot)


@pytest.mark.parametrize("name", ROBOTS)
@SETTINGS
@given(data=st.data())
def test_lagrange_euler_equals_compiled_dynamics(name, data):
    model = robot(name)
    q, qd, qdd = states(data, model.nq, 3)
    le = lagrange_euler(model, q, qd, qdd)
    M = dyn.mass_matrix(model, q)
    g = dyn.gravity_torques(model, q)
    c = dyn.bias_torques(model, q, qd) - g
    close(le.D, M, np.abs(M).max())
    close(le.h, g, np.abs(g).max())
    close(le.c, c, np.abs(c).max())
    close(le.C, dyn.coriolis_matrix(model, q, qd), np.abs(le.C).max())
    tau = dyn.inverse_dynamics(model, q, qd, qdd)
    close(le.tau, tau, np.abs(tau).max())


@pytest.mark.parametrize("name", ROBOTS)
@SETTINGS
@given(data=st.data())
def test_christoffel_matrix_makes_mdot_minus_2c_skew(name, data):
    """Ṁ − 2C is skew (Huo 2-34), Ṁ = (M(q + εq̇) − M(q − εq̇)) / 2ε = Σ_m ∂D/∂q_m q̇_m."""
    model = robot(name)
    q, qd = states(data, model.nq, 2)
    le = lagrange_euler(model, q, qd, np.zeros(model.nq))
    eps = 1e-6
    Mdot = (dyn.mass_matrix(model, q + eps * qd) - dyn.mass_matrix(model, q - eps * qd)) / (2 * eps)
    scale = max(1.0, np.abs(le.D).max()) * max(1.0, np.abs(qd).max())
    close(np.einsum("mij,m->ij", le.dD, qd), Mdot, scale, tol=1e-6)
    N = Mdot - 2.0 * le.C
    close(N + N.T, np.zeros_like(N), scale, tol=1e-6)


@pytest.mark.parametrize("name", ["ur5", "random_screw_tree", *bundled_robots()[:3]])
def test_schilling_velocity_coupling_matches_christoffel_form(name):
    """c_i = q̇ᵀ Cⁱ q̇ with Cⁱ_kj = ∂D_ij/∂q_k − ½ ∂D_kj/∂q_i (6-4-6) equals C q̇, though Cⁱ ≠ Γⁱ."""
    model = robot(name)
    q, qd = np.random.default_rng(4).normal(size=(2, model.nq))
    le = lagrange_euler(model, q, qd, np.zeros(model.nq))
    close(le.c, le.C @ qd, np.abs(le.c).max())
    Cs = velocity_coupling_matrices(le.dD)
    np.testing.assert_allclose(np.einsum("k,ikj,j->i", qd, Cs, qd), le.c, atol=1e-12)


@pytest.mark.parametrize("name", ROBOTS)
def test_kinetic_energy_of_the_pseudo_inertias(name):
    """½ q̇ᵀ D q̇ = Σ_k ½ tr(Ṫ_k J_k Ṫ_kᵀ) = the kinetic energy of the body twists."""
    model = robot(name)
    q, qd = np.random.default_rng(6).normal(size=(2, model.nq))
    kin = link_kinematics(model, q)
    theta = model.inertial_parameters().reshape(model.nq, 10)
    Tdot = np.einsum("kiab,i->kab", kin.dT, qd)
    T = sum(0.5 * np.trace(Tdot[k] @ pseudo_inertia(theta[k]) @ Tdot[k].T)
            for k in range(model.nq))
    D = lagrange_euler(model, q, qd, qd).D
    assert T == pytest.approx(0.5 * qd @ D @ qd, rel=1e-12)
    assert T == pytest.approx(dyn.kinetic_energy(model, q, qd), rel=1e-10)


def test_pseudo_inertia_of_a_point_mass():
    """J = m r̄ r̄ᵀ for a point mass m at r (Huo's J_i = ∫ r̄ r̄ᵀ dm)."""
    m, r = 2.5, np.array([0.3, -0.2, 0.7])
    theta = np.r_[m * (r @ r * np.eye(3) - np.outer(r, r))[np.triu_indices(3)], m * r, m]
    rh = np.r_[r, 1.0]
    np.testing.assert_allclose(pseudo_inertia(theta), m * np.outer(rh, rh), atol=1e-15)


def _schilling_two_axis(m=(1.0, 1.0), a=(1.0, 1.0)):
    """Schilling's two-axis planar arm of thin rods (Table 6-1; y up, g₀ = 9.8062)."""
    links = [dh_link(a=a[k], mass=m[k], com=[-a[k] / 2, 0, 0],
                     inertia=[0, m[k] * a[k] ** 2 / 12, m[k] * a[k] ** 2 / 12, 0, 0, 0])
             for k in range(2)]
    return load_dh_yaml({"name": "two_axis", "gravity": [0, -9.8062, 0], "links": links})


@pytest.mark.parametrize(
    "masses, lengths, q, qd, qdd, tau",
    [
        ((1, 1), (1, 1), (np.pi / 3, -np.pi / 3), (0, 0), (0, 0), (12.25775, 4.90310)),
        ((1, 1), (1, 1), (0, np.pi / 2), (1, 1), (0, 0), (13.2093, 0.5)),
        ((1, 1), (1, 1), (np.pi / 3, -np.pi / 3), (0.5, -1), (2, 1), (17.174417, 6.294847)),
        ((2, 1), (1, 0.5), (np.pi / 3, -np.pi / 3), (0.5, -1), (2, 1), (16.466083, 2.897423)),
    ],
)
def test_schilling_two_axis_arm_reference_torques(masses, lengths, q, qd, qdd, tau):
    """Torques from Schilling's closed form of the two-axis arm (notes/schilling.md)."""
    le = lagrange_euler(_schilling_two_axis(masses, lengths), q, qd, qdd)
    np.testing.assert_allclose(le.tau, tau, atol=5e-6)


def test_schilling_two_axis_arm_inertia_matrix():
    le = lagrange_euler(_schilling_two_axis(), (np.pi / 3, -np.pi / 3), (0, 0), (0, 0))
    np.testing.assert_allclose(le.D, [[13 / 6, 7 / 12], [7 / 12, 1 / 3]], atol=1e-12)
