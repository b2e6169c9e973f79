#!/usr/bin/env bash
# Quick start, command 2: install everything the tests need and run the whole suite.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=setup_env.sh
source "$root/scripts/setup_env.sh" test
cd "$root"
ruff check robot_control test bench
exec python -m pytest -q -n "${PYTEST_WORKERS:-2}" "$@"
