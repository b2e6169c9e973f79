"""Filtering and differentiation of recorded joint signals for identification (Huo 2.5).

The regressor needs q̈, which no joint sensor gives. Positions, velocities and torques pass the
same zero-phase low-pass filter — a Butterworth filter run forwards and backwards
(scipy.signal.filtfilt: no phase lag, squared magnitude response) — and q̈ is the central
difference of the filtered velocity. Filtering τ with the same filter keeps both sides of
Y(q, q̇, q̈)p = τ in step (Gautier's parallel filtering), and the samples are then decimated:
after a cutoff f_c, rates far above 2f_c add rows but no information. A live recording, whose
samples come late or go missing, is first interpolated onto a uniform grid from its stamps.
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


def resample_uniform(t: Array, series: tuple[Array, ...], dt: float,
                     max_gap: float) -> tuple[Array, tuple[Array, ...]]:
    """The series linearly interpolated at t₀ + k·dt from their stamps (a live recording's
    samples come late or go missing); a gap longer than ``max_gap`` s (a quarter period of the
    filter's cutoff: interpolation across it would invent the motion) is refused."""
    gaps = np.diff(t)
    if gaps.min() <= 0.0:
        raise ValueError("the state stamps do not increase: not a recording of one run")
    if gaps.max() > max_gap:
        i = int(np.argmax(gaps))
        raise ValueError(f"the recording has a gap of {gaps[i]:.3g} s at t = {t[i] - t[0]:.3f} s "
                         f"(more than {max_gap:.3g} s, a quarter period of the filter's cutoff): "
                         "identification cannot bridge it")
    grid = t[0] + dt * np.arange(int(np.floor((t[-1] - t[0]) / dt + 1e-9)) + 1)
    return grid, tuple(np.column_stack([np.interp(grid, t, x[:, j]) for j in range(x.shape[1])])
                       for x in series)


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
    if np.abs(np.diff(t) - dt).max() > 0.01 * dt:  # a live recording: late or lost samples
        t, (q, qd, tau) = resample_uniform(t, (q, qd, tau), dt, 0.25 / spec.cutoff)
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
