"""Every law with a compiled kernel (a ``KIND``): its kernel and its ``compute`` give the same bits.

The registry's own list, not a hand-kept one: a law that declares a ``KIND`` is held to it here,
on random states and references (joint and Cartesian, a sensed wrench), with the law's default
parameters on the PUMA 560 (six joints: every task-space law's pose task is square). The
scenario-level comparisons (whole runs, tuned parameters, recoveries) are in
test_simulate_compiled*.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_simulate_compiled_task import random_reference

from robot_control.control import State
from robot_control.control import compiled as C
from robot_control.control.registry import builtin, create
from robot_control.model import load_robot

# slow (scripts/test.sh --slow): every law compiled and compared (a tenth of the default, measured)
pytestmark = pytest.mark.slow

COMPILED = [name for name, cls in builtin().items() if cls.KIND is not None]


def test_every_kind_of_the_kernel_is_one_laws():
    kinds = [builtin()[name].KIND for name in COMPILED]
    assert len(kinds) == len(set(kinds))
    assert set(kinds) == set(C._IMPLEMENTATIONS)


@pytest.mark.parametrize("name", COMPILED)
def test_the_kernel_of_every_compiled_law_equals_its_compute(name):
    model = load_robot("puma560")
    python_law, spec_law = create(name), create(name)
    python_law.configure(model)
    spec_law.configure(model)
    spec = spec_law.compiled()
    assert spec is not None and spec.kind == type(spec_law).KIND
    rng = np.random.default_rng(7)
    n, tau = model.nq, np.empty(model.nq)
    for k in range(12):
        t = 0.001 * k
        q, qd, wrench = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n), rng.uniform(-5, 5, 6)
        ref = random_reference(rng, model, k % 2 == 1)
        expected = python_law.update(t, State(t, q, qd, wrench=wrench), ref)
        C.task_inputs(spec.task, ref, wrench)
        assert C.law_update(spec.kind, spec.arrays, t, q, qd, ref.q, ref.qd, ref.qdd, tau)
        assert np.array_equal(tau, expected), f"{name} at step {k}"
