"""What a node process imports before it runs: every start pays for it, cold or warm, in each of
the stack's processes. scipy's linear algebra, optimisation and signal packages serve one-off
computations (a base-parameter QR, the plant's viscous step size, a Cholesky forward dynamics,
identification) and pull in numpy.f2py (0.25–0.3 s of CPU a process): the modules that use them
import them where they are used (test_dynamics_identities, test_any_arm and
test_regressor run those uses)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NODES = ("controller_node", "plant_node", "trajectory_node", "dynamics_server_node",
         "lifecycle_manager")
ONE_OFF = ("scipy.linalg", "scipy.optimize", "scipy.signal", "numpy.f2py")


@pytest.mark.timeout(120)
def test_the_node_modules_import_no_one_off_scipy_package():
    code = ("import sys\n"
            + "".join(f"import robot_control.nodes.{n}\n" for n in NODES)
            + f"print(sorted(m for m in {ONE_OFF!r} if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=110)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", f"a node module imports {out.stdout.strip()} at start"

