"""Background compiles step aside while a control loop runs on the normal scheduler
(nodes/loop_presence.py): another process sees a loop from its start to its end, or to its
process's death; the background law compiler (nodes/law_compiler.py) then ends without compiling.
Real processes on a private compile cache."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

#: holds the presence as a loop does, says so, and waits for a line on stdin to release it
LOOP = textwrap.dedent("""
    import sys
    from robot_control.nodes import loop_presence
    loop_presence.hold()
    loop_presence.hold()  # idempotent
    print("held", flush=True)
    sys.stdin.readline()
    loop_presence.release()
    print("released", flush=True)
    sys.stdin.readline()
""")

#: does another process run a loop? (the background compiler's question)
LOOK = "from robot_control.nodes.loop_presence import loop_runs; print(loop_runs())"

#: start the background law compiler for LAW, waiting at most WAIT s for loops; wait for it
COMPILER = textwrap.dedent("""
    import sys
    from robot_control.dynamics.compile_cache import is_compiled
    from robot_control.model import load_robot
    from robot_control.nodes.law_compiler import kernel_name, refused, start_background
    law, wait = sys.argv[1], float(sys.argv[2])
    proc = start_background(load_robot("ddarm"), {law: {}}, loop_wait_s=wait)
    print("exit", proc.wait(60), "compiled", is_compiled(kernel_name(law)), "refused",
          refused(law), flush=True)
""")


@pytest.fixture
def env(tmp_path):
    return {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}


def look(env) -> str:
    return subprocess.run([sys.executable, "-c", LOOK], env=env, capture_output=True, text=True,
                          timeout=60, check=True).stdout.strip()


def start_loop(env) -> subprocess.Popen:
    loop = subprocess.Popen([sys.executable, "-c", LOOP], env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert loop.stdout.readline().strip() == "held"
    return loop


@pytest.mark.timeout(120)
def test_another_process_sees_a_loop_until_it_releases_or_dies(env):
    assert look(env) == "False"
    loop = start_loop(env)
    try:
        assert look(env) == "True"
        loop.stdin.write("\n")
        loop.stdin.flush()
        assert loop.stdout.readline().strip() == "released"
        assert look(env) == "False"
    finally:
        loop.kill()
        loop.wait(10)
    loop = start_loop(env)
    assert look(env) == "True"
    os.kill(loop.pid, signal.SIGKILL)  # a node that dies holds nothing
    loop.wait(10)
    assert look(env) == "False"


def compiler(env, law: str, wait_s: float) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", COMPILER, law, str(wait_s)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.timeout(120)
def test_the_law_compiler_leaves_its_work_while_a_loop_runs(env):
    loop = start_loop(env)
    try:
        started = time.monotonic()
        out, err = compiler(env, "pd", 1.0).communicate(timeout=90)
        assert "exit 0 compiled False refused False" in out, out + err[-3000:]
        assert time.monotonic() - started < 60  # it ended after its wait, compiling nothing
    finally:
        loop.kill()
        loop.wait(10)


@pytest.mark.timeout(120)
def test_the_law_compiler_goes_on_once_the_loop_stops_within_its_wait(env):
    # an unknown law is the compiler's quickest work: marked refused in the cache, nothing built
    loop = start_loop(env)
    try:
        proc = compiler(env, "warp_drive", 30.0)
        time.sleep(2.0)  # it waits for the loop (a stack's loops stop one after the other)
        assert proc.poll() is None
        loop.stdin.write("\n")
        loop.stdin.flush()
        out, err = proc.communicate(timeout=60)
        assert "exit 0 compiled False refused True" in out, out + err[-3000:]
    finally:
        loop.kill()
        loop.wait(10)
