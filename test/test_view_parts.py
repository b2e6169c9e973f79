"""The view's parts without a browser: what a description it cannot draw says, the decimation
that draws a trace, slider spans and torque plot heights, and the one line without viser."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from robot_control.model.loader import load_robot
from robot_control.model.urdf_export import robot_description
from robot_control.view.controls import slider_range
from robot_control.view.drawing import skeleton_points, skeleton_segments
from robot_control.view.frames import TfTree, robot_root_frame
from robot_control.view.panel import torque_span, value_range
from robot_control.view.scene import load_scene
from robot_control.view.traces import Traces, drawn

URDF = """<robot name="two">
  <link name="base"><visual><geometry><box size="0.2 0.2 0.1"/></geometry></visual></link>
  <link name="upper"><visual><geometry><mesh filename="package://nowhere/upper.stl"/></geometry>
    </visual></link>
  <link name="fore"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="upper"/>
    <origin xyz="0 0 0.1"/><axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="50" velocity="2"/>
  </joint>
  <joint name="j2" type="revolute"><parent link="upper"/><child link="fore"/>
    <origin xyz="0.3 0 0"/><axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="20" velocity="2"/>
  </joint>
</robot>"""


def test_a_link_that_cannot_be_drawn_is_named_and_the_rest_is_drawn() -> None:
    scene = load_scene(URDF)
    assert scene.problems == ["link 'upper': mesh 'package://nowhere/upper.stl' cannot be read "
                              "here (no package path)"]
    assert [s.kind for s in scene.links["base"]] == ["box"]
    assert scene.links["upper"] == []
    assert [s.kind for s in scene.links["fore"]] == ["sphere"]  # a leaf without inertia


def test_link_poses_follow_the_joints() -> None:
    scene = load_scene(URDF)
    at_rest = scene.link_poses({})
    turned = scene.link_poses({"j1": np.pi / 2})
    np.testing.assert_allclose(at_rest["fore"][:3, 3], [0.3, 0.0, 0.1], atol=1e-12)
    np.testing.assert_allclose(turned["fore"][:3, 3], [0.0, 0.3, 0.1], atol=1e-12)


def test_a_robot_without_visuals_is_drawn_from_its_joints() -> None:
    scene = load_scene(robot_description(load_robot("ddarm")))
    assert scene.problems == []
    assert scene.joint_names == ["joint1", "joint2", "joint3"]
    assert all(scene.links[link] for link in ("link1", "link2", "link3"))
    assert any(s.kind == "cylinder" for s in scene.links["link3"])  # to its body's far end


def test_the_ghost_skeleton_runs_along_the_links() -> None:
    scene = load_scene(URDF)
    segments = skeleton_segments(scene)
    assert [(a, b) for a, b, _ in segments] == [("base", "upper"), ("upper", "fore")]
    points = skeleton_points(scene, segments, {"j1": np.pi / 2})
    np.testing.assert_allclose(points[1], [[0.0, 0.0, 0.1], [0.0, 0.3, 0.1]], atol=1e-6)
    ddarm = load_scene(robot_description(load_robot("ddarm")))
    ends = [(a, b) for a, b, _ in skeleton_segments(ddarm)]
    assert ("link3", "link3") in ends  # the last link: to twice its centre of mass


def tf_message(model, q: np.ndarray, prefix: str):
    """The /tf message a plant publishes at q (nodes/tf_publisher.py, on a managed DDS node)."""
    from bus_probe import isolated_bus_env

    from robot_control.bus import create_node
    from robot_control.nodes.tf_publisher import TfPublisher

    with isolated_bus_env("view-tf"):
        node = create_node("tf_check", ["tf_check"], managed=True)
        try:
            return TfPublisher(node, model, prefix).message(0, q)
        finally:
            node.shutdown()


def test_the_tf_frames_a_plant_publishes_land_on_the_links_the_page_draws() -> None:
    """/tf's parent → child transforms composed under the robot's root frame in /side are the
    poses the scene gives its links."""
    model = load_robot("ddarm")
    q = np.array([0.4, -0.7, 1.1])
    tree = TfTree()
    tree.on_message(tf_message(model, q, "side/"))
    scene = load_scene(robot_description(model))
    root = robot_root_frame("/side", scene.root)
    assert root == "side/base" and robot_root_frame("/", "base") == "base"
    poses = tree.poses_under(root)
    drawn_links = scene.link_poses(dict(zip(scene.joint_names, q, strict=True)))
    assert sorted(poses) == sorted(f"side/{link}" for link in drawn_links)
    for link, T in drawn_links.items():
        np.testing.assert_allclose(poses[f"side/{link}"], T, atol=1e-9, err_msg=link)


def test_a_tf_transform_that_cannot_be_read_is_counted_and_the_rest_kept() -> None:
    message = tf_message(load_robot("ddarm"), np.zeros(3), "")
    r = message.transforms[0].transform.rotation  # base → link1: no rotation at all
    r.x = r.y = r.z = r.w = 0.0
    tree = TfTree()
    tree.on_message(message)
    assert tree.dropped == 1
    assert sorted(tree.poses_under("base")) == ["base"]  # link1 unknown: nothing hangs below
    assert sorted(tree.poses_under("link1")) == ["link1", "link2", "link3"]


def test_drawing_decimates_but_keeps_a_spike_and_the_data_keeps_every_sample() -> None:
    traces = Traces(["a"], window_s=100.0, capacity=10_000)
    for k in range(5000):
        traces.add(k * 1e-3, {"q": [5.0 if k == 2345 else 0.0]})
    t, data = traces.window()
    assert len(t) == 5000
    td, qd = drawn(t, data["q"][:, 0], 300)
    assert len(td) == 300 and qd.max() == 5.0


def test_the_window_is_the_last_seconds() -> None:
    traces = Traces(["a", "b"], window_s=1.0, capacity=100)
    for k in range(300):  # more than the ring holds: the oldest are overwritten
        traces.add(k * 0.1, {"q": [k, -k]})
    t, data = traces.window()
    assert t[0] > t[-1] - 1.0 and t[-1] == pytest.approx(29.9)
    assert data["q"][-1].tolist() == [299.0, -299.0] and np.isnan(data["tau_cmd"]).all()


def test_sliders_span_the_descriptor_range_or_around_the_value() -> None:
    assert slider_range(0.0, 200.0, 50.0) == (0.0, 200.0)
    assert slider_range(-1e9, 1.0, -20.0) == (-80.0, 1.0)
    assert slider_range(None, None, 3.0) == (0.0, 12.0)


def test_torque_plots_show_the_limit_only_when_the_torques_come_near_it() -> None:
    small, large = np.array([1.0, -2.0, np.nan]), np.array([150.0, -40.0])
    assert torque_span(500.0, small) == 2.4
    assert torque_span(200.0, large) == 210.0
    assert torque_span(np.nan, np.array([np.nan])) == 0.001


def test_the_floor_is_lines_every_cell_darker_every_section() -> None:
    from robot_control.view.app import floor_lines

    points, colors = floor_lines(4.0, 0.1, 0.5)
    assert points.shape == colors.shape == (82, 2, 3)  # 41 lines each way
    assert np.allclose(np.abs(points[:, :, :2]).max(), 2.0) and not points[:, :, 2].any()
    along_x = points[:41]
    assert np.allclose(along_x[:, 0, 1], along_x[:, 1, 1])  # constant y: parallel to x
    dark = along_x[colors[:41, 0, 0] < colors.max(), 0, 1]
    assert np.allclose(dark, np.arange(-2.0, 2.01, 0.5))


def test_without_viser_the_command_says_how_to_install_it() -> None:
    code = ("import sys; sys.modules['viser'] = None\n"
            "from robot_control.cli import main\n"
            "sys.exit(main(['view', '--port', '0']))")
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert got.returncode == 1
    assert got.stderr.strip().splitlines() == [
        "robot-control view: needs the viser package: `pip install -e .[view]` or "
        "`bash scripts/setup.sh view`"]


def test_a_plots_range_never_collapses_on_a_trace_flat_to_float_noise():
    """A held arm's q and q_d, equal up to float32 noise: uPlot's own range would be min ≈ max,
    where its tick loop never ends ("Invalid array length" on the page, uPlot issue 1084)."""
    held = np.float32([1.0, 1.0000002, 0.9999998, 1.0])
    lo, hi = value_range(held, held)
    assert lo <= 0.9999998 and hi >= 1.0000002 and hi - lo >= 2e-3  # 10⁻³ of the magnitude
    lo, hi = value_range(np.zeros(5))
    assert lo < 0.0 < hi and hi - lo >= 2e-6  # flat at zero: the floor
    moving = np.array([-0.31, 0.2, 0.47])
    lo, hi = value_range(moving, np.array([np.nan, 0.5]))
    assert lo <= -0.31 and hi >= 0.5 and hi - lo < 2.0  # everything shown, not too loose
    assert value_range(moving) == value_range(moving + 1e-9)  # steps: no update for a hair
    assert value_range(np.array([np.nan, np.nan])) is None
