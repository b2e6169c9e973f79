"""Each kernel compiled once across processes, and a process that compiles says so at once.

The stack's nodes start together and several need the same kernels before they run (the mass
matrix for the initial pose in the plant and the controller, Newton–Euler in all three). numba
compiles a kernel in the process that first calls it, single-threaded, and caches it afterwards:
on an empty cache two nodes compiled the same kernel side by side on a 2-core machine, each taking
a core from the kernels only one of them needs. :func:`install_lock` makes the first call of a
cached kernel in a process (loading it, or compiling it on a cache miss) hold a machine-wide lock
of that kernel in the cache folder: one process compiles and writes the cache, the others wait
and then load it. The kernels compiled inside a call (its callees, e.g. the joint placement
every recursion calls) take their own locks too, so a helper the plant's step and the
controller's mass matrix share compiles once. No deadlock: a process waits only for a callee of
the kernels whose locks it holds, so every process takes its locks in the order of one call
graph, which has no cycles (a kernel never calls itself or its callers). A process that must never
make another wait (the background law compiler at the lowest CPU priority: a node waiting for it
would be a priority inversion) does not install it. Nobody waits for good: after
:data:`WAIT_LIMIT_S` a waiting process compiles the kernel itself (the holder may be stopped,
SIGSTOP, or starved), says so, and the cache takes whichever copy is written last (numba writes
its files whole, by rename).

:func:`announce` makes the first compile of the process (or the first wait for another's) say so
in one line — what, and why — the moment it starts, wherever in the code the first call comes
from (a node's construction, a configure, a tick).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numba.core.dispatcher
import numba.core.event
from numba.core import sigutils
from numba.core.caching import NullCache

from robot_control.dynamics.compile_cache import CACHE_DIR
from robot_control.foundation.file_locks import lock_within, try_lock

#: how long a process waits for another's compile of a kernel before compiling it itself (s)
WAIT_LIMIT_S = 30.0
#: how often a waiting process tries the lock again (s)
WAIT_POLL_S = 0.02

_said = threading.Event()  # the notice has been given in this process
_say: list[Callable[[str], None]] = []  # where the notice goes (announce)
_original_compile = numba.core.dispatcher.Dispatcher.compile


def kernel_label(dispatcher) -> str:
    """A kernel's name as the notice and its lock give it: module (without the package) and
    function, e.g. ``dynamics.kernels.mass_matrix_kernel``."""
    func = dispatcher.py_func
    module = func.__module__.removeprefix("robot_control.")
    return f"{module}.{func.__qualname__}"


def notice(what: str) -> str:
    """The one line a compiling process gives: what, why, and how to avoid it."""
    where = f" in {CACHE_DIR}" if CACHE_DIR is not None else ""
    return (f"compiling {what} and the kernels it needs: no compiled code for these kernel "
            f"sources{where} yet (a first start after an install or an update; cached for the "
            "next; `robot-control warmup` compiles ahead)")


def say_once(what: str, say: Callable[[str], None] | None = None) -> None:
    """Give the notice for ``what`` unless this process gave it already: to :func:`announce`'s
    listener, else to ``say`` (else nowhere)."""
    target = _say[0] if _say else say
    if target is not None and not _said.is_set():
        _said.set()
        target(notice(what))


class _CompileListener(numba.core.event.Listener):
    """numba's compile event (a cache miss, before typing starts): the notice, once."""

    def on_start(self, event) -> None:
        if not _said.is_set():
            say_once(kernel_label(event.data["dispatcher"]))

    def on_end(self, event) -> None:
        pass


def announce(say: Callable[[str], None]) -> None:
    """From now on the first compile of this process calls ``say`` with :func:`notice`'s line
    (the node's logger: on the console and /rosout under both launchers)."""
    if not _say:
        numba.core.event.register("numba:compile", _CompileListener())
    _say[:] = [say]


def _lock_path(dispatcher):
    return CACHE_DIR / f"compile.{kernel_label(dispatcher)}.lock"


def _compile_once(self, sig):
    """Dispatcher.compile holding the kernel's machine-wide lock (see the module)."""
    if isinstance(self._cache, NullCache) or CACHE_DIR is None:
        return _original_compile(self, sig)
    with numba.core.dispatcher.global_compiler_lock:  # threads of this process queue here first
        if tuple(sigutils.normalize_signature(sig)[0]) in self.overloads:
            return _original_compile(self, sig)
        try:
            fh = open(_lock_path(self), "a")
        except OSError:  # a cache folder gone read-only: compile without the lock
            return _original_compile(self, sig)
        with fh:  # closing the file releases the lock
            if not try_lock(fh):
                say_once(f"{kernel_label(self)} (another process compiles it: waiting)")
                if not lock_within(fh, WAIT_LIMIT_S, WAIT_POLL_S) and _say:
                    _say[0](f"waited {WAIT_LIMIT_S:g} s for another process's compile of "
                            f"{kernel_label(self)}: compiling it here too")
            return _original_compile(self, sig)  # a cache load if the other one wrote it


def install_lock() -> None:
    """Take the kernels' machine-wide compile locks in this process (see the module)."""
    numba.core.dispatcher.Dispatcher.compile = _compile_once
