"""Where numba keeps the compiled kernels, and one compile per kernel across processes.

By default numba caches next to the source (``__pycache__``), which a read-only install (colcon's
``install/``, ``/opt/ros``, a system site-packages) cannot write, so every process of every run
compiles again. This package's kernels are cached in a user cache directory instead —
``$XDG_CACHE_HOME/robot_control/numba`` (``~/.cache/robot_control/numba``; the platform's cache
directory elsewhere, as platformdirs places it) — unless ``NUMBA_CACHE_DIR`` names one. numba
keys each entry by the path and stamp of the file that defines the kernel only, but a compiled
kernel holds the code of every kernel it calls in other files: after one of those changes (an
upgrade, an edit) numba would load the old code without a word. So the user cache has one
folder per state of the kernel sources (:func:`kernel_sources_key`: every module of the kernel
rooms, by path, size and stamp); folders unused for PRUNE_DAYS are removed.

:func:`compiling` serialises the first call of a kernel across processes with a file lock: when
the four nodes of a stack start together, one compiles and writes the cache while the others
wait and then load it, instead of all compiling the same kernel on the same cores.

This module must run before any kernel module is imported (``robot_control.dynamics`` imports
it first): numba picks a function's cache location when ``@njit(cache=True)`` decorates it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numba.core.config

from robot_control.dynamics import cache_loading
from robot_control.model.resources import user_cache_dir

KERNEL_ROOMS = ("dynamics", "control", "sim", "trajectory", "identification")
PRUNE_DAYS = 14


def kernel_sources_key(package: Path | None = None) -> str:
    """A short digest of the kernel rooms' modules (relative path, size, stamp of each .py)."""
    package = Path(__file__).resolve().parent.parent if package is None else package
    digest = hashlib.sha1()
    for room in KERNEL_ROOMS:
        for path in sorted((package / room).rglob("*.py")):
            st = path.stat()
            digest.update(f"{path.relative_to(package)}:{st.st_size}:{st.st_mtime_ns};".encode())
    return digest.hexdigest()[:16]


def numba_cache_dir(env: dict[str, str] | None = None) -> Path | None:
    """Where the kernels are cached: ``NUMBA_CACHE_DIR`` if set (as given), else the user cache
    directory's folder for the current kernel sources (None when it cannot be created or
    written: numba then falls back to its own places)."""
    env = os.environ if env is None else env
    if env.get("NUMBA_CACHE_DIR"):
        return Path(env["NUMBA_CACHE_DIR"])
    root = user_cache_dir(env) / "numba"
    path = root / kernel_sources_key()
    try:
        path.mkdir(parents=True, exist_ok=True)
        os.utime(path)  # in use: not pruned
    except OSError:
        return None
    if not os.access(path, os.W_OK | os.X_OK):
        return None
    prune(root, keep=path)
    return path


def prune(root: Path, keep: Path, days: float = PRUNE_DAYS) -> None:
    """Remove the folders of kernel sources no process used for ``days``."""
    cutoff = time.time() - days * 86400
    for folder in root.iterdir():
        try:
            if folder != keep and folder.is_dir() and folder.stat().st_mtime < cutoff:
                shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            continue  # another process removed it meanwhile


def configure() -> Path | None:
    """Point numba's cache at :func:`numba_cache_dir` for this process; the directory used."""
    path = numba_cache_dir()
    if path is not None and not os.environ.get("NUMBA_CACHE_DIR"):
        # numba reads NUMBA_CACHE_DIR once; setting its config keeps other processes' env alone
        numba.core.config.CACHE_DIR = str(path)
    return path


CACHE_DIR = configure()
FAST_CACHE_LOAD = cache_loading.install()


@contextlib.contextmanager
def notice_if_slow(what: str, delay_s: float = 1.0, stream=None) -> Iterator[None]:
    """Say on stderr that ``what`` is being compiled if the block takes longer than ``delay_s``
    (a first run after an install or an update; a cached one takes a fraction of a second)."""
    def say() -> None:
        where = f" (cached in {CACHE_DIR} afterwards)" if CACHE_DIR is not None else ""
        print(f"robot-control: compiling {what}, once{where}; `robot-control warmup` compiles "
              "the bundled scenarios' code ahead", file=stream or sys.stderr, flush=True)

    timer = threading.Timer(delay_s, say)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


@contextlib.contextmanager
def compiling(kernel: str, wait: bool = True) -> Iterator[None]:
    """Hold the machine-wide lock of one kernel while its first call compiles or loads it (with
    ``wait`` false, compile alongside whoever holds it); once it returns, the cache holds the
    kernel (:func:`is_compiled`)."""
    if CACHE_DIR is None:
        yield
        return
    lock = CACHE_DIR / f"{kernel}.lock"
    with open(lock, "a") as fh:
        if wait:
            fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
            (CACHE_DIR / f"{kernel}.compiled").touch()
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def is_compiled(kernel: str) -> bool:
    """Whether a call under :func:`compiling` of this name has filled the cache (of these kernel
    sources: the folder changes with them), so a new process only loads it."""
    return CACHE_DIR is not None and (CACHE_DIR / f"{kernel}.compiled").exists()
