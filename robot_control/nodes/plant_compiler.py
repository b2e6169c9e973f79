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

A new Python process spends about a second of CPU importing what the compile needs, while every
node of a starting stack is importing and compiling too: the step's compile began 1.8–2 s after
the other nodes' first compiles, and it ends a cold start. So the plant node's process forks
itself before it joins the bus (:func:`fork_ahead`: its modules imported, no thread of its own
yet) into a compiler that waits on a pipe for its job; :func:`start_background` sends it the job
(or closes the pipe: nothing to compile, it ends), and starts a fresh process only where there is
no such fork (a composed container, a test). It forks only into a cache folder that holds no
plant's step yet (a first start after an install or an update): a warm start has nothing for
it to do, and with any step cached a new robot's step loads from numba's cache (its code depends
on the argument types, not on the robot).

The job reaches the fork a second after the fork exists: the node first waits at the launcher's
start gate, then joins the bus and reads its parameters. Since the step's code depends only on
its argument types, the fork does not wait for it: it compiles at once the step of the plant
configuration nearly every stack runs (:data:`SPECULATED`: the package's own engine, RK4, no
actuator inertia, free space) on a bundled one-joint arm, and then takes its job, which loads
that step from the cache. A job of another kind (:func:`step_kind`) is not sent to the fork: the
node ends it and starts a new compiler for its own.

``python -m robot_control.nodes.plant_compiler FILE``: FILE holds the model, the plant's
configuration, a physics step and the control period (a pickle this module wrote in a private
temporary file; only this package's own processes read it).
"""

from __future__ import annotations

import logging
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from robot_control.nodes.common import warm_up

#: what the names of every plant step's compile begin with
KERNEL_PREFIX = "plant_step."
#: the step the fork compiles before its job arrives: step_kind of the default configuration
SPECULATED = ("internal", "rk4", False, False)
#: the bundled arm it compiles that step on (one joint: the least to build and check)
SPECULATION_ROBOT = "one_axis"
#: the forked compiler waiting for its job (fork_ahead): its pid and the write end of its pipe
_forked: tuple[int, int] | None = None


class Forked:
    """The forked compiler once it has its job: what :func:`reap` needs of a Popen."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # collected already: its status is not ours to know
                self.returncode = -1
                return self.returncode
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"plant compiler {self.pid}", timeout)
            time.sleep(0.01)
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            os.kill(self.pid, signal.SIGKILL)


def fork_ahead() -> None:
    """Fork this process into a compiler that waits for :func:`start_background`'s job (see the
    module); call it before the process has threads of its own (before it joins the bus)."""
    global _forked
    from robot_control.dynamics.compile_cache import CACHE_DIR

    if _forked is not None or CACHE_DIR is None or not hasattr(os, "fork"):
        return
    if any(CACHE_DIR.glob(f"{KERNEL_PREFIX}*.compiled")):  # a warm cache (see the module)
        return
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the compiler: never back into the node's code, nor its exit handlers
        code = 1
        try:
            os.close(write)
            code = serve(read)
        finally:
            os._exit(code)
    os.close(read)
    _forked = (pid, write)


def release_fork() -> tuple[Forked, int] | None:
    """The forked compiler, if any, no longer waiting here: the caller sends it its job (or
    closes the pipe); None when there is none."""
    global _forked
    if _forked is None:
        return None
    pid, write = _forked
    _forked = None
    return Forked(pid), write


def step_kind(model, plant_cfg: dict) -> tuple[str, str, bool, bool]:
    """What the compiled step of ``make_plant(model, plant_cfg, dt)`` depends on besides the
    arrays' types: engine, integrator, actuator inertia (the mass-matrix branch) and a surface."""
    from robot_control.sim.plant_config import parse_plant_config

    cfg = parse_plant_config(plant_cfg, model)
    return (cfg.engine, cfg.integrator, cfg.actuator_inertia is not None, bool(cfg.environment))


def kernel_name(model) -> str:
    """The name of the plant step's compile for ``model`` (its lock and marker in the cache)."""
    return f"{KERNEL_PREFIX}{model.name}"


def start_background(model, plant_cfg: dict, dt: float,
                     period_s: float) -> subprocess.Popen | Forked | None:
    """Start compiling the step of the plant ``make_plant(model, plant_cfg, dt)`` in another
    process (the forked one, else a new one); None when the cache holds it already (or there is
    no writable cache to fill)."""
    from robot_control.dynamics.compile_cache import CACHE_DIR, is_compiled

    forked = release_fork()
    cached = CACHE_DIR is None or is_compiled(kernel_name(model))
    kind = None
    if not cached:
        try:
            kind = step_kind(model, plant_cfg)
        except ValueError:  # the plant's configure says what is wrong with it
            pass
    if forked is not None and (cached or kind != SPECULATED):
        os.close(forked[1])  # no job for it: it ends at once (take_job)
        reap(forked[0])
        forked = None
    if cached or kind is None:
        return None
    job = {"model": model, "plant": plant_cfg, "dt": dt, "period": period_s}
    if forked is not None:
        try:
            with os.fdopen(forked[1], "wb") as pipe:
                pickle.dump(job, pipe)
            return forked[0]
        except BrokenPipeError:  # the fork is gone (killed, out of memory): a new process
            reap(forked[0])
    fd, path = tempfile.mkstemp(prefix="robot_control_plant_", suffix=".pickle")
    with os.fdopen(fd, "wb") as fh:
        pickle.dump(job, fh)
    # a plant stopped before it is done leaves it to finish: the cache keeps the step for the next
    return subprocess.Popen([sys.executable, "-m", __name__, path], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL)


def reap(proc: subprocess.Popen | Forked | None) -> None:
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


def serve(read: int) -> int:
    """The forked compiler: the speculated step compiled, then the job from the pipe; it ends
    with 0 as soon as the pipe closes without one (see :func:`take_job`)."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # the node's stdout is not ours to write
    # a Ctrl-C of the stack leaves it to finish (the cache keeps the step for the next start)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    job: list[bytes] = []
    taker = threading.Thread(target=take_job, args=(read, job), daemon=True)
    taker.start()
    try:
        compile_speculated()
    except Exception:  # only a head start: the job compiles (or fails and says why) anyway
        pass
    taker.join()
    return compile_job(pickle.loads(job[0]))


def take_job(read: int, job: list[bytes]) -> None:
    """Read the job from the pipe into ``job``; a pipe closed without one ends the process at
    once, also in the middle of the speculated compile (nobody wants it: the node ended before
    it knew its plant, had its step cached, or needs another kind)."""
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    if not data:
        os._exit(0)
    job.append(data)


def compile_step(path: Path) -> int:
    """The background process: the job in the file at ``path`` (then removed), compiled."""
    with open(path, "rb") as fh:
        job = pickle.load(fh)
    path.unlink(missing_ok=True)
    return compile_job(job)


def compile_speculated() -> None:
    """The :data:`SPECULATED` step, compiled on :data:`SPECULATION_ROBOT` (see the module)."""
    import numpy as np

    from robot_control.dynamics import world_kernels as KW
    from robot_control.dynamics.packing import model_data
    from robot_control.model import load_robot
    from robot_control.nodes.common import announce_compiles
    from robot_control.nodes.velocity_guard import step_and_predict
    from robot_control.sim.engine import make_plant
    from robot_control.sim.step_size import DEFAULT_PHYSICS_DT

    normal_priority()
    announce_compiles(logging.getLogger("plant_compiler"))  # the kernels' locks
    model = load_robot(SPECULATION_ROBOT)
    # the world sweep first, at the top level: the controller's mass matrix needs it too and
    # starts a second later; compiled here, the step never waits for the controller's compile
    # of it (2.2 s of a cold start's 10 when it did), the controller waits for this one instead
    D = model_data(model).D
    KW.world_bodies(D, np.zeros(model.nq), D)
    step_and_predict(make_plant(model, {}, DEFAULT_PHYSICS_DT), DEFAULT_PHYSICS_DT)


def compile_job(job: dict) -> int:
    """The plant's warm-up of its step, under the step's lock, at normal priority."""
    from robot_control.nodes.common import announce_compiles
    from robot_control.nodes.velocity_guard import step_and_predict
    from robot_control.sim.engine import make_plant

    normal_priority()
    log = logging.getLogger("plant_compiler")
    announce_compiles(log)  # the kernels' own locks too: the other nodes share some
    warm_up(log, kernel_name(job["model"]), lambda: step_and_predict(
        make_plant(job["model"], job["plant"], job["dt"]), job["period"]))
    return 0


if __name__ == "__main__":
    sys.exit(compile_step(Path(sys.argv[1])))
