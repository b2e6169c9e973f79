"""The plant's free-space dynamics and integrators, compiled: one call holds τ over a control period.

``Plant`` packs its settings once (``pack_settings``) into a per-joint table ``J`` and a scalar
row ``S`` (and a compliant surface into ``C``, None in free space); ``hold`` then runs every
physics sub-step of a zero-order hold — disturbance, friction, joint-limit stops, the surface's
push, forward dynamics (ABA, or M + J_m and a Cholesky solve with actuator inertia) and the
integrator — without returning to Python. The arithmetic follows plant.py's
equations term by term (Huo 2.6, Schilling 6-3-3, Huo 2-107). The holds are entry points compiled
without numba's reference counting (dynamics.spatial_kernels.entry_point): nothing they call allocates.
"""

from __future__ import annotations

import numpy as np
from numba import errors, njit, types
from numba.extending import overload

from robot_control.dynamics import aba_kernels as KA
from robot_control.dynamics import kernels as K
from robot_control.dynamics import world_kernels as KW
from robot_control.dynamics.cholesky import cholesky_in_place, solve_factored
from robot_control.sim.mujoco_kernels import hold_mujoco

# Per-joint columns of J: actuator inertia, effort limit, position limits, Schilling's friction
# (viscous, Coulomb, static, Stribeck velocity), disturbance amplitude and phase.
J_ARMATURE, J_EFFORT, J_LOWER, J_UPPER = 0, 1, 2, 3
J_VISCOUS, J_COULOMB, J_STATIC, J_STRIBECK = 4, 5, 6, 7
J_AMPLITUDE, J_PHASE = 8, 9
JCOLS = 10
# Scalar settings in S: physics step, integrator code, switches and their constants. Actuator
# inertia is not a switch: ``Mbuf`` is None without it, so numba prunes (and never compiles) the
# mass-matrix branch for a plant that does not need it.
S_DT, S_INTEGRATOR, S_FRICTION, S_LIMITS, S_STIFFNESS, S_DAMPING = 0, 1, 2, 3, 4, 5
S_DISTURBANCE, S_FREQUENCY, S_SATURATE = 6, 7, 8
# engine 'mujoco' (integrator code MUJOCO): addresses of its MjModel, MjData and of the MjData
# arrays qpos, qvel, qacc, qfrc_applied (exact in a float64: user-space addresses are < 2⁵³)
S_MJ_MODEL, S_MJ_DATA, S_MJ_QPOS, S_MJ_QVEL, S_MJ_QACC, S_MJ_QFRC = 9, 10, 11, 12, 13, 14
SCOLS = 15
#: integrator codes, in the order of plant_config.INTEGRATORS; MUJOCO: MuJoCo's mj_step holds
RK4, SEMI_IMPLICIT_EULER, HUO_2_107, MUJOCO = 0, 1, 2, 3
# Rows of the scratch X (n columns each): applied torque, RK4 stages, bias torque, zeros.
X_TOTAL, X_Q2, X_V2, X_Q3, X_V3, X_Q4, X_V4, X_A2, X_A3, X_A4, X_BIAS, X_ZERO = range(12)
XROWS = 12
# The compliant surface C: row 0 its settings, rows 1–4 the contact frame X on its body (4 × 4),
# row 5 the wrench (n, f) the surface exerts (base axes, about the contact point), then the
# contact frame's 6 × n Jacobian.
C_BODY, C_NORMAL, C_OFFSET, C_STIFFNESS, C_DAMPING, C_FRICTION, C_SLIP = 0, 1, 4, 5, 6, 7, 8
C_FRAME, C_WRENCH, C_JACOBIAN = 1, 5, 6
CROWS = 12


def contact_shape(n: int) -> tuple[int, int]:
    """Shape of C for an n-joint plant."""
    return CROWS, max(9, n)


@njit(cache=True, inline="always")
def friction_torque(J, i, v):
    """b_i = bᵛ q̇ + sgn(q̇)[bᵈ + (bˢ − bᵈ) exp(−|q̇|/ε)] (Schilling 6-3-3)."""
    coulomb = J[i, J_COULOMB]
    return J[i, J_VISCOUS] * v + np.sign(v) * (
        coulomb + (J[i, J_STATIC] - coulomb) * np.exp(-np.abs(v) / J[i, J_STRIBECK]))


@njit(cache=True, inline="always")
def stop_torque(J, S, i, qi, vi):
    """Stiff spring–damper beyond a position limit, damping only while going further in."""
    k, b = S[S_STIFFNESS], S[S_DAMPING]
    over = max(qi - J[i, J_UPPER], 0.0)
    under = max(J[i, J_LOWER] - qi, 0.0)
    tau = -k * over + k * under
    tau -= b * (max(vi, 0.0) if over > 0.0 else 0.0)
    tau -= b * (min(vi, 0.0) if under > 0.0 else 0.0)
    return tau


@njit(cache=True)
def surface_force(C, p, v, f):
    """f = f_n n − μ f_n tanh(|v_t|/v_s) v_t/|v_t|, f_n = max(0, kδ − b v_n), δ = offset − n·p:
    the push of a Kelvin–Voigt plane with smoothed Coulomb friction (environment.CompliantSurface)."""
    s = C[0]
    n0, n1, n2 = s[C_NORMAL], s[C_NORMAL + 1], s[C_NORMAL + 2]
    f[0] = f[1] = f[2] = 0.0
    depth = s[C_OFFSET] - (n0 * p[0] + n1 * p[1] + n2 * p[2])
    if depth <= 0.0:
        return
    vn = n0 * v[0] + n1 * v[1] + n2 * v[2]
    fn = max(0.0, s[C_STIFFNESS] * depth - s[C_DAMPING] * vn)
    f[0], f[1], f[2] = fn * n0, fn * n1, fn * n2
    mu = s[C_FRICTION]
    if mu > 0.0 and fn > 0.0:
        t0, t1, t2 = v[0] - vn * n0, v[1] - vn * n1, v[2] - vn * n2
        speed = np.sqrt(t0 * t0 + t1 * t1 + t2 * t2)
        if speed > 0.0:
            drag = mu * fn * np.tanh(speed / s[C_SLIP])
            f[0] -= drag * t0 / speed
            f[1] -= drag * t1 / speed
            f[2] -= drag * t2 / speed


@njit(cache=True)
def contact_torque(D, C, q, qd, total):
    """total += J_vᵀ f for the surface's push f on the contact point (Huo 2.6's Jᵀ F_env); the
    wrench (0, f) goes to C[C_WRENCH]."""
    n = q.shape[0]
    body = int(C[0, C_BODY])
    X = C[C_FRAME : C_FRAME + 4, :4]
    Jc = C[C_JACOBIAN : C_JACOBIAN + 6, :n]
    w = C[C_WRENCH]
    if body < 0:  # a contact frame fixed to the base: it does not move
        Jc[:, :] = 0.0
        p = X[:3, 3]
    else:
        KW.frame_jacobian_world(D, q, body, X, D, Jc)
        p = D[0, KW.FRAME_ORIGIN : KW.FRAME_ORIGIN + 3]
    v = w[:3]  # the contact point's velocity J_v q̇, then the force in the same slots
    for i in range(3):
        acc = 0.0
        for j in range(n):
            acc += Jc[3 + i, j] * qd[j]
        v[i] = acc
    f = w[3:6]
    surface_force(C, p, v, f)
    w[0] = w[1] = w[2] = 0.0
    for j in range(n):
        total[j] = total[j] + (Jc[3, j] * f[0] + Jc[4, j] * f[1] + Jc[5, j] * f[2])


@njit(cache=True)
def surface_forward_dynamics(D, C, q, qd, tau, out):
    """q̈ by the ABA with the surface's push on the contact body as an external wrench (RBDA
    Table 7.1's f^x, base coordinates, aba_kernels): after the velocity pass the contact point's
    position o = T_{0,b} r and velocity v + ω × o come from the body's world pose and twist (at the
    base origin), and the force f (``surface_force``, base axes) acting at o enters its bias
    wrench as −(o × f, f); the same q̈ as J_vᵀf added to τ (``contact_torque``) up to rounding.
    The wrench (0, f) goes to C[C_WRENCH]."""
    n = D.shape[0]
    K.check_length(q, n)
    K.check_length(qd, n)
    K.check_length(tau, n)
    KA.aba_velocities(D, q, qd, None, D)
    body = int(C[0, C_BODY])
    o = D[0, KW.FRAME_ORIGIN : KW.FRAME_ORIGIN + 3]
    KW.frame_point(D, body, C[C_FRAME : C_FRAME + 4, :4], o)
    V = D[body, KW.O_V : KW.O_V + 6]
    w = C[C_WRENCH]
    v, f = w[:3], w[3:6]
    v[0] = V[3] + (V[1] * o[2] - V[2] * o[1])
    v[1] = V[4] + (V[2] * o[0] - V[0] * o[2])
    v[2] = V[5] + (V[0] * o[1] - V[1] * o[0])
    surface_force(C, o, v, f)
    w[0] = w[1] = w[2] = 0.0
    pA = D[body, KA.A_PA : KA.A_PA + 6]
    pA[0] -= o[1] * f[2] - o[2] * f[1]
    pA[1] -= o[2] * f[0] - o[0] * f[2]
    pA[2] -= o[0] * f[1] - o[1] * f[0]
    pA[3] -= f[0]
    pA[4] -= f[1]
    pA[5] -= f[2]
    KA.aba_articulated(D, tau, D)
    KA.aba_accelerations(D, D[0, K.GRAVITY : K.GRAVITY + 3], D, out)


@njit(cache=True)
def acceleration(D, J, S, X, Mbuf, C, t, q, qd, tau, out):
    """q̈ of (M + J_m) q̈ = τ + d(t) − b(q̇) + τ_stop + J_vᵀf − C q̇ − g (Huo 2.6); free space
    when C is None."""
    n = q.shape[0]
    total = X[X_TOTAL]
    for i in range(n):
        total[i] = tau[i]
    if S[S_DISTURBANCE] > 0.0:
        w = 2.0 * np.pi * S[S_FREQUENCY] * t
        for i in range(n):
            total[i] = tau[i] + J[i, J_AMPLITUDE] * np.sin(w + J[i, J_PHASE])
    if S[S_FRICTION] > 0.0:
        for i in range(n):
            total[i] = total[i] - friction_torque(J, i, qd[i])
    if S[S_LIMITS] > 0.0:
        for i in range(n):
            total[i] = total[i] + stop_torque(J, S, i, q[i], qd[i])
    if C is not None:
        if Mbuf is None and C[0, C_BODY] >= 0.0:  # the push enters the ABA as F_ext: no Jacobian
            surface_forward_dynamics(D, C, q, qd, total, out)
            return
        contact_torque(D, C, q, qd, total)
    if Mbuf is None:  # the ABA itself, not its entry kernel: one level of LLVM re-linking less
        KA.aba(D, D[0, K.GRAVITY : K.GRAVITY + 3], q, qd, total, None, D, out)
    else:
        bias = X[X_BIAS]
        K.inverse_dynamics_kernel(D, q, qd, X[X_ZERO], None, bias)  # h = C q̇ + g
        K.mass_matrix_kernel(D, q, Mbuf)
        for i in range(n):
            Mbuf[i, i] += J[i, J_ARMATURE]
            total[i] = total[i] - bias[i]
        cholesky_in_place(Mbuf)
        solve_factored(Mbuf, total, out)


# The steps are inlined in their holds: each compiled level re-optimises the code it links in
# (the whole articulated-body algorithm), so a level less is about 0.5 s of a cold compile
@njit(cache=True, inline="always")
def rk4_step(D, J, S, X, Mbuf, C, t, q, qd, qdd, tau):
    """Classical fourth-order Runge–Kutta on x = (q, q̇) (the integrator Huo recommends)."""
    n = q.shape[0]
    h = S[S_DT]
    q2, v2, q3, v3, q4, v4 = X[X_Q2], X[X_V2], X[X_Q3], X[X_V3], X[X_Q4], X[X_V4]
    a2, a3, a4 = X[X_A2], X[X_A3], X[X_A4]
    acceleration(D, J, S, X, Mbuf, C, t, q, qd, tau, qdd)  # a1
    for i in range(n):
        q2[i] = q[i] + 0.5 * h * qd[i]
        v2[i] = qd[i] + 0.5 * h * qdd[i]
    acceleration(D, J, S, X, Mbuf, C, t + 0.5 * h, q2, v2, tau, a2)
    for i in range(n):
        q3[i] = q[i] + 0.5 * h * v2[i]
        v3[i] = qd[i] + 0.5 * h * a2[i]
    acceleration(D, J, S, X, Mbuf, C, t + 0.5 * h, q3, v3, tau, a3)
    for i in range(n):
        q4[i] = q[i] + h * v3[i]
        v4[i] = qd[i] + h * a3[i]
    acceleration(D, J, S, X, Mbuf, C, t + h, q4, v4, tau, a4)
    for i in range(n):
        q[i] = q[i] + h / 6.0 * (qd[i] + 2.0 * v2[i] + 2.0 * v3[i] + v4[i])
        qd[i] = qd[i] + h / 6.0 * (qdd[i] + 2.0 * a2[i] + 2.0 * a3[i] + a4[i])


@njit(cache=True, inline="always")
def semi_implicit_euler_step(D, J, S, X, Mbuf, C, t, q, qd, qdd, tau):
    """Symplectic Euler: q̇⁺ = q̇ + q̈h, q⁺ = q + q̇⁺h."""
    h = S[S_DT]
    acceleration(D, J, S, X, Mbuf, C, t, q, qd, tau, qdd)
    for i in range(q.shape[0]):
        qd[i] = qd[i] + h * qdd[i]
        q[i] = q[i] + h * qd[i]


@njit(cache=True, inline="always")
def huo_step(D, J, S, X, Mbuf, C, t, q, qd, qdd, tau):
    """Huo's step (2-107): q̇⁺ = q̇ + q̈Δt, q⁺ = q + q̇Δt + ½q̈Δt²."""
    h = S[S_DT]
    acceleration(D, J, S, X, Mbuf, C, t, q, qd, tau, qdd)
    for i in range(q.shape[0]):
        q[i] = q[i] + h * qd[i] + 0.5 * h * h * qdd[i]
        qd[i] = qd[i] + h * qdd[i]


@njit(cache=True)
def saturate(J, S, tau, applied, saturated):
    """applied = τ clipped to the effort limits (when saturation is on); flags the clipped joints."""
    for i in range(tau.shape[0]):
        e = J[i, J_EFFORT]
        x = tau[i]
        if S[S_SATURATE] > 0.0:
            saturated[i] = abs(x) > e
            x = -e if x < -e else (e if x > e else x)
        else:
            saturated[i] = False
        applied[i] = x


@K.entry_point
def hold_rk4(D, J, S, X, Mbuf, C, t, steps, q, qd, qdd, tau):
    """``steps`` RK4 steps under the held τ; returns the new time (see ``hold``). On a surface
    the wrench reported is the one at the final state (RK4's stages leave an intermediate one)."""
    for _ in range(steps):
        rk4_step(D, J, S, X, Mbuf, C, t, q, qd, qdd, tau)
        t += S[S_DT]
    if C is not None:  # the wrench only (into scratch: no forward dynamics needed for it)
        contact_torque(D, C, q, qd, X[X_A2])
    return t


@K.entry_point
def hold_semi_implicit_euler(D, J, S, X, Mbuf, C, t, steps, q, qd, qdd, tau):
    """``steps`` semi-implicit Euler steps under the held τ; returns the new time (see ``hold``)."""
    for _ in range(steps):
        semi_implicit_euler_step(D, J, S, X, Mbuf, C, t, q, qd, qdd, tau)
        t += S[S_DT]
    return t


@K.entry_point
def hold_huo(D, J, S, X, Mbuf, C, t, steps, q, qd, qdd, tau):
    """``steps`` of Huo's step (2-107) under the held τ; returns the new time (see ``hold``)."""
    for _ in range(steps):
        huo_step(D, J, S, X, Mbuf, C, t, q, qd, qdd, tau)
        t += S[S_DT]
    return t


#: the hold of each integrator code: a live plant compiles only the one it is configured with
HOLDS = (hold_rk4, hold_semi_implicit_euler, hold_huo)


def hold(integrator, D, J, S, X, Mbuf, C, t, steps, q, qd, qdd, tau):
    """Integrate ``steps`` physics steps under the held torque τ; returns the new time.

    q, q̇ are advanced in place and q̈ holds the last step's acceleration (RK4: its first stage).
    Time advances by repeated addition of the step, exactly as ``Plant.step`` does. Compiled
    code only, for a literal ``integrator`` code (the offline loop makes it one): a run compiles
    only its own integrator.
    """
    raise TypeError("hold runs inside compiled code; Plant.step holds from Python")


def _rk4(integrator, D, J, S, X, Mbuf, C, t, steps, q, qd, qdd, tau):
    return hold_rk4(D, J, S, X, Mbuf, C, t, steps, q, qd, qdd, tau)


def _semi_implicit_euler(integrator, D, J, S, X, Mbuf, C, t, steps, q, qd, qdd, tau):
    return hold_semi_implicit_euler(D, J, S, X, Mbuf, C, t, steps, q, qd, qdd, tau)


def _huo(integrator, D, J, S, X, Mbuf, C, t, steps, q, qd, qdd, tau):
    return hold_huo(D, J, S, X, Mbuf, C, t, steps, q, qd, qdd, tau)


def _mujoco(integrator, D, J, S, X, Mbuf, C, t, steps, q, qd, qdd, tau):
    return hold_mujoco_at(S, t, steps, q, qd, qdd, tau)


@njit(cache=True)
def hold_mujoco_at(S, t, steps, q, qd, qdd, tau):
    """mujoco_kernels.hold_mujoco on the MuJoCo model and data whose addresses S holds."""
    return hold_mujoco(int(S[S_MJ_MODEL]), int(S[S_MJ_DATA]), int(S[S_MJ_QPOS]),
                       int(S[S_MJ_QVEL]), int(S[S_MJ_QACC]), int(S[S_MJ_QFRC]),
                       S[S_DT], t, steps, q, qd, qdd, tau)


@overload(hold, jit_options={"cache": True})
def _hold(integrator, D, J, S, X, Mbuf, C, t, steps, q, qd, qdd, tau):
    if not isinstance(integrator, types.IntegerLiteral):
        raise errors.TypingError("hold needs a literal integrator code (numba.literally)")
    return (_rk4, _semi_implicit_euler, _huo, _mujoco)[integrator.literal_value]


@njit(cache=True)
def step_mujoco(J, S, t, steps, tau, out, saturated):
    """One hold of MujocoPlant.step: τ saturated into ``out[3]``, held by MuJoCo, q, q̇, q̈ into
    ``out[0:3]``; returns the new time, or NaN when τ or the new state is not finite (τ: nothing
    stepped)."""
    applied = out[3]
    saturate(J, S, tau, applied, saturated)
    if not all_finite(applied):
        return np.nan
    t = hold_mujoco_at(S, t, steps, out[0], out[1], out[2], applied)
    if not (all_finite(out[0]) and all_finite(out[1])):
        return np.nan
    return t


@njit(cache=True)
def all_finite(x):
    """Every entry of x is finite."""
    for i in range(x.shape[0]):
        if not np.isfinite(x[i]):
            return False
    return True


@njit(cache=True)
def sense(n, q, qd, sigma, noise_k, qm, qdm):
    """The first n joints' (q, q̇) as the sensors report them, into (qm, qdm): truth plus the
    period's standard-normal draws scaled by sigma (position, velocity), as Plant.measure adds."""
    z = 0
    for i in range(n):
        qm[i] = q[i]
        qdm[i] = qd[i]
    if sigma[0] > 0.0:
        for i in range(n):
            qm[i] = qm[i] + (0.0 + sigma[0] * noise_k[z, i])
        z += 1
    if sigma[1] > 0.0:
        for i in range(n):
            qdm[i] = qdm[i] + (0.0 + sigma[1] * noise_k[z, i])
