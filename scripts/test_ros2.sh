#!/usr/bin/env bash
# The ROS 2 suite: build this package with `colcon build` (no --symlink-install) in a temporary
# workspace, source it over ROS 2, and run the tests marked `ros2` with the system Python's
# pytest (Jazzy's launch_testing plugin needs pytest < 8; Debian 12 ships 7.2, Ubuntu 24.04 7.4).
#
#   bash scripts/test_ros2.sh [pytest args…]        # ROS 2 from $ROS_SETUP or /opt/ros/jazzy
#
# Nodes started by `ros2 launch` run on /usr/bin/python3 and use rclpy; the rclpy-free side of
# the interop tests runs on the project's .venv (created here if missing), as a user without
# ROS 2 runs it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ros_setup="${ROS_SETUP:-/opt/ros/jazzy/setup.bash}"
if [ ! -f "$ros_setup" ]; then
  echo "test_ros2.sh: no ROS 2 at $ros_setup (bash ../shared/ros2/install.sh installs one)" >&2
  exit 1
fi
export PATH="/usr/bin:$PATH"  # ROS 2 runs on the system python3, not a venv's

# The package's runtime dependencies for the system Python: numpy, scipy, yaml from Debian (the
# ROS 2 install pulls them in), numba from pip (Debian 12's is too old; numba needs a newer
# coverage than Debian's to import). Debian's numpy is kept: ROS 2 was built against it.
if ! python3 -c "import numba, scipy, yaml" 2>/dev/null; then
  numpy_version="$(python3 -c 'import numpy; print(numpy.__version__)')"
  python3 -m pip install --quiet --break-system-packages numba "coverage>=7" \
    "numpy==$numpy_version"
fi

# The rclpy-free side (the cyclonedds package) runs on the project's venv.
venv="${ROBOT_CONTROL_VENV:-$root/.venv}"
bash "$root/scripts/setup_env.sh" test
export ROBOT_CONTROL_DDS_PYTHON="$venv/bin/python"

ws="$(mktemp -d "${TMPDIR:-/tmp}/robot_control_ws.XXXXXX")"
trap 'rm -rf "$ws"' EXIT
mkdir -p "$ws/src/robot_control"
tar -C "$root" --exclude=./.git --exclude='./.venv*' --exclude=./build --exclude=./install \
  --exclude=./log --exclude='*.egg-info' --exclude=__pycache__ -cf - . \
  | tar -C "$ws/src/robot_control" -xf -

set +u  # ROS 2's setup scripts read unset variables
# shellcheck source=/dev/null
source "$ros_setup"
cd "$ws"
python3 -m colcon build --event-handlers console_direct- >"$ws/colcon_build.log" 2>&1 \
  || { cat "$ws/colcon_build.log"; exit 1; }
# shellcheck source=/dev/null
source "$ws/install/setup.bash"
set -u
echo "test_ros2.sh: robot_control built in $ws/install; $(ros2 pkg prefix robot_control)"

# Run from the workspace, so `robot_control` is imported from the colcon install, not the checkout.
python3 -m pytest -p no:cacheprovider -m ros2 \
  "$root"/test/test_*ros2*.py "$@"
