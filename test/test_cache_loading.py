"""Loading cached kernels without numba's refresh, runtime compile and bitcode parse
(dynamics.cache_loading): the loaded code computes what it computed when compiled, a later
compile still links against it, and code that needs the runtime's library still gets it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from robot_control.dynamics import cache_loading as cl

# slow (scripts/test.sh --slow): cold compiles (an empty compile cache) in fresh processes
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]

KERNELS = textwrap.dedent('''
    import numpy as np
    from numba import njit

    @njit(cache=True, _nrt=False)
    def scaled_sum(x, k):
        s = 0.0
        for v in x:
            s += k * v
        return s

    @njit(cache=True)
    def cumulative(x):
        return np.cumsum(x)  # allocates: compiled with the runtime

    @njit(cache=True)
    def depth(n):
        return 0 if n == 0 else 1 + depth(n - 1)  # recursive: a stub in the runtime's library
''')

PROBE = textwrap.dedent('''
    import sys
    import numpy as np
    import robot_control.dynamics.compile_cache as cc
    from numba import njit
    from numba.core.runtime import rtsys
    import kernels
    assert cc.FAST_CACHE_LOAD
    x = np.arange(1.0, 5.0)
    print("sum", kernels.scaled_sum(x, 2.0), rtsys._init)

    @njit
    def caller(x):  # compiled here, linking against the cached scaled_sum
        return kernels.scaled_sum(x, 3.0) + 1.0

    if sys.argv[1] == "link":
        print("link", caller(x))
    elif sys.argv[1] == "alloc":
        print("alloc", kernels.cumulative(x).tolist())
    else:
        print("depth", kernels.depth(7))
''')


def run_probe(tmp_path: Path, what: str) -> str:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]))
    run = subprocess.run([sys.executable, "-c", PROBE, what], env=env, capture_output=True,
                         text=True, timeout=240, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    return run.stdout


@pytest.fixture
def kernels(tmp_path):
    (tmp_path / "kernels.py").write_text(KERNELS)
    for what in ("link", "alloc", "depth"):  # compile and cache each kernel once
        run_probe(tmp_path, what)
    assert len(list((tmp_path / "cache").rglob("*.nbc"))) == 3
    return tmp_path


def test_a_cached_nrt_free_kernel_loads_without_the_runtime_library_and_links_later(kernels):
    out = run_probe(kernels, "link").split("\n")
    assert out[0] == "sum 20.0 False"  # computed, and rtsys never compiled its library
    assert out[1] == "link 31.0"  # a new compile linked against the lazily parsed bitcode


def test_cached_kernels_that_allocate_or_recurse_still_run(kernels):
    assert "alloc [1.0, 3.0, 6.0, 10.0]" in run_probe(kernels, "alloc")
    assert "depth 7" in run_probe(kernels, "depth")


def test_elf_symbols_are_read_from_a_cached_object_and_other_formats_are_left_to_numba(
        kernels, monkeypatch):
    import pickle

    monkeypatch.syspath_prepend(str(kernels))  # the pickled environment names its module
    (cached,) = (kernels / "cache").rglob("kernels.scaled_sum*.nbc")
    libdata, fndesc = pickle.loads(cached.read_bytes())[:2]
    name, kind, (object_code, _bitcode) = libdata
    assert kind == "object"
    defined, undefined = cl.elf_symbols(object_code)
    assert fndesc.llvm_cpython_wrapper_name in defined  # what the engine is told it defines
    assert not cl.needs_runtime_library(undefined)
    assert cl.needs_runtime_library({".numba.unresolved$f"})
    assert cl.elf_symbols(b"\xcf\xfa\xed\xfe" + bytes(60)) is None  # Mach-O: numba's own path
