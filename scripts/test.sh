#!/usr/bin/env bash
# Quick start, command 2: install everything the tests need and run the suite, without the tests
# marked slow (pyproject.toml: stack runs of many seconds, cold compiles, the README's commands);
# `--slow` (first argument) runs only those, `--all` both. CI (.ci/run) runs the default, then
# --slow. Further arguments go to pytest (a later `-m EXPR` replaces the choice).
# The suite is the one without ROS 2, whether or not this shell sourced a ROS 2: ROS 2's entries
# are taken out of PYTHONPATH (else pytest >= 8 would autoload launch_testing's plugin, which
# fails, and nodes would pick rclpy), so the tests marked `ros2` skip and say why. The ROS 2
# suite is scripts/test_ros2.sh.
set -euo pipefail
marker=(-m "not slow")
case "${1:-}" in
  --slow) marker=(-m slow); shift ;;
  --all) marker=(); shift ;;
esac
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ros_prefixes=":${AMENT_PREFIX_PATH:-}:${COLCON_PREFIX_PATH:-}:"
if [ -n "${PYTHONPATH:-}" ] && [ "$ros_prefixes" != ":::" ]; then
  kept=""
  IFS=: read -ra entries <<<"$PYTHONPATH"
  IFS=: read -ra prefixes <<<"$ros_prefixes"
  for entry in "${entries[@]}"; do
    ros=""
    for prefix in "${prefixes[@]}"; do
      if [ -n "$prefix" ] && { [ "$entry" = "$prefix" ] || [[ "$entry" == "${prefix%/}/"* ]]; }; then
        ros=1
      fi
    done
    [ -n "$entry" ] && [ -z "$ros" ] && kept="${kept:+$kept:}$entry"
  done
  if [ -n "$kept" ]; then export PYTHONPATH="$kept"; else unset PYTHONPATH; fi
fi
# shellcheck source=setup_env.sh
source "$root/scripts/setup_env.sh" test
cd "$root"
ruff check robot_control test bench
exec python -m pytest -q -n "${PYTEST_WORKERS:-2}" --dist loadgroup "${marker[@]}" "$@"
