"""The positions a node measured over the last seconds, by stamp.

A motion stamped with the state it was anchored at (the trajectory generator starts its default
motion "from the measured position" of one /joint_states message) is checked against the position
*of that state*, not the newest one: an arm still settling under a law that has just taken over
(the adaptive law's estimates start from its prior) moves centimetres in the time the motion
takes to arrive on a loaded machine, and the motion did start where the arm was.
"""

from __future__ import annotations

import numpy as np

#: how far back a stamp can be looked up, s
HISTORY_S = 2.0
#: at most this many states are kept, whatever the rate
MAX_STATES = 8192


class RecentPositions:
    """A ring of the last (stamp, q) measured; ``at`` finds the q of one stamp."""

    def __init__(self, n: int, rate: float) -> None:
        size = int(min(max(HISTORY_S * rate, 1.0), MAX_STATES))
        self.stamps = np.full(size, -1, dtype=np.int64)
        self.q = np.zeros((size, n))
        self.next = 0

    def add(self, stamp_ns: int, q: np.ndarray) -> None:
        """Remember ``q`` as measured at ``stamp_ns``."""
        self.stamps[self.next] = stamp_ns
        self.q[self.next] = q
        self.next = (self.next + 1) % len(self.stamps)

    def at(self, stamp_ns: int) -> np.ndarray | None:
        """A copy of the position measured at exactly ``stamp_ns``, None if not kept."""
        hits = np.flatnonzero(self.stamps == stamp_ns)
        return self.q[hits[-1]].copy() if len(hits) else None

    def clear(self) -> None:
        """Forget every state (a reconfigure or another robot starts afresh)."""
        self.stamps.fill(-1)
