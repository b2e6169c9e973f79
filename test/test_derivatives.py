"""Analytic derivatives of the dynamics (Kim §4, Tables 5–7 as corrected in notes/lie_group.md).

Every Jacobian is checked against central differences on UR5, Panda, a random branching tree
with general screws and the five-bar tree, and against Pinocchio's computeRNEADerivatives /
computeABADerivatives on UR5 and Panda (joint-space Jacobians need no reordering), for both
methods (Carpentier–Mansard in base coordinates and Kim's tangent recursions), which also agree
with each other on every bundled robot. A numpy
transcription of Tables 6–7 here reproduces the compiled kernels when corrected and misses the
finite differences when the printed forms are used: ∂h_λ(i) in Table 6's ∂q̈, and q̇, ∂q̇ where
q̈, ∂q̈ belong in Table 7's ∂β_u and ∂V̇.
"""

from __future__ import annotations

import numpy as np
import pytest
from model_samples import pinocchio_twin
from test_hybrid import dense_mass_matrix, load

from robot_control import dynamics as dyn
from robot_control.dynamics.cholesky import cholesky_in_place, inverse_from_factor_in_place
from robot_control.dynamics.derivatives import (
    forward_dynamics_derivatives,
    hybrid_dynamics_derivatives,
    inverse_dynamics_derivatives,
    linearize,
)
from robot_control.dynamics.hybrid import hybrid_dynamics
from robot_control.foundation.spatial import Ad, ad, inverse_transform, screw_exp
from robot_control.model import bundled_robots

# slow (scripts/test.sh --slow): derivatives on every arm (a quarter of the default, measured)
pytestmark = pytest.mark.slow

ROBOTS = ["ur5", "panda", "random_screw_tree", "five_bar"]
EPS = 1e-6


@pytest.fixture(params=ROBOTS)
def model(request):
    return load(request.param)


def state(model, seed: int):
    rng = np.random.default_rng(seed)
    n = model.nq
    return (rng.uniform(-np.pi, np.pi, n), rng.uniform(-2, 2, n), rng.uniform(-5, 5, n),
            rng.uniform(-10, 10, n))


def central(f, x: np.ndarray) -> np.ndarray:
    """Jacobian of f at x by central differences."""
    cols = []
    for e in np.eye(len(x)):
        cols.append((f(x + EPS * e) - f(x - EPS * e)) / (2 * EPS))
    return np.column_stack(cols)


def assert_close(actual, expected, rel: float, what: str) -> None:
    scale = max(1.0, float(np.abs(expected).max()))
    err = float(np.abs(actual - expected).max())
    assert err <= rel * scale, f"{what}: error {err:.2e} > {rel:.0e} × {scale:.2e}"


# ----------------------------------------------------------------------------- vs differences
@pytest.mark.parametrize("method", ["carpentier", "kim"])
def test_inverse_dynamics_derivatives_match_central_differences(model, method):
    q, qd, qdd, _ = state(model, 1)
    f_ext = np.random.default_rng(1).normal(size=(model.nq, 6))
    dq, dqd, M = inverse_dynamics_derivatives(model, q, qd, qdd, f_ext, method=method)
    assert_close(dq, central(lambda x: dyn.inverse_dynamics(model, x, qd, qdd, f_ext), q), 1e-6,
                 "∂τ/∂q")
    assert_close(dqd, central(lambda x: dyn.inverse_dynamics(model, q, x, qdd, f_ext), qd), 1e-6,
                 "∂τ/∂q̇")
    assert_close(M, dense_mass_matrix(model, q), 1e-12, "∂τ/∂q̈ = M")


@pytest.mark.parametrize("method", ["kim", "rnea"])
def test_forward_dynamics_derivatives_match_central_differences(model, method):
    q, qd, _, tau = state(model, 2)
    f_ext = np.random.default_rng(2).normal(size=(model.nq, 6))
    dq, dqd, Minv = forward_dynamics_derivatives(model, q, qd, tau, f_ext, method=method)

    def fd(x, v, t):
        return dyn.forward_dynamics(model, x, v, t, f_ext)

    assert_close(dq, central(lambda x: fd(x, qd, tau), q), 1e-5, "∂q̈/∂q")
    assert_close(dqd, central(lambda x: fd(q, x, tau), qd), 1e-5, "∂q̈/∂q̇")
    assert_close(Minv, np.linalg.inv(dense_mass_matrix(model, q)), 1e-9, "∂q̈/∂τ = M⁻¹")


@pytest.mark.parametrize("seed", range(3))
def test_hybrid_dynamics_derivatives_match_central_differences(model, seed):
    q, qd, qdd, tau = state(model, 3 + seed)
    u = np.random.default_rng(seed).random(model.nq) < 0.5
    x = np.where(u, qdd, tau)  # the given inputs

    def outputs(qq, vv, xx):
        t, a = hybrid_dynamics(model, qq, vv, xx, xx, u)
        return np.where(u, t, a)

    dq, dqd, dx = hybrid_dynamics_derivatives(model, q, qd, qdd, tau, u)
    assert_close(dq, central(lambda z: outputs(z, qd, x), q), 1e-5, "∂y/∂q")
    assert_close(dqd, central(lambda z: outputs(q, z, x), qd), 1e-5, "∂y/∂q̇")
    assert_close(dx, central(lambda z: outputs(q, qd, z), x), 1e-6, "∂y/∂x")


def test_hybrid_derivatives_reduce_to_rnea_and_aba():
    model = load("random_screw_tree")
    q, qd, qdd, tau = state(model, 7)
    n = model.nq
    allj, none = np.ones(n, dtype=bool), np.zeros(n, dtype=bool)
    for got, ref in zip(hybrid_dynamics_derivatives(model, q, qd, qdd, tau, allj),
                        inverse_dynamics_derivatives(model, q, qd, qdd)):
        assert_close(got, ref, 1e-10, "u = all")
    for got, ref in zip(hybrid_dynamics_derivatives(model, q, qd, qdd, tau, none),
                        forward_dynamics_derivatives(model, q, qd, tau, method="rnea")):
        assert_close(got, ref, 1e-10, "u = none")


def test_linearize_is_the_state_space_jacobian():
    model = load("five_bar")
    q, qd, _, tau = state(model, 8)
    n = model.nq
    A, B = linearize(model, q, qd, tau)

    def f(x, t):
        return np.concatenate([x[n:], dyn.forward_dynamics(model, x[:n], x[n:], t)])

    x = np.concatenate([q, qd])
    assert A.shape == (2 * n, 2 * n) and B.shape == (2 * n, n)
    assert_close(A, central(lambda z: f(z, tau), x), 1e-5, "A")
    assert_close(B, central(lambda z: f(x, z), tau), 1e-6, "B")
    A_kim, B_kim = linearize(model, q, qd, tau, method="kim")
    assert_close(A_kim, A, 1e-10, "A (Kim Table 6)")
    assert_close(B_kim, B, 1e-12, "B (Kim Table 6)")


# ----------------------------------------------------------------------------- the two methods
def shipped_and_test_robots() -> list[str]:
    return sorted(bundled_robots()) + ["ur5", "panda", "random_screw_tree"]


@pytest.mark.parametrize("robot", shipped_and_test_robots())
def test_base_frame_and_kim_derivatives_agree(robot):
    """Carpentier–Mansard in base coordinates and Kim's body-frame tangents are the same numbers."""
    model = load(robot)
    rng = np.random.default_rng(60)
    for seed in range(3):
        q, qd, qdd, tau = state(model, 60 + seed)
        f_ext = None if seed == 0 else rng.normal(size=(model.nq, 6))
        for got, ref, what in zip(
                inverse_dynamics_derivatives(model, q, qd, qdd, f_ext),
                inverse_dynamics_derivatives(model, q, qd, qdd, f_ext, method="kim"),
                ("∂τ/∂q", "∂τ/∂q̇", "M")):
            assert_close(got, ref, 1e-12, f"{what}, seed {seed}")
        for got, ref, what in zip(
                forward_dynamics_derivatives(model, q, qd, tau, f_ext),
                forward_dynamics_derivatives(model, q, qd, tau, f_ext, method="kim"),
                ("∂q̈/∂q", "∂q̈/∂q̇", "M⁻¹")):
            # both solve with M, which amplifies rounding by up to its condition number
            assert_close(got, ref, 1e-12 * np.linalg.cond(dense_mass_matrix(model, q)),
                         f"{what}, seed {seed}")


def test_inverse_from_cholesky_factor_is_the_inverse():
    rng = np.random.default_rng(61)
    for n in (1, 2, 5, 9):
        A = rng.normal(size=(n, n))
        M = A @ A.T + n * np.eye(n)
        L = M.copy()
        cholesky_in_place(L)
        inverse_from_factor_in_place(L)
        np.testing.assert_allclose(L, np.linalg.inv(M), rtol=0, atol=1e-13)


def test_unknown_method_is_refused():
    model = load("five_bar")
    z = np.zeros(model.nq)
    with pytest.raises(ValueError, match="carpentier"):
        inverse_dynamics_derivatives(model, z, z, z, method="pinocchio")
    with pytest.raises(ValueError, match="rnea"):
        forward_dynamics_derivatives(model, z, z, z, method="carpentier")


def test_wrong_length_is_refused_by_the_base_frame_kernels():
    model = load("five_bar")
    z = np.zeros(model.nq)
    with pytest.raises(ValueError, match="length"):
        inverse_dynamics_derivatives(model, z, z, np.zeros(model.nq + 1))
    with pytest.raises(ValueError, match="length"):
        forward_dynamics_derivatives(model, z[:-1], z, z)
    with pytest.raises(ValueError):
        inverse_dynamics_derivatives(model, np.zeros((model.nq, 1)), z, z)


# ----------------------------------------------------------------------------- vs Pinocchio
@pytest.mark.parametrize("robot", ["ur5", "panda"])
def test_agree_with_pinocchio(robot):
    pin = pytest.importorskip("pinocchio")
    model = load(robot)
    pm, pd = pinocchio_twin(robot, model)
    for seed in range(5):
        q, qd, qdd, tau = state(model, 40 + seed)
        pq, pv, pa = pin.computeRNEADerivatives(pm, pd, q, qd, qdd)
        pa = np.triu(pa) + np.triu(pa, 1).T  # Pinocchio fills the upper triangle
        for method in ("carpentier", "kim"):
            dq, dqd, M = inverse_dynamics_derivatives(model, q, qd, qdd, method=method)
            assert_close(dq, pq, 1e-10, f"∂τ/∂q ({method})")
            assert_close(dqd, pv, 1e-10, f"∂τ/∂q̇ ({method})")
            assert_close(M, pa, 1e-10, f"M ({method})")
        aq, av, ai = pin.computeABADerivatives(pm, pd, q, qd, tau)
        ai = np.triu(ai) + np.triu(ai, 1).T
        for method in ("kim", "rnea"):
            fq, fv, Minv = forward_dynamics_derivatives(model, q, qd, tau, method=method)
            assert_close(fq, aq, 1e-9, f"∂q̈/∂q ({method})")
            assert_close(fv, av, 1e-9, f"∂q̈/∂q̇ ({method})")
            assert_close(Minv, ai, 1e-9, f"M⁻¹ ({method})")


# ----------------------------------------------------------------------------- printed tables
def table7(model, q, qd, qdd_in, tau_in, u, kind, k, printed=None):
    """One column of Kim Table 7 in plain numpy (Table 6 when u = ∅).

    printed=None: the corrected tables; "table6": ∂q̈ with ad_{∂h_λ(i)} as printed;
    "table7": ∂β_u and ∂V̇ with ∂q̇ in place of ∂q̈ as printed. Joint screws are constant,
    so ∂S = ∂Ṡ = 0 and the printed ∂S-vs-∂Sᵀ slip of Table 6 has no effect here.
    """
    n, S, I, par = model.nq, model.screw, model.spatial_inertia, model.parent
    X = [Ad(inverse_transform(b.joint.origin @ screw_exp(S[i], q[i])))
         for i, b in enumerate(model.bodies)]
    zero = np.zeros(6)
    g0 = np.r_[0.0, 0.0, 0.0, -model.gravity]
    V, eta = np.zeros((n, 6)), np.zeros((n, 6))
    for i in range(n):
        V[i] = X[i] @ (V[par[i]] if par[i] >= 0 else zero) + S[i] * qd[i]
        eta[i] = ad(V[i]) @ S[i] * qd[i]
    IA = I.copy()
    B = np.array([-ad(V[i]).T @ I[i] @ V[i] for i in range(n)])
    Pi, beta, Psi, r = np.zeros((n, 6, 6)), np.zeros((n, 6)), np.zeros(n), np.zeros(n)
    qdd, tau = qdd_in.copy(), tau_in.copy()
    for i in reversed(range(n)):
        if u[i]:
            Pi[i], beta[i] = IA[i], B[i] + IA[i] @ (eta[i] + S[i] * qdd[i])
        else:
            Psi[i] = 1.0 / (S[i] @ IA[i] @ S[i])
            Pi[i] = IA[i] - np.outer(IA[i] @ S[i], S[i] @ IA[i]) * Psi[i]
            r[i] = tau[i] - S[i] @ (IA[i] @ eta[i] + B[i])
            beta[i] = B[i] + IA[i] @ (eta[i] + S[i] * Psi[i] * r[i])
        if par[i] >= 0:
            IA[par[i]] += X[i].T @ Pi[i] @ X[i]
            B[par[i]] += X[i].T @ beta[i]
    a, Vd = np.zeros((n, 6)), np.zeros((n, 6))
    for i in range(n):
        a[i] = X[i] @ (Vd[par[i]] if par[i] >= 0 else g0)
        if u[i]:
            tau[i] = S[i] @ (IA[i] @ (a[i] + eta[i] + S[i] * qdd[i]) + B[i])
        else:
            qdd[i] = Psi[i] * (tau[i] - S[i] @ IA[i] @ (a[i] + eta[i]) - S[i] @ B[i])
        Vd[i] = a[i] + eta[i] + S[i] * qdd[i]

    def dh(i):
        return S[i] if (kind == "q" and i == k) else zero

    dqd = np.array([1.0 if (kind == "qd" and i == k) else 0.0 for i in range(n)])
    dgiven = np.array([1.0 if (kind == "x" and i == k) else 0.0 for i in range(n)])
    dV, deta = np.zeros((n, 6)), np.zeros((n, 6))
    for i in range(n):
        Vp = V[par[i]] if par[i] >= 0 else zero
        dVp = dV[par[i]] if par[i] >= 0 else zero
        dV[i] = X[i] @ dVp - ad(dh(i)) @ X[i] @ Vp + S[i] * dqd[i]
        deta[i] = ad(dV[i]) @ S[i] * qd[i] + ad(V[i]) @ S[i] * dqd[i]
    dIA = np.zeros((n, 6, 6))
    dB = np.array([-ad(dV[i]).T @ I[i] @ V[i] - ad(V[i]).T @ I[i] @ dV[i] for i in range(n)])
    dPi, dbeta, dPsi = np.zeros((n, 6, 6)), np.zeros((n, 6)), np.zeros(n)
    for i in reversed(range(n)):
        if u[i]:
            dPi[i] = dIA[i]
            rate = dqd[i] if printed == "table7" else dgiven[i]
            dbeta[i] = dB[i] + dIA[i] @ (eta[i] + S[i] * qdd[i]) + IA[i] @ (deta[i] + S[i] * rate)
        else:
            dPsi[i] = -Psi[i] * (S[i] @ dIA[i] @ S[i]) * Psi[i]
            U, dIS = IA[i] @ S[i], dIA[i] @ S[i]
            dPi[i] = dIA[i] - (np.outer(U, U) * dPsi[i] + np.outer(dIS, U) * Psi[i]
                               + np.outer(U, dIS) * Psi[i])
            dr = dgiven[i] - S[i] @ (dIA[i] @ eta[i] + IA[i] @ deta[i] + dB[i])
            dbeta[i] = (dB[i] + dIA[i] @ (eta[i] + S[i] * Psi[i] * r[i])
                        + IA[i] @ (deta[i] + S[i] * dPsi[i] * r[i] + S[i] * Psi[i] * dr))
        if par[i] >= 0:
            PA = Pi[i] @ ad(dh(i))
            dIA[par[i]] += X[i].T @ (dPi[i] - PA - PA.T) @ X[i]
            dB[par[i]] += X[i].T @ (dbeta[i] - ad(dh(i)).T @ beta[i])
    out, dVd = np.zeros(n), np.zeros((n, 6))
    for i in range(n):
        dVdp = dVd[par[i]] if par[i] >= 0 else zero
        da = X[i] @ dVdp - ad(dh(i)) @ a[i]
        if u[i]:
            rate = dqd[i] if printed == "table7" else dgiven[i]
            dVd[i] = da + S[i] * rate + deta[i]
            out[i] = S[i] @ (dIA[i] @ Vd[i] + IA[i] @ dVd[i] + dB[i])
        else:
            h_of = par[i] if printed == "table6" else i
            da_q = X[i] @ dVdp - (ad(dh(h_of)) @ a[i] if h_of >= 0 else 0.0)
            out[i] = (dPsi[i] * (tau[i] - S[i] @ IA[i] @ (a[i] + eta[i]) - S[i] @ B[i])
                      + Psi[i] * (dgiven[i] - S[i] @ dIA[i] @ (a[i] + eta[i])
                                  - S[i] @ IA[i] @ (da_q + deta[i]) - S[i] @ dB[i]))
            rate = dqd[i] if printed == "table7" else out[i]
            dVd[i] = da + S[i] * rate + deta[i]
    return out


def table_jacobians(model, q, qd, qdd, tau, u, printed=None):
    cols = {kind: np.column_stack([table7(model, q, qd, qdd, tau, u, kind, k, printed)
                                   for k in range(model.nq)]) for kind in ("q", "qd", "x")}
    return cols["q"], cols["qd"], cols["x"]


def worst_relative(a, b) -> float:
    return float(np.abs(a - b).max() / max(1.0, np.abs(b).max()))


@pytest.mark.parametrize("robot", ["random_screw_tree", "five_bar"])
def test_printed_table6_fails_and_corrected_holds(robot):
    model = load(robot)
    q, qd, qdd, tau = state(model, 50)
    none = np.zeros(model.nq, dtype=bool)
    kernel = forward_dynamics_derivatives(model, q, qd, tau, method="kim")
    fd_q = central(lambda x: dyn.forward_dynamics(model, x, qd, tau), q)
    fixed = table_jacobians(model, q, qd, qdd, tau, none)
    for got, ref in zip(fixed, kernel):
        assert worst_relative(got, ref) < 1e-10  # the numpy transcription is the kernel
    assert worst_relative(fixed[0], fd_q) < 1e-5
    printed = table_jacobians(model, q, qd, qdd, tau, none, printed="table6")
    assert worst_relative(printed[0], fd_q) > 1e-2  # ad_{∂h_λ(i)} breaks ∂q̈/∂q


@pytest.mark.parametrize("robot", ["random_screw_tree", "five_bar"])
def test_printed_table7_fails_and_corrected_holds(robot):
    model = load(robot)
    q, qd, qdd, tau = state(model, 51)
    u = np.zeros(model.nq, dtype=bool)
    u[[0, 2]] = True
    x = np.where(u, qdd, tau)

    def outputs(qq, vv, xx):
        t, a = hybrid_dynamics(model, qq, vv, xx, xx, u)
        return np.where(u, t, a)

    cd_qd = central(lambda z: outputs(q, z, x), qd)
    cd_x = central(lambda z: outputs(q, qd, z), x)
    kernel = hybrid_dynamics_derivatives(model, q, qd, qdd, tau, u)
    fixed = table_jacobians(model, q, qd, qdd, tau, u)
    for got, ref in zip(fixed, kernel):
        assert worst_relative(got, ref) < 1e-10
    assert worst_relative(fixed[1], cd_qd) < 1e-5 and worst_relative(fixed[2], cd_x) < 1e-6
    printed = table_jacobians(model, q, qd, qdd, tau, u, printed="table7")
    assert worst_relative(printed[1], cd_qd) > 1e-2  # S ∂q̇ where S ∂q̈ belongs
    assert worst_relative(printed[2], cd_x) > 1e-2  # the given q̈_u and the solved ∂q̈_v drop out
