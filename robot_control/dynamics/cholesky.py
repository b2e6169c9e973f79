"""Compiled Cholesky factorisation and solves for small SPD matrices (M(q)), in place."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def cholesky_in_place(M):
    """M = L Lᵀ with L written over M's lower triangle; FloatingPointError unless M is SPD."""
    n = M.shape[0]
    for j in range(n):
        s = M[j, j]
        for k in range(j):
            s -= M[j, k] * M[j, k]
        if not s > 0.0:
            raise FloatingPointError("the mass matrix is not positive definite")
        d = np.sqrt(s)
        M[j, j] = d
        for i in range(j + 1, n):
            s = M[i, j]
            for k in range(j):
                s -= M[i, k] * M[j, k]
            M[i, j] = s / d


@njit(cache=True, inline="always")
def solve_factored(L, b, out):
    """out = (L Lᵀ)⁻¹ b by forward and back substitution (out may be b)."""
    n = L.shape[0]
    for i in range(n):
        s = b[i]
        for k in range(i):
            s -= L[i, k] * out[k]
        out[i] = s / L[i, i]
    for i in range(n - 1, -1, -1):
        s = out[i]
        for k in range(i + 1, n):
            s -= L[k, i] * out[k]
        out[i] = s / L[i, i]


@njit(cache=True)
def solve_factored_columns(L, B, scale):
    """B ← scale · (L Lᵀ)⁻¹ B: ``solve_factored`` on every column at once, to the bit.

    The substitutions run over whole rows of B, so the columns' independent chains overlap
    instead of waiting on one division after another; each entry sees the same operations in
    the same order as a column solve.
    """
    n = L.shape[0]
    m = B.shape[1]
    for i in range(n):
        for k in range(i):
            l_ik = L[i, k]
            for c in range(m):
                B[i, c] -= l_ik * B[k, c]
        d = L[i, i]
        for c in range(m):
            B[i, c] /= d
    for i in range(n - 1, -1, -1):
        for k in range(i + 1, n):
            l_ki = L[k, i]
            for c in range(m):
                B[i, c] -= l_ki * B[k, c]
        d = L[i, i]
        for c in range(m):
            B[i, c] /= d
    for i in range(n):
        for c in range(m):
            B[i, c] *= scale


@njit(cache=True)
def inverse_from_factor_in_place(L):
    """M⁻¹ = L⁻ᵀ L⁻¹ written over both triangles of L, from M = L Lᵀ in its lower one (LAPACK potri)."""
    n = L.shape[0]
    # X = L⁻¹ over the lower triangle, row by row: X_ij = −X_ii Σ_{j≤k<i} L_ik X_kj
    for i in range(n):
        d = 1.0 / L[i, i]
        for j in range(i):
            s = 0.0
            for k in range(j, i):
                s += L[i, k] * L[k, j]
            L[i, j] = -d * s
        L[i, i] = d
    # (Xᵀ X)_ij = Σ_{k≥i} X_ki X_kj for j ≤ i: row i of X is last read here, its diagonal last of all
    for i in range(n):
        for j in range(i + 1):
            s = 0.0
            for k in range(i, n):
                s += L[k, i] * L[k, j]
            L[i, j] = s
            L[j, i] = s
