"""ament_python packaging for robot_control; `pip install .` works without ROS too."""

import sys
from glob import glob

from setuptools import find_packages, setup

package_name = "robot_control"
#: `setup.py install` is colcon's (ament_python) way in; pip builds wheels. There the CLI also goes
#: to bin/, which colcon's setup puts on PATH (the console scripts go to lib/robot_control for
#: `ros2 run`, setup.cfg); a pip install has its console script in bin/ already.
colcon_bin = [("bin", ["resource/robot-control"])] if "install" in sys.argv[1:] else []

setup(
    name=package_name,
    version="0.1.0",
    packages=find_packages(exclude=["test", "test.*", "bench"]),
    # the ROS 2 interface definitions the rclpy-free route generates its types from
    # and the view's page script (robot_control/view/client_page.py adds it to viser's page)
    package_data={package_name: ["data/interfaces/*/*/*", "view/*.js"]},
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + package_name]),
        ("share/" + package_name, ["package.xml"]),
        ("share/" + package_name + "/launch", glob("launch/*")),
        ("share/" + package_name + "/config", glob("config/*.yaml")),
        ("share/" + package_name + "/config/robots", glob("config/robots/*.yaml")),
        ("share/" + package_name + "/config/scenarios", glob("config/scenarios/*.yaml")),
        ("share/" + package_name + "/config/cells", glob("config/cells/*.yaml")),
        ("share/" + package_name + "/config/security", glob("config/security/*.xml")),
        ("share/" + package_name + "/config/security/common",
         glob("config/security/common/*.xml")),
        ("share/" + package_name + "/config/security/profiles",
         glob("config/security/profiles/*.xml")),
        ("share/" + package_name + "/urdf", glob("urdf/*")),
        *colcon_bin,
    ],
    python_requires=">=3.10",
    install_requires=[
        "numpy>=1.24",
        "scipy>=1.10",
        "pyyaml>=6",
        "numba>=0.59",
        # progress bar of long offline runs (robot-control simulate, on a terminal only)
        "tqdm>=4.60",
        # the ROS 2 transport when rclpy is absent (with ROS 2 sourced, rclpy is used instead)
        "cyclonedds>=0.10.5",
        # rosbag2 directories (metadata.yaml + MCAP) for bag record/play and simulate --record:
        # pure Python, writes what ros2 bag record -s mcap writes, and reads bags for plots
        "rosbags>=0.11",
    ],
    extras_require={
        "test": [
            # < 9.2: there xdist's --dist loadgroup (scripts/test.sh) silently stops grouping
            # the tests marked xdist_group (pytest-dev/pytest-xdist#1386, open)
            "pytest>=7,<9.2",
            "pytest-xdist>=3",
            "pytest-timeout>=2",
            "hypothesis>=6",
            "pin>=3",
            "example-robot-data>=4",
            "catkin-pkg>=1",
            "ruff>=0.5",
            "matplotlib>=3.7",
            "mujoco>=4.0",
            "dask[distributed]>=2024.1",
            "viser>=1.0",
            "playwright>=1.40",
        ],
        # robot-control view: the browser page (viser serves its own web client, offline)
        "view": ["viser>=1.0"],
        # the plant's MuJoCo engine (plant.engine: mujoco) and model export --format mjcf checks
        "mujoco": ["mujoco>=4.0"],
        "plot": ["matplotlib>=3.7"],
        # sweep / montecarlo --cluster: runs as tasks of a Dask distributed scheduler
        "cluster": ["dask[distributed]>=2024.1"],
        "bench": ["pin>=3", "example-robot-data>=4", "roboticstoolbox-python>=1.1"],
    },
    zip_safe=True,
    maintainer="robot_control maintainers",
    maintainer_email="maintainers@robot-control.org",
    description="Model-based manipulator control on a ROS 2 bus",
    license="Apache-2.0",
    tests_require=["pytest"],
    entry_points={
        "console_scripts": [
            "robot-control = robot_control.cli:main",
            "plant = robot_control.nodes.plant_node:main",
            "controller = robot_control.nodes.controller_node:main",
            "trajectory_generator = robot_control.nodes.trajectory_node:main",
            "dynamics_server = robot_control.nodes.dynamics_server_node:main",
            "lifecycle_manager = robot_control.nodes.lifecycle_manager:main",
            "cell_plant = robot_control.nodes.cell_plant_node:main",
            "cell_controller = robot_control.nodes.cell_controller_node:main",
            "robot_control_container = robot_control.nodes.container:main",
            "rqt_robot_control = robot_control.bringup.rqt_robot_control:main",
            "robot_control_view = robot_control.view.app:main",
        ],
        # the built-in laws, declared the way a third-party package adds its own
        "robot_control.controllers": [
            "pd = robot_control.control.pd:PD",
            "pd_gravity = robot_control.control.pd:PDGravity",
            "pd_fixed_gravity = robot_control.control.pd:PDFixedGravity",
            "computed_torque = robot_control.control.computed_torque:ComputedTorque",
            "resolved_acceleration = robot_control.control.resolved_acceleration:ResolvedAcceleration",
            "passivity = robot_control.control.passivity:Passivity",
            "adaptive = robot_control.control.adaptive:SlotineLi",
            "adaptive_craig = robot_control.control.adaptive_craig:AdaptiveCraig",
            "sliding_mode = robot_control.control.sliding_mode:SlidingMode",
            "robust = robot_control.control.robust:Robust",
            "hybrid_force = robot_control.control.force:HybridForce",
            "impedance = robot_control.control.force:Impedance",
            "load_sharing = robot_control.control.load_sharing:LoadSharing",
        ],
    },
)
