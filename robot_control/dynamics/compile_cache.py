"""Where numba keeps the compiled kernels, and one compile per kernel across processes.

By default numba caches next to the source (``__pycache__``), which a read-only install (colcon's
``install/``, ``/opt/ros``, a system site-packages) cannot write, so every process of every run
compiles again. This package's kernels are cached in a user cache directory instead —
``$XDG_CACHE_HOME/robot_control/numba`` (``~/.cache/robot_control/numba``; the platform's cache
directory elsewhere, as platformdirs places it) — unless ``NUMBA_CACHE_DIR`` names one. numba
keys each entry by the source file's path and stamp, so checkouts and versions do not collide.

:func:`compiling` serialises the first call of a kernel across processes with a file lock: when
the four nodes of a stack start together, one compiles and writes the cache while the others
wait and then load it, instead of all compiling the same kernel on the same cores.

This module must run before any kernel module is imported (``robot_control.dynamics`` imports
it first): numba picks a function's cache location when ``@njit(cache=True)`` decorates it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import numba.core.config

APP = "robot_control"


def user_cache_dir(env: dict[str, str] | None = None, platform: str = sys.platform) -> Path:
    """The per-user cache directory of this package (platformdirs' user_cache_dir rules)."""
    env = os.environ if env is None else env
    home = Path(env.get("HOME") or Path.home())
    if platform == "darwin":
        return home / "Library" / "Caches" / APP
    if platform.startswith("win"):
        base = env.get("LOCALAPPDATA") or str(home / "AppData" / "Local")
        return Path(base) / APP / "Cache"
    xdg = env.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else home / ".cache"  # XDG: relative is invalid
    return base / APP


def numba_cache_dir(env: dict[str, str] | None = None) -> Path | None:
    """Where the kernels are cached: ``NUMBA_CACHE_DIR`` if set, else the user cache directory
    (None when it cannot be created or written: numba then falls back to its own places)."""
    env = os.environ if env is None else env
    if env.get("NUMBA_CACHE_DIR"):
        return Path(env["NUMBA_CACHE_DIR"])
    path = user_cache_dir(env) / "numba"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return path if os.access(path, os.W_OK | os.X_OK) else None


def configure() -> Path | None:
    """Point numba's cache at :func:`numba_cache_dir` for this process; the directory used."""
    path = numba_cache_dir()
    if path is not None and not os.environ.get("NUMBA_CACHE_DIR"):
        # numba reads NUMBA_CACHE_DIR once; setting its config keeps other processes' env alone
        numba.core.config.CACHE_DIR = str(path)
    return path


CACHE_DIR = configure()


@contextlib.contextmanager
def compiling(kernel: str) -> Iterator[None]:
    """Hold the machine-wide lock of one kernel while its first call compiles or loads it."""
    if CACHE_DIR is None:
        yield
        return
    lock = CACHE_DIR / f"{kernel}.lock"
    with open(lock, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
