#!/usr/bin/env bash
# Quick start, command 1: install the package and run the main demo.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=setup_env.sh
source "$root/scripts/setup_env.sh" ""  # no extras (and not this script's arguments)
cd "$root"
exec robot-control demo "$@"
