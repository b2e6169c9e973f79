"""Packaging facts ROS 2 tooling depends on (package.xml, setup.py's data files and entry points,
the ament index marker), and a non-editable
install that holds every module and starts every console script."""

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONSOLE_SCRIPTS = ("robot-control", "plant", "controller", "trajectory_generator", "dynamics_server",
                   "lifecycle_manager", "cell_plant", "cell_controller",
                   "robot_control_container", "rqt_robot_control", "robot_control_view")


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


def _build_wheel(tmp: Path) -> Path:
    """A wheel built as ``pip wheel .`` builds it (isolated), from a copy of the source tree so
    the checkout gets no build/ or egg-info."""
    src = tmp / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(
        ".git", ".venv*", "build", "install", "log", "*.egg-info", "__pycache__", ".pytest_cache",
        ".ruff_cache"))
    out = tmp / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out),
                    str(src)], check=True, capture_output=True, text=True, timeout=600)
    (wheel,) = out.glob("robot_control-*.whl")
    return wheel


def _fresh_venv(tmp: Path) -> Path:
    """A new venv outside the checkout that sees this environment's dependencies (numpy, numba,
    cyclonedds, …) through a plain path entry, so the editable install of robot_control here is
    not active there."""
    env_dir = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True,
                   timeout=120)
    purelib = Path(subprocess.run(
        [str(env_dir / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True, capture_output=True, text=True).stdout.strip())
    deps = {sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}
    (purelib / "dependencies.pth").write_text("\n".join(sorted(deps)) + "\n")
    return env_dir


@pytest.mark.slow
def test_a_wheel_holds_every_module_and_its_console_scripts_start(tmp_path):
    wheel = _build_wheel(tmp_path)
    names = set(zipfile.ZipFile(wheel).namelist())
    modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / "robot_control").rglob("*.py")}
    assert modules - names == set(), "modules missing from the wheel"
    data = "robot_control-0.1.0.data/data/share/robot_control/"
    shared = {p.relative_to(ROOT).as_posix() for d in ("launch", "config", "urdf")
              for p in (ROOT / d).rglob("*") if p.is_file()} | {"package.xml"}
    assert {data + f for f in shared} - names == set(), "share/ files missing from the wheel"
    definitions = {p.relative_to(ROOT).as_posix()
                   for p in (ROOT / "robot_control" / "data" / "interfaces").rglob("*") if p.is_file()}
    assert definitions and definitions - names == set(), "interface definitions missing"

    env_dir = _fresh_venv(tmp_path)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(env_dir / "bin" / "python"),
                    "install", "--quiet", "--no-deps", "--no-index", str(wheel)],
                   check=True, capture_output=True, text=True, timeout=300)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    where = subprocess.run([str(env_dir / "bin" / "python"), "-c",
                            "import robot_control.sim.plant as m; print(m.__file__)"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert where.stdout.startswith(str(env_dir)), where.stdout + where.stderr
    for script in CONSOLE_SCRIPTS:
        out = subprocess.run([str(env_dir / "bin" / script), "--help"], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0 and out.stdout.startswith("usage:"), (script, out.stderr)


def test_console_scripts_are_the_package_entry_points():
    """The list the install test checks is the package's whole list."""
    import ast

    tree = ast.parse((ROOT / "setup.py").read_text())
    scripts = next(ast.literal_eval(kw.value)["console_scripts"] for node in ast.walk(tree)
                   if isinstance(node, ast.Call) for kw in node.keywords
                   if kw.arg == "entry_points")
    assert tuple(s.split("=")[0].strip() for s in scripts) == CONSOLE_SCRIPTS
