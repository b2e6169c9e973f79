#!/usr/bin/env bash
# Sourced by the ROS 2 scripts: give the system Python the package's runtime dependencies, build
# this checkout with `colcon build` (no --symlink-install) in a temporary workspace $ws (removed
# on exit), and source ROS 2 and that workspace. ROS 2 from $ROS_SETUP or /opt/ros/jazzy.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ros_setup="${ROS_SETUP:-/opt/ros/jazzy/setup.bash}"
if [ ! -f "$ros_setup" ]; then
  echo "no ROS 2 at $ros_setup (install ROS 2 Jazzy, or set ROS_SETUP to its setup.bash)" >&2
  exit 1
fi
export PATH="/usr/bin:$PATH"  # ROS 2 runs on the system python3, not a venv's

# numpy, scipy, yaml come from the distribution (the ROS 2 install pulls them in); numba from pip
# (Debian 12's is too old; numba's import needs a newer coverage than Debian's), and rosbags
# (bag record/play, plots, identify; no distribution package) and mujoco (the plant's engine
# 'mujoco'; no distribution package). The distribution's numpy stays: ROS 2 was built against it.
numpy_version="$(python3 -c 'import numpy; print(numpy.__version__)')"
if ! python3 -c "import numba, scipy, yaml, rosbags, mujoco" 2>/dev/null; then
  python3 -m pip install --quiet --break-system-packages numba "coverage>=7" rosbags \
    "mujoco>=4.0" "numpy==$numpy_version"
fi
# viser: the browser view (view:=true; its web client ships in the wheel), which ros2 launch
# runs on this Python
if ! python3 -c "import viser" 2>/dev/null; then
  python3 -m pip install --quiet --break-system-packages "viser>=1.0" "numpy==$numpy_version"
fi

ws="$(mktemp -d "${TMPDIR:-/tmp}/robot_control_ws.XXXXXX")"
trap 'rm -rf "$ws"' EXIT
mkdir -p "$ws/src/robot_control"
tar -C "$root" --exclude=./.git --exclude='./.venv*' --exclude=./build --exclude=./install \
  --exclude=./log --exclude='*.egg-info' --exclude=__pycache__ -cf - . \
  | tar -C "$ws/src/robot_control" -xf -
set +u  # ROS 2's setup scripts read unset variables
# shellcheck source=/dev/null
source "$ros_setup"
(cd "$ws" && python3 -m colcon build --event-handlers console_direct- >"$ws/colcon_build.log" 2>&1) \
  || { cat "$ws/colcon_build.log"; exit 1; }
# shellcheck source=/dev/null
source "$ws/install/setup.bash"
set -u
echo "robot_control built with colcon in $ws/install"
