"""Node and command processes run numpy's BLAS on one thread unless the user says otherwise
(robot_control/bringup/blas_threads.py): its worker threads only spin on our small matrices."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROBE = ("import os, {module}; import numpy as np; np.linalg.solve(np.eye(4), np.ones(4)); "
         "print(os.environ.get('OPENBLAS_NUM_THREADS'), len(os.listdir('/proc/self/task')))")


def probe(module: str, **env: str) -> tuple[str, int]:
    clean = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS",
                                                              "MKL_NUM_THREADS")}
    out = subprocess.run([sys.executable, "-c", PROBE.format(module=module)], check=True,
                         capture_output=True, text=True, timeout=120, env={**clean, **env})
    value, threads = out.stdout.split()
    return value, int(threads)


@pytest.mark.timeout(300)
@pytest.mark.skipif(not os.path.isdir("/proc/self/task") or (os.cpu_count() or 1) < 2,
                    reason="counts threads in /proc on a machine with two cores or more")
@pytest.mark.parametrize("module", ["robot_control.nodes.plant_node", "robot_control.cli"])
def test_a_node_or_command_process_loads_blas_with_one_thread_unless_told(module):
    value, ours = probe(module)
    assert value == "1"
    told, theirs = probe(module, OPENBLAS_NUM_THREADS="2")
    assert told == "2"  # the user's choice stands
    assert theirs > ours  # and OpenBLAS started a worker thread for it: ours started none
