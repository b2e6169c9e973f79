#!/usr/bin/env bash
# Create (once) the project's virtual environment in .venv and install the package with
# the given extras. Sourced by the quick-start scripts so each command does its own set-up.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
extras="${1:-}"
venv="${ROBOT_CONTROL_VENV:-$root/.venv}"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --upgrade pip
fi
stamp="$venv/.installed${extras:+-$extras}"
if [ -z "$extras" ]; then  # an install with extras (scripts/test.sh's) holds the package too
  for any in "$venv"/.installed-*; do [ -f "$any" ] && [ ! -f "$stamp" ] && stamp="$any"; done
fi
if [ ! -f "$stamp" ] || [ "$root/setup.py" -nt "$stamp" ]; then
  "$venv/bin/python" -m pip install --quiet -e "$root${extras:+[$extras]}"
  touch "$stamp"
fi
# byte-compile the package as a wheel install does (cheap when up to date): an editable install
# compiles a module on first import only where Python may write bytecode (not under
# PYTHONDONTWRITEBYTECODE), and a fresh `robot-control simulate` imports its plant and law modules
# inside its timed run (2–4 ms from source)
"$venv/bin/python" -m compileall -q "$root/robot_control" >/dev/null
export PATH="$venv/bin:$PATH"
