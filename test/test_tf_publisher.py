"""/tf of the model (nodes/tf_publisher.py): each frame relative to its parent, composed along
the chain, is the forward kinematics' world placement of the link frames /robot_description
states (a D-H body frame shifted onto its joint's axis); quaternions are unit and exact; fixed
frames go on /tf_static. A real rclpy-free node on a private domain builds the messages."""

import numpy as np
import pytest
from stack_helpers import private_domain

from robot_control.bus import create_node
from robot_control.dynamics.kinematics import forward_kinematics
from robot_control.foundation.spatial import quaternion_xyzw, rotation_exp
from robot_control.model import load_robot, load_urdf
from robot_control.model.urdf_export import link_frame_offsets, robot_description
from robot_control.nodes.tf_publisher import TfPublisher


def write_description(folder, model) -> str:
    path = folder / f"{model.name}.urdf"
    path.write_text(robot_description(model))
    return str(path)


def matrix(t) -> np.ndarray:
    """4×4 of a geometry_msgs/Transform (quaternion → rotation, the textbook formula)."""
    x, y, z, w = t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w
    X = np.eye(4)
    X[:3, :3] = [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                 [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                 [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]
    X[:3, 3] = t.translation.x, t.translation.y, t.translation.z
    return X


def test_quaternions_of_rotations_near_every_pivot():
    rng = np.random.default_rng(3)
    axes = [rng.normal(size=3) for _ in range(50)] + [np.eye(3)[i] * np.pi for i in range(3)]
    for axis in axes:
        R = rotation_exp(axis)
        q = np.array(quaternion_xyzw(R))
        assert np.linalg.norm(q) == pytest.approx(1.0, abs=1e-12)
        T = type("T", (), {})()
        T.rotation = type("Q", (), dict(zip("xyzw", q)))()
        T.translation = type("P", (), dict(x=0.0, y=0.0, z=0.0))()
        assert np.allclose(matrix(T)[:3, :3], R, atol=1e-12)


@pytest.mark.parametrize("robot", ["puma560", "ddarm"])
def test_the_frames_compose_to_the_forward_kinematics(monkeypatch, tmp_path, robot):
    for key, value in private_domain(47).items():
        monkeypatch.setenv(key, value)
    node = create_node("tf_test", ["prog", "--ros-args", "-p", "tf_rate:=50.0"], backend="dds",
                       managed=True)
    try:
        model = load_robot(robot)
        tf = TfPublisher(node, model)
        q = np.random.default_rng(1).uniform(-1, 1, model.nq)
        msg = tf.message(1_700_000_000_123_456_789, q)
        world = {model.base_name: np.eye(4)}
        for t in msg.transforms:
            assert t.header.stamp.sec == 1_700_000_000 and t.header.stamp.nanosec == 123_456_789
            world[t.child_frame_id] = world[t.header.frame_id] @ matrix(t.transform)
        T = forward_kinematics(model, q)
        assert [t.child_frame_id for t in msg.transforms] == model.body_names
        shifts = link_frame_offsets(model)
        for i, name in enumerate(model.body_names):
            assert np.allclose(world[name][:3, :3], T[i][:3, :3], atol=1e-12)
            assert np.allclose(world[name][:3, 3], T[i][:3, :3] @ shifts[i] + T[i][:3, 3],
                               atol=1e-12)
        # the frames rviz would draw: the links of /robot_description, at the same q
        described = load_urdf(write_description(tmp_path, model))
        for i, D in enumerate(forward_kinematics(described, q)):
            assert np.allclose(world[described.body_names[i]], D, atol=1e-9)
        assert tf.period_ns == 20_000_000
    finally:
        node.shutdown()
