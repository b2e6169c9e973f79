"""Compiling a controller's laws: the one it runs now, the others in a background process.

A law's first update compiles its kernels (numba), seconds each on a fresh install; the kernels
are then cached (dynamics.compile_cache) and a later process only loads them, in milliseconds.
A controller offers every law so that a swap is instant, but compiling all of them in its
configure made a fresh install's first start wait about a minute. So configure compiles the law
it runs and loads the other laws already in the cache (compile_cache.is_compiled says which);
the rest are compiled by one background process at the lowest CPU priority (SCHED_IDLE), kept on
one CPU, which fills the cache while the stack runs its loops SCHED_FIFO, or once they stop: it
steps aside between laws while a loop runs on the normal scheduler (nodes/loop_presence.py;
it waits :data:`LOOP_WAIT_S` for such loops to stop, then ends), and a controller whose loop
runs there starts it when its loop stops. It takes no kernel's
lock: a node waiting for a process the scheduler starves would be a priority inversion (at worst
both compile a law). A swap to a law the cache does not hold yet is made on the swap's worker
thread (law_host), as before.

SCHED_IDLE alone did not keep it from the loop: on the 2-core machine a warm `robot-control
launch --duration 5` missed 25 % of its deadlines beside a compile at SCHED_IDLE free to move
between the CPUs (a busy loop there: 20 %), 5 % alone, 8 % beside the same compile kept on one
CPU (``python bench/idle_compile_load.py``, docs/compiling.md). So the process is kept on the last
CPU it may use (:func:`one_cpu`); a compile is single-threaded and loses nothing by it.

``python -m robot_control.nodes.law_compiler FILE [LOCK_FD]`` is that background process: FILE
holds the model and each law's parameters (a pickle this module wrote in a private temporary
file; only this package's own processes read it), LOCK_FD the compiler lock it was handed.
"""

from __future__ import annotations

import logging
import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from robot_control.control.base import Reference, State
from robot_control.control.registry import create
from robot_control.foundation.file_locks import try_lock
from robot_control.nodes.common import warm_up

#: one background compiler per cache: a second one would compile the same kernels again
LOCK_NAME = "law_compiler.lock"
#: how long the compiler waits for the loops on the normal scheduler to stop before it ends (s):
#: a stack's loops stop one after the other (a controller before the plant of its container)
LOOP_WAIT_S = 30.0
LOOP_POLL_S = 0.25


def kernel_name(law: str) -> str:
    """The name of a law's compile (its lock and its marker in the cache)."""
    return f"law.{law}"


def compile_law(log, model, law_name: str, law, wait: bool = True) -> None:
    """One throw-away update of a configured law at the joint-range-clipped zero pose, so its
    kernels are compiled (or loaded) now (Newton–Euler first, under its shared lock: the plant's
    hold needs it too; ``wait``: see common.warm_up); the law is reset afterwards."""
    from robot_control import dynamics as dyn

    n = model.nq
    q = np.clip(np.zeros(n), model.lower, model.upper)
    zeros = np.zeros(n)
    warm_up(log, "inverse_dynamics", lambda: dyn.inverse_dynamics(model, q, zeros, zeros), wait)

    def update() -> None:
        try:
            law.update(0.0, State(0.0, q, zeros, wrench=np.zeros(6)), Reference(q))
        except (ValueError, np.linalg.LinAlgError) as exc:
            log.debug(f"warm-up skipped: {exc}")

    warm_up(log, kernel_name(law_name), update, wait)
    law.reset()


def refused(law: str) -> bool:
    """Whether a background compiler could not make ``law`` (with the parameters it was sent)."""
    from robot_control.dynamics.compile_cache import CACHE_DIR

    return CACHE_DIR is not None and (CACHE_DIR / f"{kernel_name(law)}.refused").exists()


def start_background(model, laws: dict[str, dict],
                     loop_wait_s: float = LOOP_WAIT_S) -> subprocess.Popen | None:
    """Start the background compiler of ``laws`` (name → parameters) for ``model``, at SCHED_IDLE
    (nice 19 where that is refused); None where there is no writable cache to fill, or when
    another compiler runs (it holds the cache's compiler lock). The lock is taken here and handed
    to the process, so whoever waits for the lock (``robot-control warmup``) also waits for a
    compiler that a stopping node has just started."""
    from robot_control.dynamics.compile_cache import CACHE_DIR

    if CACHE_DIR is None or not laws:
        return None
    lock = open(CACHE_DIR / LOCK_NAME, "a")
    if not try_lock(lock):
        lock.close()
        return None
    try:
        fd, path = tempfile.mkstemp(prefix="robot_control_laws_", suffix=".pickle")
        with os.fdopen(fd, "wb") as fh:
            pickle.dump({"model": model, "laws": laws, "loop_wait_s": loop_wait_s}, fh)
        proc = subprocess.Popen([sys.executable, "-m", __name__, path, str(lock.fileno())],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, pass_fds=(lock.fileno(),),
                                start_new_session=True)  # a Ctrl-C of the stack leaves it to finish
    finally:
        lock.close()  # the process's copy holds the lock now (flock: one lock per open file)
    lowest_priority(proc.pid)  # it inherits a real-time loop's SCHED_FIFO otherwise
    one_cpu(proc.pid)
    return proc


def lowest_priority(pid: int) -> None:
    """SCHED_IDLE for the process (it runs only when no other thread wants the CPU), else nice 19."""
    try:
        os.sched_setscheduler(pid, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):
        try:
            os.setpriority(os.PRIO_PROCESS, pid, 19)
        except OSError:
            pass


def one_cpu(pid: int) -> None:
    """Keep the process on the last CPU it may use (see the module: a SCHED_IDLE process that
    moves between the CPUs still delays the loop's wake-ups)."""
    try:
        cpus = os.sched_getaffinity(pid)
        if len(cpus) > 1:
            os.sched_setaffinity(pid, {max(cpus)})
    except (AttributeError, OSError):
        pass


def loops_stopped(within_s: float) -> bool:
    """Whether no loop runs on the normal scheduler, now or within ``within_s``."""
    from robot_control.nodes.loop_presence import loop_runs

    deadline = time.monotonic() + within_s
    while loop_runs():
        if time.monotonic() >= deadline:
            return False
        time.sleep(LOOP_POLL_S)
    return True


def compile_laws(path: Path, lock_fd: int | None = None) -> int:
    """The background process: compile each law in the file (unless the cache holds it already),
    holding the cache's compiler lock (``lock_fd``: handed over locked by start_background); 0
    also when another compiler holds it (it does the work).
    Before each law it looks whether a loop runs on the normal scheduler (loop_presence) and, if
    one still does after the job's ``loop_wait_s``, ends: a controller starts it again when its
    loop stops (law_host.compile_rest)."""
    from robot_control.dynamics.compile_cache import CACHE_DIR, is_compiled

    lowest_priority(0)
    one_cpu(0)
    with open(path, "rb") as fh:
        job = pickle.load(fh)
    path.unlink(missing_ok=True)
    log = logging.getLogger("law_compiler")
    if CACHE_DIR is None:
        return 0
    with open(CACHE_DIR / LOCK_NAME, "a") if lock_fd is None else os.fdopen(lock_fd, "a") as lock:
        if not try_lock(lock):  # (held already when handed over)
            return 0
        for name, params in job["laws"].items():
            if is_compiled(kernel_name(name)):
                continue
            if not loops_stopped(job.get("loop_wait_s", LOOP_WAIT_S)):
                log.info(f"a control loop runs on the normal scheduler: {name} and the laws "
                         "after it compile when it stops")
                return 0
            try:
                law = create(name)
                law.configure(job["model"], params)
                compile_law(log, job["model"], name, law, wait=False)  # a node never waits
            except Exception as exc:  # noqa: BLE001 - a law that cannot warm is made at its swap
                log.warning(f"{name} not compiled: {exc}")
                # nothing to compile (a cell law on one arm): said in the cache, so that each
                # start does not send it here again; a swap to it makes it (and says why not)
                (CACHE_DIR / f"{kernel_name(name)}.refused").touch()
    return 0


if __name__ == "__main__":
    sys.exit(compile_laws(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else None))
