"""Regressors, the O(n) Slotine–Li torque and parameter bases (Huo 2-113, 2.5, 3-79).

Robots: every bundled robot, UR5 from example-robot-data, a random branching tree with general
screws, and Huo's three base-parameter examples built here from their D-H tables (standard D-H,
z₀ vertical, gravity −z₀): the Stanford arm (Table 1-2), the PUMA 560 and a four-axis RRPR
SCARA (Fig. 2-10), whose base-parameter counts Huo gives as 33, 36 and 8 (Ex. 2-2, 2-3).
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from model_samples import SAMPLE_ROBOTS, SETTINGS, close, dh_link, sample_robot, states

from robot_control import dynamics as dyn
from robot_control.dynamics.regressor import (
    ParameterBasis,
    base_parameters,
    parameter_basis,
    reference_regressor,
    reference_regressor_in_basis,
    regressor,
    regressor_in_basis,
    slotine_li_torque,
    standard_parameter_names,
)
from robot_control.model import bundled_robots
from robot_control.model.dh import load_dh_yaml


def _link(name, sigma, a, alpha, d, theta=0.0, mass=2.0, com=(0.05, -0.03, 0.1)):
    return dh_link(name=name, sigma=sigma, a=a, alpha=alpha, d=d, theta=theta, mass=mass,
                   com=list(com), inertia=[0.05, 0.04, 0.03, 0.002, -0.001, 0.003])


HUO_TABLES = {
    # Huo Table 1-2: a = 0, α = (−90°, 90°, 0, −90°, 90°, 0), d = (0, d₂, q₃, 0, 0, 0)
    "huo_stanford": [
        _link("link1", 0, 0, "-pi/2", 0), _link("link2", 0, 0, "pi/2", 0.154),
        _link("link3", 1, 0, 0, 0.5), _link("link4", 0, 0, "-pi/2", 0),
        _link("link5", 0, 0, "pi/2", 0), _link("link6", 0, 0, 0, 0.263)],
    # PUMA 560 (Corke's standard D-H)
    "huo_puma560": [
        _link("link1", 0, 0, "pi/2", 0), _link("link2", 0, 0.4318, 0, 0),
        _link("link3", 0, 0.0203, "-pi/2", 0.15005), _link("link4", 0, 0, "pi/2", 0.4318),
        _link("link5", 0, 0, "-pi/2", 0), _link("link6", 0, 0, 0, 0)],
    # SCARA, joints R R P R with every axis vertical (α₂ = π turns z down)
    "huo_scara": [
        _link("link1", 0, 0.4, 0, 0.8), _link("link2", 0, 0.3, "pi", 0),
        _link("link3", 1, 0, 0, 0.2), _link("link4", 0, 0, 0, 0.1)],
}
HUO_COUNTS = {"huo_stanford": 33, "huo_puma560": 36, "huo_scara": 8}
#: the bundled D-H robots; Schilling's three-axis SCARA (R3 + R2 + T3 joints) has 1 + 3 + 1
BUNDLED_COUNTS = {"stanford_arm": 33, "puma560": 36, "scara": 5, "ddarm": 15}


@cache
def robot(name: str):
    if name in HUO_TABLES:
        return load_dh_yaml({"name": name, "gravity": [0, 0, -9.81], "links": HUO_TABLES[name]})
    return sample_robot(name)


ROBOTS = [*SAMPLE_ROBOTS, *HUO_TABLES]


# ---------------------------------------------------------------------------- regressors
@pytest.mark.parametrize("name", ROBOTS)
@SETTINGS
@given(data=st.data())
def test_regressor_times_parameters_is_inverse_dynamics(name, data):
    model = robot(name)
    q, qd, qdd = states(data, model.nq, 3)
    Y = regressor(model, q, qd, qdd)
    tau = dyn.inverse_dynamics(model, q, qd, qdd)
    assert Y.shape == (model.nq, 10 * model.nq)
    close(Y @ model.inertial_parameters(), tau, np.abs(tau).max())


@pytest.mark.parametrize("name", ROBOTS)
def test_regressor_is_linear_in_any_parameters(name):
    """Y does not depend on θ: it predicts the torques of a model with other inertias too."""
    model = robot(name)
    rng = np.random.default_rng(3)
    q, qd, qdd = rng.normal(size=(3, model.nq))
    other = model.with_inertial_parameters(
        model.inertial_parameters() * rng.uniform(0.5, 1.5, 10 * model.nq), check=False)
    tau = dyn.inverse_dynamics(other, q, qd, qdd)
    close(regressor(model, q, qd, qdd) @ other.inertial_parameters(), tau, np.abs(tau).max())


def test_regressor_is_block_upper_triangular():
    """Y_ij = 0 unless body j is in the subtree of joint i (Huo 2-137 … 2-146)."""
    model = robot("random_screw_tree")
    Y = regressor(model, *np.random.default_rng(0).normal(size=(3, model.nq)))
    for i in range(model.nq):
        for j in range(model.nq):
            k, ancestor = j, False
            while k >= 0:
                ancestor |= k == i
                k = model.bodies[k].parent
            block = Y[i, 10 * j : 10 * j + 10]
            assert np.any(block) if ancestor else not np.any(block)


@pytest.mark.parametrize("name", ROBOTS)
@SETTINGS
@given(data=st.data())
def test_reference_regressor_and_slotine_li_torque(name, data):
    """Y(q, q̇, q̇_r, q̈_r) θ = M q̈_r + C(q, q̇) q̇_r + g with the Christoffel C of coriolis_matrix."""
    model = robot(name)
    q, qd, qd_r, qdd_r = states(data, model.nq, 4)
    expected = (dyn.mass_matrix(model, q) @ qdd_r + dyn.coriolis_matrix(model, q, qd) @ qd_r
                + dyn.gravity_torques(model, q))
    scale = np.abs(expected).max()
    close(reference_regressor(model, q, qd, qd_r, qdd_r) @ model.inertial_parameters(),
          expected, scale)
    close(slotine_li_torque(model, q, qd, qd_r, qdd_r), expected, scale)


@pytest.mark.parametrize("name", ["ur5", "random_screw_tree"])
def test_reference_regressor_reduces_to_regressor(name):
    """With q̇_r = q̇ and q̈_r = q̈ the Slotine–Li regressor is the inverse-dynamics regressor."""
    model = robot(name)
    q, qd, qdd = np.random.default_rng(5).normal(size=(3, model.nq))
    close(reference_regressor(model, q, qd, qd, qdd), regressor(model, q, qd, qdd), 100.0)


def test_regressors_reject_wrong_lengths():
    model = robot("ur5")
    with pytest.raises(ValueError, match="length"):
        regressor(model, np.zeros(6), np.zeros(6), np.zeros(5))
    with pytest.raises(ValueError, match="length"):
        slotine_li_torque(model, np.zeros(6), np.zeros(6), np.zeros(7), np.zeros(6))


# ------------------------------------------------------------------------ base parameters
def huo_joint_classes(model) -> list[str]:
    """Huo's classes T1–T4, R1–R3 of each joint of a serial chain (Huo 2.5, Fig. 2-8).

    Joint 0 is a virtual revolute joint along gravity; since gravity is uniform, its axis counts
    as coincident with every vertical axis. Axes are compared at a random configuration.
    """
    q = np.random.default_rng(11).uniform(-1, 1, model.nq)
    T = dyn.forward_kinematics(model, q)
    axes = []  # (revolute?, unit direction, point on the axis) in the base frame
    for k, body in enumerate(model.bodies):
        R, p = T[k][:3, :3], T[k][:3, 3]
        w = R @ body.joint.screw[:3]
        v = R @ body.joint.screw[3:] + np.cross(p, w)
        if body.joint.type == "prismatic":
            axes.append((False, v, None))
        else:
            axes.append((True, w, np.cross(w, v)))  # the point of the line closest to the origin

    def parallel(a, b):
        return np.linalg.norm(np.cross(a, b)) < 1e-9

    def coincident(a, pa, b, pb):
        return parallel(a, b) and np.linalg.norm(np.cross(pb - pa, a)) < 1e-9

    g = np.asarray(model.gravity, float)
    joint0 = [(True, g / np.linalg.norm(g), None)] if np.any(g) else []
    classes = []
    for i, (revolute, z, point) in enumerate(axes):
        before = joint0 + axes[:i]
        revs = [(zk, pk) for rk, zk, pk in before if rk]
        if not revolute:
            if not revs:
                classes.append("T4")
            elif any(not parallel(a, b) for a, _ in revs for b, _ in revs):
                classes.append("T1")
            elif parallel(revs[0][0], z):
                classes.append("T3")
            else:
                classes.append("T2")
        elif any(not parallel(zk, z) for zk, _ in revs):
            classes.append("R1")
        elif any(pk is not None and not coincident(zk, pk, z, point) for zk, pk in revs) or any(
            not rk and not parallel(zk, z) for rk, zk, _ in axes[:i]
        ):
            classes.append("R2")
        else:
            classes.append("R3")
    return classes


HUO_WEIGHTS = {"T1": 4, "T2": 3, "T3": 1, "T4": 1, "R1": 7, "R2": 3, "R3": 1}


def huo_minimal_count(model) -> int:
    """n_min = 4n_T1 + 3n_T2 + n_T3 + n_T4 + 7n_R1 + 3n_R2 + n_R3 (Huo, Corollary 2-1)."""
    return sum(HUO_WEIGHTS[c] for c in huo_joint_classes(model))


@pytest.mark.parametrize("name", HUO_COUNTS)
def test_base_parameter_counts_match_huo(name):
    model = robot(name)
    assert huo_minimal_count(model) == HUO_COUNTS[name]
    assert base_parameters(model).size == HUO_COUNTS[name]


@pytest.mark.parametrize("name", BUNDLED_COUNTS)
def test_base_parameter_counts_of_bundled_dh_robots(name):
    if name not in bundled_robots():
        pytest.skip(f"{name} is not bundled")
    assert base_parameters(robot(name)).size == BUNDLED_COUNTS[name]


def _huo_applies(model) -> bool:
    """Huo's theorem covers serial chains whose first axis is along gravity (joint 0 static)."""
    chain = all(b.parent == i - 1 for i, b in enumerate(model.bodies))
    return chain and huo_joint_classes(model)[0] in ("R3", "T3", "T4")


@pytest.mark.parametrize("name", [*bundled_robots(), "ur5"])
def test_base_parameter_count_of_bundled_robots_follows_huo(name):
    model = robot(name)
    if not _huo_applies(model):
        pytest.skip("Huo's count assumes a serial chain whose first joint axis is vertical")
    assert base_parameters(model).size == huo_minimal_count(model)


@pytest.mark.parametrize("name", ROBOTS)
@SETTINGS
@given(data=st.data())
def test_base_regressor_reproduces_torques(name, data):
    model = robot(name)
    basis = base_parameters(model)
    q, qd, qdd, qd_r, qdd_r = states(data, model.nq, 5)
    theta = model.inertial_parameters()
    p = basis.parameters(theta)
    tau = dyn.inverse_dynamics(model, q, qd, qdd)
    close(regressor_in_basis(model, basis, q, qd, qdd) @ p, tau, np.abs(tau).max())
    ref = reference_regressor(model, q, qd, qd_r, qdd_r) @ theta
    close(reference_regressor_in_basis(model, "base", q, qd, qd_r, qdd_r) @ p, ref,
          np.abs(ref).max())


@pytest.mark.parametrize("name", ROBOTS)
def test_base_regressor_has_full_column_rank(name):
    """No base parameter is redundant: stacked base regressors have rank k = basis size."""
    model = robot(name)
    basis = base_parameters(model)
    rng = np.random.default_rng(42)
    W = np.vstack([regressor_in_basis(model, basis, *rng.normal(size=(3, model.nq)))
                   for _ in range(30)])
    assert np.linalg.matrix_rank(W) == basis.size
    assert basis.matrix.shape == (basis.size, 10 * model.nq)
    assert basis.regressor_map.shape == (10 * model.nq, basis.size)


def test_base_parameter_names_follow_the_leading_standard_parameter():
    """Link 1 of the Stanford arm keeps one parameter, its moment about the joint-1 axis, with
    link 2's terms folded in (Huo Ex. 2-2: ZZ₁ = zz₁ + yy₂ + … in modified D-H frames; in these
    standard D-H frames joint 1 turns about y₁)."""
    model = robot("huo_stanford")
    basis = base_parameters(model)
    axis = "xyz"[int(np.argmax(np.abs(model.bodies[0].joint.screw[:3])))]
    lead = f"link1.{axis}{axis}"
    assert [n for n in basis.names if n.startswith("link1.")] == [lead + "+…"]
    row = basis.matrix[basis.names.index(lead + "+…")]
    std = standard_parameter_names(model)
    assert row[std.index(lead)] == 1.0
    assert np.count_nonzero(row[10:20]) > 0  # link 2's inertia about joint 1 folds in
    assert all(n.split("+")[0] in std for n in basis.names)
    assert len(set(basis.names)) == basis.size


def test_standard_basis_is_identity():
    model = robot("ur5")
    basis = parameter_basis(model, "standard")
    assert basis.size == 60 and basis.names[9] == f"{model.body_names[0]}.m"
    np.testing.assert_array_equal(basis.matrix, np.eye(60))


# ---------------------------------------------------------------------- group bases
def _with_groups(model, groups: dict):
    copy = model.copy()
    copy.parameter_groups = groups
    return copy


def test_group_basis_reproduces_torques():
    """A group set that spans what the regressor sees (here: base params, rescaled and mixed)."""
    model = robot("huo_scara")
    base = base_parameters(model)
    mix = np.random.default_rng(8).normal(size=(base.size, base.size))
    names = [f"P{k + 1}" for k in range(base.size)]
    grouped = _with_groups(model, {"mixed": {"names": names, "matrix": mix @ base.matrix}})
    basis = parameter_basis(grouped, "mixed")
    assert isinstance(basis, ParameterBasis) and basis.names == tuple(names)
    q, qd, qdd = np.random.default_rng(9).normal(size=(3, model.nq))
    tau = dyn.inverse_dynamics(model, q, qd, qdd)
    close(regressor_in_basis(grouped, "mixed", q, qd, qdd)
          @ basis.parameters(model.inertial_parameters()), tau, np.abs(tau).max())


def test_group_basis_that_misses_a_visible_parameter_is_rejected():
    model = robot("huo_scara")
    base = base_parameters(model)
    groups = {"short": {"names": list(base.names[:-1]), "matrix": base.matrix[:-1]}}
    with pytest.raises(ValueError, match="do not determine the joint torques"):
        parameter_basis(_with_groups(model, groups), "short")


@pytest.mark.parametrize("name", bundled_robots())
def test_bundled_group_sets_reproduce_torques(name):
    model = robot(name)
    if not model.parameter_groups:
        pytest.skip(f"{name} ships no parameter groups")
    rng = np.random.default_rng(12)
    q, qd, qdd = rng.normal(size=(3, model.nq))
    tau = dyn.inverse_dynamics(model, q, qd, qdd)
    for group in model.parameter_groups:
        basis = parameter_basis(model, group)
        close(regressor_in_basis(model, basis, q, qd, qdd)
              @ basis.parameters(model.inertial_parameters()), tau, np.abs(tau).max())


def _ddarm_with_assumptions(**changes):
    model = robot("ddarm")
    huo_p = model.parameter_groups["huo_p"]
    zero = ["link2.xy", "link2.xz", "link2.mx", "link3.xy", "link3.yz", "link3.my"]
    theta = model.inertial_parameters()
    for key, value in changes.items():
        theta[standard_parameter_names(model).index(key.replace("_", "."))] = value
    changed = model.with_inertial_parameters(theta, check=False)
    return _with_groups(changed, {"huo_p": {"names": list(huo_p.names), "matrix": huo_p.matrix,
                                            "assumed_zero": zero}})


def test_group_basis_with_parameters_assumed_zero():
    """Huo's nine DDArm groups hold when xy₂ = xz₂ = mx₂ = xy₃ = yz₃ = my₃ = 0 (Ex. 3-4)."""
    if "ddarm" not in bundled_robots():
        pytest.skip("ddarm is not bundled")
    model = _ddarm_with_assumptions()
    basis = parameter_basis(model, "huo_p")
    assert basis.size == 9
    q, qd, qd_r, qdd_r = np.random.default_rng(13).normal(size=(4, 3))
    expected = reference_regressor(model, q, qd, qd_r, qdd_r) @ model.inertial_parameters()
    close(reference_regressor_in_basis(model, basis, q, qd, qd_r, qdd_r)
          @ basis.parameters(model.inertial_parameters()), expected, np.abs(expected).max())
    with pytest.raises(ValueError, match="link2.mx = 0"):
        parameter_basis(_ddarm_with_assumptions(link2_mx=0.3), "huo_p")


def test_assumed_zero_must_name_standard_parameters():
    model = robot("huo_scara")
    base = base_parameters(model)
    groups = {"g": {"names": list(base.names), "matrix": base.matrix,
                    "assumed_zero": ["link9.xx"]}}
    with pytest.raises(ValueError, match="unknown parameter 'link9.xx'"):
        parameter_basis(_with_groups(model, groups), "g")


def test_unknown_basis_names_the_choices():
    with pytest.raises(ValueError, match="standard, base"):
        parameter_basis(robot("ur5"), "nope")
