"""How the recorder and the player live as nodes: spun in a thread, stopped by SIGINT/SIGTERM."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def stop_on_signals(stop: threading.Event) -> Iterator[threading.Event]:
    """SIGINT and SIGTERM set ``stop`` instead of raising in the middle of a write (main thread
    only: elsewhere signals cannot be handled); the previous handlers are restored on exit."""
    restore = []
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            restore.append((sig, signal.getsignal(sig)))
            signal.signal(sig, lambda *_: stop.set())
    try:
        yield stop
    finally:
        for sig, handler in restore:
            signal.signal(sig, handler)


@contextmanager
def spinning(node) -> Iterator[None]:
    """The node's executor (parameter services, /rosout) runs in a thread; on exit the node is
    shut down and the thread joined."""
    spinner = threading.Thread(target=node.spin, name=f"{node.name}-spin", daemon=True)
    spinner.start()
    try:
        yield
    finally:
        node.shutdown()
        spinner.join(timeout=5.0)
