"""Loop discipline (nodes/realtime.py): the realtime parameters are validated, applied when the
system permits and refused with one warning when it does not; garbage collection is frozen and
taken out of the tick while a loop runs, and the GIL is handed over within 200 µs."""

from __future__ import annotations

import ctypes
import gc
import os
import subprocess
import sys

import pytest
from stack_helpers import private_domain

from robot_control.bus import ParameterError, create_node
from robot_control.nodes.realtime import GIL_SWITCH_S, YOUNG_LIMIT, LoopDiscipline

PR_CAPBSET_DROP, CAP_IPC_LOCK, CAP_SYS_NICE = 24, 14, 23  # <linux/prctl.h>, <linux/capability.h>

PROBE = """
from robot_control.bus import create_node
from robot_control.nodes.realtime import LoopDiscipline
node = create_node("rt_probe", ["rt_probe", "--ros-args", "-p", "realtime_priority:=40",
                                "-p", "lock_memory:=true", "-p", "cpu_affinity:=[0]"])
loop = LoopDiscipline(node)
from robot_control.nodes.loop_presence import loop_runs
seen = []
for _ in range(3):  # activated three times: the settings are applied (or refused) once
    loop.start()
    seen.append(loop_runs())  # the background compilers' view of this loop
    loop.stop()
print("presence", seen, loop_runs(), flush=True)
print("status", loop.status(), flush=True)
import os
threads = [int(t) for t in os.listdir("/proc/self/task")]  # the DDS threads started earlier too
print("threads", len(threads), "cpus", sorted({tuple(sorted(os.sched_getaffinity(t)))
                                               for t in threads}), flush=True)
node.shutdown()
"""


def without_realtime_rights() -> None:
    """In the child, before exec: root loses CAP_SYS_NICE and CAP_IPC_LOCK (as an ordinary user
    has neither), so the kernel refuses SCHED_FIFO (rtprio limit 0) and mlockall (memlock)."""
    if os.geteuid() == 0:
        libc = ctypes.CDLL(None, use_errno=True)
        for cap in (CAP_SYS_NICE, CAP_IPC_LOCK):
            if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def run_probe(env: dict[str, str], restricted: bool) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True,
                          timeout=120, preexec_fn=without_realtime_rights if restricted else None)


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    # a cache folder of its own: the loop presence it reports is the probe's, not that of a
    # stack another test runs at the same time (the presence lock lives in the cache folder)
    env = {**private_domain(61), "XDG_CACHE_HOME": str(tmp_path_factory.mktemp("rt_cache"))}
    env.pop("NUMBA_CACHE_DIR", None)
    return env


@pytest.fixture
def node(env, monkeypatch):
    for key in ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE", "ROBOT_CONTROL_BUS"):
        monkeypatch.setenv(key, env[key])
    made = []

    def make(*params: str):
        argv = ["rt_test", "--ros-args"]
        for p in params:
            argv += ["-p", p]
        made.append(create_node("rt_test", argv))
        return made[-1]

    yield make
    for n in made:
        n.shutdown()


def test_refused_settings_are_logged_once_and_the_loop_runs_without_them(env):
    out = run_probe(env, restricted=True)
    assert out.returncode == 0, out.stderr
    status = out.stdout.split("status ", 1)[1]
    if "'realtime_priority': 40" in status:
        pytest.skip("this system grants SCHED_FIFO even without CAP_SYS_NICE (an rtprio limit)")
    assert out.stderr.count("realtime_priority 40 (SCHED_FIFO) not applied") == 1, out.stderr
    assert out.stderr.count("lock_memory true not applied") == 1, out.stderr
    assert "'realtime_priority': 0" in status  # it ran anyway, under the normal scheduler
    # ... where background compiles step aside while it runs (nodes/loop_presence.py)
    assert "presence [True, True, True] False" in out.stdout, out.stdout
    assert out.stderr.count("cpu_affinity [0] applied") == 1  # needs no privilege


@pytest.mark.skipif(os.geteuid() != 0, reason="needs the rights to set SCHED_FIFO (root here)")
def test_permitted_settings_apply_to_the_process(env):
    out = run_probe(env, restricted=False)
    assert out.returncode == 0, out.stderr
    assert "realtime_priority 40 (SCHED_FIFO) applied" in out.stderr, out.stderr
    assert "'realtime_priority': 40" in out.stdout and "'cpu_affinity': '0'" in out.stdout
    # a SCHED_FIFO loop lets background compiles run beside it (they cost it nothing measurable)
    assert "presence [False, False, False] False" in out.stdout, out.stdout
    threads = int(out.stdout.split("threads ")[1].split()[0])
    assert threads > 1 and "cpus [(0,)]" in out.stdout, out.stdout  # every thread on CPU 0


@pytest.mark.parametrize("param, reason", [
    ("realtime_priority:=120", "120 is outside"),
    ("cpu_affinity:=[4096]", "CPU 4096 is not available"),
    ("cpu_affinity:=[0.5]", "0.5 is not a CPU number"),
    ("lock_memory:=3", "type"),
])
def test_invalid_realtime_parameters_are_refused_with_the_reason(node, param, reason):
    with pytest.raises(ParameterError, match=reason):
        LoopDiscipline(node(param))


def test_collection_and_the_gil_hand_over_are_the_loops_while_one_runs(node):
    looping = node()
    first, second = LoopDiscipline(looping), LoopDiscipline(node())
    assert gc.isenabled()
    own = sys.getswitchinterval()
    try:
        first.start()
        second.start()
        assert not gc.isenabled() and gc.get_freeze_count() > 0
        assert sys.getswitchinterval() == pytest.approx(GIL_SWITCH_S) != own  # GIL hand-over
        garbage = [[] for _ in range(2 * YOUNG_LIMIT)]  # young objects that stay alive
        assert gc.get_count()[0] >= YOUNG_LIMIT
        first.after_tick()  # enough piled up: collected once the tick's chain is through ...
        assert gc.get_count()[0] >= YOUNG_LIMIT  # ... not inside the tick
        looping.spin_once(0.0)
        assert gc.get_count()[0] < YOUNG_LIMIT
        del garbage
        first.stop()
        assert not gc.isenabled()  # the other loop still runs
        assert sys.getswitchinterval() == pytest.approx(GIL_SWITCH_S)
        second.stop()
        assert gc.isenabled() and sys.getswitchinterval() == own
    finally:
        first.stop()
        second.stop()
        gc.unfreeze()
