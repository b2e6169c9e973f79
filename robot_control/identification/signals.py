"""Filtering and differentiation of recorded joint signals for identification (Huo 2.5).

The regressor needs q̈, which no joint sensor gives. Positions, velocities and torques pass the
same zero-phase low-pass filter — a Butterworth filter run forwards and backwards
(scipy.signal.filtfilt: no phase lag, squared magnitude response) — and q̈ is the central
difference of the filtered velocity. Filtering τ with the same filter keeps both sides of
Y(q, q̇, q̈)p = τ in step (Gautier's parallel filtering), and the samples are then decimated:
after a cutoff f_c, rates far above 2f_c add rows but no information.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.signal import butter, filtfilt

Array = np.ndarray


@dataclass(frozen=True)
class FilterSpec:
    """Zero-phase Butterworth low-pass of ``order`` at ``cutoff`` Hz, then decimation."""

    cutoff: float = 10.0
    order: int = 4
    decimate_to: float = 100.0
    trim: float = 0.5  # s dropped at each end, where the filter's start-up transients sit

    def describe(self) -> str:
        return (f"zero-phase Butterworth low-pass (scipy.signal.filtfilt), order {self.order} "
                f"per pass, cutoff {self.cutoff:g} Hz, on q, q̇ and τ; q̈ = central difference "
                f"of the filtered q̇; decimated to {self.decimate_to:g} Hz; {self.trim:g} s "
                f"trimmed at each end")


def zero_phase_lowpass(x: Array, rate: float, cutoff: float, order: int) -> Array:
    """x filtered forwards and backwards by a Butterworth low-pass (no phase lag), per column."""
    if not 0.0 < cutoff < 0.5 * rate:
        raise ValueError(f"cutoff {cutoff} Hz must lie between 0 and the Nyquist rate "
                         f"{0.5 * rate:g} Hz")
    b, a = butter(order, cutoff / (0.5 * rate))
    return filtfilt(b, a, x, axis=0)


def central_difference(x: Array, dt: float) -> Array:
    """dx/dt by second-order central differences (one-sided at the ends), per column."""
    return np.gradient(x, dt, axis=0)


def fill_gaps(x: Array, valid: Array) -> tuple[Array, int]:
    """Rows outside ``valid`` linearly interpolated from their neighbours; how many there were."""
    bad = ~valid
    if not bad.any():
        return x, 0
    k = np.arange(x.shape[0])
    out = x.copy()
    for j in range(x.shape[1]):
        out[bad, j] = np.interp(k[bad], k[valid], x[valid, j])
    return out, int(bad.sum())


@dataclass
class Samples:
    """Filtered, decimated samples: t, q, q̇, q̈, τ, and the filtered sgn q̇ (Coulomb columns)."""

    t: Array
    q: Array
    qd: Array
    qdd: Array
    tau: Array
    sign_qd: Array
    gaps: int


def identification_samples(t: Array, q: Array, qd: Array, tau: Array, valid: Array,
                           spec: FilterSpec) -> Samples:
    """Samples filtered, differentiated, trimmed and decimated; gaps in τ filled first.

    sgn q̇ jumps where a joint turns round, and τ carries that jump through the low-pass: the
    Coulomb columns are therefore sgn of the filtered q̇ passed through the same filter
    (parallel filtering), not the sign of the smoothed velocity alone.
    """
    idx = np.flatnonzero(valid)
    if idx.size < 10:
        raise ValueError("fewer than 10 samples with a torque")
    sl = slice(idx[0], idx[-1] + 1)
    t, q, qd, tau, valid = t[sl], q[sl], qd[sl], tau[sl], valid[sl]
    tau, gaps = fill_gaps(tau, valid)
    dt = float(np.median(np.diff(t)))
    if np.abs(np.diff(t) - dt).max() > 0.01 * dt:
        raise ValueError("the state samples are not evenly spaced (missing or late samples); "
                         "identification needs a uniformly sampled recording")
    rate = 1.0 / dt
    lp = [zero_phase_lowpass(x, rate, spec.cutoff, spec.order) for x in (q, qd, tau)]
    qf, qdf, tauf = lp
    qddf = central_difference(qdf, dt)
    signf = zero_phase_lowpass(np.sign(qdf), rate, spec.cutoff, spec.order)
    step = max(1, int(round(rate / spec.decimate_to)))
    edge = int(round(spec.trim * rate))
    keep = slice(edge, t.size - edge, step)
    if t[keep].size < 10:
        raise ValueError(f"the recording ({t[-1] - t[0]:.2f} s) is too short for the trim and "
                         "decimation chosen")
    return Samples(t[keep], qf[keep], qdf[keep], qddf[keep], tauf[keep], signf[keep], gaps)
