"""The background compiler of a controller's other laws (nodes/law_compiler.py): a real process
on an empty compile cache compiles a law, marks it in the cache, runs at the lowest CPU priority
on one CPU and leaves the work to a compiler already running; a stack whose loop runs on the
normal scheduler starts it only when the loop stops."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap

import pytest
from stack_helpers import private_domain

# slow (scripts/test.sh --slow): cold compiles (an empty compile cache) of the background law compiler
pytestmark = pytest.mark.slow

SCRIPT = textwrap.dedent("""
    import fcntl, os, sys, time
    from robot_control.dynamics.compile_cache import CACHE_DIR, is_compiled
    from robot_control.model import load_robot
    from robot_control.nodes.law_compiler import LOCK_NAME, kernel_name, refused, start_background

    model = load_robot("ddarm")
    if sys.argv[1] == "held":  # another compiler holds the lock: none is started
        with open(CACHE_DIR / LOCK_NAME, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            proc = start_background(model, {"pd": {}})
            print("started", proc is not None, "compiled", is_compiled(kernel_name("pd")))
        sys.exit(0)
    assert not is_compiled(kernel_name("pd"))
    proc = start_background(model, {"pd": {}, "warp_drive": {}})
    print("policy", os.sched_getscheduler(proc.pid) == os.SCHED_IDLE)
    print("cpus", len(os.sched_getaffinity(proc.pid)), "of", len(os.sched_getaffinity(0)))
    print("exit", proc.wait(240), "compiled", is_compiled(kernel_name("pd")),
          is_compiled(kernel_name("warp_drive")))
    print("refused", refused("pd"), refused("warp_drive"))
""")


def run(tmp_path, mode: str) -> str:
    (tmp_path / "tmp").mkdir(exist_ok=True)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "TMPDIR": str(tmp_path / "tmp")}
    out = subprocess.run([sys.executable, "-c", SCRIPT, mode], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


@pytest.mark.timeout(320)
def test_a_background_compiler_fills_an_empty_cache_at_the_lowest_priority(tmp_path):
    out = run(tmp_path, "fresh")
    assert "policy True" in out
    # kept on one CPU (it delayed the loop's wake-ups moving between them; docs/compiling.md)
    assert "cpus 1 of" in out
    # an unknown law is skipped with a warning; the known one is compiled and marked
    assert "exit 0 compiled True False" in out
    # ... and said refused, so that the next start does not send it to a compiler again
    assert "refused False True" in out
    assert not list((tmp_path / "tmp").iterdir())  # the job file is gone


@pytest.mark.timeout(120)
def test_a_second_compiler_leaves_the_work_to_the_running_one(tmp_path):
    assert "started False compiled False" in run(tmp_path, "held")


@pytest.mark.timeout(300)
def test_beside_a_loop_on_the_normal_scheduler_the_other_laws_compile_once_it_stops(tmp_path):
    env = {**private_domain(182), "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "-m", "robot_control.cli", "launch", "--duration", "2",
                          "realtime_priority:=0"], env=env, capture_output=True, text=True,
                         timeout=280)
    text = out.stdout + out.stderr
    started = re.search(r"in the background \(pid (\d+)", text)
    if started:  # it fills the cache after the run: not this test's business
        try:
            os.kill(int(started.group(1)), signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert out.returncode == 0, text[-3000:]
    lines = text.splitlines()
    deferred = next(i for i, line in enumerate(lines) if "compile in the background once the "
                    "loop stops" in line)
    active = next(i for i, line in enumerate(lines) if "stack active" in line)
    stopping = next(i for i, line in enumerate(lines) if "[launch] stopping" in line)
    assert deferred < active < stopping, text[-3000:]
    # no compiler beside the loop: it starts as the controller's loop stops
    assert started and text.index(started.group(0)) > text.index(lines[stopping]), text[-3000:]


WARM_STACK = textwrap.dedent("""
    from robot_control.cli.warmup import warm_stack
    from robot_control.dynamics.compile_cache import is_compiled
    from robot_control.nodes.law_compiler import kernel_name
    print("problem", warm_stack())
    print("compiled", all(is_compiled(kernel_name(law))
                          for law in ("pd", "passivity", "sliding_mode", "adaptive")))
""")


@pytest.mark.timeout(600)
def test_warmup_waits_for_the_laws_a_stopping_stack_hands_to_the_compiler(tmp_path):
    # the stack's controller (normal scheduler) starts the compiler only as its loop stops, a
    # moment before the launch ends; warmup waits for it (start_background takes the compiler
    # lock before that process starts, so no start-up of it can slip between)
    env = {**private_domain(183), "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "-c", WARM_STACK], env=env, capture_output=True,
                         text=True, timeout=580)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "problem None" in out.stdout and "compiled True" in out.stdout, out.stdout
