"""Gains that fit the robot: per-joint gains derived from its model, the control rate and limits.

Every joint-space law's gains come from one closed-loop design per joint: a bandwidth ω_i and a
damping ratio ζ, read in the units the law's gains have (its ``GAINS`` class attribute):

- ``torque`` (PD family, Huo C1–C3: τ = K_d ė + K_p e + …): K_p = m_i ω², K_d = 2ζ m_i ω;
- ``acceleration`` (computed torque C4, Craig's adaptive C9, robust C12: ë + K_d ė + K_p e = 0):
  K_p = ω², K_d = 2ζω;
- ``reference`` (passivity C8, Slotine–Li C10, sliding mode C11: r = ė + Λe, τ = … + K_d r):
  Λ = ω, K_d = m_i ω (the error poles −Λ and −K_d/m_i both at −ω).

m_i = M_ii(q₀) + J_rotor,i is the inertia joint i sees at the initial pose. ω_i is the smallest of
the requested bandwidth, the control rate's cap ω ≤ RATE_FRACTION · rate (ωT ≤ 0.1: the sampled
loop keeps within a few per cent of the continuous design; a wrist with a tiny m_i and a fixed
K_d has K_d T/m_i ≫ 2 and diverges in one period) and the effort cap ω ≤ √(τ_max/(m_i e_sat))
(K_p e ≤ τ_max for errors up to e_sat = ERROR_AT_EFFORT_LIMIT). docs/architecture.md "Gains that
fit the robot" gives the rule with the numbers it yields.
"""

from __future__ import annotations

import numpy as np

Array = np.ndarray

#: default closed-loop bandwidth, rad/s
DEFAULT_BANDWIDTH = 20.0
#: default damping ratio (critical: no overshoot)
DEFAULT_DAMPING = 1.0
#: the control rate's cap: ω ≤ RATE_FRACTION · rate (rad/s per Hz), i.e. ωT ≤ 0.1
RATE_FRACTION = 0.1
#: the error at which the position gain alone asks for the effort limit, rad (or m)
ERROR_AT_EFFORT_LIMIT = 0.1
#: how far inside its limits a default initial pose keeps each joint (fraction of the range)
POSE_MARGIN = 0.25
#: a default pose more coupled than this (``coupling``) is searched for a better one
COUPLING_MAX = 15.0
#: the joint moves the pose search tries, rad
POSE_STEPS = (0.5, 1.0)
#: the coupled arm's fastest closed-loop mode at most this fraction of the rate, rad/s per Hz:
#: the PD family's √λ_max(M⁻¹K_p) (ωT ≤ 0.2) and the reference laws' λ_max(M⁻¹K_d) (λT ≤ 1)
TORQUE_MODE_FRACTION = 0.2
REFERENCE_MODE_FRACTION = 1.0
#: adaptation no faster than this fraction of the joint's bandwidth
ADAPTATION_RATIO = 0.5
#: a parameter's scale is at least this fraction of the largest one (zero ones still adapt)
PARAMETER_SCALE_FLOOR = 0.01
#: vs3's parameter bounds p̄ = PARAMETER_BOUND_FACTOR · |p̂| (+ a floor per parameter)
PARAMETER_BOUND_FACTOR = 1.2


def joint_inertia(model, q: Array, rotor_inertia: Array | None = None) -> Array:
    """m_i = M_ii(q) + J_rotor,i: the inertia each joint sees at pose q (Huo 3-1's H diagonal)."""
    from robot_control import dynamics as dyn

    m = np.diag(dyn.mass_matrix(model, np.asarray(q, dtype=float))).copy()
    if rotor_inertia is not None:
        m += np.asarray(rotor_inertia, dtype=float)
    return m


def bandwidth(model, inertia: Array, rate: float, target: float = DEFAULT_BANDWIDTH) -> Array:
    """ω_i = min(target, RATE_FRACTION · rate, √(τ_max,i / (m_i e_sat))), rad/s per joint."""
    omega = np.full(model.nq, min(float(target), RATE_FRACTION * float(rate)))
    effort = np.asarray(model.effort_limit, dtype=float)
    limited = np.isfinite(effort) & (effort > 0.0)
    cap = np.sqrt(effort[limited] / (inertia[limited] * ERROR_AT_EFFORT_LIMIT))
    omega[limited] = np.minimum(omega[limited], cap)
    return omega


def torque_gains(inertia: Array, omega: Array, zeta: float = DEFAULT_DAMPING) -> dict:
    """PD in torque units: K_p = m ω², K_d = 2ζ m ω (m q̈ + K_d q̇ + K_p q = 0 has ω, ζ)."""
    return {"kp": inertia * omega**2, "kd": 2.0 * zeta * inertia * omega}


def acceleration_gains(omega: Array, zeta: float = DEFAULT_DAMPING) -> dict:
    """PD on the error dynamics ë + K_d ė + K_p e = 0: K_p = ω², K_d = 2ζω."""
    return {"kp": omega**2, "kd": 2.0 * zeta * omega}


def reference_gains(inertia: Array, omega: Array) -> dict:
    """Sliding-variable laws (r = ė + Λe, τ = … + K_d r): Λ = ω, K_d = m ω (poles −Λ, −K_d/m)."""
    return {"lambda": omega.copy(), "kd": inertia * omega}


def parameter_bounds(law, model) -> dict:
    """vs3's bounds p̄_j = PARAMETER_BOUND_FACTOR |p̂_j| in the law's default basis, floored at
    1 % of the largest (Huo 3-107 needs p̄ ≥ |p|; the model's own p is the best guess)."""
    from robot_control.control.basis import BasisRegressor

    p = np.abs(BasisRegressor(model, "base").parameters_of(model))
    return {"parameter_bound": PARAMETER_BOUND_FACTOR * np.maximum(p, 0.01 * p.max())}


def parameter_scale(model, basis: str = "base") -> Array:
    """s_j = max(|p_j|, PARAMETER_SCALE_FLOOR · max|p|): each parameter's own size in ``basis``."""
    from robot_control.control.basis import BasisRegressor

    p = np.abs(BasisRegressor(model, basis).parameters_of(model))
    return np.maximum(p, PARAMETER_SCALE_FLOOR * max(float(p.max()), 1e-12))


def adaptation_gain(model, q0: Array, inertia: Array, omega: Array, kind: str,
                    kp: Array | None = None, kd: Array | None = None) -> Array:
    """Γ⁻¹ = γ diag(s_j²) with γ making the adaptation loop's frequency at most ADAPTATION_RATIO·ω_i
    on every joint at q₀: Slotine–Li (m ṙ + K_d r = −Y p̃, p̃̇ = Γ⁻¹Yᵀr) has ν_i² =
    (YΓ⁻¹Yᵀ)_ii/m_i; Craig's (ë + K_d ė + K_p e = Φp̃, Φ = M⁻¹Y, p̃̇ = −Γ⁻¹ΦᵀBᵀRx) has ν_i² =
    (ΦΓ⁻¹Φᵀ)_ii R₃,ii. Y is taken at rest under unit reference accelerations (gravity and M·1)."""
    from robot_control import dynamics as dyn
    from robot_control.control.basis import BasisRegressor

    n = model.nq
    s2 = parameter_scale(model) ** 2
    Y = BasisRegressor(model, "base").reference(q0, np.zeros(n), np.zeros(n), np.ones(n))
    if kind == "reference":
        load = (Y**2 @ s2) / inertia
    else:
        from robot_control.control.gain_design import lyapunov_matrix

        Phi = np.linalg.solve(dyn.mass_matrix(model, q0), Y)
        R3 = np.diag(lyapunov_matrix(kp, kd, np.ones(2 * n)))[n:]
        load = (Phi**2 @ s2) * R3
    useful = load > 0.0
    gamma = float(np.min((ADAPTATION_RATIO * omega[useful]) ** 2 / load[useful])) \
        if np.any(useful) else 1.0
    return gamma * s2


def boundary_layer(model, q0: Array, inertia: Array, omega: Array, p_bar: Array) -> Array:
    """ε_i = k̄_i/(m_i ω_i), k̄ = |Y| p̄ (vs3's switching gain, Huo 3-107) at rest under unit
    reference accelerations: inside the layer the switching term is a gain k̄/ε = m ω on s, the
    same as K_d, so the sampled loop keeps 2ωT ≤ 0.2 (with ε = 0 it chatters at ±k̄)."""
    from robot_control.control.basis import BasisRegressor

    n = model.nq
    Y = BasisRegressor(model, "base").reference(q0, np.zeros(n), np.zeros(n), np.ones(n))
    return (np.abs(Y) @ p_bar) / (inertia * omega)


def pose_box(model) -> tuple[Array, Array]:
    """Each joint's limits moved POSE_MARGIN of its range inward (±∞ where unlimited)."""
    lower, upper = np.asarray(model.lower, float), np.asarray(model.upper, float)
    span = np.where(np.isfinite(upper - lower), upper - lower, 0.0)
    lo = np.where(np.isfinite(lower), lower + POSE_MARGIN * span, -np.inf)
    hi = np.where(np.isfinite(upper), upper - POSE_MARGIN * span, np.inf)
    return lo, hi


def coupling(model, q: Array) -> float:
    """max_i M_ii(q)·(M⁻¹)_ii(q): how much more inertia a joint's own gains see than its
    lightest motion with the others free (1: decoupled; an arm stretched up with two aligned
    axes, as the xArm7 at zero, 54)."""
    from robot_control import dynamics as dyn

    M = dyn.mass_matrix(model, np.asarray(q, dtype=float))
    try:
        return float(np.max(np.diag(M) * np.diag(np.linalg.inv(M))))
    except np.linalg.LinAlgError:
        return np.inf


def coupled_mode_cap(model, q0: Array, rotor_inertia: Array | None, rate: float, kind: str,
                     gains: dict) -> dict:
    """Gains scaled so the coupled arm's fastest mode keeps its rate cap: per-joint gains from
    M_ii see a mode of √λ_max(M⁻¹K_p) (PD family) or λ_max(M⁻¹K_d) (reference laws), which two
    aligned axes make many times ω; K_p by c², K_d by c (PD) or K_d by c (reference)."""
    import scipy.linalg

    from robot_control import dynamics as dyn

    M = dyn.mass_matrix(model, q0)
    if rotor_inertia is not None:
        M = M + np.diag(np.asarray(rotor_inertia, dtype=float))
    if kind == "torque":
        mode = np.sqrt(scipy.linalg.eigh(np.diag(gains["kp"]), M, eigvals_only=True).max())
        c = min(1.0, TORQUE_MODE_FRACTION * float(rate) / mode)
        return {**gains, "kp": gains["kp"] * c**2, "kd": gains["kd"] * c}
    mode = scipy.linalg.eigh(np.diag(gains["kd"]), M, eigvals_only=True).max()
    c = min(1.0, REFERENCE_MODE_FRACTION * float(rate) / mode)
    return {**gains, "kd": gains["kd"] * c}


def default_initial_pose(model) -> Array:
    """Zero, moved inside each joint's limits by POSE_MARGIN of its range where it is closer;
    where the joints there are strongly coupled (``coupling`` > COUPLING_MAX, aligned axes) the
    better-conditioned pose ``decoupled_pose`` finds from it."""
    lo, hi = pose_box(model)
    q = np.clip(np.zeros(model.nq), lo, hi)
    if model.nq > BASIS_MAX_JOINTS or coupling(model, q) <= COUPLING_MAX:
        return q
    return decoupled_pose(model, q, lo, hi)


def decoupled_pose(model, q: Array, lo: Array, hi: Array) -> Array:
    """A pose near q with less ``coupling``: coordinate search, each joint moved by ±POSE_STEPS
    rad within [lo, hi] in turn, the best kept, two passes (deterministic)."""
    best, value = q.copy(), coupling(model, q)
    for _ in range(2):
        for i in range(model.nq):
            for step in POSE_STEPS:
                for sign in (1.0, -1.0):
                    trial = best.copy()
                    trial[i] = np.clip(best[i] + sign * step, lo[i], hi[i])
                    c = coupling(model, trial)
                    if c < value - 1e-9:
                        best, value = trial, c
    return best


#: above this many joints the parameter-dependent defaults (vs3's bounds and boundary layer, the
#: adaptation gains) are not derived — the base-parameter set they need takes minutes to find
#: for a 1000-joint chain — and those laws keep their generic defaults
BASIS_MAX_JOINTS = 100


def derived_law_parameters(law, model, rate: float, q0: Array | None = None,
                           target: float = DEFAULT_BANDWIDTH, zeta: float = DEFAULT_DAMPING,
                           rotor_inertia: Array | None = None, given=frozenset()) -> dict:
    """The gains of ``law`` (a Controller) for ``model`` at ``rate`` by its ``GAINS`` kind; {} for
    a law whose gains are not per-joint (task-space and force laws keep their own defaults).
    Parameters named in ``given`` (a params file sets them) are left out when no other needs
    them, and so is their model work (mass matrices, regressors: compiled code on a cold start)."""
    kind = getattr(law, "GAINS", None)
    if kind is None:
        return {}
    names = {s.name for s in law.parameter_specs()}
    gains = {"reference": {"lambda", "kd"}}.get(kind, {"kp", "kd"})
    basis = model.nq <= BASIS_MAX_JOINTS
    bounds = basis and "parameter_bound" in names and not {"parameter_bound",
                                                           "boundary_layer"} <= set(given)
    adaptation = basis and "adaptation_gain" in names and "adaptation_gain" not in given
    if gains <= set(given) and not (bounds or adaptation):
        return {}
    q0 = default_initial_pose(model) if q0 is None else np.asarray(q0, dtype=float)
    m = joint_inertia(model, q0, rotor_inertia)
    omega = bandwidth(model, m, rate, target)
    if kind == "torque":
        out = torque_gains(m, omega, zeta)
    elif kind == "acceleration":
        out = acceleration_gains(omega, zeta)
    elif kind == "reference":
        out = reference_gains(m, omega)
    else:
        raise ValueError(f"{law.name}: unknown gain kind '{kind}'")
    if kind != "acceleration" and basis:
        out = coupled_mode_cap(model, q0, rotor_inertia, rate, kind, out)
    if bounds:
        out.update(parameter_bounds(law, model))
        out["boundary_layer"] = boundary_layer(model, q0, m, omega, out["parameter_bound"])
    if adaptation:
        out["adaptation_gain"] = adaptation_gain(model, q0, m, omega, kind, out.get("kp"),
                                                 out.get("kd"))
    return out
