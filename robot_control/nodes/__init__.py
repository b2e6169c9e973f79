"""The four ROS 2 nodes: thin adapters from the bus to the plant, laws, trajectories and dynamics."""

import os as _os
import sys as _sys

#: the executables ros2 launch starts (setup.py's console scripts)
NODE_EXECUTABLES = frozenset({"plant", "controller", "trajectory_generator", "dynamics_server",
                              "lifecycle_manager", "cell_plant", "cell_controller",
                              "robot_control_container"})

if _sys.argv and _os.path.basename(_sys.argv[0]) in NODE_EXECUTABLES:
    # Ctrl-C from here on is a quiet stop, also during the node module's imports (see it)
    from robot_control.nodes.startup_stop import StartupStop as _StartupStop

    _StartupStop.install_early()
