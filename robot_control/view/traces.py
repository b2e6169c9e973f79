"""The last N seconds of a robot's signals per joint (q, q_d, error, commanded and applied torque)
or of another vector (the contact force: one signal over x, y, z), kept whole; only what is drawn
is decimated (``drawn``: at most a number of points per trace, each bucket's extreme kept so a
spike stays visible)."""

from __future__ import annotations

import threading

import numpy as np

SIGNALS = ("q", "q_d", "error", "tau_cmd", "tau_applied")


class Traces:
    """A ring of samples (time, then one vector per signal) over ``window_s`` seconds; ``joints``
    names the vectors' elements."""

    def __init__(self, joints: list[str], window_s: float = 10.0, capacity: int = 20000,
                 signals: tuple[str, ...] = SIGNALS) -> None:
        self.joints = list(joints)
        self.signals = tuple(signals)
        self.window_s = float(window_s)
        self.capacity = int(capacity)
        n = len(self.joints)
        self.t = np.full(self.capacity, np.nan)
        self.data = {s: np.full((self.capacity, n), np.nan) for s in self.signals}
        self.count = 0  # samples ever added
        self.lock = threading.Lock()

    def add(self, t: float, values: dict[str, np.ndarray]) -> None:
        """One sample at time t (s); a signal not given is NaN (a gap in its trace)."""
        with self.lock:
            i = self.count % self.capacity
            self.t[i] = t
            for s in self.signals:
                v = values.get(s)
                self.data[s][i] = np.nan if v is None else np.asarray(v, float)[:len(self.joints)]
            self.count += 1

    def window(self, end: float | None = None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """(times, signals) of the samples within window_s before ``end`` (default: the last)."""
        with self.lock:
            n = min(self.count, self.capacity)
            order = (np.arange(self.count - n, self.count) % self.capacity)
            t = self.t[order]
            data = {s: self.data[s][order] for s in self.signals}
        if n == 0:
            return t, data
        end = t[-1] if end is None else end
        keep = (t > end - self.window_s) & (t <= end)
        return t[keep], {s: v[keep] for s, v in data.items()}

    def latest(self) -> dict[str, np.ndarray] | None:
        """The last sample's signals, None before the first."""
        with self.lock:
            if self.count == 0:
                return None
            i = (self.count - 1) % self.capacity
            return {s: self.data[s][i].copy() for s in self.signals}


def drawn(t: np.ndarray, y: np.ndarray, points: int) -> tuple[np.ndarray, np.ndarray]:
    """At most ``points`` samples of a trace for drawing: each bucket's sample farthest from
    the bucket's mean (a min/max decimation of one point per bucket), NaN gaps kept."""
    if len(t) <= points:
        return t, y
    edges = np.linspace(0, len(t), points + 1).astype(int)
    picks = np.empty(points, int)
    for k in range(points):
        a, b = edges[k], edges[k + 1]
        seg = y[a:b]
        if np.all(np.isnan(seg)):
            picks[k] = a
            continue
        picks[k] = a + int(np.nanargmax(np.abs(seg - np.nanmean(seg))))
    return t[picks], y[picks]
