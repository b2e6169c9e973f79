"""Compiled singular value decomposition of a small matrix without allocating (one-sided Jacobi),
for the pseudo-inverse of a rank-deficient task Jacobian (control.task_kernels).

One-sided Jacobi (Hestenes 1958; Demmel & Veselić 1992) rotates pairs of columns of W = J until
every pair is orthogonal; then W = U Σ and the accumulated rotations are V, with J = U Σ Vᵀ. It
needs no workspace beyond W and V and finds small singular values to high relative accuracy, so
numpy's pseudo-inverse cut-off decides alike.
"""

from __future__ import annotations

import math

from numba import njit, types

#: the C library's hypot, called as numba's math.hypot calls it (the same bits) but without the
#: compiled wrapper whose environment makes loading a cached kernel import numba.cpython.mathimpl
hypot = types.ExternalFunction("hypot", types.float64(types.float64, types.float64))
EPS = 2.220446049250313e-16  # double precision's machine epsilon
SWEEPS = 60  # far more than the ~6–10 sweeps quadratic convergence takes at these sizes
PINV_RCOND = 1e-15  # numpy.linalg.pinv's default: σ ≤ rcond·σ_max counts as zero


@njit(cache=True)
def jacobi_svd(W, V):
    """W ← U Σ (orthogonal columns, σ_j = ‖w_j‖) and V ← V of W = U Σ Vᵀ (one-sided Jacobi)."""
    m, n = W.shape[0], W.shape[1]
    for i in range(n):
        for j in range(n):
            V[i, j] = 1.0 if i == j else 0.0
    for _sweep in range(SWEEPS):
        rotated = False
        for p in range(n - 1):
            for q in range(p + 1, n):
                alpha, beta, gamma = 0.0, 0.0, 0.0
                for i in range(m):
                    alpha += W[i, p] * W[i, p]
                    beta += W[i, q] * W[i, q]
                    gamma += W[i, p] * W[i, q]
                if abs(gamma) <= EPS * math.sqrt(alpha * beta):
                    continue  # already orthogonal to working precision (or a zero column)
                rotated = True
                # the rotation that zeroes the pair's inner product, smaller angle (|t| ≤ 1)
                zeta = (beta - alpha) / (2.0 * gamma)
                t = math.copysign(1.0, zeta) / (abs(zeta) + hypot(1.0, zeta))
                c = 1.0 / hypot(1.0, t)
                s = c * t
                for i in range(m):
                    wp, wq = W[i, p], W[i, q]
                    W[i, p] = c * wp - s * wq
                    W[i, q] = s * wp + c * wq
                for i in range(n):
                    vp, vq = V[i, p], V[i, q]
                    V[i, p] = c * vp - s * vq
                    V[i, q] = s * vp + c * vq
        if not rotated:
            return


@njit(cache=True)
def svd_pseudo_inverse_times(W, V, J, a, out):
    """out = J⁺a = V Σ⁺ Uᵀ a, σ ≤ 1e-15 σ_max counted as zero as numpy.linalg.pinv does (W: m × n
    and V: n × n scratch)."""
    m, n = J.shape[0], J.shape[1]
    for i in range(m):
        for j in range(n):
            W[i, j] = J[i, j]
    jacobi_svd(W, V)
    largest = 0.0
    for j in range(n):
        s2 = 0.0
        for i in range(m):
            s2 += W[i, j] * W[i, j]
        largest = max(largest, s2)
    cutoff = PINV_RCOND * math.sqrt(largest)
    for i in range(n):
        out[i] = 0.0
    for j in range(n):
        s2, proj = 0.0, 0.0
        for i in range(m):
            s2 += W[i, j] * W[i, j]
            proj += W[i, j] * a[i]
        if math.sqrt(s2) > cutoff:
            coef = proj / s2  # (u_j·a)/σ_j with u_j = w_j/σ_j
            for i in range(n):
                out[i] += V[i, j] * coef
