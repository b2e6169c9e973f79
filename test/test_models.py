"""Robot models: the bundled robots, D-H tables (standard and modified), and clear errors."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from model_samples import dh_link

from robot_control import dynamics as dyn
from robot_control.foundation.spatial import rpy_to_matrix, screw_exp, transform
from robot_control.model import ModelError, bundled_robots, load_robot, load_urdf
from robot_control.model.dh import (
    dh_joint,
    load_dh_yaml,
    modified_dh_transform,
    standard_dh_transform,
)
from robot_control.model.expressions import number, read_constants
from robot_control.model.parameter_groups import parse_parameter_groups
from robot_control.model.resources import share_path

EXPECTED = {
    "one_axis": 1,
    "two_axis_planar": 2,
    "scara": 3,
    "rr_point_mass": 2,
    "three_link_planar": 3,
    "stanford_arm": 6,
    "puma560": 6,
    "ddarm": 3,
}


def bundled_spec(name: str) -> dict:
    with open(share_path("config", "robots", f"{name}.yaml")) as fh:
        return yaml.safe_load(fh)


# ----------------------------------------------------------------- bundled robots
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bundled_robot_loads_with_its_joints(name):
    model = load_robot(name)
    n = EXPECTED[name]
    assert model.nq == n
    assert model.joint_names == [f"joint{i}" for i in range(1, n + 1)]
    assert model.body_names == [f"link{i}" for i in range(1, n + 1)]
    assert name in bundled_robots()
    assert np.all(model.effort_limit > 0) and np.all(np.isfinite(model.effort_limit))
    assert np.all(model.velocity_limit > 0) and np.all(np.isfinite(model.velocity_limit))
    # M(q) symmetric positive definite at a random configuration inside the limits
    rng = np.random.default_rng(7)
    lo = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    hi = np.where(np.isfinite(model.upper), model.upper, np.pi)
    M = dyn.mass_matrix(model, rng.uniform(lo, hi))
    np.testing.assert_allclose(M, M.T, atol=1e-12)
    assert np.linalg.eigvalsh(M)[0] > 0.0


def test_bundled_gravity_follows_the_books():
    g0 = 9.8062
    np.testing.assert_array_equal(load_robot("one_axis").gravity, [0, -g0, 0])
    np.testing.assert_array_equal(load_robot("two_axis_planar").gravity, [0, -g0, 0])
    np.testing.assert_array_equal(load_robot("scara").gravity, [0, 0, -g0])
    np.testing.assert_array_equal(load_robot("rr_point_mass").gravity, [0, -9.81, 0])
    np.testing.assert_array_equal(load_robot("ddarm").gravity, [0, 0, -9.81])


def test_only_the_ddarm_ships_huo_p():
    assert set(load_robot("ddarm").parameter_groups) == {"huo_p"}
    groups = load_robot("ddarm").parameter_groups["huo_p"]
    assert groups.names == [f"P{k}" for k in range(1, 10)]
    assert groups.matrix.shape == (9, 30)
    assert groups["matrix"] is groups.matrix  # dict-style access of RobotModel's comment


def test_unknown_robot_lists_the_bundled_ones():
    with pytest.raises(ModelError) as err:
        load_robot("no_such_robot")
    message = str(err.value)
    assert "no_such_robot" in message
    for name in EXPECTED:
        assert name in message


# ------------------------------------------------------------ D-H = M · exp([S] q)
def dh_product(rows, convention, q, base):
    """World placement of every D-H frame as the textbook product of ⁱ⁻¹A_i(q_i)."""
    A = standard_dh_transform if convention == "standard" else modified_dh_transform
    T, out = base.copy(), []
    for row, qi in zip(rows, q):
        prismatic = row["sigma"] == 1
        T = T @ A(row["a"], row["alpha"], row["d"] + (qi if prismatic else 0.0),
                  row["theta"] + (0.0 if prismatic else qi))
        out.append(T)
    return np.array(out)


finite = st.floats(-2.0, 2.0, allow_nan=False)
dh_row = st.fixed_dictionaries(
    {"a": finite, "alpha": finite, "d": finite, "theta": finite, "sigma": st.sampled_from([0, 1])}
)


@settings(max_examples=40, deadline=None)
@given(
    rows=st.lists(dh_row, min_size=1, max_size=4),
    convention=st.sampled_from(["standard", "modified"]),
    base_xyz=st.lists(finite, min_size=3, max_size=3),
    base_rpy=st.lists(finite, min_size=3, max_size=3),
    seed=st.integers(0, 2**31),
)
def test_dh_table_equals_product_of_exponentials(rows, convention, base_xyz, base_rpy, seed):
    spec = {
        "convention": convention,
        "base": {"xyz": base_xyz, "rpy": base_rpy},
        "links": [dh_link(**r) for r in rows],
    }
    model = load_dh_yaml(spec)
    q = np.random.default_rng(seed).uniform(-3.0, 3.0, len(rows))
    base = transform(rpy_to_matrix(base_rpy), base_xyz)
    np.testing.assert_allclose(dyn.forward_kinematics(model, q),
                               dh_product(rows, convention, q, base), atol=1e-12)


@pytest.mark.parametrize("name", ["stanford_arm", "puma560", "scara", "ddarm", "rr_point_mass"])
def test_bundled_kinematics_equal_their_dh_tables(name):
    spec = bundled_spec(name)
    model = load_robot(name)
    env = read_constants(spec.get("constants"), name)
    rows = [{k: number(r.get(k, 0), env, name) for k in ("a", "alpha", "d", "theta")}
            | {"sigma": r.get("sigma", 0)} for r in spec["links"]]
    base = transform(None, spec.get("base", {}).get("xyz", [0, 0, 0]))
    rng = np.random.default_rng(3)
    for _ in range(5):
        q = rng.uniform(-2, 2, model.nq)
        np.testing.assert_allclose(dyn.forward_kinematics(model, q),
                                   dh_product(rows, spec["convention"], q, base), atol=1e-12)


def test_puma560_zero_pose_matches_the_toolbox():
    # Robotics Toolbox: Puma560().fkine(qz).t = (0.4521, −0.15005, 0.4318) above the shoulder.
    T = dyn.frame_placement(load_robot("puma560"), np.zeros(6))
    np.testing.assert_allclose(T[:3, 3], [0.4521, -0.15005, 0.4318 + 0.672], atol=1e-12)


@pytest.mark.parametrize("name", ["puma560", "stanford_arm", "scara", "ddarm", "five_bar"])
def test_interpreted_frame_placement_is_the_kernels(name):
    """kinematics.frame_placement_once (numpy, a scenario's Cartesian start) against the kernel's."""
    from robot_control.dynamics.kinematics import frame_placement_once

    model = load_robot(name)
    rng = np.random.default_rng(7)
    for _ in range(5):
        q = rng.uniform(-2, 2, model.nq)
        for frame in [None, *model.body_names, *model.frames]:
            np.testing.assert_allclose(frame_placement_once(model, q, frame),
                                       dyn.frame_placement(model, q, frame), rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="length"):
        frame_placement_once(model, np.zeros(model.nq + 1))


def test_scara_placement_is_schilling_6_6_17():
    a1 = a2 = 1.0
    d1 = 0.8
    q = np.array([0.3, -1.1, 0.2])
    T = dyn.forward_kinematics(load_robot("scara"), q)[2]
    C, S = np.cos(q[0] - q[1]), np.sin(q[0] - q[1])
    expected = np.array([
        [C, S, 0, a1 * np.cos(q[0]) + a2 * C],
        [S, -C, 0, a1 * np.sin(q[0]) + a2 * S],
        [0, 0, -1, d1 - q[2]],
        [0, 0, 0, 1],
    ])
    np.testing.assert_allclose(T, expected, atol=1e-12)


def test_tool_and_named_frames():
    spec = bundled_spec("two_axis_planar")
    spec["tool"] = {"xyz": [0.1, 0, 0]}
    spec["frames"] = {"elbow": {"link": "link1", "xyz": [0, 0, 0]},
                      "camera": {"link": "base", "matrix": np.eye(4).tolist()}}
    model = load_dh_yaml(spec)
    q = np.array([0.4, 0.7])
    assert model.end_effector == "tool"
    np.testing.assert_allclose(dyn.frame_placement(model, q, "tool")[:3, 3],
                               [1.1 * np.cos(1.1) + np.cos(0.4),
                                1.1 * np.sin(1.1) + np.sin(0.4), 0],
                               atol=1e-12)
    np.testing.assert_allclose(dyn.frame_placement(model, q, "elbow")[:3, 3],
                               [np.cos(0.4), np.sin(0.4), 0], atol=1e-12)
    np.testing.assert_allclose(dyn.frame_placement(model, q, "camera"), np.eye(4))


def test_inertia_as_six_numbers_or_matrix_and_expressions():
    six = {"links": [dh_link(mass=2.0, com=[0.1, 0, 0], inertia=[1, 2, 2.5, 0.1, 0.2, 0.3])]}
    full = {"constants": {"k": 0.1},
            "links": [dh_link(mass="4/2", com=["k", 0, 0],
                              inertia=[[1, "k", "2*k"], [0.1, 2, "3*k"], [0.2, 0.3, 2.5]])]}
    np.testing.assert_allclose(load_dh_yaml(six).inertial_parameters(),
                               load_dh_yaml(full).inertial_parameters(), atol=1e-15)


def test_friction_static_defaults_to_coulomb():
    spec = bundled_spec("one_axis")
    spec["links"][0]["friction"] = {"viscous": 0.1, "coulomb": 0.2}
    f = load_dh_yaml(spec).joints[0].friction
    assert (f.viscous, f.coulomb, f.static) == (0.1, 0.2, 0.2)


# --------------------------------------------------------------- D-H errors
def base_table() -> dict:
    return {"name": "t", "convention": "standard",
            "links": [dh_link(name="upper", joint="shoulder", a=1.0),
                      dh_link(name="fore", joint="elbow", a=1.0)]}


def with_link(**changes) -> dict:
    spec = base_table()
    for key, value in changes.items():
        if value is None:
            del spec["links"][1][key]
        else:
            spec["links"][1][key] = value
    return spec


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        (with_link(mas=1.0), ["'fore'", "'elbow'", "unknown key 'mas'"]),
        (with_link(mass=None), ["'fore'", "missing key 'mass'"]),
        (with_link(mass=-1.0), ["'fore'", "'mass'", "non-negative"]),
        (with_link(mass="heavy"), ["'fore'", "'mass'", "unknown constant 'heavy'"]),
        (with_link(mass=[1.0]), ["'fore'", "'mass'", "expected a number"]),
        (with_link(a=True), ["'fore'", "'a'", "expected a number"]),
        (with_link(alpha="pi/"), ["'fore'", "'alpha'", "not a number"]),
        (with_link(d="__import__('os').getcwd()"), ["'fore'", "'d'", "may only use"]),
        (with_link(d="(1).real"), ["'fore'", "'d'", "may only use"]),
        (with_link(theta="1/0"), ["'fore'", "'theta'", "cannot evaluate"]),
        (with_link(theta="10.0**10**10"), ["'fore'", "'theta'", "cannot evaluate"]),
        (with_link(sigma=2), ["'fore'", "'sigma'", "0 (revolute) or 1 (prismatic)"]),
        (with_link(sigma="revolute"), ["'fore'", "'sigma'"]),
        (with_link(inertia=[1, 1, -1, 0, 0, 0]), ["'fore'", "'inertia'", "positive"]),
        (with_link(inertia=[1, 1, 3, 0, 0, 0]), ["'fore'", "'inertia'", "triangle"]),
        (with_link(inertia=[1, 1, 1]), ["'fore'", "'inertia'", "6 numbers"]),
        (with_link(inertia=[[1, 0.5, 0], [0, 1, 0], [0, 0, 1]]), ["'fore'", "not symmetric"]),
        (with_link(com=[0, 0]), ["'fore'", "'com'", "3 numbers"]),
        (with_link(lower=1.0, upper=-1.0), ["'fore'", "'lower'", "'upper'"]),
        (with_link(effort=0.0), ["'fore'", "'effort'", "positive"]),
        (with_link(friction={"viscus": 1.0}), ["'fore'", "unknown key 'viscus'"]),
        (with_link(friction={"coulomb": -1.0}), ["'fore'", "'coulomb'", "non-negative"]),
        (with_link(friction={"stribeck_velocity": 0}), ["'fore'", "'stribeck_velocity'"]),
        (with_link(friction=0.3), ["'fore'", "'friction'", "mapping"]),
    ],
)
def test_dh_link_errors_name_link_joint_and_key(spec, words):
    with pytest.raises(ModelError) as err:
        load_dh_yaml(spec)
    for word in words:
        assert word in str(err.value)


def dh_with(**top) -> dict:
    spec = base_table()
    spec.update(top)
    return spec


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        (dh_with(convention="craig"), ["'convention'", "standard, modified"]),
        (dh_with(gravty=[0, 0, -9.81]), ["unknown key 'gravty'"]),
        (dh_with(gravity=[0, -9.81]), ["'gravity'", "3 numbers"]),
        (dh_with(links=[]), ["'links'", "non-empty"]),
        (dh_with(links=[[0, 0, 1, 0]]), ["links[0]", "mapping"]),
        (dh_with(constants={"2x": 1.0}), ["constant name", "2x"]),
        (dh_with(base={"xyz": [0, 0, 0], "quat": [1, 0, 0, 0]}), ["'base'", "unknown key 'quat'"]),
        (dh_with(base={"matrix": np.diag([2.0, 1, 1, 1]).tolist()}), ["'base'", "rigid"]),
        (dh_with(frames={"cam": {"link": "wrist"}}), ["frame 'cam'", "unknown link 'wrist'"]),
        (dh_with(frames={"fore": {"xyz": [0, 0, 0]}}), ["frame 'fore'", "clashes"]),
    ],
)
def test_dh_table_errors_name_the_key(spec, words):
    with pytest.raises(ModelError) as err:
        load_dh_yaml(spec)
    for word in words:
        assert word in str(err.value)


def test_dh_file_errors_name_the_file(tmp_path):
    path = tmp_path / "arm.yaml"
    path.write_text(yaml.safe_dump(with_link(sigma=3)))
    with pytest.raises(ModelError, match="arm.yaml.*'fore'.*'sigma'"):
        load_robot(path)
    path.write_text("links: [a: 1\n")
    with pytest.raises(ModelError, match="arm.yaml: not valid YAML"):
        load_robot(path)


def test_dh_file_loads_by_path_with_a_groups_file_beside_it(tmp_path):
    (tmp_path / "arm.yaml").write_text(yaml.safe_dump(base_table()))
    (tmp_path / "arm.groups.yaml").write_text("mine: {g1: {upper.zz: 1, fore.m: 2}}\n")
    model = load_robot(tmp_path / "arm.yaml")
    g = model.parameter_groups["mine"]
    assert g.names == ["g1"]
    assert g.values(model)[0] == pytest.approx(0.1 + 2.0)


# --------------------------------------------------------------- parameter groups
@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ({"s": {"g": {"link9.zz": 1}}},
         ["x.groups.yaml", "'s'", "'g'", "link9.zz", "unknown body"]),
        ({"s": {"g": {"link1.izz": 1}}}, ["'g'", "link1.izz", "unknown parameter 'izz'"]),
        ({"s": {"g": {"link1.zz": "a lot"}}}, ["'g'", "link1.zz", "not a number"]),
        ({"s": {"g": {"link1.zz": "k"}}}, ["'g'", "unknown constant 'k'"]),
        ({"s": {"g": {"link1.zz": 0}}}, ["'g'", "all coefficients are zero"]),
        ({"s": {"g": [1, 2]}}, ["'g'", "mapping"]),
        ({"s": {"g": {"link1.zz": 1}, "h": {"link1.zz": 2}}}, ["'s'", "linearly dependent"]),
        ({"constants": {"k": 1}}, ["x.groups.yaml", "no group sets"]),
    ],
)
def test_parameter_group_errors_name_file_group_and_key(spec, words):
    model = load_robot("two_axis_planar")
    with pytest.raises(ModelError) as err:
        parse_parameter_groups(model, spec, "x.groups.yaml")
    for word in words:
        assert word in str(err.value)


def test_parameter_group_expressions_use_file_constants():
    model = load_robot("two_axis_planar")
    groups = parse_parameter_groups(
        model, {"constants": {"l": 2.0}, "s": {"g": {"link1.zz": 1, "link2.m": "l**2"}}}, "f")
    theta = model.inertial_parameters()
    assert groups["s"].values(model)[0] == pytest.approx(theta[5] + 4.0 * theta[19])


# --------------------------------------------------------------- URDF errors
URDF = """<robot name="arm">
  <link name="base"/>
  <link name="upper">{upper_inertial}</link>
  <link name="fore"><inertial><mass value="1"/>
      <inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="shoulder" type="{type}"><parent link="{parent}"/><child link="upper"/>
    <axis xyz="{axis}"/><limit lower="-1" upper="1" effort="10" velocity="2"/></joint>
  <joint name="elbow" type="revolute"><parent link="upper"/><child link="fore"/>
    <origin xyz="1 0 0"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="10" velocity="2"/>
  </joint>
</robot>"""
INERTIAL = ('<inertial><mass value="{mass}"/><inertia ixx="{ixx}" iyy="0.1" izz="0.1" ixy="0" '
            'ixz="0" iyz="0"/></inertial>')


def urdf(mass="1", ixx="0.1", type="revolute", axis="0 0 1", parent="base", inertial=None):
    upper = INERTIAL.format(mass=mass, ixx=ixx) if inertial is None else inertial
    return URDF.format(upper_inertial=upper, type=type, axis=axis, parent=parent)


def test_robot_description_string_loads():
    model = load_robot(urdf())
    assert model.joint_names == ["shoulder", "elbow"]
    assert model.name == "arm"


@pytest.mark.parametrize(
    ("xml", "words"),
    [
        (urdf()[:-5], ["not well-formed XML"]),
        (urdf(inertial='<inertial><inertia ixx="1" iyy="1" izz="1"/></inertial>'),
         ["link 'upper'", "no <mass>"]),
        (urdf(mass="-2"), ["link 'upper'", "negative mass"]),
        (urdf(mass="abc"), ["link 'upper'", "not a number"]),
        (urdf(ixx="-0.5"), ["link 'upper'", "positive"]),
        (urdf(ixx="0.5"), ["link 'upper'", "triangle inequality"]),
        (urdf(type="spherical"), ["joint 'shoulder'", "'spherical'"]),
        (urdf(axis="0 0 0"), ["joint 'shoulder'", "zero axis"]),
        (urdf(parent="ground"), ["joint 'shoulder'", "'ground'", "not defined"]),
    ],
)
def test_urdf_errors_name_the_element(xml, words):
    with pytest.raises(ModelError) as err:
        load_urdf(xml)
    for word in words:
        assert word in str(err.value)


def test_urdf_errors_through_load_robot_too():
    with pytest.raises(ModelError, match="link 'upper'.*negative mass"):
        load_robot(urdf(mass="-1"))


def test_spec_is_not_mutated_by_loading():
    spec = bundled_spec("puma560")
    before = copy.deepcopy(spec)
    load_dh_yaml(spec)
    assert spec == before


@settings(max_examples=60, deadline=None)
@given(row=dh_row, convention=st.sampled_from(["standard", "modified"]),
       q=st.floats(-3.0, 3.0, allow_nan=False))
def test_one_dh_joint_is_offset_times_screw_exponential(row, convention, q):
    M, S = dh_joint(convention, row["sigma"], row["a"], row["alpha"], row["d"], row["theta"])
    expected = dh_product([row], convention, [q], np.eye(4))[0]
    np.testing.assert_allclose(M @ screw_exp(S, q), expected, atol=1e-12)
