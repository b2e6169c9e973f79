"""The plant's step compiled in another process (nodes/plant_compiler.py): on an empty compile
cache it compiles under the step's lock, and a plant warming up meanwhile waits for it and loads
what it wrote instead of compiling the step again. Real processes, a real numba cache folder."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

from robot_control.foundation.file_locks import held_elsewhere

# slow (scripts/test.sh --slow): a cold compile of the plant's step (about 8 s of CPU)
pytestmark = pytest.mark.slow

#: start the background compiler of DDArm's default plant; print its pid, wait for it
STARTER = textwrap.dedent("""
    from robot_control.model import load_robot
    from robot_control.nodes import plant_compiler
    proc = plant_compiler.start_background(load_robot("ddarm"), {}, 5e-4, 1e-3)
    print("PID", proc.pid, flush=True)
    print("EXIT", proc.wait(), flush=True)
    print("AGAIN", plant_compiler.start_background(load_robot("ddarm"), {}, 5e-4, 1e-3))
""")

#: the same from a compiler forked before the job is known (plant_node.main's fork_ahead); then no
#: second fork: the cache holds a step now
STARTER_FORKED = textwrap.dedent("""
    from robot_control.nodes import plant_compiler
    plant_compiler.fork_ahead()
    from robot_control.model import load_robot
    proc = plant_compiler.start_background(load_robot("ddarm"), {}, 5e-4, 1e-3)
    print("PID", proc.pid, type(proc).__name__, flush=True)
    print("EXIT", proc.wait(timeout=600), flush=True)
    plant_compiler.fork_ahead()
    print("FORKED AGAIN", plant_compiler._forked is not None, flush=True)
    print("AGAIN", plant_compiler.start_background(load_robot("ddarm"), {}, 5e-4, 1e-3))
""")

#: a node process that forks its compiler and ends before it knows a job (a refused start)
ENDS_FIRST = textwrap.dedent("""
    from robot_control.nodes import plant_compiler
    plant_compiler.fork_ahead()
    print("FORKED", plant_compiler._forked[0], flush=True)
""")

#: the plant node's warm-up of its step (same lock, same call); the hold's compile statistics
PLANT = textwrap.dedent("""
    import logging, time
    from robot_control.model import load_robot
    from robot_control.nodes import plant_compiler
    from robot_control.nodes.common import announce_compiles, warm_up
    from robot_control.nodes.velocity_guard import step_and_predict
    from robot_control.sim import plant_kernels as PK
    from robot_control.sim.engine import make_plant
    model = load_robot("ddarm")
    announce_compiles(logging.getLogger("plant"))
    warm_up(logging.getLogger("plant"), plant_compiler.kernel_name(model),
            lambda: step_and_predict(make_plant(model, {}, 1e-3), 1e-3))
    stats = PK.hold_rk4.stats
    print("DONE", time.time(), "MISSES", sum(stats.cache_misses.values()),
          "HITS", sum(stats.cache_hits.values()), flush=True)
""")


def run_in_cache(code: str, cache, timeout_s: float = 600) -> subprocess.CompletedProcess:
    """``code`` run by a new Python process whose numba cache is the folder ``cache``."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "NUMBA_CACHE_DIR": str(cache)}, timeout=timeout_s)


def ended(pid: int) -> bool:
    """Whether process ``pid`` is gone (or a zombie no one reaped yet)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


@pytest.mark.parametrize("starter_code", [STARTER, STARTER_FORKED], ids=["process", "forked"])
def test_plant_waits_for_the_background_step_and_loads_it(tmp_path, starter_code):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    starter = subprocess.Popen([sys.executable, "-c", starter_code], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        # the step's lock, or (the fork, compiling the speculated step before its job) the hold's
        locks = [tmp_path / "plant_step.ddarm.lock",
                 tmp_path / "compile.sim.plant_kernels.hold_rk4.lock"]
        deadline = time.monotonic() + 60
        while not any(lock.exists() and held_elsewhere(lock) for lock in locks):
            assert time.monotonic() < deadline, "the background compiler never took the lock"
            assert starter.poll() is None, starter.stderr.read()
            time.sleep(0.05)
        plant = subprocess.run([sys.executable, "-c", PLANT], env=env, capture_output=True,
                               text=True, timeout=600)
        out, err = starter.communicate(timeout=600)
    finally:
        if starter.poll() is None:
            starter.kill()
    assert plant.returncode == 0, plant.stderr[-2000:]
    assert starter.returncode == 0, err[-2000:]
    assert "EXIT 0" in out
    words = plant.stdout.split()
    # the plant compiled nothing of the hold: it waited, then loaded the background's code
    assert words[words.index("MISSES") + 1] == "0", plant.stdout
    assert int(words[words.index("HITS") + 1]) >= 1, plant.stdout
    assert (tmp_path / "plant_step.ddarm.compiled").exists()
    assert "AGAIN None" in out  # a start that finds the step compiled starts no process
    if starter_code is STARTER_FORKED:
        assert "PID" in out and "Forked" in out  # the fork compiled, not a new process
        assert "FORKED AGAIN False" in out  # a warm cache: no fork (it costs a warm start)


def test_a_fork_without_a_job_ends_with_its_node_and_compiles_nothing(tmp_path):
    """The node ends before it knows its plant (a refused start): its fork stops compiling the
    speculated step and ends too, without a step in the cache."""
    node = run_in_cache(ENDS_FIRST, tmp_path, 120)
    assert node.returncode == 0, node.stderr[-2000:]
    pid = int(node.stdout.split()[1])
    deadline = time.monotonic() + 30
    while not ended(pid):
        assert time.monotonic() < deadline, "the forked compiler outlived its node"
        time.sleep(0.05)
    assert not list(tmp_path.glob("plant_step.*")), list(tmp_path.iterdir())
    assert not list(tmp_path.rglob("*hold_rk4*.nbi")), list(tmp_path.rglob("*.nbi"))


#: a fork, then a job of another kind than the speculated step: a new compiler process for it
OTHER_KIND = textwrap.dedent("""
    from robot_control.model import load_robot
    from robot_control.nodes import plant_compiler
    plant_compiler.fork_ahead()
    pid = plant_compiler._forked[0]
    proc = plant_compiler.start_background(load_robot("ddarm"), {"integrator": "huo_2_107"}, 5e-4, 1e-3)
    print("FORK", pid, "KIND", type(proc).__name__, flush=True)
    plant_compiler.reap(proc)
""")


def test_a_job_of_another_kind_gets_its_own_compiler_and_the_fork_ends(tmp_path):
    node = run_in_cache(OTHER_KIND, tmp_path)
    assert node.returncode == 0, node.stderr[-2000:]
    words = node.stdout.split()
    assert words[words.index("KIND") + 1] == "Popen", node.stdout
    assert ended(int(words[words.index("FORK") + 1]))
    assert (tmp_path / "plant_step.ddarm.compiled").exists()
    assert list(tmp_path.rglob("*hold_huo*.nbi")) and not list(tmp_path.rglob("*hold_rk4*.nbi"))


def test_the_speculated_step_is_the_default_plant():
    """The fork's step is the one of a plant without settings (every bundled robot's stack)."""
    from robot_control.model import load_robot
    from robot_control.nodes import plant_compiler

    for robot in ("ddarm", "puma560", plant_compiler.SPECULATION_ROBOT):
        assert plant_compiler.step_kind(load_robot(robot), {}) == plant_compiler.SPECULATED
    assert plant_compiler.step_kind(load_robot("ddarm"), {"integrator": "huo_2_107"}) \
        != plant_compiler.SPECULATED


def test_no_background_without_a_cache(tmp_path):
    """Nothing to fill (no writable cache folder): no process."""
    from robot_control.dynamics import compile_cache
    from robot_control.model import load_robot
    from robot_control.nodes import plant_compiler

    saved = compile_cache.CACHE_DIR
    compile_cache.CACHE_DIR = None
    try:
        assert plant_compiler.start_background(load_robot("ddarm"), {}, 5e-4, 1e-3) is None
    finally:
        compile_cache.CACHE_DIR = saved


#: a fork killed before its job (out of memory, a signal): the job goes to a new process
FORK_GONE = textwrap.dedent("""
    import os, signal, time
    from robot_control.model import load_robot
    from robot_control.nodes import plant_compiler
    plant_compiler.fork_ahead()
    os.kill(plant_compiler._forked[0], signal.SIGKILL)
    time.sleep(0.2)
    proc = plant_compiler.start_background(load_robot("ddarm"), {}, 5e-4, 1e-3)
    print("KIND", type(proc).__name__, flush=True)
    plant_compiler.reap(proc)
""")


def test_a_job_for_a_fork_that_is_gone_goes_to_a_new_compiler(tmp_path):
    node = run_in_cache(FORK_GONE, tmp_path)
    assert node.returncode == 0, node.stderr[-2000:]
    assert "KIND Popen" in node.stdout, node.stdout
    assert (tmp_path / "plant_step.ddarm.compiled").exists()
