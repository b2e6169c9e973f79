#!/usr/bin/env bash
# Quick start, set-up: the project's .venv with the package (scripts/setup_env.sh), then
# `robot-control warmup`: the compiled kernels of every bundled scenario and of the stack's nodes
# and laws, into the user cache (~/.cache/robot_control), so that first runs only load them.
# Once per install (and after an update of the package's kernels); about 3 min on 2 cores.
#
#   bash scripts/setup.sh [EXTRAS]    # e.g. mujoco, or mujoco,plot: the extras added to the same
#                                     # editable install (edits keep taking effect, the compiled
#                                     # kernels stay valid)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=setup_env.sh
source "$root/scripts/setup_env.sh" "${1:-}"
cd "$root"
robot-control warmup
