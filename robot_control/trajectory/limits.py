"""Joint-limit checks of piecewise-quintic references, done before execution.

A piece is (a, T, t₀): coefficients (6, n) valid on τ ∈ [0, T], starting at time t₀. The
extremes of each piece are exact — the interior extremes of a polynomial sit at real roots of its
derivative, found to rounding by one compiled pass over every piece and joint
(``unit_extrema``) — so a trajectory that passes here cannot exceed a limit between control
ticks.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

Array = NDArray[np.float64]
Piece = tuple[Array, float, float]
KINDS = ("position", "velocity", "acceleration")


@njit(cache=True)
def _horner(c, degree, x):
    """c[0] + c[1]x + … + c[degree]x^degree."""
    v = 0.0
    for k in range(degree, -1, -1):
        v = v * x + c[k]
    return v


@njit(cache=True)
def _bracketed_root(c, d, degree, lo, hi):
    """The root in [lo, hi] of a polynomial c (derivative coefficients d) monotonic there and of
    opposite signs at the ends: Newton steps kept inside the bracket, bisection otherwise."""
    f_lo = _horner(c, degree, lo)
    x = 0.5 * (lo + hi)
    for _ in range(100):
        f = _horner(c, degree, x)
        if f == 0.0:
            return x
        if (f < 0.0) == (f_lo < 0.0):
            lo, f_lo = x, f
        else:
            hi = x
        slope = _horner(d, degree - 1, x) if degree > 0 else 0.0
        step = x - f / slope if slope != 0.0 else lo - 1.0
        new = step if lo < step < hi else 0.5 * (lo + hi)
        if abs(new - x) <= 1e-15 or hi - lo <= 1e-15:
            return new
        x = new
    return x


@njit(cache=True)
def unit_extrema(cs, out):
    """(min, s_min, max, s_max) over s ∈ [0, 1] of each row's polynomial (ascending powers)
    into out (rows, 4). The interior extremes sit at roots of the derivative, found exactly by
    the derivative chain: the roots of each derivative in (0, 1) split [0, 1] into pieces where
    the next one down is monotonic, and each piece whose ends differ in sign holds one root
    (_bracketed_root) — from the last derivative (a line) up to the first."""
    width = cs.shape[1]
    chain = np.zeros((width, width))  # chain[i]: the i-th derivative's coefficients
    points = np.zeros(width + 1)  # breakpoints of the current level: 0, roots…, 1
    roots = np.zeros(width + 1)
    for r in range(cs.shape[0]):
        for k in range(width):
            chain[0, k] = cs[r, k]
        for i in range(1, width):
            for k in range(width - i):
                chain[i, k] = chain[i - 1, k + 1] * (k + 1)
        # roots of the (width − 2)-th derivative (a line) … then up to the first derivative
        n_points = 2
        points[0], points[1] = 0.0, 1.0
        for level in range(width - 2, 0, -1):
            degree = width - 1 - level
            n_roots = 0
            for p in range(n_points - 1):
                a, b = points[p], points[p + 1]
                fa = _horner(chain[level], degree, a)
                fb = _horner(chain[level], degree, b)
                if fa == 0.0 and 0.0 < a:
                    roots[n_roots] = a
                    n_roots += 1
                elif (fa < 0.0) != (fb < 0.0) and fb != 0.0:
                    roots[n_roots] = _bracketed_root(chain[level], chain[level + 1], degree,
                                                     a, b)
                    n_roots += 1
            points[0] = 0.0
            for k in range(n_roots):
                points[k + 1] = roots[k]
            points[n_roots + 1] = 1.0
            n_points = n_roots + 2
        lo, s_lo = np.inf, 0.0
        hi, s_hi = -np.inf, 0.0
        for p in range(n_points):  # the ends and the first derivative's roots
            v = _horner(chain[0], width - 1, points[p])
            if v < lo:
                lo, s_lo = v, points[p]
            if v > hi:
                hi, s_hi = v, points[p]
        out[r, 0], out[r, 1], out[r, 2], out[r, 3] = lo, s_lo, hi, s_hi


def polynomial_extrema(c: Array, T: Array, within: Array | None = None
                       ) -> tuple[Array, Array, Array, Array]:
    """(min, τ_min, max, τ_max) over [0, T_r] of each row's polynomial c_r (ascending powers).
    ``within`` (per row): a row that provably stays within ±within_r there (Σ|c_k|T^k, the
    triangle inequality) is not searched: its values are its ends', within the bound as asked."""
    T = np.asarray(T, dtype=float)
    k = np.arange(c.shape[1])
    cs = c * T[:, None] ** k  # in s = τ/T ∈ [0, 1]
    # terms below rounding of the row's largest are noise (a line's velocity has no slope):
    # their sign changes would be searched for roots in vain
    size = np.abs(cs)
    cs = np.where(size > 1e-14 * size.max(axis=1, keepdims=True), cs, 0.0)
    out = np.empty((len(c), 4))
    search = np.arange(len(c)) if within is None else np.flatnonzero(size.sum(axis=1) > within)
    if within is not None:
        ends = np.stack([cs[:, 0], cs.sum(axis=1)], axis=1)  # s = 0, 1
        out[:, 0], out[:, 2] = ends.min(axis=1), ends.max(axis=1)
        out[:, 1], out[:, 3] = ends.argmin(axis=1), ends.argmax(axis=1)
    if search.size:
        found = np.empty((search.size, 4))
        unit_extrema(np.ascontiguousarray(cs[search]), found)
        out[search] = found
    return out[:, 0], out[:, 1] * T, out[:, 2], out[:, 3] * T


def pieces_extrema(pieces: Sequence[Piece], kinds: Sequence[str] = KINDS,
                   within: dict[str, Array] | None = None
                   ) -> dict[str, tuple[Array, Array, Array, Array]]:
    """Exact extremes of q, q̇, q̈ on every piece: {kind: (min, t_min, max, t_max)}, each
    (pieces, n), times absolute; ``within`` {kind: per-joint bound}: a piece provably within
    ±bound is not searched (polynomial_extrema): a limit check needs no more of it."""
    a = np.stack([p[0] for p in pieces])                        # (m, 6, n)
    m, _, n = a.shape
    T = np.repeat([p[1] for p in pieces], n)
    t0 = np.repeat([p[2] for p in pieces], n)[:, None]
    c = a.transpose(0, 2, 1).reshape(m * n, 6)                  # one row per (piece, joint)
    out = {}
    for kind in KINDS:
        if kind in kinds:
            bound = None if within is None or kind not in within else np.tile(within[kind], m)
            mn, tmn, mx, tmx = polynomial_extrema(c, T, bound)
            out[kind] = (mn.reshape(m, n), (tmn[:, None] + t0).reshape(m, n),
                         mx.reshape(m, n), (tmx[:, None] + t0).reshape(m, n))
        c = c[:, 1:] * np.arange(1, c.shape[1])
    return out


def segment_extrema(a: Array, T: float, kinds: Sequence[str] = KINDS
                    ) -> dict[str, tuple[Array, Array, Array, Array]]:
    """Exact extremes over [0, T] of q, q̇, q̈ of one (6, n) quintic: {kind: (min, τ_min, max,
    τ_max)}, each (n,)."""
    return {kind: tuple(x[0] for x in v)
            for kind, v in pieces_extrema([(a, T, 0.0)], kinds).items()}


def limit_vector(value: ArrayLike | None, n: int, what: str, default: float) -> Array:
    """A per-joint limit as an (n,) array (a scalar broadcasts; None means ``default``)."""
    if value is None:
        return np.full(n, default)
    v = np.asarray(value, dtype=float)
    if v.ndim == 0:
        v = np.full(n, float(v))
    if v.shape != (n,):
        raise ValueError(f"{what} needs one value per joint ({n}), got shape {v.shape}")
    if np.any(np.isnan(v)):
        raise ValueError(f"{what} contains NaN")
    return v.copy()


def joint_label(j: int, names: Sequence[str] | None) -> str:
    """'joint 'elbow' (#2)', or 'joint #2' when the trajectory carries no names."""
    return f"joint '{names[j]}' (#{j})" if names else f"joint #{j}"


def _worst(mn: Array, tmn: Array, mx: Array, tmx: Array, largest: bool) -> tuple[float, float]:
    """(value, time) of the largest max (or smallest min) of one joint over all pieces."""
    i = int(np.argmax(mx)) if largest else int(np.argmin(mn))
    return (float(mx[i]), float(tmx[i])) if largest else (float(mn[i]), float(tmn[i]))


def limit_violations(pieces: Sequence[Piece], n: int, lower: ArrayLike | None = None,
                     upper: ArrayLike | None = None, velocity: ArrayLike | None = None,
                     acceleration: ArrayLike | None = None,
                     names: Sequence[str] | None = None) -> list[str]:
    """Readable messages, one per joint and violated limit, at the worst point of the motion."""
    lo = limit_vector(lower, n, "lower position limit", -np.inf)
    hi = limit_vector(upper, n, "upper position limit", np.inf)
    vmax = limit_vector(velocity, n, "velocity limit", np.inf)
    amax = limit_vector(acceleration, n, "acceleration limit", np.inf)
    if np.any(vmax < 0.0) or np.any(amax < 0.0):
        raise ValueError("velocity and acceleration limits must be >= 0")
    # extremes only of what is limited (a controller checking each motion it receives gives no
    # acceleration limit: a third of the work saved)
    limited = {"position": np.isfinite(lo).any() or np.isfinite(hi).any(),
               "velocity": np.isfinite(vmax).any(), "acceleration": np.isfinite(amax).any()}
    ext = pieces_extrema(pieces, [k for k in KINDS if limited[k]])
    messages: list[str] = []
    for j in range(n):
        who = joint_label(j, names)
        pos = [x[:, j] for x in ext.get("position", ())]
        v, t = _worst(*pos, largest=False) if pos else (np.inf, 0.0)
        if v < lo[j]:
            messages.append(f"{who}: position {v:.6g} at t = {t:.4g} s "
                            f"is below the lower limit {lo[j]:.6g}")
        v, t = _worst(*pos, largest=True) if pos else (-np.inf, 0.0)
        if v > hi[j]:
            messages.append(f"{who}: position {v:.6g} at t = {t:.4g} s "
                            f"is above the upper limit {hi[j]:.6g}")
        for kind, limit in (("velocity", vmax[j]), ("acceleration", amax[j])):
            if kind not in ext:
                continue
            per_joint = [x[:, j] for x in ext[kind]]
            vmin, tmin = _worst(*per_joint, largest=False)
            vmx, tmx = _worst(*per_joint, largest=True)
            v, t = (vmx, tmx) if abs(vmx) >= abs(vmin) else (vmin, tmin)
            if abs(v) > limit:
                messages.append(f"{who}: {kind} {v:.6g} at t = {t:.4g} s "
                                f"exceeds the limit ±{limit:.6g}")
    return messages


def peak_ratios(pieces: Sequence[Piece], vmax: Array, amax: Array) -> Array:
    """Per piece, max over joints of max(|q̇|/q̇_max, √(|q̈|/q̈_max)): the time stretch it needs.

    Stretching time by r divides velocities by r and accelerations by r², hence the square root.
    """
    ext = pieces_extrema(pieces, kinds=("velocity", "acceleration"))
    pv = np.maximum(np.abs(ext["velocity"][0]), np.abs(ext["velocity"][2]))
    pa = np.maximum(np.abs(ext["acceleration"][0]), np.abs(ext["acceleration"][2]))
    rv = np.divide(pv, vmax, out=np.zeros_like(pv), where=pv > 0.0)
    ra = np.sqrt(np.divide(pa, amax, out=np.zeros_like(pa), where=pa > 0.0))
    return np.maximum(rv, ra).max(axis=1)


class LimitChecks:
    """check_limits / validate for any trajectory that lists its polynomial pieces."""

    dof: int
    joint_names: list[str] | None = None

    def pieces(self) -> list[Piece]:
        raise NotImplementedError

    def check_limits(self, lower: ArrayLike | None = None, upper: ArrayLike | None = None,
                     velocity: ArrayLike | None = None,
                     acceleration: ArrayLike | None = None) -> list[str]:
        """Violations of the given limits (None = unlimited) as readable messages; [] if none."""
        return limit_violations(self.pieces(), self.dof, lower, upper, velocity, acceleration,
                                self.joint_names)

    def validate(self, lower: ArrayLike | None = None, upper: ArrayLike | None = None,
                 velocity: ArrayLike | None = None, acceleration: ArrayLike | None = None) -> None:
        """Raise ValueError listing every limit violation, before anything is executed."""
        problems = self.check_limits(lower, upper, velocity, acceleration)
        if problems:
            raise ValueError("trajectory violates limits:\n  " + "\n  ".join(problems))
