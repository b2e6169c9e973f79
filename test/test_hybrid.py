"""Hybrid dynamics (Kim Table 4): RNEA and ABA in the limits, the dense partitioned solve between.

Robots: UR5 and Panda (example-robot-data), a random branching tree with general screws,
and the bundled five-bar tree. For a prescribed set u the equations M q̈ + h = τ split as

    M_vv q̈_v = τ_v − h_v − M_vu q̈_u,     τ_u = M_uu q̈_u + M_uv q̈_v + h_u

(Kim eq. 34 with the lower-left block M_vu = M_uvᵀ), solved densely here with M built
column by column from RNEA so the check does not lean on another mass-matrix routine.
"""

from __future__ import annotations

import numpy as np
import pytest
from model_samples import example_urdf, random_screw_tree

from robot_control import dynamics as dyn
from robot_control.dynamics.hybrid import hybrid_dynamics
from robot_control.model import load_robot, load_urdf

ROBOTS = ["ur5", "panda", "random_screw_tree", "five_bar"]
_MODELS: dict = {}


def load(name: str):
    """Our model of a test robot (skipped when example-robot-data is missing)."""
    if name not in _MODELS:
        if name in ("ur5", "panda"):
            path = example_urdf(name)
            if path is None:
                pytest.skip("example-robot-data is not installed")
            _MODELS[name] = load_urdf(path)
        elif name == "random_screw_tree":
            _MODELS[name] = random_screw_tree()
        else:
            _MODELS[name] = load_robot(name)
    return _MODELS[name]


def dense_mass_matrix(model, q) -> np.ndarray:
    """M column by column: M e_k = RNEA(q, 0, e_k) − RNEA(q, 0, 0)."""
    n = model.nq
    z = np.zeros(n)
    g = dyn.inverse_dynamics(model, q, z, z)
    return np.column_stack([dyn.inverse_dynamics(model, q, z, e) - g for e in np.eye(n)])


def random_state(model, seed: int):
    rng = np.random.default_rng(seed)
    n = model.nq
    return (rng.uniform(-np.pi, np.pi, n), rng.uniform(-2, 2, n), rng.uniform(-5, 5, n),
            rng.uniform(-20, 20, n))


@pytest.fixture(params=ROBOTS)
def model(request):
    return load(request.param)


def test_all_prescribed_is_inverse_dynamics(model):
    q, qd, qdd, tau = random_state(model, 1)
    t, a = hybrid_dynamics(model, q, qd, qdd, tau, np.ones(model.nq, dtype=bool))
    np.testing.assert_allclose(t, dyn.inverse_dynamics(model, q, qd, qdd), rtol=0, atol=1e-10)
    np.testing.assert_array_equal(a, qdd)


def test_none_prescribed_is_forward_dynamics(model):
    q, qd, qdd, tau = random_state(model, 2)
    t, a = hybrid_dynamics(model, q, qd, qdd, tau, np.zeros(model.nq, dtype=bool))
    np.testing.assert_allclose(a, dyn.forward_dynamics(model, q, qd, tau), rtol=0,
                               atol=1e-9 * max(1.0, np.abs(a).max()))
    np.testing.assert_array_equal(t, tau)


@pytest.mark.parametrize("seed", range(6))
def test_random_partition_matches_dense_partitioned_solve(model, seed):
    q, qd, qdd, tau = random_state(model, 10 + seed)
    n = model.nq
    u = np.random.default_rng(seed).random(n) < 0.5
    v = ~u
    M = dense_mass_matrix(model, q)
    h = dyn.inverse_dynamics(model, q, qd, np.zeros(n))
    a = qdd.copy()
    a[v] = np.linalg.solve(M[np.ix_(v, v)], tau[v] - h[v] - M[np.ix_(v, u)] @ qdd[u])
    t = tau.copy()
    t[u] = M[np.ix_(u, u)] @ qdd[u] + M[np.ix_(u, v)] @ a[v] + h[u]

    t_hd, a_hd = hybrid_dynamics(model, q, qd, qdd, tau, u)
    scale = max(1.0, np.abs(a).max(), np.abs(t).max())
    np.testing.assert_allclose(a_hd, a, rtol=0, atol=1e-9 * scale)
    np.testing.assert_allclose(t_hd, t, rtol=0, atol=1e-9 * scale)
    # and the pair is a solution of the full equations of motion
    np.testing.assert_allclose(dyn.inverse_dynamics(model, q, qd, a_hd), t_hd, rtol=0,
                               atol=1e-9 * scale)


def test_index_list_equals_mask():
    model = load("random_screw_tree")
    q, qd, qdd, tau = random_state(model, 3)
    idx = [0, 3, 5]
    mask = np.zeros(model.nq, dtype=bool)
    mask[idx] = True
    for x, y in zip(hybrid_dynamics(model, q, qd, qdd, tau, idx),
                    hybrid_dynamics(model, q, qd, qdd, tau, mask)):
        np.testing.assert_array_equal(x, y)


def test_external_wrenches_enter_like_rnea():
    model = load("random_screw_tree")
    q, qd, qdd, tau = random_state(model, 4)
    f_ext = np.random.default_rng(4).normal(size=(model.nq, 6))
    t, _ = hybrid_dynamics(model, q, qd, qdd, tau, np.ones(model.nq, dtype=bool), f_ext)
    np.testing.assert_allclose(t, dyn.inverse_dynamics(model, q, qd, qdd, f_ext), atol=1e-10)
    _, a = hybrid_dynamics(model, q, qd, qdd, tau, np.zeros(model.nq, dtype=bool), f_ext)
    np.testing.assert_allclose(a, dyn.forward_dynamics(model, q, qd, tau, f_ext), atol=1e-9)


def test_inputs_are_not_modified_and_lengths_are_checked():
    model = load("five_bar")
    q, qd, qdd, tau = random_state(model, 5)
    keep = qdd.copy(), tau.copy()
    hybrid_dynamics(model, q, qd, qdd, tau, [1, 2])
    np.testing.assert_array_equal(qdd, keep[0])
    np.testing.assert_array_equal(tau, keep[1])
    with pytest.raises(ValueError):
        hybrid_dynamics(model, q[:-1], qd, qdd, tau, [1])
    with pytest.raises(ValueError):
        hybrid_dynamics(model, q, qd, qdd, tau, np.ones(model.nq - 1, dtype=bool))
    with pytest.raises(ValueError):
        hybrid_dynamics(model, q, qd, qdd, tau, [model.nq])
