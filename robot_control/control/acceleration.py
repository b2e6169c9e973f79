"""Joint acceleration for the laws that need q̈ (adaptive computed torque C9).

A measured q̈ (``State.qdd``) is used as is. Otherwise q̈ is the finite difference of successive
velocity samples passed through a first-order low-pass filter with cutoff f_c:
    q̈_f ← q̈_f + h/(T_f + h) · ((q̇ − q̇_prev)/h − q̈_f),  T_f = 1/(2π f_c), h = sample period.
Differencing amplifies velocity noise by 1/h; the filter trades that noise for a lag of ≈ T_f.
The arithmetic is the compiled ``law_kernels.filtered_acceleration`` (which Craig's compiled law
calls too); this class keeps its state in a law's arrays or its own.
"""

from __future__ import annotations

import numpy as np

from robot_control.control import law_kernels as L

Array = np.ndarray


class AccelerationEstimator:
    """Filtered finite-difference joint acceleration, or the measured one when available.

    ``rows`` and ``slots`` are a compiled law's E and s (control.law_kernels) to keep the state
    in; by default the estimator has its own.
    """

    def __init__(self, n: int, cutoff_hz: float, rows: Array | None = None,
                 slots: Array | None = None) -> None:
        self.n = n
        self._E = np.zeros((L.EROWS, n)) if rows is None else rows
        self._s = np.zeros(L.SSLOTS) if slots is None else slots
        self.cutoff_hz = cutoff_hz

    @property
    def cutoff_hz(self) -> float:
        return float(self._s[L.S_CUTOFF])

    @cutoff_hz.setter
    def cutoff_hz(self, value: float) -> None:
        self._s[L.S_CUTOFF] = float(value)

    @property
    def qdd(self) -> Array:
        """The current estimate (a view)."""
        return self._E[L.E_ACC]

    def reset(self, qd: Array | None = None) -> None:
        """Start over (at rest unless the current velocity is given)."""
        self._E[L.E_ACC] = 0.0
        self._s[L.S_PRIMED] = 0.0 if qd is None else 1.0
        if qd is not None:
            self._E[L.E_QD_PREV] = qd

    def measured(self, qdd: Array | None) -> None:
        """Use this measured q̈ at the next update (None: estimate it)."""
        self._s[L.S_MEASURED] = 0.0 if qdd is None else 1.0
        if qdd is not None:
            self._E[L.E_QDD_MEASURED] = qdd

    def update(self, qd: Array, dt: float, measured: Array | None = None) -> Array:
        """q̈ at this sample (h = dt since the previous one)."""
        self.measured(measured)
        L.filtered_acceleration(np.ascontiguousarray(qd, dtype=float), float(dt), self._E,
                                self._s)
        return self.qdd
