"""Where numba keeps the compiled kernels, and one compile per kernel across processes.

By default numba caches next to the source (``__pycache__``), which a read-only install (colcon's
``install/``, ``/opt/ros``, a system site-packages) cannot write, so every process of every run
compiles again. This package's kernels are cached in a user cache directory instead —
``$XDG_CACHE_HOME/robot_control/numba`` (``~/.cache/robot_control/numba``; the platform's cache
directory elsewhere, as platformdirs places it) — unless ``NUMBA_CACHE_DIR`` names one. numba
keys each entry by the content of the file that defines the kernel only, but a compiled kernel
holds the code of every kernel it calls in other files: after one of those changes (an upgrade,
an edit) numba would load the old code without a word. So the user cache has one folder per
state of the kernel sources (:func:`kernel_sources_key`: every module of the kernel rooms, by
path inside the package and content); folders unused for PRUNE_DAYS are removed. Inside it,
each module's kernels sit under the module's path in the package (:class:`PackageCacheLocator`),
not under a digest of its absolute path as numba files them: the key changes only when the
compiled code's inputs change, so a copy of the same sources (another checkout, a ``pip install``
of it, a ``colcon build``'s install/) or a checkout that only touched the files' stamps loads
what an earlier one compiled.

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

import numba.core.caching
import numba.core.config

from robot_control.dynamics import cache_loading, inline_copy
from robot_control.model.resources import user_cache_dir

KERNEL_ROOMS = ("dynamics", "control", "sim", "trajectory", "identification")
PRUNE_DAYS = 14


PACKAGE = Path(__file__).resolve().parent.parent


def kernel_sources_key(package: Path | None = None) -> str:
    """A short digest of the kernel rooms' modules (path in the package and content of each
    .py; not their stamps, which a copy or a checkout changes)."""
    package = PACKAGE if package is None else package
    digest = hashlib.sha1()
    for room in KERNEL_ROOMS:
        for path in sorted((package / room).rglob("*.py")):
            digest.update(f"{path.relative_to(package).as_posix()}\0".encode())
            digest.update(hashlib.sha1(path.read_bytes()).digest())
    return digest.hexdigest()[:16]


class PackageCacheLocator(numba.core.caching.UserProvidedCacheLocator):
    """numba's locator for the configured cache folder, filing the package's own modules under
    their path in the package (``robot_control/dynamics``) instead of a digest of the absolute
    directory, so every copy of the same sources shares the folder's entries (numba checks each
    entry against the source's content)."""

    @classmethod
    def get_suitable_cache_subpath(cls, py_file: str) -> str:
        folder = Path(py_file).resolve().parent
        try:
            return (Path(PACKAGE.name) / folder.relative_to(PACKAGE)).as_posix()
        except ValueError:  # not one of ours: numba's own filing
            return super().get_suitable_cache_subpath(py_file)


def use_package_locator() -> bool:
    """File the package's kernels with :class:`PackageCacheLocator` (numba's list of locators,
    ``CacheImpl._locator_classes``, is not documented: False, and numba's own filing, if a numba
    release changed it)."""
    impl = getattr(numba.core.caching, "CacheImpl", getattr(numba.core.caching, "_CacheImpl", None))
    locators = getattr(impl, "_locator_classes", None)
    if not isinstance(locators, list) or numba.core.caching.UserProvidedCacheLocator not in locators:
        return False
    if PackageCacheLocator not in locators:
        locators.insert(locators.index(numba.core.caching.UserProvidedCacheLocator),
                        PackageCacheLocator)
    return True


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
        use_package_locator()
    return path


CACHE_DIR = configure()
FAST_CACHE_LOAD = cache_loading.install()
FAST_INLINE_COPY = inline_copy.install()


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
