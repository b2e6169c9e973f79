"""Progress of an offline run on stderr (tqdm), only on a terminal and only for long runs."""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager

#: wall seconds a run must last before its bar appears
DELAY_S = 2.0


class _Bar:
    """Simulated time done of ``duration``; tqdm draws it once the run has lasted DELAY_S."""

    def __init__(self, enabled: bool, duration: float) -> None:
        self.enabled = enabled
        self.duration = duration
        self.bar = None
        self.done = 0.0
        self.started = time.perf_counter()

    def advance(self, t: float) -> None:
        """The run has reached simulated time t."""
        if not self.enabled:
            return
        if self.bar is None:
            if time.perf_counter() - self.started < DELAY_S:
                return
            from tqdm import tqdm

            self.bar = tqdm(total=round(self.duration, 3), unit="s sim", file=sys.stderr,
                            dynamic_ncols=True, leave=False, initial=0.0,
                            bar_format="{l_bar}{bar}| {n:.2f}/{total:.2f} s [{elapsed}<{remaining}]")
        step = min(t, self.duration) - self.done
        if step > 0.0:
            self.bar.update(step)
            self.done += step

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


@contextmanager
def progress_bar(enabled: bool, duration: float):
    """A bar for a run of ``duration`` simulated seconds; shown only if enabled and on a TTY."""
    bar = _Bar(bool(enabled) and sys.stderr.isatty(), duration)
    try:
        yield bar
    finally:
        bar.close()
