"""Robots shared by the dynamics test files: example-robot-data URDFs, a random screw tree, and
D-H rows with every required key; and the random states, settings and closeness those files draw
and judge them with."""

from __future__ import annotations

import math
import site
import sysconfig
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from robot_control.foundation.spatial import rot_x, rot_y, rot_z, transform
from robot_control.model import (
    Body,
    Frame,
    Inertia,
    Joint,
    RobotModel,
    bundled_robots,
    load_robot,
    load_urdf,
)
from robot_control.sim import matrix

#: example-robot-data URDFs, relative to its robots/ folder
EXAMPLE_URDFS = {
    "ur5": "ur_description/urdf/ur5_robot.urdf",
    "panda": "panda_description/urdf/panda.urdf",
}
#: the manipulator arms of example-robot-data a user brings first (test_any_arm.py)
EXAMPLE_ARMS = {**EXAMPLE_URDFS, **matrix.EXAMPLE_ARMS}
#: the two-link arm of two_link_urdf, its elbow limit left as ELBOW
TWO_LINK = """<robot name="two_link">
  <link name="base"/>
  <link name="l1"><inertial><origin xyz="0.5 0 0"/><mass value="1"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.0833" iyz="0" izz="0.0833"/></inertial></link>
  <link name="l2"><inertial><origin xyz="0.5 0 0"/><mass value="1"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.0833" iyz="0" izz="0.0833"/></inertial></link>
  <link name="tool"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="50" velocity="10"/></joint>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="1 0 0"/>
    <axis xyz="0 1 0"/><limit lower="-ELBOW" upper="ELBOW" effort="30" velocity="10"/></joint>
  <joint name="tip" type="fixed"><parent link="l2"/><child link="tool"/><origin xyz="1 0 0"/></joint>
</robot>"""


def two_link_urdf(elbow_limit: float = 2.5) -> str:
    """A planar two-link arm about y (unit masses and lengths, centres of mass mid-link) as URDF
    text, its elbow limited to ±``elbow_limit`` rad."""
    return TWO_LINK.replace("ELBOW", repr(float(elbow_limit)))


def dh_link(**values) -> dict:
    """A D-H table row with every key the loader requires: zero D-H parameters, a unit mass with
    a small inertia at the frame origin, no velocity or effort limit (said explicitly, .inf)."""
    row = {"a": 0.0, "alpha": 0.0, "d": 0.0, "theta": 0.0, "mass": 1.0, "com": [0.0, 0.0, 0.0],
           "inertia": [0.1, 0.1, 0.1, 0.0, 0.0, 0.0], "velocity": math.inf, "effort": math.inf}
    row.update(values)
    return row


def example_robot_data_dir() -> Path | None:
    """<site-packages>/cmeel.prefix/share/example-robot-data/robots of this interpreter, if present."""
    sites = [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    sites += site.getsitepackages() + [site.getusersitepackages()]
    for s in sites:
        robots = Path(s) / "cmeel.prefix" / "share" / "example-robot-data" / "robots"
        if robots.is_dir():
            return robots
    return None


def example_urdf(name: str) -> Path | None:
    """Path of an example-robot-data URDF ("ur5", "panda"), or None when not installed."""
    robots = example_robot_data_dir()
    if robots is None or not (robots / EXAMPLE_ARMS[name]).is_file():
        return None
    return robots / EXAMPLE_ARMS[name]


def _random_inertia(rng: np.random.Generator) -> Inertia:
    # principal moments built as sums of positive terms always satisfy the triangle inequality
    x, y, z = rng.uniform(0.005, 0.2, 3)
    R = rot_z(rng.uniform(-3, 3)) @ rot_y(rng.uniform(-3, 3)) @ rot_x(rng.uniform(-3, 3))
    return Inertia(rng.uniform(0.3, 4.0), rng.uniform(-0.2, 0.2, 3),
                   R @ np.diag([y + z, x + z, x + y]) @ R.T)


def random_screw_tree(seed: int = 7, n: int = 7) -> RobotModel:
    """A branching tree (not in depth-first order) with offset revolute and skew prismatic screws.

    It exercises what URDF arms do not: general D-H-like screws, several children per body,
    and subtrees whose coordinates are not contiguous.
    """
    rng = np.random.default_rng(seed)
    bodies = []
    for i in range(n):
        parent = i - 1 if i <= 2 else int(rng.integers(-1, i))
        origin = transform(rot_z(rng.uniform(-3, 3)) @ rot_x(rng.uniform(-3, 3)),
                           rng.uniform(-0.4, 0.4, 3))
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        if i % 3 == 2:
            joint = Joint(f"j{i}", "prismatic", np.r_[0.0, 0.0, 0.0, axis], origin)
        else:
            point = rng.uniform(-0.3, 0.3, 3)  # the axis passes through here, not the origin
            joint = Joint(f"j{i}", "revolute", np.r_[axis, np.cross(point, axis)], origin)
        bodies.append(Body(f"link{i}", parent, joint, _random_inertia(rng)))
    tool = transform(rot_y(0.3), [0.1, 0.0, 0.2])
    return RobotModel("random_screw_tree", bodies, gravity=(0.3, -1.2, -9.7),
                      frames={"tool": Frame("tool", n - 1, tool)})


def pinocchio_twin(name: str, model: RobotModel):
    """(pin model, pin data) of example URDF ``name`` with our model's gravity; skips if absent."""
    pin = pytest.importorskip("pinocchio")
    path = example_urdf(name)
    if path is None:
        pytest.skip("example-robot-data is not installed")
    pm = pin.buildModelFromUrdf(str(path))
    pm.gravity.linear[:] = model.gravity
    return pm, pm.createData()


def sample_robot(name: str) -> RobotModel:
    """A robot the dynamics tests run on: an example-robot-data URDF by its EXAMPLE_URDFS name
    (the test skips where that package is missing), the random screw tree, or a bundled robot (one
    that does not load fails the test)."""
    if name in EXAMPLE_URDFS:
        path = example_urdf(name)
        if path is None:
            pytest.skip(f"example-robot-data ({EXAMPLE_URDFS[name]}) is not installed")
        return load_urdf(path)
    if name == "random_screw_tree":
        return random_screw_tree()
    return load_robot(name)


#: every bundled robot, UR5 and the random screw tree (sample_robot's names)
SAMPLE_ROBOTS = [*bundled_robots(), "ur5", "random_screw_tree"]
#: hypothesis for the dynamics identities: few examples, no deadline (kernels compile on first use)
SETTINGS = settings(max_examples=15, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def states(data, n: int, count: int) -> list[np.ndarray]:
    """``count`` vectors of length n drawn by hypothesis (angles, rates, accelerations)."""
    elements = st.floats(-3.0, 3.0, allow_nan=False, allow_infinity=False)
    return list(data.draw(hnp.arrays(np.float64, (count, n), elements=elements)))


def close(a, b, scale=1.0, tol=1e-9):
    """a equals b to ``tol`` × max(1, scale), absolutely."""
    np.testing.assert_allclose(a, b, rtol=0, atol=tol * max(1.0, scale))
