"""The background compiler of a controller's other laws (nodes/law_compiler.py): a real process
on an empty compile cache compiles a law, marks it in the cache, runs at the lowest CPU priority
on one CPU and leaves the work to a compiler already running."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

# slow (scripts/test.sh --slow): cold compiles (an empty compile cache) of the background law compiler
pytestmark = pytest.mark.slow

SCRIPT = textwrap.dedent("""
    import fcntl, os, sys, time
    from robot_control.dynamics.compile_cache import CACHE_DIR, is_compiled
    from robot_control.model import load_robot
    from robot_control.nodes.law_compiler import LOCK_NAME, kernel_name, refused, start_background

    model = load_robot("ddarm")
    if sys.argv[1] == "held":  # another compiler holds the lock: this one leaves at once
        with open(CACHE_DIR / LOCK_NAME, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            proc = start_background(model, {"pd": {}})
            print("exit", proc.wait(60), "compiled", is_compiled(kernel_name("pd")))
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
    assert "exit 0 compiled False" in run(tmp_path, "held")
