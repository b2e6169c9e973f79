"""Quintic polynomial between two states (Huo Ex. 3-7), vectorised over joints.

q(τ) = Σ a_k τ^k on 0 ≤ τ ≤ T, with a₀ = q₀, a₁ = q̇₀, a₂ = q̈₀/2 and a₃, a₄, a₅ from the final
state (Huo Ex. 3-7). Coefficients are stored as a (6, n) array, one column per joint; with the
derivatives stacked (``derivative_rows``) one small product gives (q, q̇, q̈) for every joint.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from robot_control.trajectory.limits import LimitChecks, Piece, segment_extrema

Array = NDArray[np.float64]

#: Peak |q̇|·T/|Δ| and |q̈|·T²/|Δ| of the rest-to-rest quintic (at τ = T/2 and τ = T(3 ∓ √3)/6).
REST_TO_REST_PEAK_VELOCITY = 15.0 / 8.0
REST_TO_REST_PEAK_ACCELERATION = 10.0 / np.sqrt(3.0)


def quintic_coefficients(q0: ArrayLike, qd0: ArrayLike, qdd0: ArrayLike, qf: ArrayLike,
                         qdf: ArrayLike, qddf: ArrayLike, T: float) -> Array:
    """Coefficients a₀ … a₅ (rows) of the quintic meeting both boundary states (Huo Ex. 3-7)."""
    q0, qd0, qdd0, qf, qdf, qddf = np.broadcast_arrays(
        *(np.atleast_1d(np.asarray(x, dtype=float)) for x in (q0, qd0, qdd0, qf, qdf, qddf)))
    d = qf - q0
    a = np.empty((6, q0.size))
    a[0] = q0
    a[1] = qd0
    a[2] = qdd0 / 2.0
    a[3] = (20.0 * d - (8.0 * qdf + 12.0 * qd0) * T + (qddf - 3.0 * qdd0) * T**2) / (2.0 * T**3)
    a[4] = (-30.0 * d + (14.0 * qdf + 16.0 * qd0) * T - (2.0 * qddf - 3.0 * qdd0) * T**2) / (
        2.0 * T**4)
    a[5] = (12.0 * d - 6.0 * (qdf + qd0) * T + (qddf - qdd0) * T**2) / (2.0 * T**5)
    return a


def powers(tau: float) -> Array:
    """(1, τ, τ², τ³, τ⁴, τ⁵)."""
    t2 = tau * tau
    t3 = t2 * tau
    return np.array((1.0, tau, t2, t3, t3 * tau, t3 * t2))


def derivative_rows(a: Array) -> Array:
    """(3, 6, n) coefficients of q, q̇, q̈ in powers of τ: powers(τ) @ D = (q, q̇, q̈) at τ.

    Stacking the derivatives lets one small matrix product evaluate all three for every joint,
    which is what a 1 kHz loop wants.
    """
    D = np.zeros((3,) + a.shape)
    D[0] = a
    D[1, :5] = a[1:] * np.arange(1.0, 6.0)[:, None]
    D[2, :4] = a[2:] * np.array([2.0, 6.0, 12.0, 20.0])[:, None]
    return D


def evaluate(D: Array, tau: ArrayLike) -> Array:
    """(q, q̇, q̈) from ``derivative_rows`` at each τ of a 1-D array: shape (k, 3, n).

    D is (3, 6, n) for one polynomial or (k, 3, 6, n) for one polynomial per τ.
    """
    tau = np.asarray(tau, dtype=float)
    P = tau[:, None] ** np.arange(6)
    if D.ndim == 3:
        return np.einsum("kj,ijn->kin", P, D)
    return np.einsum("kj,kijn->kin", P, D)


class Quintic(LimitChecks):
    """Quintic from (q₀, q̇₀, q̈₀) at ``start_time`` to (q_f, q̇_f, q̈_f) ``duration`` later.

    Before the start it returns the start state; after the end it holds q_f at rest (q̇ = q̈ = 0:
    a reference is never extrapolated past its goal).
    """

    def __init__(self, q0: ArrayLike, qf: ArrayLike, duration: float, qd0: ArrayLike = 0.0,
                 qdd0: ArrayLike = 0.0, qdf: ArrayLike = 0.0, qddf: ArrayLike = 0.0,
                 start_time: float = 0.0) -> None:
        T = float(duration)
        if not (np.isfinite(T) and T > 0.0):
            raise ValueError(f"quintic duration must be finite and > 0, got {duration}")
        self.coefficients = quintic_coefficients(q0, qd0, qdd0, qf, qdf, qddf, T)
        if not np.all(np.isfinite(self.coefficients)):
            raise ValueError("quintic boundary states must be finite")
        self.duration = T
        self.start_time = float(start_time)
        self.dof = self.coefficients.shape[1]
        self._rows = derivative_rows(self.coefficients)
        self._final = np.broadcast_to(np.asarray(qf, dtype=float), (self.dof,)).copy()

    @property
    def end_time(self) -> float:
        return self.start_time + self.duration

    def sample(self, t: float | ArrayLike) -> tuple[Array, Array, Array]:
        """(q, q̇, q̈) at t: each (n,) for a scalar t, (k, n) for k times."""
        if np.ndim(t) == 0:
            tau = float(t) - self.start_time
            if tau > self.duration:
                n = self.dof
                return self._final.copy(), np.zeros(n), np.zeros(n)
            out = powers(tau if tau > 0.0 else 0.0) @ self._rows
            return out[0], out[1], out[2]
        tau = np.asarray(t, dtype=float).ravel() - self.start_time
        out = evaluate(self._rows, np.clip(tau, 0.0, self.duration))
        after = tau > self.duration
        out[after, 1:] = 0.0
        return out[:, 0], out[:, 1], out[:, 2]

    def extrema(self) -> dict[str, tuple[Array, Array, Array, Array]]:
        """Exact extremes of q, q̇, q̈ over the motion, times relative to the start."""
        return segment_extrema(self.coefficients, self.duration)

    def pieces(self) -> list[Piece]:
        return [(self.coefficients, self.duration, self.start_time)]
