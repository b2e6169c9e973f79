"""Packaging facts ROS 2 tooling depends on (design.md "Packaging facts")."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_package_xml_parses_with_catkin_pkg():
    catkin_pkg = pytest.importorskip("catkin_pkg.package")
    pkg = catkin_pkg.parse_package(str(ROOT / "package.xml"))
    assert pkg.name == "robot_control"
    assert pkg.get_build_type() == "ament_python"
    exec_deps = {d.name for d in pkg.exec_depends}
    for dep in ("rclpy", "sensor_msgs", "std_msgs", "trajectory_msgs", "geometry_msgs",
                "rosgraph_msgs", "diagnostic_msgs", "launch_ros", "python3-numpy",
                "python3-scipy", "python3-yaml"):
        assert dep in exec_deps, dep
    assert {"launch_pytest", "python3-pytest"} <= {d.name for d in pkg.test_depends}


def test_setup_cfg_installs_scripts_under_lib():
    text = (ROOT / "setup.cfg").read_text()
    assert "script_dir=$base/lib/robot_control" in text.replace(" ", "")
    assert "install_scripts=$base/lib/robot_control" in text.replace(" ", "")


def test_ament_resource_marker_exists():
    assert (ROOT / "resource" / "robot_control").is_file()
