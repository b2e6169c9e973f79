#!/usr/bin/env bash
# The ROS 2 suite: build this package with `colcon build` (no --symlink-install) in a temporary
# workspace, source it over ROS 2, and run the tests marked `ros2` with the system Python's
# pytest (Jazzy's launch_testing plugin needs pytest < 8; Debian 12 ships 7.2, Ubuntu 24.04 7.4).
#
#   bash scripts/test_ros2.sh [pytest args, e.g. -k launch]   # ROS 2: $ROS_SETUP or /opt/ros/jazzy
#
# Nodes started by `ros2 launch` run on /usr/bin/python3 and use rclpy; the rclpy-free side of
# the CLI and interop tests runs on the project's .venv (created here if missing), as a user
# without ROS 2 runs it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup_env.sh" test
export ROBOT_CONTROL_DDS_PYTHON="${ROBOT_CONTROL_VENV:-$root/.venv}/bin/python"
# shellcheck source=ros2_workspace.sh
source "$root/scripts/ros2_workspace.sh"
cd "$ws"  # so `robot_control` is imported from the colcon install, not from the checkout
python3 -m pytest -p no:cacheprovider -m ros2 "$root"/test/test_*ros2*.py "$@"
