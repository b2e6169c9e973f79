"""Textbook numbers: Schilling's and Craig's closed forms, Huo's DDArm, against the bundled models.

Printed reference values are met to the digits printed (half a unit in the last place);
closed forms and the compiled dynamics must agree to rounding error on random states.
"""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from robot_control import dynamics as dyn
from robot_control.dynamics.reference import closed_form as cf
from robot_control.model import load_robot
from robot_control.model.dh import load_dh_yaml
from robot_control.model.resources import share_path

PI = np.pi
TIGHT = 1e-11


def assert_printed(values, printed) -> None:
    """|value − printed| ≤ half a unit in the printed value's last digit, element by element."""
    values = np.atleast_1d(np.asarray(values, dtype=float))
    printed = [printed] if isinstance(printed, str) else list(printed)
    assert values.shape == (len(printed),)
    for value, text in zip(values, printed):
        decimals = len(text.split(".")[1]) if "." in text else 0
        assert abs(value - float(text)) <= 0.5 * 10.0**-decimals + 1e-12, (value, text)


def spec(name: str, **constants) -> dict:
    with open(share_path("config", "robots", f"{name}.yaml")) as fh:
        s = yaml.safe_load(fh)
    s["constants"].update(constants)
    return s


def model_with(name: str, **constants):
    return load_dh_yaml(spec(name, **constants))


def random_states(n: int, count: int, seed: int):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        yield rng.uniform(-PI, PI, n), rng.uniform(-3, 3, n), rng.uniform(-5, 5, n)


# ------------------------------------------------------------ Schilling, two axes
TWO_AXIS = [
    # (m, a, q, q̇, q̈, printed τ) — schilling.md "Derived reference values"
    ((1, 1), (1, 1), (PI / 3, -PI / 3), (0, 0), (0, 0), ("12.25775", "4.90310")),
    ((1, 1), (1, 1), (0, PI / 2), (1, 1), (0, 0), ("13.2093", "0.5")),
    ((1, 1), (1, 1), (PI / 3, -PI / 3), (0.5, -1), (2, 1), ("17.174417", "6.294847")),
    ((2, 1), (1, 0.5), (PI / 3, -PI / 3), (0.5, -1), (2, 1), ("16.466083", "2.897423")),
]


@pytest.mark.parametrize(("m", "a", "q", "qd", "qdd", "printed"), TWO_AXIS)
def test_two_axis_printed_torques(m, a, q, qd, qdd, printed):
    model = model_with("two_axis_planar", m1=m[0], m2=m[1], a1=a[0], a2=a[1])
    closed = cf.torque(cf.two_axis_terms(q, qd, m, a), qdd)
    assert_printed(closed, printed)
    assert_printed(dyn.inverse_dynamics(model, q, qd, qdd), printed)
    np.testing.assert_allclose(dyn.inverse_dynamics(model, q, qd, qdd), closed, atol=TIGHT)


def test_two_axis_home_inertia_printed():
    D = dyn.mass_matrix(load_robot("two_axis_planar"), [PI / 3, -PI / 3])
    assert_printed(D.ravel(), ["2.166667", "0.583333", "0.583333", "0.333333"])


def test_two_axis_centrifugal_state_is_exact():
    # q = (0, π/2), q̇ = (1, 1): τ₂ = m₂a₁a₂S₂q̇₁²/2 = 0.5 with no gravity (C₁₂ = 0)
    tau = dyn.inverse_dynamics(load_robot("two_axis_planar"), [0, PI / 2], [1, 1], [0, 0])
    assert tau[1] == pytest.approx(0.5, abs=1e-12)


# ------------------------------------------------------------ Schilling, SCARA
SCARA = [
    ((0, PI / 2, 0.1), (1, -1, 0.2), (0.5, 0.5, 1), ("5.666667", "1.5", "-8.8062")),
    ((PI / 4, -PI / 3, 0.3), (2, 1, 0), (0, 0, 0), ("3.897114", "-5.196152", "-9.8062")),
]


@pytest.mark.parametrize(("q", "qd", "qdd", "printed"), SCARA)
def test_scara_printed_torques(q, qd, qdd, printed):
    closed = cf.torque(cf.scara_terms(q, qd), qdd)
    tau = dyn.inverse_dynamics(load_robot("scara"), q, qd, qdd)
    assert_printed(closed, printed)
    assert_printed(tau, printed)
    np.testing.assert_allclose(tau, closed, atol=TIGHT)


# ------------------------------------------------------------ Schilling, one axis
def test_one_axis_printed_torque():
    closed = cf.torque(cf.one_axis_terms([0.0], [1.0]), [2.0])
    assert_printed(closed, "5.569767")
    assert_printed(dyn.inverse_dynamics(load_robot("one_axis"), [0.0], [1.0], [2.0]), "5.569767")


def tip_wrench(model, q, f_world):
    """f_ext on the last body: force f_world at its origin (the rod's tip), in body axes."""
    R = dyn.forward_kinematics(model, q)[-1][:3, :3]
    f_ext = np.zeros((model.nq, 6))
    f_ext[-1, 3:] = R.T @ np.asarray(f_world, dtype=float)
    return f_ext


def test_one_axis_tip_force_printed():
    model = load_robot("one_axis")
    f_tool = (0.0, -1.0, 0.0)
    closed = cf.torque(cf.one_axis_terms([0.0], [0.0]), [0.0]) + cf.one_axis_tool_torque([0.0],
                                                                                        1.0, f_tool)
    assert_printed(closed, "5.9031")
    tau = dyn.inverse_dynamics(model, [0.0], [0.0], [0.0], f_ext=tip_wrench(model, [0.0], f_tool))
    assert_printed(tau, "5.9031")


def test_one_axis_tip_force_random_states():
    model = load_robot("one_axis")
    rng = np.random.default_rng(11)
    for q, qd, qdd in random_states(1, 20, 12):
        f = np.array([*rng.uniform(-3, 3, 2), 0.0])
        closed = cf.torque(cf.one_axis_terms(q, qd), qdd) + cf.one_axis_tool_torque(q, 1.0, f)
        tau = dyn.inverse_dynamics(model, q, qd, qdd, f_ext=tip_wrench(model, q, f))
        np.testing.assert_allclose(tau, closed, atol=TIGHT)


# ------------------------------------------------------------ Schilling, friction (6-3-3)
FRICTION = {"viscous": 0.1, "coulomb": 0.2, "static": 0.5, "stribeck_velocity": 0.01}


@pytest.mark.parametrize(("qd", "printed"), [(1.0, "0.3"), (0.001, "0.471551"),
                                              (0.05, "0.207021")])
def test_friction_printed(qd, printed):
    closed = cf.schilling_friction(qd, 0.1, 0.2, 0.5, 0.01)
    assert_printed(closed, printed)
    s = spec("one_axis")
    s["links"][0]["friction"] = dict(FRICTION)
    model = load_dh_yaml(s)
    assert_printed(dyn.friction_torques(model, [qd]), printed)
    assert dyn.friction_torques(model, [-qd])[0] == pytest.approx(-float(closed), abs=1e-15)


def test_friction_is_added_to_the_closed_forms():
    s = spec("two_axis_planar")
    for link in s["links"]:
        link["friction"] = dict(FRICTION)
    model = load_dh_yaml(s)
    for q, qd, qdd in random_states(2, 10, 5):
        b = cf.schilling_friction(qd, 0.1, 0.2, 0.5, 0.01)
        closed = cf.torque(cf.two_axis_terms(q, qd), qdd, friction=b)
        tau = dyn.inverse_dynamics(model, q, qd, qdd) + dyn.friction_torques(model, qd)
        np.testing.assert_allclose(tau, closed, atol=TIGHT)


# ------------------------------------------------------------ closed forms vs dynamics
def check_terms(model, terms, q, qd, qdd):
    D, c, h = terms
    np.testing.assert_allclose(dyn.mass_matrix(model, q), D, atol=TIGHT)
    np.testing.assert_allclose(dyn.gravity_torques(model, q), h, atol=TIGHT)
    np.testing.assert_allclose(dyn.bias_torques(model, q, qd) - h, c, atol=TIGHT)
    np.testing.assert_allclose(dyn.inverse_dynamics(model, q, qd, qdd), D @ qdd + c + h,
                               atol=TIGHT)


@pytest.mark.parametrize(("m", "a"), [((1, 1), (1, 1)), ((2.5, 0.7), (0.6, 1.3))])
def test_two_axis_closed_form_random_states(m, a):
    model = model_with("two_axis_planar", m1=m[0], m2=m[1], a1=a[0], a2=a[1])
    for q, qd, qdd in random_states(2, 20, 1):
        check_terms(model, cf.two_axis_terms(q, qd, m, a), q, qd, qdd)


@pytest.mark.parametrize(("m", "a"), [((1, 1, 1), (1, 1)), ((1.5, 0.8, 2.2), (0.7, 0.4))])
def test_scara_closed_form_random_states(m, a):
    model = model_with("scara", m1=m[0], m2=m[1], m3=m[2], a1=a[0], a2=a[1])
    for q, qd, qdd in random_states(3, 20, 2):
        check_terms(model, cf.scara_terms(q, qd, m, a), q, qd, qdd)


@pytest.mark.parametrize(("m", "a"), [(1.0, 1.0), (2.5, 0.4)])
def test_one_axis_closed_form_random_states(m, a):
    model = model_with("one_axis", m1=m, a1=a)
    for q, qd, qdd in random_states(1, 10, 3):
        check_terms(model, cf.one_axis_terms(q, qd, m, a), q, qd, qdd)


@pytest.mark.parametrize(("m", "l"), [((1, 1), (1, 1)), ((1.5, 2.5), (0.7, 1.2))])
def test_craig_rr_closed_form_random_states(m, l):  # noqa: E741 - Craig's l
    model = model_with("rr_point_mass", m1=m[0], m2=m[1], l1=l[0], l2=l[1])
    for q, qd, qdd in random_states(2, 20, 4):
        check_terms(model, cf.craig_rr_terms(q, qd, m, l), q, qd, qdd)


def test_craig_m11_needs_the_corrected_m2():
    # The seed's M₁₁ = l₂² + 2l₁l₂m₂c₂ + l₁²(m₁+m₂) is off by (m₂ − 1)l₂²; only the corrected
    # form matches the model when m₂ ≠ 1.
    m, l, q = (1.0, 3.0), (1.0, 2.0), np.array([0.3, 0.9])
    M = dyn.mass_matrix(model_with("rr_point_mass", m1=m[0], m2=m[1], l1=l[0], l2=l[1]), q)
    seed = l[1] ** 2 + 2 * l[0] * l[1] * m[1] * np.cos(q[1]) + l[0] ** 2 * (m[0] + m[1])
    assert M[0, 0] == pytest.approx(cf.craig_rr_terms(q, np.zeros(2), m, l)[0][0, 0], abs=1e-12)
    assert abs(M[0, 0] - seed) == pytest.approx((m[1] - 1) * l[1] ** 2, abs=1e-12)


# ------------------------------------------------------------ Huo's DDArm
Q0 = np.array([-0.1, 1.5, 1.0])
QD = np.array([0.6, 1.0, -0.5])
H_Q0 = ["13.46698", "-0.29611", "-0.04508", "0.94304", "-0.01397", "0.39"]
G_Q0 = ["0", "-30.0353", "-2.5592"]
G_QD = ["0", "-23.9899", "1.2300"]


def upper(H):
    return H[np.triu_indices(3)]


@pytest.mark.parametrize("source", ["closed_form", "model"])
def test_ddarm_printed_values(source):
    if source == "closed_form":
        H0, G0 = cf.ddarm_inertia(Q0), cf.ddarm_gravity(Q0)
        Hd, Gd = cf.ddarm_inertia(QD), cf.ddarm_gravity(QD)
    else:
        model = load_robot("ddarm")
        H0, G0 = dyn.mass_matrix(model, Q0), dyn.gravity_torques(model, Q0)
        Hd, Gd = dyn.mass_matrix(model, QD), dyn.gravity_torques(model, QD)
    assert_printed(upper(H0), H_Q0)
    assert_printed(G0, G_Q0)
    assert_printed([Hd[0, 0], Hd[1, 1]], ["12.9444", "1.0738"])
    assert_printed(Gd, G_QD)


def test_ddarm_closed_form_random_states():
    model = load_robot("ddarm")
    for q, qd, qdd in random_states(3, 20, 6):
        H, C, G = cf.ddarm_terms(q, qd)
        np.testing.assert_allclose(dyn.mass_matrix(model, q), H, atol=TIGHT)
        np.testing.assert_allclose(dyn.gravity_torques(model, q), G, atol=TIGHT)
        # the compiled C is the Christoffel one (Ṁ − 2C skew), so they agree entry by entry
        np.testing.assert_allclose(dyn.coriolis_matrix(model, q, qd), C, atol=TIGHT)
        np.testing.assert_allclose(dyn.inverse_dynamics(model, q, qd, qdd),
                                   H @ qdd + C @ qd + G, atol=TIGHT)


def test_ddarm_inertia_derivatives_match_differences():
    eps = 1e-6
    for q, _, _ in random_states(3, 10, 8):
        dH = cf.ddarm_inertia_derivatives(q)
        for k in range(3):
            e = np.zeros(3)
            e[k] = eps
            numeric = (cf.ddarm_inertia(q + e) - cf.ddarm_inertia(q - e)) / (2 * eps)
            np.testing.assert_allclose(dH[k], numeric, atol=1e-8)


def test_ddarm_christoffel_makes_hdot_minus_2c_skew():
    for q, qd, _ in random_states(3, 10, 9):
        Hdot = np.einsum("kij,k->ij", cf.ddarm_inertia_derivatives(q), qd)
        N = Hdot - 2 * cf.ddarm_terms(q, qd)[1]
        np.testing.assert_allclose(N, -N.T, atol=1e-12)


def test_huo_p_of_the_bundled_ddarm_is_p1_to_p9():
    model = load_robot("ddarm")
    groups = model.parameter_groups["huo_p"]
    np.testing.assert_allclose(groups.matrix @ model.inertial_parameters(), cf.DDARM_P,
                               rtol=0, atol=1e-12)


def test_huo_p_groups_are_what_the_dynamics_depend_on():
    """For any parameters with Huo's zeros, the model's H, C, G are Huo's formulas in p = G θ."""
    model = load_robot("ddarm")
    groups = model.parameter_groups["huo_p"]
    zero = [10 + 1, 10 + 2, 10 + 6, 20 + 1, 20 + 4, 20 + 7]  # xy₂ xz₂ mx₂ xy₃ yz₃ my₃
    rng = np.random.default_rng(10)
    for _ in range(5):
        theta = model.inertial_parameters() + rng.normal(0, 0.3, 30)
        theta[zero] = 0.0
        other = model.with_inertial_parameters(theta, check=False)
        P = groups.matrix @ theta
        for q, qd, _ in random_states(3, 3, int(rng.integers(1 << 30))):
            np.testing.assert_allclose(dyn.mass_matrix(other, q), cf.ddarm_inertia(q, P),
                                       atol=TIGHT)
            np.testing.assert_allclose(dyn.gravity_torques(other, q), cf.ddarm_gravity(q, P),
                                       atol=TIGHT)
            np.testing.assert_allclose(dyn.coriolis_matrix(other, q, qd),
                                       cf.ddarm_terms(q, qd, P)[1], atol=TIGHT)


def test_ddarm_links_are_physically_consistent():
    for body in load_robot("ddarm").bodies:
        m, I = body.inertia.mass, body.inertia.inertia_com
        e = np.linalg.eigvalsh(I)
        assert m > 0 and e[0] > 0
        assert e[2] < e[0] + e[1]
