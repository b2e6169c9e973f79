"""Joint acceleration for the laws that need q̈ (adaptive computed torque C9, sliding mode VS-1).

A measured q̈ (``State.qdd``) is used as is. Otherwise q̈ is the finite difference of successive
velocity samples passed through a first-order low-pass filter with cutoff f_c:
    q̈_f ← q̈_f + h/(T_f + h) · ((q̇ − q̇_prev)/h − q̈_f),  T_f = 1/(2π f_c), h = sample period.
Differencing amplifies velocity noise by 1/h; the filter trades that noise for a lag of ≈ T_f.
"""

from __future__ import annotations

import math

import numpy as np

Array = np.ndarray


class AccelerationEstimator:
    """Filtered finite-difference joint acceleration, or the measured one when available."""

    def __init__(self, n: int, cutoff_hz: float) -> None:
        self.n = n
        self.cutoff_hz = float(cutoff_hz)
        self.qdd = np.zeros(n)
        self._qd_prev: Array | None = None

    def reset(self, qd: Array | None = None) -> None:
        """Start over (at rest unless the current velocity is given)."""
        self.qdd[:] = 0.0
        self._qd_prev = None if qd is None else np.array(qd, dtype=float)

    def update(self, qd: Array, dt: float, measured: Array | None = None) -> Array:
        """q̈ at this sample (h = dt since the previous one)."""
        if measured is not None:
            self.qdd[:] = measured
        elif self._qd_prev is not None and dt > 0.0:
            raw = (qd - self._qd_prev) / dt
            if self.cutoff_hz > 0.0:
                T_f = 1.0 / (2.0 * math.pi * self.cutoff_hz)
                self.qdd += dt / (T_f + dt) * (raw - self.qdd)
            else:
                self.qdd[:] = raw
        if self._qd_prev is None:
            self._qd_prev = np.array(qd, dtype=float)
        else:
            self._qd_prev[:] = qd
        return self.qdd
