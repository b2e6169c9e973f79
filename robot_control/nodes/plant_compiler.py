"""Compiling the plant's step in another process while the plant node does the rest of its start.

On an empty compile cache the plant's step (the RK4 hold on the articulated-body algorithm) is
the longest compile of a stack's start (about 8 s of CPU), and the plant node used to compile it
after its description check (the mass matrix and gravity, compiled or waited for) and before
/tf: one core's serial path, while the machine's second core idled once the other nodes were
done. So the plant node starts :func:`start_background` as soon as it knows the plant's
configuration: this process compiles the step (the plant's own warm-up call,
``velocity_guard.step_and_predict``) holding the step's lock in the cache folder (common.warm_up),
at normal priority — the plant waits for it, so it must not be starved (a SCHED_IDLE process would
be a priority inversion, unlike nodes/law_compiler.py's) — while the plant checks its description
and compiles /tf; the plant's own warm-up of the step then waits for that lock and loads what it
wrote. Whichever of the two takes the lock first compiles; the other loads. It runs only before
the plant is active (the plant's configure waits for it), never beside a running loop.

``python -m robot_control.nodes.plant_compiler FILE``: FILE holds the model, the plant's
configuration, a physics step and the control period (a pickle this module wrote in a private
temporary file; only this package's own processes read it).
"""

from __future__ import annotations

import logging
import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

from robot_control.nodes.common import warm_up


def kernel_name(model) -> str:
    """The name of the plant step's compile for ``model`` (its lock and marker in the cache)."""
    return f"plant_step.{model.name}"


def start_background(model, plant_cfg: dict, dt: float, period_s: float) -> subprocess.Popen | None:
    """Start compiling the step of the plant ``make_plant(model, plant_cfg, dt)`` in another
    process; None when the cache holds it already (or there is no writable cache to fill)."""
    from robot_control.dynamics.compile_cache import CACHE_DIR, is_compiled

    if CACHE_DIR is None or is_compiled(kernel_name(model)):
        return None
    fd, path = tempfile.mkstemp(prefix="robot_control_plant_", suffix=".pickle")
    with os.fdopen(fd, "wb") as fh:
        pickle.dump({"model": model, "plant": plant_cfg, "dt": dt, "period": period_s}, fh)
    # a plant stopped before it is done leaves it to finish: the cache keeps the step for the next
    return subprocess.Popen([sys.executable, "-m", __name__, path], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL)


def reap(proc: subprocess.Popen | None) -> None:
    """Collect the background process once the plant has its step (it is done by then, or
    finishing: the plant waited for its lock)."""
    if proc is not None:
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def normal_priority() -> None:
    """SCHED_OTHER: the plant waits for this process (it may have been started by a real-time
    thread's SCHED_FIFO, or inherited SCHED_IDLE)."""
    try:
        if os.sched_getscheduler(0) != os.SCHED_OTHER:
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    except (AttributeError, OSError):
        pass


def compile_step(path: Path) -> int:
    """The background process: the plant's warm-up of its step, under the step's lock."""
    from robot_control.nodes.common import announce_compiles
    from robot_control.nodes.velocity_guard import step_and_predict
    from robot_control.sim.engine import make_plant

    normal_priority()
    with open(path, "rb") as fh:
        job = pickle.load(fh)
    path.unlink(missing_ok=True)
    log = logging.getLogger("plant_compiler")
    announce_compiles(log)  # the kernels' own locks too: the other nodes share some
    warm_up(log, kernel_name(job["model"]), lambda: step_and_predict(
        make_plant(job["model"], job["plant"], job["dt"]), job["period"]))
    return 0


if __name__ == "__main__":
    sys.exit(compile_step(Path(sys.argv[1])))
