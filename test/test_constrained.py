"""Constrained dynamics (Kim §3) and the constraint rows A(q), Ȧq̇, φ(q) they use.

Checked here:
- A, Ȧq̇ against central differences of φ and of A q̇, and against the kinematics module's
  world Jacobian and J̇q̇; the bundled five-bar is assembled at q = 0;
- forward dynamics (Kim's one full + m no-bias passes) against the dense KKT solve
  [[M, −Aᵀ], [A, 0]], against Pinocchio's forwardDynamics (same A, Ȧq̇) and its
  constraintDynamics with a 3-D point contact, and A q̈ + Ȧq̇ = 0;
- hybrid dynamics against the dense solve for (q̈_v, τ_u, λ); its limits;
- inverse dynamics on Kim's five-bar: 2 actuated joints (m = n_p) is unique, 3 (m > n_p) is
  redundant with distinct minimum-force / minimum-torque answers, 1 (m < n_p) has no
  solution and goes through hybrid dynamics instead; every answer fed back into forward
  dynamics reproduces q̈;
- Baumgarte stabilisation pulls a violated loop closed; a plastic impact removes A q̇.
"""

from __future__ import annotations

import numpy as np
import pytest
from model_samples import example_urdf, pinocchio_twin, random_screw_tree
from test_hybrid import dense_mass_matrix, load

from robot_control import dynamics as dyn
from robot_control.dynamics.constrained import (
    constrained_forward_dynamics,
    constrained_hybrid_dynamics,
    constrained_inverse_dynamics,
    impact_velocity,
)
from robot_control.dynamics.contact import (
    Constraint,
    ConstraintSet,
    constraint_terms,
    frame_world_placement,
    load_loop_constraints,
    loop_closure,
    point_contact,
    project_to_constraints,
    selection,
    surface_contact,
)

CRANK_L, ELBOW_L, APEX, CRANK_R, ELBOW_R = range(5)


# ----------------------------------------------------------------------------- fixtures
def five_bar():
    model = load("five_bar")
    return model, ConstraintSet(load_loop_constraints(model))


def five_bar_state(seed: int):
    """A consistent state of the five-bar: φ(q) = 0, A q̇ = 0, A q̈ + Ȧq̇ = 0."""
    model, cs = five_bar()
    rng = np.random.default_rng(seed)
    q0 = np.zeros(model.nq)
    q0[[CRANK_L, CRANK_R]] = rng.uniform(-0.3, 0.3, 2)
    q = project_to_constraints(model, q0, cs, fixed=[CRANK_L, CRANK_R])
    A, _, _ = constraint_terms(model, q, np.zeros(model.nq), cs)
    N = null_space(A)
    qd = N @ rng.uniform(-1.5, 1.5, N.shape[1])
    _, bias, _ = constraint_terms(model, q, qd, cs)
    qdd = -np.linalg.pinv(A) @ bias + N @ rng.uniform(-5, 5, N.shape[1])
    return model, cs, q, qd, qdd


def null_space(A: np.ndarray) -> np.ndarray:
    _, s, Vt = np.linalg.svd(A)
    return Vt[int((s > 1e-10 * s.max()).sum()):].T


def weld_between_branches(model, q, a: int, b: int, rows="6d") -> Constraint:
    """Frames on bodies a and b that coincide at q (a cut loop closed at q)."""
    Xa = np.eye(4)
    Xa[:3, 3] = [0.05, -0.02, 0.1]
    Xb = np.linalg.inv(frame_world_placement(model, q, b, np.eye(4))) @ \
        frame_world_placement(model, q, a, Xa)
    return Constraint("weld", a, Xa, b, Xb, selection(rows))


def constrained_cases():
    """(name, model, constraints, q): point and surface contacts, the five-bar, a tree weld."""
    cases = []
    for name in ("ur5", "panda"):
        if example_urdf(name) is None:
            continue
        model = load(name)
        q = np.random.default_rng(0).uniform(-1.5, 1.5, model.nq)
        cases.append((name + " point", model, point_contact(model, q, model.body_names[5]), q))
        cases.append((name + " surface", model,
                      surface_contact(model, model.body_names[4], [0.2, 0.1, 1.0], 0.3), q))
    if example_urdf("ur5") is not None:  # the tool welded to the world: all six rows, 0 DOF
        model = load("ur5")
        q = np.random.default_rng(0).uniform(-1.5, 1.5, model.nq)
        X = np.eye(4)
        X[:3, 3] = [0.02, 0.05, 0.1]
        cases.append(("ur5 weld", model, Constraint("weld", 5, X, -1,
                                                    frame_world_placement(model, q, 5, X),
                                                    selection("6d")), q))
    model, cs = five_bar()
    cases.append(("five_bar loop", model, cs, np.zeros(model.nq)))
    tree = random_screw_tree()
    q = np.random.default_rng(1).uniform(-1, 1, tree.nq)
    cases.append(("tree loop", tree, weld_between_branches(tree, q, 6, 3, "3d"), q))
    return cases


CASES = constrained_cases()


@pytest.fixture(params=CASES, ids=[c[0] for c in CASES])
def case(request):
    return request.param[1:]


def kkt(model, q, qd, tau, constraints):
    """Dense reference: [[M, −Aᵀ], [A, 0]] [q̈; λ] = [τ − h; −Ȧq̇]."""
    A, bias, _ = constraint_terms(model, q, qd, constraints)
    M = dense_mass_matrix(model, q)
    h = dyn.inverse_dynamics(model, q, qd, np.zeros(model.nq))
    n, m = model.nq, A.shape[0]
    KKT = np.block([[M, -A.T], [A, np.zeros((m, m))]])
    sol = np.linalg.solve(KKT, np.concatenate([tau - h, -bias]))
    return sol[:n], sol[n:]


# ----------------------------------------------------------------------------- A, Ȧq̇, φ
def test_five_bar_is_assembled_at_zero_with_three_rows():
    model, cs = five_bar()
    assert cs.m == 3
    A, _, phi = constraint_terms(model, np.zeros(5), np.zeros(5), cs)
    assert np.abs(phi).max() < 1e-12
    assert np.linalg.matrix_rank(A) == 3
    # the full weld has three more rows, trivially satisfied by a planar mechanism: rank 3
    A6, _, phi6 = constraint_terms(model, np.zeros(5), np.zeros(5),
                                   loop_closure(model, "cut_a", "cut_b"))
    assert A6.shape == (6, 5) and np.linalg.matrix_rank(A6) == 3 and np.abs(phi6).max() < 1e-12


def test_rows_are_derivatives_of_the_error(case):
    model, constraints, q = case
    rng = np.random.default_rng(5)
    qd = rng.uniform(-1, 1, model.nq)
    A, bias, _ = constraint_terms(model, q, qd, constraints)
    eps = 1e-6
    zero = np.zeros(model.nq)

    def err(x):
        return constraint_terms(model, x, zero, constraints)[2]

    # A = ∂φ/∂q (the loops are closed at q, where rotation rows agree too)
    dphi = np.column_stack([(err(q + eps * e) - err(q - eps * e)) / (2 * eps)
                            for e in np.eye(model.nq)])
    np.testing.assert_allclose(A, dphi, rtol=0, atol=1e-7)
    # Ȧq̇ = d/dt (A(q) q̇) along q(t) = q + t q̇
    dA = (constraint_terms(model, q + eps * qd, zero, constraints)[0]
          - constraint_terms(model, q - eps * qd, zero, constraints)[0]) / (2 * eps)
    np.testing.assert_allclose(bias, dA @ qd, rtol=0, atol=1e-6)


def test_point_contact_rows_match_world_jacobian():
    model = load("random_screw_tree")
    q = np.random.default_rng(2).uniform(-1, 1, model.nq)
    qd = np.random.default_rng(3).uniform(-1, 1, model.nq)
    A, bias, phi = constraint_terms(model, q, qd, point_contact(model, q, "tool"))
    np.testing.assert_allclose(A, dyn.jacobian(model, q, "tool", "world")[3:], atol=1e-12)
    np.testing.assert_allclose(bias, dyn.jacobian_dot_qd(model, q, qd, "tool", "world")[3:],
                               atol=1e-10)
    assert np.abs(phi).max() < 1e-14


def test_surface_contact_is_signed_distance():
    model = load("random_screw_tree")
    q = np.zeros(model.nq)
    p = dyn.frame_placement(model, q, "tool")[:3, 3]
    n = np.array([0.0, 0.6, 0.8])
    _, _, phi = constraint_terms(model, q, q, surface_contact(model, "tool", 2 * n, 0.25))
    assert phi[0] == pytest.approx(n @ p - 0.25, abs=1e-14)


def test_loop_file_errors(tmp_path):
    model, _ = five_bar()
    bad = tmp_path / "bad.loop.yaml"
    bad.write_text("loops:\n  - {frame_a: cut_a, frame_b: cut_b, rowz: [wy]}\n")
    with pytest.raises(ValueError, match="unknown keys"):
        load_loop_constraints(model, bad)
    with pytest.raises(ValueError, match="unknown constraint rows"):
        loop_closure(model, "cut_a", "cut_b", ["wq"])
    with pytest.raises(KeyError):
        loop_closure(model, "cut_a", "nowhere")


# ----------------------------------------------------------------------------- forward
def test_forward_dynamics_matches_kkt_and_satisfies_constraints(case):
    model, constraints, q = case
    rng = np.random.default_rng(7)
    qd, tau = rng.uniform(-1, 1, model.nq), rng.uniform(-10, 10, model.nq)
    qdd, lam = constrained_forward_dynamics(model, q, qd, tau, constraints)
    qdd_ref, lam_ref = kkt(model, q, qd, tau, constraints)
    scale = max(1.0, np.abs(qdd_ref).max(), np.abs(lam_ref).max())
    np.testing.assert_allclose(qdd, qdd_ref, rtol=0, atol=1e-9 * scale)
    np.testing.assert_allclose(lam, lam_ref, rtol=0, atol=1e-9 * scale)
    A, bias, _ = constraint_terms(model, q, qd, constraints)
    np.testing.assert_allclose(A @ qdd + bias, 0.0, atol=1e-9 * scale)


def test_forward_dynamics_with_external_wrenches_matches_kkt():
    model = load("random_screw_tree")
    q = np.random.default_rng(8).uniform(-1, 1, model.nq)
    c = point_contact(model, q, "tool")
    f_ext = np.random.default_rng(9).normal(size=(model.nq, 6))
    qd, tau = np.ones(model.nq), np.zeros(model.nq)
    qdd, lam = constrained_forward_dynamics(model, q, qd, tau, c, f_ext=f_ext)
    h = dyn.inverse_dynamics(model, q, qd, np.zeros(model.nq), f_ext)
    M = dense_mass_matrix(model, q)
    A, bias, _ = constraint_terms(model, q, qd, c)
    np.testing.assert_allclose(M @ qdd + h - A.T @ lam, tau, atol=1e-9)
    np.testing.assert_allclose(A @ qdd + bias, 0.0, atol=1e-9)


@pytest.mark.parametrize("robot", ["ur5", "panda"])
def test_forward_dynamics_matches_pinocchio(robot):
    pin = pytest.importorskip("pinocchio")
    model = load(robot)
    pm, pd = pinocchio_twin(robot, model)
    rng = np.random.default_rng(11)
    q, qd, tau = rng.uniform(-1.5, 1.5, model.nq), rng.uniform(-1, 1, model.nq), \
        rng.uniform(-10, 10, model.nq)
    body = 5
    X = np.eye(4)
    X[:3, 3] = [0.03, -0.02, 0.08]
    anchor = frame_world_placement(model, q, body, X)
    anchor[:3, :3] = np.eye(3)
    c = Constraint("contact", body, X, -1, anchor, selection("3d"))
    qdd, lam = constrained_forward_dynamics(model, q, qd, tau, c)
    # the same A and Ȧq̇ through Pinocchio's KKT solver
    A, bias, _ = constraint_terms(model, q, qd, c)
    np.testing.assert_allclose(pin.forwardDynamics(pm, pd, q, qd, tau, A, bias), qdd, atol=1e-9)
    # Pinocchio's own 3-D contact model, in world-aligned axes: same q̈ and the same λ
    jid = pm.getJointId(model.joint_names[body])
    cm = pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, pm, jid, pin.SE3(X),
                                  pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
    models = pin.StdVec_RigidConstraintModel()
    models.append(cm)
    datas = pin.StdVec_RigidConstraintData()
    datas.append(cm.createData())
    pin.initConstraintDynamics(pm, pd, models, datas)
    np.testing.assert_allclose(pin.constraintDynamics(pm, pd, q, qd, tau, models, datas), qdd,
                               atol=1e-9)
    np.testing.assert_allclose(pd.lambda_c, lam, atol=1e-8)


def test_dependent_rows_are_reported():
    model, _ = five_bar()
    weld6 = loop_closure(model, "cut_a", "cut_b")  # three rows are identically zero
    with pytest.raises(np.linalg.LinAlgError):
        constrained_forward_dynamics(model, np.zeros(5), np.zeros(5), np.zeros(5), weld6)


# ----------------------------------------------------------------------------- hybrid
@pytest.mark.parametrize("seed", range(3))
def test_hybrid_dynamics_matches_dense_solve(case, seed):
    model, constraints, q = case
    cs = ConstraintSet(constraints) if not isinstance(constraints, ConstraintSet) else constraints
    n = model.nq
    rng = np.random.default_rng(20 + seed)
    qd, qdd, tau = rng.uniform(-1, 1, n), rng.uniform(-3, 3, n), rng.uniform(-10, 10, n)
    A, bias, _ = constraint_terms(model, q, qd, cs)
    for _ in range(50):  # a random split whose torque-given joints can meet the constraints
        n_u = rng.integers(0, n - cs.m + 1)  # m ≤ n_v
        u = np.zeros(n, dtype=bool)
        u[rng.choice(n, n_u, replace=False)] = True
        v = ~u
        sv = np.linalg.svd(A[:, v], compute_uv=False)
        if sv.min() > 1e-3 * np.linalg.norm(A, 2):
            break
    t, a, lam = constrained_hybrid_dynamics(model, q, qd, qdd, tau, u, cs)
    # unknowns (q̈_v, τ_u, λ):  M q̈ + h = τ + Aᵀλ,  A q̈ + Ȧq̇ = 0
    M = dense_mass_matrix(model, q)
    h = dyn.inverse_dynamics(model, q, qd, np.zeros(n))
    m = cs.m
    E_u = np.eye(n)[:, u]
    lhs = np.block([[M[:, v], -E_u, -A.T], [A[:, v], np.zeros((m, u.sum() + m))]])
    rhs = np.concatenate([np.where(v, tau, 0.0) - h - M[:, u] @ qdd[u],
                          -bias - A[:, u] @ qdd[u]])
    sol = np.linalg.solve(lhs, rhs)
    scale = max(1.0, np.abs(sol).max())
    np.testing.assert_allclose(a[v], sol[: v.sum()], atol=1e-9 * scale)
    np.testing.assert_allclose(t[u], sol[v.sum() : n], atol=1e-9 * scale)
    np.testing.assert_allclose(lam, sol[n:], atol=1e-9 * scale)
    np.testing.assert_array_equal(a[u], qdd[u])
    np.testing.assert_array_equal(t[v], tau[v])


def test_hybrid_with_nothing_prescribed_is_forward_dynamics():
    model, cs, q, qd, _ = five_bar_state(3)
    tau = np.array([1.0, -0.5, 0.2, 0.7, -0.1])
    t, a, lam = constrained_hybrid_dynamics(model, q, qd, np.zeros(5), tau, [], cs)
    a_fd, lam_fd = constrained_forward_dynamics(model, q, qd, tau, cs)
    np.testing.assert_allclose(a, a_fd, atol=1e-12)
    np.testing.assert_allclose(lam, lam_fd, atol=1e-12)
    np.testing.assert_array_equal(t, tau)
    with pytest.raises(ValueError, match="torque-given"):
        constrained_hybrid_dynamics(model, q, qd, np.zeros(5), tau, [0, 1, 3], cs)


# ----------------------------------------------------------------------------- inverse
def feed_back(model, cs, q, qd, tau):
    return constrained_forward_dynamics(model, q, qd, tau, cs)


@pytest.mark.parametrize("seed", range(3))
def test_five_bar_two_actuated_is_unique(seed):
    model, cs, q, qd, qdd = five_bar_state(seed)
    actuated = [CRANK_L, CRANK_R]  # n_p = 3 = m (Kim eq. 58)
    tau, lam = constrained_inverse_dynamics(model, q, qd, qdd, cs, actuated)
    tau2, lam2 = constrained_inverse_dynamics(model, q, qd, qdd, cs, actuated, method="min_torque")
    np.testing.assert_allclose(tau, tau2, atol=1e-10)
    assert np.all(tau[[ELBOW_L, APEX, ELBOW_R]] == 0.0)
    a, lam_fd = feed_back(model, cs, q, qd, tau)
    np.testing.assert_allclose(a, qdd, atol=1e-8)
    np.testing.assert_allclose(lam, lam_fd, atol=1e-8)


@pytest.mark.parametrize("seed", range(3))
def test_five_bar_three_actuated_is_redundant(seed):
    model, cs, q, qd, qdd = five_bar_state(seed)
    actuated = [CRANK_L, CRANK_R, ELBOW_L]  # n_p = 2 < m = 3: a one-parameter family
    solve = constrained_inverse_dynamics
    tau_f, lam_f = solve(model, q, qd, qdd, cs, actuated, method="min_force")
    tau_t, lam_t = solve(model, q, qd, qdd, cs, actuated, method="min_torque")
    for tau in (tau_f, tau_t):
        np.testing.assert_allclose(feed_back(model, cs, q, qd, tau)[0], qdd, atol=1e-8)
    assert np.linalg.norm(tau_t[actuated]) < np.linalg.norm(tau_f[actuated]) - 1e-9
    assert np.linalg.norm(lam_f) < np.linalg.norm(lam_t) - 1e-9
    # both optima beat any other member of the family λ = λ* + N s (Kim eq. 61)
    A, _, _ = constraint_terms(model, q, qd, cs)
    passive = [ELBOW_R, APEX]
    N = null_space(A[:, passive].T)
    tau_r = dyn.inverse_dynamics(model, q, qd, qdd)
    for s in (-0.3, 0.2):
        lam = lam_f + N[:, 0] * s
        assert np.allclose(A[:, passive].T @ lam, tau_r[passive])
        tau_a = tau_r[actuated] - A[:, actuated].T @ lam
        assert np.linalg.norm(tau_a) >= np.linalg.norm(tau_t[actuated]) - 1e-12
        assert np.linalg.norm(lam) >= np.linalg.norm(lam_f) - 1e-12


def test_five_bar_one_actuated_needs_hybrid_dynamics():
    model, cs, q, qd, qdd = five_bar_state(4)
    with pytest.raises(ValueError, match="m < n_p"):
        constrained_inverse_dynamics(model, q, qd, qdd, cs, [CRANK_L])
    # prescribe the driven crank's acceleration; the four passive joints follow (Kim §3.3)
    t, a, lam = constrained_hybrid_dynamics(model, q, qd, qdd, np.zeros(5), [CRANK_L], cs)
    assert a[CRANK_L] == qdd[CRANK_L]
    a_fd, _ = feed_back(model, cs, q, qd, t)
    np.testing.assert_allclose(a_fd, a, atol=1e-9)


def test_all_actuated_minimum_torque_and_minimum_force():
    model, cs, q, qd, qdd = five_bar_state(5)
    allj = list(range(5))
    tau_r = dyn.inverse_dynamics(model, q, qd, qdd)
    A, _, _ = constraint_terms(model, q, qd, cs)
    tau_f, lam_f = constrained_inverse_dynamics(model, q, qd, qdd, cs, allj, method="min_force")
    np.testing.assert_allclose(lam_f, 0.0, atol=1e-12)  # the open chain's own torques
    np.testing.assert_allclose(tau_f, tau_r, atol=1e-12)
    tau_t, lam_t = constrained_inverse_dynamics(model, q, qd, qdd, cs, allj, method="min_torque")
    np.testing.assert_allclose(lam_t, np.linalg.solve(A @ A.T, A @ tau_r), atol=1e-9)  # (66)
    np.testing.assert_allclose(tau_t, tau_r - A.T @ lam_t, atol=1e-9)  # (65)
    np.testing.assert_allclose(feed_back(model, cs, q, qd, tau_t)[0], qdd, atol=1e-8)


def test_passive_joint_torques_are_honoured():
    model, cs, q, qd, qdd = five_bar_state(6)
    tau_p = np.array([0.0, 0.3, -0.2, 0.0, 0.1])  # e.g. friction at the passive joints
    tau, _ = constrained_inverse_dynamics(model, q, qd, qdd, cs, [CRANK_L, CRANK_R], tau_p)
    np.testing.assert_array_equal(tau[[ELBOW_L, APEX, ELBOW_R]], tau_p[[ELBOW_L, APEX, ELBOW_R]])
    np.testing.assert_allclose(feed_back(model, cs, q, qd, tau)[0], qdd, atol=1e-8)


# ----------------------------------------------------------------------------- simulation
def simulate_five_bar(baumgarte, q0, steps=800, dt=1e-3):
    model, cs = five_bar()
    q_ref = np.zeros(5)
    q, qd = q0.copy(), np.zeros(5)
    for _ in range(steps):
        tau = -5.0 * (q - q_ref) - 0.5 * qd  # a soft hold around the assembled pose
        qdd, _ = constrained_forward_dynamics(model, q, qd, tau, cs, baumgarte=baumgarte)
        qd = qd + dt * qdd
        q = q + dt * qd
    return constraint_terms(model, q, qd, cs)


def test_baumgarte_closes_a_violated_loop():
    q0 = np.zeros(5)
    q0[APEX] = 2e-3  # the loop is open by ~0.4 mm and 2 mrad
    _, _, phi0 = constraint_terms(five_bar()[0], q0, np.zeros(5), five_bar()[1])
    A, bias, phi_free = simulate_five_bar(None, q0)
    _, _, phi_stab = simulate_five_bar((20.0, 20.0), q0)
    assert np.abs(phi_free).max() > 0.5 * np.abs(phi0).max()  # plain: the error stays
    assert np.abs(phi_stab).max() < 1e-4 * np.abs(phi0).max()  # stabilised: it is removed
    with pytest.raises(ValueError):
        constrained_forward_dynamics(five_bar()[0], q0, q0, q0, five_bar()[1], baumgarte=(-1, 0))


def test_plastic_impact_removes_constraint_velocity():
    model = load("random_screw_tree")
    q = np.random.default_rng(12).uniform(-1, 1, model.nq)
    qd = np.random.default_rng(13).uniform(-2, 2, model.nq)
    c = surface_contact(model, "tool", [0.0, 0.0, 1.0],
                        dyn.frame_placement(model, q, "tool")[2, 3])
    A, _, _ = constraint_terms(model, q, qd, c)
    if A[0] @ qd > 0:
        qd = -qd  # approach the surface
    qd_plus, impulse = impact_velocity(model, q, qd, c)
    M = dense_mass_matrix(model, q)
    np.testing.assert_allclose(A @ qd_plus, 0.0, atol=1e-12)
    np.testing.assert_allclose(M @ (qd_plus - qd), A.T @ impulse, atol=1e-9)
    assert impulse[0] > 0.0  # the surface pushes
    assert qd_plus @ M @ qd_plus < qd @ M @ qd  # a plastic impact loses energy
    qd_bounce, _ = impact_velocity(model, q, qd, c, restitution=0.5)
    np.testing.assert_allclose(A @ qd_bounce, -0.5 * (A @ qd), atol=1e-12)
