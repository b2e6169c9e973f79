"""Ctrl-C that always ends a long offline command within a second.

Python runs a SIGINT handler only between bytecodes of the main thread, and a numba compile keeps
the interpreter busy in long calls that hold the GIL: Ctrl-C in a cold compile took up to 2.4 s to
land. So the signal's C handler also writes to a wakeup pipe at once (whichever thread it lands in,
GIL or not), read by a small watchdog process: if the command is still there ``grace_s`` later
it says so and ends it with SIGTERM (left at its default action: no Python code runs). In the
meantime the main thread gets its KeyboardInterrupt as soon as Python code runs, which the
command turns into a one-line message and exit status 130.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

#: exit status of a command stopped by Ctrl-C (128 + SIGINT, as a shell reports it)
INTERRUPTED = 128 + signal.SIGINT
_said = threading.Event()  # the command said it was interrupted
requested = threading.Event()  # Ctrl-C came: whatever the main thread raises now is its echo

#: the watchdog: wait for SIGINT's byte on the pipe (EOF: the command ended), then give the
#: command grace_s to end by itself before terminating it
_WATCHDOG = """
import os, select, signal, sys
fd, pid, grace, prog = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
while True:
    data = os.read(fd, 64)
    if not data:
        sys.exit(0)
    if signal.SIGINT in data:
        break
if not select.select([fd], [], [], grace)[0] or os.read(fd, 64):
    try:
        os.kill(pid, signal.SIGTERM)
        os.write(2, f"{prog}: interrupted (stopped after {grace:g} s)\\n".encode())
    except ProcessLookupError:
        pass
"""


def stop_within(prog: str, grace_s: float = 0.8) -> None:
    """From now on (call it from the main thread) SIGINT ends the process within about
    ``grace_s`` whatever it is doing."""
    if threading.current_thread() is not threading.main_thread():
        return
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)  # the C handler must never block
    os.set_inheritable(write_end, False)
    try:
        subprocess.Popen([sys.executable, "-S", "-c", _WATCHDOG, str(read_end), str(os.getpid()),
                          str(grace_s), prog], pass_fds=(read_end,), stdin=subprocess.DEVNULL,
                         start_new_session=True)  # a terminal's Ctrl-C is not for it
    except OSError:
        os.close(write_end)  # no watchdog: Ctrl-C still works, between bytecodes
        return
    finally:
        os.close(read_end)
    signal.signal(signal.SIGINT, _on_sigint)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)


def _on_sigint(signum, frame) -> None:
    requested.set()
    raise KeyboardInterrupt


def interrupted(prog: str) -> int:
    """Say that ``prog`` was interrupted (once); the exit status to return."""
    if not _said.is_set():
        _said.set()
        print(f"{prog}: interrupted", file=sys.stderr, flush=True)
    return INTERRUPTED
