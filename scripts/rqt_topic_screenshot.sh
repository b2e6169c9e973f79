#!/usr/bin/env bash
# rqt_topic on the running stack, headless and reproducible: build the package with colcon, start
# it with `ros2 launch` (250 Hz) on a free ROS domain, open `rqt_topic --force-discover` under
# Xvfb, tick /joint_states so its rate shows, and save a screenshot with ImageMagick's `import`.
#
#   bash scripts/rqt_topic_screenshot.sh [OUT.png]     # default docs/rqt_topic.png
set -euo pipefail
set -m  # background jobs keep Ctrl-C (SIGINT) working: the launch and rqt are stopped with it
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$(realpath -m "${1:-$root/docs/rqt_topic.png}")"
for tool in Xvfb xdotool import flock; do
  command -v "$tool" >/dev/null || { echo "needs $tool (xvfb, xdotool, imagemagick)" >&2; exit 1; }
done
# shellcheck source=ros2_workspace.sh
source "$root/scripts/ros2_workspace.sh"

# a domain no test run holds (the lock files of test/domains.py), loopback discovery
lock_dir="${TMPDIR:-/tmp}/robot_control_test_domains"
mkdir -p "$lock_dir"
for domain in $(seq 1 200); do
  exec {lock}>"$lock_dir/$domain.lock"
  if flock -n "$lock"; then break; fi
  exec {lock}>&-
done
export ROS_DOMAIN_ID="$domain" ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
display=99
while [ -e "/tmp/.X11-unix/X$display" ] || [ -e "/tmp/.X$display-lock" ]; do display=$((display + 1)); done
export DISPLAY=":$display"

rqt="" launch="" xvfb=""
cleanup() {
  set +e
  # rqt (a Qt program) ends on SIGTERM; ros2 launch on SIGINT, which it passes on to the nodes
  [ -n "$rqt" ] && { kill -TERM "$rqt" 2>/dev/null; wait "$rqt" 2>/dev/null; }
  [ -n "$launch" ] && { kill -INT "$launch" 2>/dev/null; wait "$launch" 2>/dev/null; }
  [ -n "$xvfb" ] && { kill -TERM "$xvfb" 2>/dev/null; wait "$xvfb" 2>/dev/null; }
  ros2 daemon stop >/dev/null 2>&1 || true
  rm -rf "$ws"
}
trap cleanup EXIT

Xvfb "$DISPLAY" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
xvfb=$!
ros2 launch robot_control control.launch.yaml rate:=250.0 >"$ws/launch.log" 2>&1 &
launch=$!
# up when the loop is closed: the controller answers the plant (kernels compile on a first start)
timeout -s INT 300 ros2 topic echo --once /controller/state sensor_msgs/msg/JointState >/dev/null
ros2 run rqt_topic rqt_topic --force-discover >"$ws/rqt.log" 2>&1 &
rqt=$!
window="$(xdotool search --sync --onlyvisible --name 'rqt' | head -1)"
xdotool windowmove "$window" 0 0 windowsize "$window" 1280 800
sleep 5  # rqt_topic lists what it discovered
xdotool mousemove 200 120 click 1  # focus the topic tree
xdotool type --delay 50 "/joint_states"  # the tree's keyboard search selects the row
xdotool key space  # tick it: rqt_topic subscribes and shows its rate
sleep 8
mkdir -p "$(dirname "$out")"
import -window root "$out"
echo "screenshot: $out (domain $ROS_DOMAIN_ID)"
