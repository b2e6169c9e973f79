"""Loop discipline of a node that keeps a control period (the plant, a timer-driven controller).

- **Garbage collection out of the tick.** Once configure has compiled everything, a full
  collection runs (``prepare``); when the loop starts (activation) the objects alive then are
  frozen (``gc.freeze``: later collections do not scan them) and automatic collection is switched
  off; the node collects what its ticks left
  behind itself once the control chain a tick started is through (``after_tick``, via
  ``Node.when_idle``), a young generation at a time, so a collection never lands inside a tick
  or between a state and its command. Collection is process-wide: it stays off while
  any loop of the process runs.
- **GIL hand-over.** While a loop runs, a thread waiting for the interpreter lock asks for it
  after GIL_SWITCH_S (200 µs) instead of CPython's 5 ms (``sys.setswitchinterval``): a DDS
  thread delivering a state or command into Python would otherwise wait up to five periods of a
  1 kHz loop for the thread running a tick. Measured with two composed stacks at 1 kHz
  (bench/fleet.py, 3 runs each): missed deadlines 0.18–0.31 % → 0.11–0.16 %; 50 µs was worse
  (0.17–0.25 %).
- **Scheduling**, as ros2_control's controller_manager offers it (``thread_priority``,
  ``cpu_affinity``, ``lock_memory``): ``realtime_priority`` (1…99: SCHED_FIFO at that priority for
  every thread of the process; 0: off), ``cpu_affinity`` (CPUs the process may run on; empty:
  any), ``lock_memory`` (mlockall: no page faults in the loop). Each applies when the loop first
  starts, if the system permits (CAP_SYS_NICE / an rtprio limit, CAP_IPC_LOCK / a memlock limit);
  a refusal is logged once, as a warning, and the loop runs without it.
- **Background compiles step aside** while a loop runs on the normal scheduler (not SCHED_FIFO):
  the process says so through nodes/loop_presence.py.

The deadlines themselves are the bus timers': absolute (next = start + k·period, never drifting),
slept until shortly before and then spun (bus/dds/executor.py, bus/ros/node.py).
"""

from __future__ import annotations

import ctypes
import gc
import os
import sys
from dataclasses import dataclass

from robot_control.bus import ParameterError
from robot_control.bus.param_table import declare, param
from robot_control.nodes import loop_presence

MCL_CURRENT, MCL_FUTURE = 1, 2  # <sys/mman.h>
#: young objects allowed to pile up between a loop's own collections (CPython's default gen-0
#: threshold); older generations are collected when this many young collections went by
YOUNG_LIMIT = 700
OLDER_EVERY = 10
#: the interpreter's switch interval while a loop runs (s; CPython's default is 5 ms)
GIL_SWITCH_S = 2e-4

_running_loops = 0  # loops of this process that keep collection off
_switch_interval = sys.getswitchinterval()  # the process's own, restored when no loop runs


@dataclass(frozen=True)
class RealtimeParams:
    """A looping node's scheduling settings, applied when its loop first starts."""

    realtime_priority: int = param(
        0, "SCHED_FIFO priority of the node's process while its loop runs (1-99; 0: the normal "
        "scheduler); needs CAP_SYS_NICE or an rtprio limit, logged once if refused",
        range=(0, 99), read_only=True)
    cpu_affinity: tuple[float, ...] = param(
        (), "CPUs the node's process runs on while its loop runs (empty: any)", read_only=True)
    lock_memory: bool = param(
        False, "lock the process's memory (mlockall) while its loop runs, so no page fault "
        "lands in a tick; logged once if refused", read_only=True)


class LoopDiscipline:
    """The realtime parameters of one node, and the process-wide state its loop runs under."""

    def __init__(self, node) -> None:
        self.node = node
        self.log = node.get_logger()
        self.settings = declare(node, RealtimeParams)
        self.priority = self.settings.realtime_priority
        self.lock_memory = self.settings.lock_memory
        self.cpus = cpu_set(self.settings.cpu_affinity)
        self.applied = False
        self.running = False
        self.young_collections = 0
        self.collecting = False  # a collection waits for the chain's slack

    # -------------------------------------------------------------- the loop
    @staticmethod
    def prepare() -> None:
        """After the warm-up (configure): collect everything once, now that time is free."""
        gc.collect()

    def start(self) -> None:
        """The loop starts (activation): apply the scheduling settings (once), freeze what is
        alive, and take collection over (all cheap: the full collection ran in prepare)."""
        global _running_loops
        if not self.applied:
            self.applied = True
            self._apply()
        if not self.running:
            self.running = True
            _running_loops += 1
            gc.freeze()
            gc.disable()
            sys.setswitchinterval(GIL_SWITCH_S)
            if _current_priority() == 0:  # background compiles wait while it runs
                loop_presence.hold()

    def stop(self) -> None:
        """The loop stops (deactivation, an error): collection is automatic again, unless
        another loop of the process still runs."""
        global _running_loops
        if self.running:
            self.running = False
            _running_loops -= 1
            if _running_loops == 0:
                gc.enable()
                sys.setswitchinterval(_switch_interval)
                loop_presence.release()

    def after_tick(self) -> None:
        """Collect the young objects a tick left, once enough piled up: when the control chain
        its result started is through (Node.when_idle), so a collection delays no deadline;
        older generations now and then."""
        if not self.running or gc.get_count()[0] < YOUNG_LIMIT or self.collecting:
            return
        self.collecting = True
        self.node.when_idle(self._collect)

    def _collect(self) -> None:
        self.collecting = False
        self.young_collections += 1
        gc.collect(1 if self.young_collections % OLDER_EVERY == 0 else 0)

    # ------------------------------------------------------------- settings
    def _apply(self) -> None:
        if self.cpus:
            _attempt(self.log, "cpu_affinity", f"{sorted(self.cpus)}",
                     lambda: _affinity_every_thread(self.cpus))
        if self.lock_memory:
            _attempt(self.log, "lock_memory", "true", _lock_memory)
        if self.priority > 0:
            _attempt(self.log, "realtime_priority", f"{self.priority} (SCHED_FIFO)",
                     lambda: _fifo_every_thread(self.priority))

    def status(self) -> dict[str, object]:
        """What /diagnostics reports of the loop's scheduling."""
        return {"realtime_priority": _current_priority(),
                "gil_switch_interval_us": round(sys.getswitchinterval() * 1e6),
                "cpu_affinity": ",".join(str(c) for c in sorted(os.sched_getaffinity(0))),
                "gc_automatic": gc.isenabled()}


def cpu_set(values: list[float]) -> set[int]:
    """CPU numbers from a ``cpu_affinity`` parameter; ParameterError naming a bad one."""
    available = os.sched_getaffinity(0)
    cpus = set()
    for v in values:
        if v != int(v) or int(v) < 0:
            raise ParameterError(f"cpu_affinity: {v} is not a CPU number")
        if int(v) not in available:
            raise ParameterError(f"cpu_affinity: CPU {int(v)} is not available to this process "
                                 f"(it may use {sorted(available)})")
        cpus.add(int(v))
    return cpus


def _attempt(log, name: str, value: str, apply) -> bool:
    """Apply one setting; a refusal by the system is logged once (a warning) and survived."""
    try:
        apply()
    except OSError as exc:
        log.warn(f"{name} {value} not applied: {exc.strerror or exc} (the loop runs without it; "
                 "see the parameter's description for what it needs)")
        return False
    log.info(f"{name} {value} applied")
    return True


def _affinity_every_thread(cpus: set[int]) -> None:
    """The CPU set for every thread of the process (sched_setaffinity(0) sets only the calling
    thread's; the DDS threads started before the loop would stay anywhere)."""
    for tid in sorted(int(t) for t in os.listdir("/proc/self/task")):
        os.sched_setaffinity(tid, cpus)


def _fifo_every_thread(priority: int) -> None:
    """SCHED_FIFO for every thread of the process (the DDS receive threads deliver the loop's
    messages: leaving them at normal priority would only move the wait)."""
    param = os.sched_param(priority)
    for tid in sorted(int(t) for t in os.listdir("/proc/self/task")):
        os.sched_setscheduler(tid, os.SCHED_FIFO, param)


def _current_priority() -> int:
    return os.sched_getparam(0).sched_priority if os.sched_getscheduler(0) == os.SCHED_FIFO \
        else 0


def _lock_memory() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.mlockall(MCL_CURRENT | MCL_FUTURE) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))
