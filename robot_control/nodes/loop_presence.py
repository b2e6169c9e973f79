"""Whether a control loop runs on the normal scheduler: background compiles step aside while one does.

On the 2-core machine a compile beside a 1 kHz loop on the normal scheduler, even at SCHED_IDLE
and kept on one CPU, doubled the loop's missed deadlines (5.8 → 13.8 %, eight rounds of
``python bench/idle_compile_load.py --pin 1``; docs/compiling.md); beside SCHED_FIFO loops it
cost nothing measurable (0.8 → 0.7 %). So a process whose loop runs on the normal scheduler holds
a shared lock on ``loops.lock`` in the compile cache while the loop runs (nodes/realtime.py), and
the background law compiler (nodes/law_compiler.py) looks before each law: while any process
holds it, the compiler waits (a stack's loops stop one after the other), and leaves the rest for
later if one still runs after half a minute. flock locks end with their process, so a node
that dies holds nothing.
"""

from __future__ import annotations

import fcntl
from typing import IO

from robot_control.dynamics.compile_cache import CACHE_DIR
from robot_control.foundation.file_locks import held_elsewhere

LOCK_NAME = "loops.lock"

_held: IO[str] | None = None  # this process's open lock file while one of its loops runs


def hold() -> None:
    """This process runs a loop on the normal scheduler (idempotent). The wait is a compiler's
    look at the lock, microseconds."""
    global _held
    if _held is not None or CACHE_DIR is None:
        return
    try:
        fh = open(CACHE_DIR / LOCK_NAME, "a")
    except OSError:  # a cache that is not writable any more: nothing compiles into it either
        return
    fcntl.flock(fh, fcntl.LOCK_SH)
    _held = fh


def release() -> None:
    """No loop of this process runs on the normal scheduler any more."""
    global _held
    if _held is not None:
        _held.close()  # closing the last descriptor releases the lock
        _held = None


def loop_runs() -> bool:
    """Whether a process holds the lock: a loop on the normal scheduler runs."""
    return CACHE_DIR is not None and held_elsewhere(CACHE_DIR / LOCK_NAME)
