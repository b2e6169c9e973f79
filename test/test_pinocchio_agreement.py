"""Agreement with Pinocchio (a test-only dependency) to 1e-9 for every algorithm both have.

Robots: UR5 and Panda (9 joints, fingers included) from example-robot-data's URDFs, each
loaded by both libraries; every bundled robot that loads; and a random branching tree with
general screw axes (offset revolute axes and skew prismatic ones, as D-H tables give). The
last two reach Pinocchio through ``bench/pin_bridge.py``, which rebuilds a RobotModel as a
pin.Model joint by joint.

Conventions: Pinocchio is linear-first, we are angular-first, so Jacobian rows and
accelerations are swapped back before comparing; Pinocchio takes external forces per joint
in the joint frame, ours are per body in the body frame (the same frame for URDF models).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from model_samples import EXAMPLE_URDFS, example_robot_data_dir, example_urdf, random_screw_tree

from robot_control import dynamics as dyn
from robot_control.model import RobotModel, bundled_robots, load_robot, load_urdf

pin = pytest.importorskip("pinocchio", reason="Pinocchio is the reference implementation")

ROOT = Path(__file__).resolve().parents[1]
TOL = 1e-9


def _load_bridge():
    spec = importlib.util.spec_from_file_location("pin_bridge", ROOT / "bench" / "pin_bridge.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bridge = _load_bridge()


@dataclass
class Pair:
    """Our model, the Pinocchio model of the same robot and the coordinate map between them."""

    ours: RobotModel
    pm: object
    pd: object
    idx: np.ndarray  # our coordinate i is Pinocchio's coordinate idx[i]
    joint_ids: list[int]  # Pinocchio joint id of our body i
    frames: list[str]  # frames both models know
    same_body_frames: bool  # URDF loads: Pinocchio's joint frame i is our body frame i

    def to_pin(self, x: np.ndarray) -> np.ndarray:
        out = np.zeros(self.pm.nv)
        out[self.idx] = x
        return out

    def from_pin(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(x)[self.idx]

    def matrix_from_pin(self, X: np.ndarray) -> np.ndarray:
        # eigenpy hands a 1×1 matrix back as a vector: restore the shape first
        X = np.asarray(X).reshape(self.pm.nv, self.pm.nv)
        return X[np.ix_(self.idx, self.idx)]

    def forces(self, f_ext: np.ndarray) -> list:
        """Our body-frame wrenches (n, f) as Pinocchio's joint-frame forces (f, n)."""
        if not self.same_body_frames:
            return bridge.joint_wrenches(self.ours, self.pm, f_ext)
        forces = [pin.Force.Zero() for _ in range(self.pm.njoints)]
        for i, jid in enumerate(self.joint_ids):
            forces[jid] = pin.Force(f_ext[i, 3:], f_ext[i, :3])
        return forces


def _pair(ours: RobotModel, pm, same_body_frames: bool) -> Pair:
    pm.gravity = pin.Motion(np.asarray(ours.gravity, float), np.zeros(3))
    joint_ids = [pm.getJointId(name) for name in ours.joint_names]
    assert all(jid < pm.njoints for jid in joint_ids), "joint names differ between the models"
    assert pm.nq == pm.nv == ours.nq, "Pinocchio has coordinates we do not (or the reverse)"
    idx = np.array([pm.joints[jid].idx_q for jid in joint_ids])
    ours_frames = set(ours.body_names) | set(ours.frames)
    frames = [f.name for f in pm.frames if f.name in ours_frames and f.type in
              (pin.FrameType.BODY, pin.FrameType.OP_FRAME)]
    return Pair(ours, pm, pm.createData(), idx, joint_ids, frames, same_body_frames)


def urdf_pair(name: str) -> Pair:
    path = example_urdf(name)
    if path is None:
        pytest.skip(f"no example-robot-data {EXAMPLE_URDFS[name]} under {example_robot_data_dir()}"
                    " (pip package example-robot-data, installed with pin)")
    return _pair(load_urdf(path), pin.buildModelFromUrdf(str(path)), True)


def bridged_pair(model: RobotModel) -> Pair:
    return _pair(model, bridge.pinocchio_model(model), False)


def _bundled_pair(name: str) -> Pair:
    return bridged_pair(load_robot(name))  # a bundled robot that does not load fails


ROBOTS = ["ur5", "panda", "random_screw_tree"] + [f"bundled:{n}" for n in bundled_robots()]
_PAIRS: dict[str, Pair] = {}


@pytest.fixture(params=ROBOTS)
def pair(request) -> Pair:
    name = request.param
    if name not in _PAIRS:
        if name in EXAMPLE_URDFS:
            _PAIRS[name] = urdf_pair(name)
        elif name == "random_screw_tree":
            _PAIRS[name] = bridged_pair(random_screw_tree())
        else:
            _PAIRS[name] = _bundled_pair(name.split(":", 1)[1])
    return _PAIRS[name]


MAX_JOINTS = 12


def vectors(bound: float):
    """Float arrays in [−bound, bound], long enough for every robot here (cut to nq)."""
    return hnp.arrays(np.float64, MAX_JOINTS, elements=st.floats(-bound, bound, allow_nan=False,
                                                        allow_subnormal=False))


Q, QD, QDD, WRENCH = vectors(np.pi), vectors(3.0), vectors(10.0), vectors(20.0)
SETTINGS = settings(max_examples=30, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def assert_agrees(ours, theirs, what: str) -> None:
    ours, theirs = np.asarray(ours, float), np.asarray(theirs, float)
    scale = max(1.0, float(np.abs(theirs).max()))
    err = float(np.abs(ours - theirs).max())
    assert err <= TOL * scale, f"{what}: max |ours − Pinocchio| = {err:.3e} (scale {scale:.3g})"


def _state(pair: Pair, *vectors: np.ndarray) -> list[np.ndarray]:
    n = pair.ours.nq
    if n > MAX_JOINTS:
        pytest.skip(f"strategies are sized for up to {MAX_JOINTS} joints")
    return [v[:n].copy() for v in vectors]


def _wrenches(pair: Pair, f: np.ndarray) -> np.ndarray:
    """A different wrench (n, f) on every body, built from one drawn vector."""
    n = pair.ours.nq
    rows = [np.roll(np.r_[f, -f], 2 * i)[:6] for i in range(n)]
    return np.array(rows) * (1.0 + np.arange(n))[:, None] / n


# ----------------------------------------------------------------------------- dynamics
@SETTINGS
@given(q=Q, qd=QD, qdd=QDD, f=WRENCH)
def test_inverse_dynamics(pair, q, qd, qdd, f):
    q, qd, qdd = _state(pair, q, qd, qdd)
    m, d, P = pair.pm, pair.pd, pair.to_pin
    tau = pin.rnea(m, d, P(q), P(qd), P(qdd))
    assert_agrees(dyn.inverse_dynamics(pair.ours, q, qd, qdd), pair.from_pin(tau), "rnea")
    F = _wrenches(pair, f)
    tau_f = pin.rnea(m, d, P(q), P(qd), P(qdd), pair.forces(F))
    assert_agrees(dyn.inverse_dynamics(pair.ours, q, qd, qdd, F), pair.from_pin(tau_f),
                  "rnea with f_ext")


@SETTINGS
@given(q=Q, qd=QD)
def test_mass_coriolis_gravity(pair, q, qd):
    q, qd = _state(pair, q, qd)
    m, d, P = pair.pm, pair.pd, pair.to_pin
    M = np.array(pin.crba(m, d, P(q))).reshape(m.nv, m.nv)
    M = np.triu(M) + np.triu(M, 1).T  # Pinocchio's crba may fill only the upper triangle
    assert_agrees(dyn.mass_matrix(pair.ours, q), pair.matrix_from_pin(M), "mass matrix")
    C = pin.computeCoriolisMatrix(m, d, P(q), P(qd))
    assert_agrees(dyn.coriolis_matrix(pair.ours, q, qd), pair.matrix_from_pin(C),
                  "Coriolis matrix")
    g = pin.computeGeneralizedGravity(m, d, P(q))
    assert_agrees(dyn.gravity_torques(pair.ours, q), pair.from_pin(g), "gravity torques")


@SETTINGS
@given(q=Q, qd=QD, tau=vectors(50.0), f=WRENCH)
def test_forward_dynamics(pair, q, qd, tau, f):
    q, qd, tau = _state(pair, q, qd, tau)
    m, d, P = pair.pm, pair.pd, pair.to_pin
    a = pair.from_pin(pin.aba(m, d, P(q), P(qd), P(tau)))
    assert_agrees(dyn.forward_dynamics(pair.ours, q, qd, tau), a, "aba")
    assert_agrees(dyn.forward_dynamics_cholesky(pair.ours, q, qd, tau), a, "cholesky")
    F = _wrenches(pair, f)
    a_f = pair.from_pin(pin.aba(m, d, P(q), P(qd), P(tau), pair.forces(F)))
    assert_agrees(dyn.forward_dynamics(pair.ours, q, qd, tau, F), a_f, "aba with f_ext")
    assert_agrees(dyn.forward_dynamics_cholesky(pair.ours, q, qd, tau, F), a_f,
                  "cholesky with f_ext")


# --------------------------------------------------------------------------- kinematics
def _angular_first(x: np.ndarray) -> np.ndarray:
    return np.concatenate([x[3:], x[:3]])


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(q=Q, qd=QD)
def test_frame_placements_jacobians_and_bias(pair, q, qd):
    q, qd = _state(pair, q, qd)
    m, d, P = pair.pm, pair.pd, pair.to_pin
    assert pair.frames, "no frame shared with Pinocchio"
    pin.framesForwardKinematics(m, d, P(q))
    T = dyn.forward_kinematics(pair.ours, q)
    for i, name in enumerate(pair.ours.body_names):
        assert_agrees(T[i], d.oMf[m.getFrameId(name)].homogeneous, f"placement of {name}")
    for name in pair.frames:
        fid = m.getFrameId(name)
        assert_agrees(dyn.frame_placement(pair.ours, q, name), d.oMf[fid].homogeneous,
                      f"placement of frame {name}")
        for ref, pin_ref in (("world", pin.LOCAL_WORLD_ALIGNED), ("local", pin.LOCAL)):
            J = pin.computeFrameJacobian(m, d, P(q), fid, pin_ref).reshape(6, m.nv)[:, pair.idx]
            assert_agrees(dyn.jacobian(pair.ours, q, name, ref), _angular_first(J),
                          f"{ref} jacobian of {name}")
    # J̇q̇ is the frame's classical acceleration when q̈ = 0 (and no gravity in Pinocchio's)
    pin.forwardKinematics(m, d, P(q), P(qd), np.zeros(m.nv))
    pin.updateFramePlacements(m, d)
    for name in pair.frames:
        fid = m.getFrameId(name)
        for ref, pin_ref in (("world", pin.LOCAL_WORLD_ALIGNED), ("local", pin.LOCAL)):
            acc = pin.getFrameClassicalAcceleration(m, d, fid, pin_ref).vector
            assert_agrees(dyn.jacobian_dot_qd(pair.ours, q, qd, name, ref), _angular_first(acc),
                          f"{ref} J̇q̇ of {name}")


@SETTINGS
@given(q=Q, qd=QD)
def test_energy(pair, q, qd):
    q, qd = _state(pair, q, qd)
    m, d, P = pair.pm, pair.pd, pair.to_pin
    assert_agrees(dyn.kinetic_energy(pair.ours, q, qd),
                  pin.computeKineticEnergy(m, d, P(q), P(qd)), "kinetic energy")
    assert_agrees(dyn.potential_energy(pair.ours, q),
                  pin.computePotentialEnergy(m, d, P(q)), "potential energy")


def test_panda_keeps_its_finger_joints_in_pinocchio_order():
    pair = urdf_pair("panda")
    assert pair.ours.nq == 9
    assert pair.ours.joint_names == [pair.pm.names[j] for j in range(1, pair.pm.njoints)]
    assert list(pair.idx) == list(range(9))


def test_bridge_rejects_a_screw_with_pitch():
    with pytest.raises(ValueError, match="pitch"):
        bridge.axis_frame(np.array([0.0, 0.0, 1.0, 0.0, 0.0, 0.1]))
