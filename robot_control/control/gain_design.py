"""Gain design for the linear error dynamics ë + K_d ė + K_p e = 0 (computed torque and relatives)."""

from __future__ import annotations

import numpy as np
from scipy.linalg import solve_continuous_lyapunov

Array = np.ndarray


def lqr_gains(q1: Array, q2: Array, r: Array) -> tuple[Array, Array]:
    """Per-joint LQR gains for Q = diag(q₁, q₂), R₀ = r (Huo C6, 3-49 … 3-54).

    K_p = √(q₁/r), K_d = √((q₂ + 2√(q₁ r))/r): the Riccati solution of the double integrator.
    """
    q1, q2, r = (np.asarray(a, dtype=float) for a in (q1, q2, r))
    kp = np.sqrt(q1 / r)
    kd = np.sqrt((q2 + 2.0 * np.sqrt(q1 * r)) / r)
    return kp, kd


def pole_placement_gains(poles_real: Array, poles_imag: Array) -> tuple[Array, Array]:
    """(α₀, α₁) per joint with s² + α₁s + α₀ = (s − p₁)(s − p₂) (Freund decoupling, Huo C7, 3-66).

    ``poles_real``/``poles_imag`` hold the two poles of joint i at entries 2i, 2i+1; a complex
    pair must be conjugate. Returns (K_p = α₀, K_d = α₁).
    """
    p = np.asarray(poles_real, dtype=float) + 1j * np.asarray(poles_imag, dtype=float)
    p1, p2 = p[0::2], p[1::2]
    return np.real(p1 * p2), np.real(-(p1 + p2))


def check_pole_pairs(poles_real: Array, poles_imag: Array) -> str | None:
    """Why these poles cannot be placed by real gains (None if they can)."""
    re, im = np.asarray(poles_real, dtype=float), np.asarray(poles_imag, dtype=float)
    for i in range(re.size // 2):
        a, b = 2 * i, 2 * i + 1
        if re[a] >= 0.0 or re[b] >= 0.0:
            return f"joint {i}: poles must have negative real parts, got {re[a]:g}, {re[b]:g}"
        if (im[a] != 0.0 or im[b] != 0.0) and not (re[a] == re[b] and im[a] == -im[b]):
            return (f"joint {i}: a complex pole needs its conjugate, got "
                    f"{re[a]:g}{im[a]:+g}j and {re[b]:g}{im[b]:+g}j")
    return None


def error_system_matrix(kp: Array, kd: Array) -> Array:
    """A = [[0, I], [−K_p, −K_d]] of ẋ = Ax for x = [e; ė] (Huo 3-75, 3-111)."""
    n = len(kp)
    A = np.zeros((2 * n, 2 * n))
    A[:n, n:] = np.eye(n)
    A[n:, :n] = -np.diag(kp)
    A[n:, n:] = -np.diag(kd)
    return A


def lyapunov_matrix(kp: Array, kd: Array, Q: Array) -> Array:
    """P > 0 with AᵀP + PA = −Q for the PD error system (Huo 3-120; R of 3-76)."""
    A = error_system_matrix(np.asarray(kp, float), np.asarray(kd, float))
    Q = np.diag(Q) if np.ndim(Q) == 1 else np.asarray(Q, dtype=float)
    P = solve_continuous_lyapunov(A.T, -Q)
    return 0.5 * (P + P.T)
