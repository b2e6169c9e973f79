"""One BLAS thread in the package's own processes (nodes, the CLI), unless the user chose.

Every matrix here is small (n ≤ 7 joints, 4×4 and 6×6 transforms), far below where BLAS threads
help; yet OpenBLAS wakes its worker threads on each LAPACK call and lets them spin-wait after it,
so one ``np.linalg.solve`` per /tf message kept a second core ~80 % busy in a plant at 250 Hz
(its process at 180 % CPU, 47 % with one thread; docs/architecture.md, "Speed discipline").
OpenBLAS reads these variables when numpy loads it: this runs before the first numpy import of a
node or command (``robot_control.nodes`` and ``robot_control.cli`` import it first), and the
processes they start inherit it.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

VARIABLES = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def limit_blas_threads(env: MutableMapping[str, str] = os.environ) -> None:
    """Ask for one BLAS thread where the environment does not say how many."""
    for name in VARIABLES:
        env.setdefault(name, "1")
