"""The offline control loop compiled: many control periods in one call (sim.simulate).

Each period k does what ``simulate.run``'s Python loop does — sense (q, q̇) with the seeded
noise and the wrench of a compliant surface, sample the joint or Cartesian reference at t_k,
compute τ_k with a compiled law (control.compiled), log, saturate and hold τ_k over the period
(plant_kernels.hold) — in the same order and arithmetic.
"""

from __future__ import annotations

from numba import literally, njit, typeof, types

from robot_control.control import task_kernels as KT
from robot_control.control.compiled import law_update
from robot_control.dynamics import world_kernels as KW
from robot_control.sim import plant_kernels as PK
from robot_control.trajectory.cartesian import path_sample_into
from robot_control.trajectory.sampling import sample_into, series_sample_into


@njit(cache=True, _nrt=False)
def run_periods(k0, k1, steps, tick_ns, substeps, D, J, S, X, Mbuf, state, clock, noise, sigma,
                kind, integrator, law, knots, rows, first, last, work, t_log, q_log, qd_log, ref_log,
                tau_log, qm_log, qdm_log, cmd_log, C, path, frame, wrench_log, task_log, series):
    """Control periods k0 … k1−1; returns −1, the period k whose hold made the state non-finite,
    or −2 − k when the law's torque at period k is non-finite even from its reset state.

    ``state`` rows are the plant's q, q̇, q̈ and ``clock[0]`` its time, both advanced in place;
    ``noise`` holds the standard-normal draws of these periods (position first, then velocity,
    for those with σ > 0) and ``work`` the measured state, reference, torques and flags. ``C`` is
    the plant's compliant surface (None: free space). With a Cartesian ``path``
    (trajectory.cartesian.path_table; None: the joint reference of ``knots`` …) the task-space law
    gets its pose, twist and acceleration, ``work`` row 5 holds q₀ as its joint reference, and
    ``task_log`` the position error p_d − p of the frame ``frame`` (4 × 4 X, its body index in
    frame[3, 0]) on the plant. With a Fourier ``series`` (trajectory.excitation.series_table;
    None: the quintics of ``knots`` …) the joint reference is that series.
    """
    # compiled (and cached) per law kind and integrator: only the code of the run
    kind = literally(kind)
    integrator = literally(integrator)
    n = state.shape[1]
    q, qd, qdd = state[0], state[1], state[2]
    qm, qdm, tau, applied, sat = work[0], work[1], work[2], work[3], work[4]
    ref = work[5:8]
    A = law[9]
    pose = A[KT.TK_POSE : KT.TK_POSE + 4, :4]
    placed = -1  # bodies 0 … placed have T_{0,i}(q) in D (see below); none yet
    for k in range(k0, k1):
        t = k * tick_ns * 1e-9
        PK.sense(n, q, qd, sigma, noise[k - k0], qm, qdm)
        # None-typed references are pruned: a run compiles only the sampler it uses
        if path is not None:
            path_sample_into(path, t, pose, A[KT.TK_RATES])
        elif series is not None:
            series_sample_into(series, t, ref)
        else:
            sample_into(knots, rows, first, last, t, ref)
        if C is not None:
            for i in range(6):
                A[KT.TK_WRENCH, i] = C[PK.C_WRENCH, i]
                wrench_log[k, i] = C[PK.C_WRENCH, i]
        if not law_update(kind, law, t, qm, qdm, ref[0], ref[1], ref[2], tau):
            return -2 - k
        t_log[k] = t
        for i in range(n):
            q_log[k, i] = q[i]
            qd_log[k, i] = qd[i]
            ref_log[k, i] = ref[0, i]
            qm_log[k, i] = qm[i]
            qdm_log[k, i] = qdm[i]
            cmd_log[k, i] = tau[i]
        if path is not None:
            frame_error(D, frame, q, pose, task_log[k], placed)
        PK.saturate(J, S, tau, applied, sat)
        for i in range(n):
            tau_log[k, i] = applied[i]
        if k < steps:
            clock[0] = PK.hold(integrator, D, J, S, X, Mbuf, C, clock[0], substeps, q, qd, qdd,
                               applied)
            if not (PK.all_finite(q) and PK.all_finite(qd)):
                return k
            if C is not None:
                if integrator == PK.RK4 and shares_no_data(D, law):
                    # the RK4 hold's last call (contact_torque's frame Jacobian) left the world
                    # poses of the contact body's chain at this q in D, and nothing writes D
                    # before the next period's frame_error
                    placed = int(C[0, PK.C_BODY])
    return -1


@njit(cache=True)
def shares_no_data(D, law):
    """The law's model arrays are not the plant's D (a law on the plant's very model would
    overwrite its workspace)."""
    return law[0].ctypes.data != D.ctypes.data and law[1].ctypes.data != D.ctypes.data


@njit(cache=True)
def frame_error(D, frame, q, pose, out, placed=-1):
    """p_d − p of the frame X = frame (body index in frame[3, 0]) at q: p = T_{0,b}(q) X's origin.
    With b ≤ ``placed`` the world poses T_{0,i}(q) of bodies 0 … placed are in D already (the same
    numbers frame_origin_world would compute): only X's origin is mapped."""
    body = int(frame[3, 0])
    if body < 0:
        for i in range(3):
            out[i] = pose[i, 3] - frame[i, 3]
        return
    if body <= placed:
        KW.frame_point(D, body, frame, out)
    else:
        KW.frame_origin_world(D, q, body, frame, D, out)
    for i in range(3):
        out[i] = pose[i, 3] - out[i]


#: positions of ``kind`` and ``integrator`` among run_periods' arguments
LITERAL_ARGUMENTS = (14, 15)


def compiled_periods(*args):
    """``run_periods`` compiled (or loaded from the cache) for these arguments with their law
    kind and integrator as literals: its entry point. Calling it skips the dispatcher, which
    would type them as int64 and go through numba's literal retry (a partial compile) per call."""
    sig = tuple(types.literal(a) if i in LITERAL_ARGUMENTS else typeof(a) for i, a in enumerate(args))
    run_periods.compile(sig)
    return run_periods.overloads[sig].entry_point
