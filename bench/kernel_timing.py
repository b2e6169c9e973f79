"""Time one compiled kernel inside a compiled loop (the parts benches: arm_parts.py, cell_parts.py)."""

from __future__ import annotations

import time

from numba import njit

_LOOPS: dict = {}


def per_call_us(kernel, args: tuple, calls: int, nrt: bool = True) -> float:
    """Best of 10 batches of ``calls // 10`` calls in one compiled loop, µs per call (process
    time). ``nrt=False`` compiles the loop without reference counting, as run_periods does."""
    loop = _LOOPS.get((kernel, nrt))
    if loop is None:
        @njit(_nrt=nrt)
        def loop(count, args):
            for _ in range(count):
                kernel(*args)
        _LOOPS[(kernel, nrt)] = loop
    loop(1, args)
    batch, best = max(1, calls // 10), float("inf")
    for _ in range(10):
        t0 = time.process_time()
        loop(batch, args)
        best = min(best, (time.process_time() - t0) / batch)
    return best * 1e6
