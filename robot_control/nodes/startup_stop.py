"""Ctrl-C of a node process that is still starting: a quiet stop (status 0), never a traceback.

ros2 launch passes a terminal's Ctrl-C to every node, then sends its own SIGINT, and logs a node
that dies of the signal or is still there 5 s later as an ERROR. A node spends its first seconds
importing (tens of seconds on a loaded machine) and may then compile for tens more in a
configure transition; the handler is installed as early as the package can: when a node
executable (setup.py's console scripts, as ros2 launch runs them) first imports
``robot_control.nodes`` (nodes/__init__.py), before the node's own heavy imports.
"""

from __future__ import annotations

#: the instance a node executable installed at its first import, until run_node takes it
_early: StartupStop | None = None


class StartupStop:
    """SIGINT / SIGTERM to a node process: the first asks it to stop — a node still starting
    stops once the step under way is done, a spinning one by its own handlers — and ends the
    process quietly (status 0) STOP_WITHIN_S later if it is still starting, or compiling (a cold
    compile in a configure transition takes longer than ros2 launch waits before its SIGTERM, and
    launch logs that as an ERROR); a second one ends it now, unless it is the first one's echo.

    Python runs a signal's handler only when the main thread runs Python code, and a compile keeps
    it in long calls for seconds (tens on a loaded machine): the signal's C handler also writes
    its number to a wakeup pipe at once, and a watchdog thread reading it keeps the deadline."""

    #: a second SIGINT this soon after the first is its echo, not a second Ctrl-C: under ros2
    #: launch a terminal's Ctrl-C reaches the node, then launch sends its own SIGINT
    ECHO_S = 1.0
    #: the longest a node may take to stop after the first signal (ros2 launch: SIGTERM after 5 s)
    STOP_WITHIN_S = 2.5

    def __init__(self) -> None:
        self.requested = False
        self.spinning = False
        self.first = 0.0  # monotonic time of the first signal
        self.deadline = False  # the watchdog's STOP_WITHIN_S is running

    def __call__(self, signum, frame) -> None:
        import os
        import signal
        import time

        now = time.monotonic()
        if not self.requested:
            self.requested, self.first = True, now
            return
        if self.spinning or (signum == signal.SIGINT and now - self.first <= self.ECHO_S):
            # spinning: rclpy's handler, installed over this one, chains to it, and the node is
            # stopping already (an exit 130 here made launch log "[ERROR] … process has died");
            # a SIGTERM is never an echo: a main thread busy in a compile runs the handlers of
            # a SIGINT and of the launcher's SIGTERM seconds later back to back
            return
        os._exit(128 + signum)  # nothing worth cleaning up yet; the runner counts this clean

    def _watch(self, fd: int) -> None:
        """The watchdog thread: a signal's number arrives on ``fd`` (the wakeup pipe) the moment
        the signal does; a node still starting or compiling then gets STOP_WITHIN_S."""
        import os
        import threading

        while os.read(fd, 64):
            if not self.deadline and (not self.spinning or _compiling()):
                self.deadline = True
                timer = threading.Timer(self.STOP_WITHIN_S, self._end_if_stuck)
                timer.daemon = True  # a node that stops in time does not wait for it
                timer.start()

    def _end_if_stuck(self) -> None:
        """STOP_WITHIN_S after the signal: a node still starting or compiling ends now, quietly
        (nothing worth cleaning up: no loop has run); a spinning one stops by its handlers."""
        import os

        if not self.spinning or _compiling():
            os._exit(0)
        self.deadline = False

    def _start_watchdog(self) -> None:
        """The wakeup pipe and its reader (main thread only, before the signals are unblocked)."""
        import os
        import signal
        import threading

        read_end, write_end = os.pipe()
        os.set_blocking(write_end, False)  # the C handler must never block
        try:
            signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
        except ValueError:
            os.close(read_end)
            os.close(write_end)
            return
        threading.Thread(target=self._watch, args=(read_end,), daemon=True,
                         name="startup-stop").start()

    def hand_over(self) -> None:
        """The node spins: its own handlers stop it from now on (the watchdog: if it compiles)."""
        self.spinning = True

    @classmethod
    def install(cls) -> StartupStop:
        """Handle both signals (main thread only) and unblock them: a pending one lands now. The
        instance installed at the node executable's first import (:meth:`install_early`) if
        there is one: a signal that came while the node imported has been counted."""
        import signal
        import threading

        global _early
        if _early is not None:
            stop, _early = _early, None
            return stop
        stop = cls()
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                signal.signal(sig, stop)
            stop._start_watchdog()
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
        return stop

    @classmethod
    def install_early(cls) -> None:
        """:meth:`install` now, for the node's run_node to take later."""
        global _early
        _early = cls.install()


def _compiling() -> bool:
    """Whether a thread of this process holds numba's compiler lock now: it compiles a kernel (or
    loads one, or waits for another process's compile: dynamics/compile_once.py). numba is never
    imported from here: it is not loaded while a node starts."""
    import sys

    lock = getattr(getattr(sys.modules.get("numba.core.compiler_lock"), "global_compiler_lock",
                           None), "_lock", None)
    if lock is None:
        return False
    if not lock.acquire(blocking=False):
        return True  # another thread has it
    lock.release()
    return False
