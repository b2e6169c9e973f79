"""A kernel compiles once across processes and a compiling process says so at once
(dynamics/compile_once.py): real processes, a real numba cache folder, a kernel of their own."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

# slow (scripts/test.sh --slow): cold compiles (an empty compile cache) in several processes
pytestmark = pytest.mark.slow

KERNEL = textwrap.dedent("""
    from numba import njit

    @njit(cache=True)
    def probe_kernel(x):
        s = 0.0
        for i in range(x.shape[0]):
            s += x[i] * x[i]
        return s

    @njit(cache=True)
    def second_kernel(x):
        return x[0] + 1.0

    @njit(cache=True)
    def helper_one(x):
        return x[0] * 2.0

    @njit(cache=True)
    def helper_two(x):
        return x[-1] - 1.0

    @njit(cache=True)
    def outer_a(x):  # the helpers in one order ...
        return helper_one(x) + helper_two(x)

    @njit(cache=True)
    def outer_b(x):  # ... and in the other
        return helper_two(x) * helper_one(x)
""")

#: announce + lock, call the kernel; print each notice with its time, then the compile stats
CALLER = textwrap.dedent("""
    import sys, time
    import numpy as np
    from robot_control.dynamics import compile_once
    import probe_module

    said = []
    compile_once.announce(lambda line: (said.append(time.perf_counter()),
                                        print("NOTICE", line, flush=True)))
    compile_once.install_lock()
    print("READY", flush=True)
    start = time.perf_counter()
    probe_module.probe_kernel(np.ones(3))
    end = time.perf_counter()
    probe_module.second_kernel(np.ones(3))
    stats = probe_module.probe_kernel.stats
    print("NOTICES", len(said), "BEFORE_END", all(t < end for t in said), flush=True)
    print("MISSES", sum(stats.cache_misses.values()), "HITS", sum(stats.cache_hits.values()))
""")

#: another process compiling the kernel: hold its lock until told, then compile and let go
HOLDER = textwrap.dedent("""
    import fcntl, sys
    import numpy as np
    from robot_control.dynamics.compile_cache import CACHE_DIR
    import probe_module

    with open(CACHE_DIR / "compile.probe_module.probe_kernel.lock", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        print("HELD", flush=True)
        sys.stdin.readline()
        probe_module.probe_kernel(np.ones(3))  # fills the cache while it holds the lock
    print("RELEASED", flush=True)
""")


def environment(tmp_path) -> dict:
    (tmp_path / "probe_module.py").write_text(KERNEL)
    path = os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": path}


def figures(out: str) -> dict[str, str]:
    """The words after each upper-case key of the caller's last two lines."""
    words = " ".join(out.strip().splitlines()[-2:]).split()
    return {words[i]: words[i + 1] for i in range(0, len(words), 2)}


def test_the_first_compile_says_so_once_before_it_ends(tmp_path):
    out = subprocess.run([sys.executable, "-c", CALLER], env=environment(tmp_path),
                         capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-3000:]
    notices = [line for line in out.stdout.splitlines() if line.startswith("NOTICE ")]
    assert len(notices) == 1, out.stdout  # two kernels compiled, one line
    assert "compiling probe_module.probe_kernel" in notices[0]
    assert "robot-control warmup" in notices[0] and str(tmp_path / "cache") in notices[0]
    f = figures(out.stdout)
    assert f["BEFORE_END"] == "True" and f["MISSES"] == "1" and f["HITS"] == "0"
    again = subprocess.run([sys.executable, "-c", CALLER], env=environment(tmp_path),
                           capture_output=True, text=True, timeout=240)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "NOTICE " not in again.stdout  # loaded from the cache: nothing to say
    assert figures(again.stdout)["HITS"] == "1"


def test_a_kernel_another_process_compiles_is_waited_for_and_loaded(tmp_path):
    env = environment(tmp_path)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER], env=env, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "HELD"
        caller = subprocess.Popen([sys.executable, "-c", CALLER], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert caller.stdout.readline().strip() == "READY"
        notice = caller.stdout.readline()  # at once, while the holder still holds the lock
        assert notice.startswith("NOTICE compiling probe_module.probe_kernel (another process "
                                 "compiles it: waiting)"), notice
        time.sleep(0.5)
        assert caller.poll() is None  # still waiting
        holder.stdin.write("go\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "RELEASED"
        out, err = caller.communicate(timeout=240)
        assert caller.returncode == 0, err[-3000:]
        f = figures(out)
        assert f["MISSES"] == "0" and f["HITS"] == "1"  # loaded what the holder compiled
    finally:
        holder.kill()
        holder.wait()


#: compile one of the two outer kernels (argv[1]) once told to; print the helpers' cache misses
SHARING = textwrap.dedent("""
    import sys
    import numpy as np
    from robot_control.dynamics import compile_once
    import probe_module

    compile_once.install_lock()
    print("READY", flush=True)
    sys.stdin.readline()
    getattr(probe_module, sys.argv[1])(np.ones(3))
    print("MISSES", *(sum(getattr(probe_module, h).stats.cache_misses.values())
                      for h in ("helper_one", "helper_two")), flush=True)
""")


def test_callees_compile_once_across_processes_without_deadlock(tmp_path):
    """Two processes compiling kernels that share two helpers (called in opposite orders) both
    finish, and each helper is compiled by one of them only: the callees take their locks too."""
    env = environment(tmp_path)
    procs = [subprocess.Popen([sys.executable, "-c", SHARING, name], env=env, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for name in ("outer_a", "outer_b")]
    try:
        for p in procs:
            assert p.stdout.readline().strip() == "READY"
        for p in procs:  # together, as the nodes of a starting stack
            p.stdin.write("go\n")
            p.stdin.flush()
        outs = [p.communicate(timeout=240) for p in procs]
    finally:
        for p in procs:
            p.kill()
            p.wait()
    misses = []
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err[-3000:]
        misses.append([int(w) for w in out.split("MISSES", 1)[1].split()])
    assert [a + b for a, b in zip(*misses)] == [1, 1], misses


#: the caller, waiting at most a second for another's compile
IMPATIENT = CALLER.replace("compile_once.install_lock()",
                           "compile_once.install_lock()\ncompile_once.WAIT_LIMIT_S = 1.0")


def test_a_holder_that_never_lets_go_is_waited_for_only_so_long(tmp_path):
    """A process holding a kernel's lock for good (stopped, starved) does not stop the others:
    after WAIT_LIMIT_S they compile it themselves, and say so."""
    env = environment(tmp_path)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER], env=env, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "HELD"
        caller = subprocess.run([sys.executable, "-c", IMPATIENT], env=env, capture_output=True,
                                text=True, timeout=240)
        assert holder.poll() is None  # it still holds the lock
    finally:
        holder.kill()
        holder.wait()
    assert caller.returncode == 0, caller.stderr[-3000:]
    assert "compiling probe_module.probe_kernel (another process compiles it: waiting)" in \
        caller.stdout
    assert "waited 1 s for another process's compile of probe_module.probe_kernel: compiling " \
        "it here too" in caller.stdout
    assert figures(caller.stdout)["MISSES"] == "1"  # compiled here
