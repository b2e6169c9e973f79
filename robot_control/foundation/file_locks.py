"""Advisory file locks (flock) between the processes of one machine: one lock per open file, gone
with the last descriptor or the process, so a process that dies holds nothing."""

from __future__ import annotations

import fcntl
import time
from pathlib import Path
from typing import IO


def try_lock(fh: IO | int) -> bool:
    """Take the exclusive lock of an open file (object or descriptor) if nobody else holds it."""
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def lock_within(fh: IO | int, limit_s: float, poll_s: float) -> bool:
    """Take the exclusive lock of an open file, looking every ``poll_s`` for at most ``limit_s``;
    False if another process still holds it then."""
    deadline = time.monotonic() + limit_s
    while not try_lock(fh):
        if time.monotonic() >= deadline:
            return False
        time.sleep(poll_s)
    return True


def held_elsewhere(path: Path | str) -> bool:
    """Whether another open file of ``path`` holds a lock on it (a look: nothing is kept)."""
    with open(path, "a") as fh:
        if not try_lock(fh):
            return True
        fcntl.flock(fh, fcntl.LOCK_UN)
        return False
