"""/robot_description: every bundled model exported to URDF and read back has the same dynamics."""

import numpy as np
import pytest

from robot_control import dynamics as dyn
from robot_control.model import bundled_robots, load_robot, load_urdf
from robot_control.model.urdf_export import robot_description


@pytest.mark.parametrize("name", bundled_robots())
def test_export_round_trip_preserves_dynamics_and_frames(name):
    model = load_robot(name)
    back = load_urdf(robot_description(model), gravity=model.gravity)
    assert back.joint_names == model.joint_names
    frames = [f for f in model.frames if f not in model.body_names and f != model.base_name]
    rng = np.random.default_rng(3)
    for _ in range(5):
        q, qd, qdd = rng.uniform(-1, 1, (3, model.nq))
        assert np.allclose(dyn.inverse_dynamics(back, q, qd, qdd),
                           dyn.inverse_dynamics(model, q, qd, qdd), atol=1e-9)
        assert np.allclose(dyn.mass_matrix(back, q), dyn.mass_matrix(model, q), atol=1e-9)
        for f in frames:  # named frames (tools) land exactly where they were
            assert np.allclose(dyn.frame_placement(back, q, f), dyn.frame_placement(model, q, f),
                               atol=1e-9)
    for j_back, j in zip(back.joints, model.joints):
        assert (j_back.lower, j_back.upper) == pytest.approx((j.lower, j.upper))
        assert j_back.type in (j.type, "continuous" if j.type == "revolute" else j.type)
