"""Excitation trajectories for identification: finite Fourier series (Swevers et al. 1997).

Each joint follows, with the fundamental ω_f = 2π/T,

    q_j(t) = q_j0 + Σ_{l=1}^{L} [a_jl/(lω_f) sin(lω_f t) − b_jl/(lω_f) cos(lω_f t)],

a periodic motion whose velocity Σ a_jl cos(lω_f t) + b_jl sin(lω_f t) and acceleration are as
smooth as the reference can be. Σ_l a_jl = 0 and Σ_l l b_jl = 0 make it start (and end every
period) at rest; q_j0 puts q(0) at the robot's start posture. Position, velocity and acceleration
are linear in the coefficients, so the joint limits are linear inequalities on a time grid; the
coefficients minimise the condition number of the stacked base-parameter regressor over one
period (Huo 2.5: the identification p̂ = (ŶᵀŶ)⁻¹Ŷᵀτ is only as good as Ŷ is conditioned).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import minimize

from robot_control.trajectory.excitation_cache import excitation_key
from robot_control.trajectory.excitation_cache import load as load_coefficients
from robot_control.trajectory.excitation_cache import store as store_coefficients
from robot_control.trajectory.sampling import (
    F_DURATION,
    F_FREQ,
    F_HARMONICS,
    F_ROWS,
    F_START,
    series_sample_into,
    series_sample_many,
)

Array = NDArray[np.float64]


@dataclass(frozen=True)
class FourierExcitation:
    """q(t) of a finite Fourier series; ``a``, ``b`` are (n, L), ``q0`` (n,) the series' centre.

    Frozen (its arrays read-only copies): ``table``, the packed series every sampler reads, is
    built once from these fields.
    """

    a: Array
    b: Array
    q0: Array
    period: float
    cycles: float = 1.0
    start_time: float = 0.0

    def __post_init__(self) -> None:
        a = np.atleast_2d(np.array(self.a, dtype=float))
        b = np.atleast_2d(np.array(self.b, dtype=float))
        q0 = np.array(self.q0, dtype=float)
        if a.shape != b.shape or a.shape[0] != q0.size:
            raise ValueError("excitation: a and b must be (joints × harmonics), q0 one per joint")
        if not self.period > 0.0 or not self.cycles > 0.0:
            raise ValueError("excitation: period and cycles must be > 0")
        duration = self.period * self.cycles
        for array in (a, b, q0):  # read-only, as the table built from them
            array.flags.writeable = False
        for name, value in (("a", a), ("b", b), ("q0", q0), ("dof", q0.size),
                            ("duration", duration),
                            ("table", series_table(a, b, q0, self.period, self.start_time,
                                                   duration))):
            object.__setattr__(self, name, value)

    @property
    def harmonics(self) -> int:
        return self.a.shape[1]

    def sample(self, t: float | ArrayLike) -> tuple[Array, Array, Array]:
        """(q, q̇, q̈) at t: (n,) for scalar t, (k, n) for k times; held at rest after the end.

        Evaluated by the compiled ``sampling.series_sample_into`` the offline loop calls, so the
        Python and compiled routes of a run see the same reference to the bit."""
        if np.ndim(t) == 0:
            out = np.empty((3, self.dof))
            series_sample_into(self.table, float(t), out)
            return out[0], out[1], out[2]
        times = np.atleast_1d(np.asarray(t, dtype=float))
        out = np.empty((times.size, 3, self.dof))
        series_sample_many(self.table, times, out)
        return out[:, 0], out[:, 1], out[:, 2]


def series_table(a: Array, b: Array, q0: Array, period: float, start_time: float,
                 duration: float) -> Array:
    """The (2 + 5n, max(L, 3)) table of ``sampling.series_sample_into`` (its layout there)."""
    n, L = a.shape
    freq = 2.0 * np.pi / period * np.arange(1, L + 1)
    table = np.zeros((F_ROWS + 5 * n, max(L, 3)))
    table[0, F_START], table[0, F_DURATION], table[0, F_HARMONICS] = start_time, duration, L
    table[F_FREQ, :L] = freq
    for i, block in enumerate((a / freq, b / freq, a, b)):
        table[F_ROWS + i * n : F_ROWS + (i + 1) * n, :L] = block
    table[F_ROWS + 4 * n :, 0] = q0
    return table


def fourier_basis(t: Array, harmonics: int, omega: float) -> tuple[Array, Array, Array]:
    """sin(lω_f t), cos(lω_f t) (k × L) and the frequencies lω_f (L) of the series."""
    freq = omega * np.arange(1, harmonics + 1)
    phase = np.outer(t, freq)
    return np.sin(phase), np.cos(phase), freq


def centre_for_start(a: Array, b: Array, q_start: Array, period: float) -> Array:
    """q_j0 with q(0) = q_start: q_j0 = q_start_j + Σ_l b_jl/(lω_f)."""
    freq = 2.0 * np.pi / period * np.arange(1, a.shape[1] + 1)
    return np.asarray(q_start, dtype=float) + (b / freq).sum(axis=1)


def _linear_maps(grid: Array, harmonics: int, period: float):
    """Matrices giving q − q_j0, q̇, q̈ of one joint on the grid from x = [a_j; b_j]."""
    S, C, P = fourier_basis(grid, harmonics, 2.0 * np.pi / period)
    Q = np.hstack([S / P, -(C - 1.0) / P])  # relative to q(0): cos(0) = 1
    V = np.hstack([C, S])
    A = np.hstack([-S * P, C * P])
    return Q, V, A


def optimise_excitation(model, q_start: ArrayLike, period: float = 10.0, harmonics: int = 5,
                        basis: str = "base", velocity_scale: float = 0.5,
                        max_acceleration: float | ArrayLike = 3.0, margin: float = 0.05,
                        samples: int = 60, seed: int = 0, maxiter: int = 20,
                        cycles: float = 1.0, cache: bool = True) -> FourierExcitation:
    """The excitation of :func:`optimal_coefficients`, repeated ``cycles`` times; with ``cache``
    the coefficients come from (or go to) the user cache (excitation_cache: bit-exact, keyed by
    everything they depend on), since optimising costs seconds on a busy machine."""
    n = model.nq
    q_start = np.asarray(q_start, dtype=float).reshape(n)
    settings = {"period": period, "harmonics": harmonics, "basis": basis,
                "velocity_scale": velocity_scale, "max_acceleration": max_acceleration,
                "margin": margin, "samples": samples, "seed": seed, "maxiter": maxiter}
    key = excitation_key(model, q_start, settings) if cache else None
    x = load_coefficients(key, n * 2 * int(harmonics)) if key is not None else None
    if x is None:
        x = optimal_coefficients(model, q_start, **settings)
        if key is not None:
            store_coefficients(key, x)
    xj = x.reshape(n, -1)
    a, b = xj[:, : xj.shape[1] // 2], xj[:, xj.shape[1] // 2 :]
    return FourierExcitation(a, b, centre_for_start(a, b, q_start, period), period, cycles)


def optimal_coefficients(model, q_start: Array, period: float, harmonics: int, basis: str,
                         velocity_scale: float, max_acceleration: float | ArrayLike,
                         margin: float, samples: int, seed: int, maxiter: int) -> Array:
    """Fourier coefficients x = [a_1; b_1; …; a_n; b_n] within the joint limits minimising
    cond(Ŷ) (Swevers; Huo 2.5).

    Limits: q within [lower + margin, upper − margin] (where finite), |q̇| ≤ velocity_scale ×
    the velocity limit, |q̈| ≤ max_acceleration, all on a grid of ``samples`` per period; start and
    end at rest at ``q_start``. The objective is the condition number of the base regressor
    stacked over the grid, minimised by SLSQP from the best of a few random feasible starts.
    """
    from robot_control.dynamics.regressor import parameter_basis, regressor

    n = model.nq
    q_start = np.asarray(q_start, dtype=float).reshape(n)
    L = int(harmonics)
    if L < 2:
        raise ValueError("excitation needs at least 2 harmonics (start and end at rest)")
    grid = np.linspace(0.0, period, samples, endpoint=False)
    Q, V, A = _linear_maps(grid, L, period)
    freq = 2.0 * np.pi / period * np.arange(1, L + 1)
    vmax = velocity_scale * np.where(np.isfinite(model.velocity_limit), model.velocity_limit, 2.0)
    amax = np.broadcast_to(np.asarray(max_acceleration, dtype=float), (n,))
    lo = np.where(np.isfinite(model.lower), model.lower + margin, q_start - np.pi)
    hi = np.where(np.isfinite(model.upper), model.upper - margin, q_start + np.pi)
    if np.any(q_start < lo) or np.any(q_start > hi):
        raise ValueError("excitation: the start posture must lie inside the joint limits "
                         f"less the margin {margin}")
    mapping = parameter_basis(model, basis).regressor_map

    def cost(x: Array) -> float:
        X = x.reshape(n, 2 * L).T
        dq, qd, qdd = Q @ X, V @ X, A @ X
        W = np.vstack([regressor(model, q_start + dq[k], qd[k], qdd[k]) @ mapping
                       for k in range(samples)])
        W = W / np.maximum(np.linalg.norm(W, axis=0), 1e-12)
        s = np.linalg.svd(W, compute_uv=False)
        return float(np.log(s[0] / max(s[-1], 1e-300)))

    rows, bounds = [], []
    for j in range(n):
        for M, low, high in ((Q, lo[j] - q_start[j], hi[j] - q_start[j]),
                             (V, -vmax[j], vmax[j]), (A, -amax[j], amax[j])):
            block = np.zeros((samples, n * 2 * L))
            block[:, j * 2 * L:(j + 1) * 2 * L] = M
            rows.append(block)
            bounds.append((np.full(samples, low), np.full(samples, high)))
    G = np.vstack(rows)
    g_lo = np.concatenate([b[0] for b in bounds])
    g_hi = np.concatenate([b[1] for b in bounds])
    E = np.zeros((2 * n, n * 2 * L))  # rest at t = 0: Σ a_jl = 0, Σ l b_jl = 0
    for j in range(n):
        E[2 * j, j * 2 * L:j * 2 * L + L] = 1.0
        E[2 * j + 1, j * 2 * L + L:(j + 1) * 2 * L] = freq
    constraints = [{"type": "ineq", "fun": lambda x: np.concatenate([G @ x - g_lo, g_hi - G @ x]),
                    "jac": lambda x: np.vstack([G, -G])},
                   {"type": "eq", "fun": lambda x: E @ x, "jac": lambda x: E}]
    rng = np.random.default_rng(seed)
    null = _null_space(E)
    best, best_cost = None, np.inf
    for _ in range(8):
        x = null @ rng.normal(size=null.shape[1])
        x *= _feasible_scale(G, x, g_lo, g_hi)
        c = cost(x)
        if c < best_cost:
            best, best_cost = x, c
    res = minimize(cost, best, method="SLSQP", constraints=constraints,
                   options={"maxiter": maxiter, "ftol": 1e-6})
    return res.x if res.fun <= best_cost and _feasible(G, E, res.x, g_lo, g_hi) else best


def _null_space(E: Array) -> Array:
    _, s, Vt = np.linalg.svd(E)
    return Vt[int((s > 1e-12 * s[0]).sum()):].T


def _feasible_scale(G: Array, x: Array, lo: Array, hi: Array) -> float:
    """0.9 × the largest s with G(s x) within [lo, hi] (lo < 0 < hi): a feasible random start."""
    y = G @ x
    with np.errstate(divide="ignore", invalid="ignore"):
        room = np.where(y > 0, hi / y, np.where(y < 0, lo / y, np.inf))
    return 0.9 * float(np.min(room))


def _feasible(G: Array, E: Array, x: Array, lo: Array, hi: Array, tol: float = 1e-6) -> bool:
    y = G @ x
    return bool(np.all(y >= lo - tol) and np.all(y <= hi + tol)
                and np.abs(E @ x).max() < tol)


#: keys of a scenario's ``trajectory: {type: excitation, …}`` (all optional)
EXCITATION_KEYS = ("period", "harmonics", "cycles", "basis", "velocity_scale",
                   "max_acceleration", "margin", "samples", "seed", "maxiter")


def excitation_from_config(spec: dict, model, q_start) -> FourierExcitation:
    """The optimised excitation a scenario asks for, starting at rest at the initial posture."""
    options = {k: spec[k] for k in EXCITATION_KEYS if k in spec}
    return optimise_excitation(model, q_start, **options)
