"""Bumpless swaps: reset(state, last_tau) makes the new law's first torque the old law's last."""

from __future__ import annotations

import numpy as np
import pytest
from test_control_sim import Q0, QF, quintic, simulate

from robot_control.control import Reference, State, create


def test_first_torque_after_reset_equals_last_tau_then_decays(ddarm):
    law = create("computed_torque")
    law.configure(ddarm, {"bumpless_time_constant": 0.02})
    state = State(0.0, Q0, np.zeros(3))
    ref = Reference(Q0 + 0.1)
    law.reset(state)
    own = law.update(1.0, state, ref)
    last = own + np.array([30.0, -20.0, 5.0])
    law.reset(state, last)
    assert np.allclose(law.update(1.0, state, ref), last)
    assert law.diagnostics()["bumpless_offset"] == pytest.approx(np.linalg.norm(last - own))
    # same state and reference: the difference decays as exp(−t/T)
    for dt in (0.01, 0.02, 0.05):
        tau = law.update(1.0 + dt, state, ref)
        assert np.allclose(tau - own, (last - own) * np.exp(-dt / 0.02), atol=1e-12)
    law.update(2.0, state, ref)
    assert law.diagnostics()["bumpless_offset"] == 0.0
    law.set_parameters({"bumpless_time_constant": 0.0})  # 0: no blending at all
    law.reset(state, last)
    assert np.allclose(law.update(3.0, state, ref), own)


class _Swapper:
    """Runs law A, and at t_swap hands over to law B with reset(state, last_tau)."""

    def __init__(self, a, b, t_swap: float) -> None:
        self.a, self.b, self.t_swap, self.active, self.last = a, b, t_swap, a, None

    def reset(self, state) -> None:
        self.a.reset(state)
        self.active = self.a

    def update(self, t, state, ref):
        if self.active is self.a and t >= self.t_swap:
            self.b.reset(state, self.last)
            self.active = self.b
        self.last = self.active.update(t, state, ref)
        return self.last


@pytest.mark.parametrize("target", ["computed_torque", "adaptive", "sliding_mode", "robust"])
def test_swapping_laws_mid_run_keeps_the_torque_bounded(ddarm, target):
    a = create("pd_gravity")
    a.configure(ddarm, {"kp": [400.0, 80.0, 50.0], "kd": [100.0, 20.0, 10.0]})
    b = create(target)
    b.configure(ddarm, {"bumpless_time_constant": 0.05})
    run = simulate(ddarm, _Swapper(a, b, 0.7), quintic(Q0, QF, 1.5), Q0, duration=1.2)
    k = 700
    step = np.abs(np.diff(run.tau, axis=0))
    before = step[k - 50 : k - 1].max(axis=0)
    assert np.all(step[k - 1] <= 2.0 * before + 1e-6)  # no jump at the swap itself
    assert np.all(step[k:].max(axis=0) <= 5.0 * before + 1.0)  # and none after it
    assert np.abs(run.error[-1]).max() < np.abs(run.error[k]).max()  # B then tracks better
