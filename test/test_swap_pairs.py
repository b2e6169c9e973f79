"""Bumpless swaps between every pair of laws of the matrix.

The controller node's swap, period by period: law A drives the PUMA's stack run (its
config/stack.puma560.yaml gains, the motion of its trajectory generator) on the simulated
plant; mid-motion law B takes over with ``reset(state, last_tau)``, as nodes/law_host.py does
(its integrals, estimates and filters start from the measured state, its first torque is A's
last one and the difference decays). Every ordered pair must keep the torque continuous, stay
clear of the plant's safety stop and rejection, and end within B's tracking bound.
"""

from __future__ import annotations

import numpy as np
import pytest

from robot_control.control.base import Reference, State
from robot_control.sim.matrix import OVERSPEED_FACTOR, joint_laws, law_row
from robot_control.sim.plant import Plant
from robot_control.sim.simulate import make_controller
from robot_control.sim.stack_scenario import stack_scenario

ROBOT = "puma560"  # six joints from 3 kg·m² to 4e-5 kg·m²: the hardest of the bundled robots
RATE = 500.0
T_SWAP = 0.3  # s of law A, mid-motion
T_END = 1.0  # B has 0.7 s to settle within its bound
LABELS = [row.label for row in joint_laws()]


def law_of(label: str):
    """The configured law of a matrix label on the robot's stack, and its scenario."""
    row = law_row(label)
    sc = stack_scenario(ROBOT, row.law, RATE, T_END, row.extra)
    return make_controller(sc), sc, row.bound


@pytest.fixture(scope="module")
def laws():
    return {label: law_of(label) for label in LABELS}


def run_swap(a, b, sc):
    """Torques, speeds and errors of a run that swaps from a to b at T_SWAP."""
    plant = Plant(sc.robot, sc.plant, sc.physics_dt)
    plant.reset(sc.q0, sc.qd0)
    a.reset()
    period, law, last = 1.0 / RATE, a, None
    taus, speeds, errors = [], [], []
    for k in range(int(round(T_END * RATE)) + 1):
        t = k * period
        q, qd = plant.measure()
        state = State(t, q, qd, wrench=plant.wrench.copy())
        if law is a and t >= T_SWAP:
            b.reset(state, last)  # what LawHost._take_over does on a swap
            law = b
        ref = Reference(*sc.trajectory.sample(t))
        last = law.update(t, state, ref)
        taus.append(last)
        errors.append(ref.q - q)
        plant.step(last, period)
        speeds.append(np.abs(plant.qd) / sc.robot.velocity_limit)
    return np.array(taus), np.array(speeds), np.array(errors)


@pytest.mark.parametrize("first", LABELS)
def test_every_swap_from_this_law_is_bumpless(first, laws):
    k_swap = int(round(T_SWAP * RATE))
    failures = []
    for second in LABELS:
        if second == first:
            continue
        (a, sc, _), (b, _, bound) = laws[first], laws[second]
        tau, speed, err = run_swap(a, b, sc)
        limit = sc.robot.effort_limit
        before = np.abs(np.diff(tau[:k_swap], axis=0)).max(axis=0)
        step = np.abs(tau[k_swap] - tau[k_swap - 1])
        after = np.abs(np.diff(tau[k_swap:], axis=0)).max(axis=0)
        settled = np.abs(err[-int(0.2 * RATE):]).max()
        if not np.all(np.isfinite(tau)):
            failures.append(f"{second}: non-finite torque")
        elif speed.max() > OVERSPEED_FACTOR:
            failures.append(f"{second}: safety stop ({speed.max():.3g}× a velocity limit)")
        elif np.any(step > before + 1e-9):
            # the swap's own period: no larger a step than A made on its own
            failures.append(f"{second}: torque jumped {step.max():.3g} at the swap")
        elif np.any(after > np.maximum(2 * before, 0.1 * limit)):
            # B corrects what A left (PD's 0.1 rad gravity sag) at its own bandwidth: brisk
            # steps, but under 10 % of the effort limit a period, no hold, no bang-bang
            failures.append(f"{second}: torque steps of {after.max():.3g} after the swap")
        elif settled > bound:
            failures.append(f"{second}: |e| {settled:.3g} > {bound:g} after the swap")
    assert not failures, f"{first} → " + "; ".join(failures)
