"""numba's inliner with the scope copied once (dynamics/inline_copy.py) compiles the same code:
the LLVM IR of kernels compiled in fresh processes with and without it is identical."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from robot_control.dynamics import compile_cache, inline_copy

#: compile the named kernels (numba's own inliner with "numba" as argv[1]); print each one's
#: LLVM IR and the result of its call as JSON
PROBE = textwrap.dedent("""
    import json, sys
    import numpy as np
    from numba import njit
    from numba.extending import overload
    from robot_control.dynamics import inline_copy
    if sys.argv[1] == "numba":
        inline_copy.uninstall()

    @njit(inline="always")
    def clamp_sum(x, lo, hi):
        s = 0.0
        for i in range(x.shape[0]):
            v = x[i]
            if v < lo:
                v = lo
            elif v > hi:
                v = hi
            s += v
        return s

    def twice(x):
        pass

    @overload(twice, inline="always")
    def _twice(x):
        def impl(x):
            out = 0.0
            for i in range(x.shape[0]):
                out += 2.0 * x[i] if x[i] > 0.0 else x[i]
            return out
        return impl

    @njit
    def synthetic(x):
        return clamp_sum(x, -0.5, 0.5) + clamp_sum(x, -1.0, 2.0) + twice(x) + twice(x[1:])

    def run(name):
        x = np.linspace(-2.0, 2.0, 7)
        if name == "synthetic":
            return synthetic, (x,)
        from robot_control.model import load_robot
        from robot_control.sim import plant_kernels as PK
        from robot_control.sim.engine import make_plant
        from robot_control.dynamics import kernels as K
        model = load_robot("ddarm")
        plant = make_plant(model, None, 0.001)
        n, D = model.nq, plant.data.D
        q, qd, tau = np.full(n, 0.2), np.full(n, 0.3), np.full(n, 0.5)
        if name == "hold_rk4":
            return PK.hold_rk4, (D, plant._J, plant._S, plant._X, None, None, 0.0, 3,
                                 q, qd, np.zeros(n), tau)
        return K.gravity_kernel, (D, q, tau)

    out = {}
    for name in sys.argv[2:]:
        kernel, args = run(name)
        result = kernel(*args)
        arrays = [a.tolist() for a in args if isinstance(a, np.ndarray) and a.ndim == 1]
        out[name] = {"llvm": kernel.inspect_llvm(kernel.signatures[0]),
                     "result": [None if result is None else float(result), arrays]}
    print(json.dumps(out))
""")


def compiled(inliner: str, kernels: list[str], tmp_path) -> dict:
    """The kernels compiled in a fresh process with an empty cache folder of its own."""
    cache = tmp_path / inliner
    cache.mkdir()
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    run = subprocess.run([sys.executable, "-c", PROBE, inliner, *kernels], env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_installed_at_import():
    from numba.core import inline_closurecall

    assert compile_cache.FAST_INLINE_COPY
    assert inline_closurecall.copy is inline_copy.SCOPE_SHARING_COPY


def test_blocks_of_one_copy_share_one_scope_copy_and_nothing_else():
    """copy_ir's copies: one scope copy for all blocks of one copy, a new one for the next copy
    (also of the same IR: numba's overload inlining copies a cached IR at every call site)."""
    from numba.core import inline_closurecall, ir

    scope = ir.Scope(None, ir.Loc("f", 1))
    x = scope.define("x", ir.Loc("f", 1))
    blocks = {}
    for label in range(3):
        block = ir.Block(scope, ir.Loc("f", label))
        block.append(ir.Assign(ir.Const(label, block.loc), x, block.loc))
        blocks[label] = block

    def copy_ir(blocks):  # the shape of numba's: kernel_copy is the IR being filled
        kernel_copy = type("IR", (), {})()
        kernel_copy.blocks = {}
        for label, block in blocks.items():
            kernel_copy.blocks[label] = inline_closurecall.copy.deepcopy(block)
        return kernel_copy

    first, second = copy_ir(blocks), copy_ir(blocks)
    for made in (first, second):
        scopes = {id(b.scope) for b in made.blocks.values()}
        assert len(scopes) == 1 and id(scope) not in scopes
        targets = [b.body[0].target for b in made.blocks.values()]
        assert len({id(t) for t in targets}) == 3  # the statements are copied per block
        assert all(t.scope is made.blocks[0].scope and t is not x for t in targets)
    assert first.blocks[0].scope is not second.blocks[0].scope
    assert inline_closurecall.copy.deepcopy([1, [2]]) == [1, [2]]  # anything else: copy's


def test_same_llvm_ir_synthetic_inlines(tmp_path):
    """Two inline="always" calls of a function with branches and a loop, and two inlined
    overload implementations (numba's typed inliner copies one cached IR for both)."""
    ours = compiled("shared", ["synthetic"], tmp_path)
    theirs = compiled("numba", ["synthetic"], tmp_path)
    assert ours["synthetic"]["llvm"] == theirs["synthetic"]["llvm"]
    assert ours["synthetic"]["result"] == theirs["synthetic"]["result"]


@pytest.mark.slow
def test_same_llvm_ir_plant_hold_and_gravity(tmp_path):
    """The plant's RK4 hold (the articulated-body algorithm's inlined helpers) and gravity: the
    same LLVM IR and the same state after three steps, bit for bit."""
    kernels = ["gravity", "hold_rk4"]
    ours = compiled("shared", kernels, tmp_path)
    theirs = compiled("numba", kernels, tmp_path)
    for name in kernels:
        assert ours[name]["llvm"] == theirs[name]["llvm"], name
        assert ours[name]["result"] == theirs[name]["result"], name
