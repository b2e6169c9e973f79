"""How a node process of ``robot-control launch`` begins, whether a fresh interpreter
(bringup/processes.py) or forked by the fork server (bringup/fork_server.py): SIGINT and SIGTERM
held until the node can take them, and SIGTERM when its parent dies."""

from __future__ import annotations

import signal


def hold_stop_signals() -> None:
    """SIGINT / SIGTERM wait (blocked) until the node is ready to take them, so a Ctrl-C during
    start-up ends it quietly instead of in a traceback from deep in an import (nodes/common.run_node
    unblocks them)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})


def die_with_parent() -> None:
    """Receive SIGTERM if the parent (the launcher, or the fork server) dies without stopping this
    process (Linux)."""
    _prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def name_process(name: str) -> None:
    """Name this process ``name`` (its first 15 bytes) for top, ps -e and pgrep: a forked node
    keeps the fork server's command line (Linux)."""
    _prctl(15, name.encode()[:15])  # PR_SET_NAME


def _prctl(option: int, value: int | bytes) -> None:
    """Linux's prctl(2) on this process; nothing where there is no such call."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(option, value)
    except (OSError, AttributeError):
        pass
