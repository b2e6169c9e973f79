"""Joint tracking errors shared by all laws (Huo's convention e = q_d − q).

e = q_d − q, ė = q̇_d − q̇, and for the passivity family (Huo 3-67, 3-79, 3.10):
r = ė + Λe (the sliding variable s of 3.10), q̇_r = q̇_d + Λe, q̈_r = q̈_d + Λė.
Λ is diagonal and stored as a vector. The arrays are preallocated and updated in place.
"""

from __future__ import annotations

import numpy as np

from robot_control.control import law_kernels

Array = np.ndarray


class TrackingErrors:
    """e, ė, r, q̇_r, q̈_r for one control step, computed in place."""

    __slots__ = ("e", "ed", "r", "qd_r", "qdd_r")

    def __init__(self, n: int) -> None:
        self.e = np.zeros(n)
        self.ed = np.zeros(n)
        self.r = np.zeros(n)
        self.qd_r = np.zeros(n)
        self.qdd_r = np.zeros(n)

    @classmethod
    def on(cls, rows: Array) -> TrackingErrors:
        """Errors kept in the first five rows of ``rows`` (a compiled law's E, control.law_kernels)."""
        err = cls.__new__(cls)
        err.e, err.ed, err.r, err.qd_r, err.qdd_r = rows[:5]
        return err

    def update(self, q: Array, qd: Array, q_d: Array, qd_d: Array, qdd_d: Array,
               lam: Array | None = None) -> TrackingErrors:
        """e = q_d − q, ė = q̇_d − q̇; with Λ also r = ė + Λe, q̇_r = q̇_d + Λe, q̈_r = q̈_d + Λė."""
        np.subtract(q_d, q, out=self.e)
        np.subtract(qd_d, qd, out=self.ed)
        if lam is not None:
            np.multiply(lam, self.e, out=self.r)
            np.add(qd_d, self.r, out=self.qd_r)  # q̇_r = q̇_d + Λe
            self.r += self.ed  # r = ė + Λe = q̇_r − q̇
            np.multiply(lam, self.ed, out=self.qdd_r)
            self.qdd_r += qdd_d  # q̈_r = q̈_d + Λė
        return self

    def of(self, state, reference, lam: Array | None = None) -> TrackingErrors:
        """Errors of a State against a Reference."""
        return self.update(state.q, state.qd, reference.q, reference.qd, reference.qdd, lam)


def saturation(s: Array, eps: Array) -> Array:
    """sat(s_i/ε_i) with ε_i = 0 meaning sgn(s_i) (Huo 3.10 III, boundary layer)."""
    out = np.empty(np.shape(s))
    law_kernels.saturation(np.asarray(s, dtype=float), np.asarray(eps, dtype=float), out)
    return out
