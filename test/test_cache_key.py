"""The compile cache's key follows the compiled code's inputs only: the kernel sources' content,
not their stamps nor where the package sits (issue 36: a copy, an install or a checkout that
only touched the stamps must load what was compiled, not compile again)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from robot_control.dynamics import compile_cache as cc

ROOT = Path(__file__).resolve().parents[1]


def _package(where: Path) -> Path:
    package = where / "pkg"
    for room in cc.KERNEL_ROOMS:
        (package / room).mkdir(parents=True)
        (package / room / "kernels.py").write_text(f"room = {room!r}\n")
    return package


def test_the_key_ignores_stamps_and_place_and_follows_content(tmp_path):
    package = _package(tmp_path / "a")
    key = cc.kernel_sources_key(package)
    for path in package.rglob("*.py"):
        os.utime(path, (1_000_000_000, 1_000_000_000))  # a checkout touching every file
    assert cc.kernel_sources_key(package) == key
    copy = tmp_path / "b" / "pkg"
    shutil.copytree(package, copy)  # another place (an install, another clone)
    assert cc.kernel_sources_key(copy) == key
    (copy / "sim" / "kernels.py").write_text("room = 'changed'\n")
    assert cc.kernel_sources_key(copy) != key
    (copy / "sim" / "kernels.py").rename(copy / "sim" / "moved.py")  # same content, new module
    assert cc.kernel_sources_key(copy) not in (key, cc.kernel_sources_key(package))


def test_the_packages_modules_are_filed_under_their_path_in_the_package():
    assert cc.use_package_locator()
    here = cc.PackageCacheLocator.get_suitable_cache_subpath(cc.__file__)
    assert here == "robot_control/dynamics"
    assert cc.PackageCacheLocator.get_suitable_cache_subpath(__file__) != "robot_control/test"


PROBE = """
import numpy as np
from robot_control import dynamics as dyn
from robot_control.dynamics import compile_cache, kernels
from robot_control.model import load_robot
dyn.inverse_dynamics(load_robot("one_axis"), np.zeros(1), np.zeros(1), np.zeros(1))
stats = kernels.inverse_dynamics_kernel.stats
print(compile_cache.CACHE_DIR, sum(stats.cache_hits.values()), sum(stats.cache_misses.values()))
"""


@pytest.mark.slow
def test_a_copy_of_the_sources_elsewhere_with_new_stamps_loads_what_the_first_compiled(tmp_path):
    """Two copies of the package (a checkout and an install of it, say), their files stamped
    differently: the second process finds the first one's compiled kernel."""
    copies = []
    for name, stamp in (("checkout", 1_600_000_000), ("install", 1_700_000_000)):
        copy = tmp_path / name
        shutil.copytree(ROOT / "robot_control", copy / "robot_control",
                        ignore=shutil.ignore_patterns("__pycache__"))
        for share in ("config", "urdf"):
            shutil.copytree(ROOT / share, copy / share)
        shutil.copy(ROOT / "package.xml", copy)
        for path in copy.rglob("*"):
            os.utime(path, (stamp, stamp))
        copies.append(copy)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(XDG_CACHE_HOME=str(tmp_path / "cache"), PYTHONDONTWRITEBYTECODE="1")
    runs = [subprocess.run([sys.executable, "-c", PROBE], env={**env, "PYTHONPATH": str(copy)},
                           capture_output=True, text=True, timeout=240, cwd=tmp_path)
            for copy in copies]
    for run in runs:
        assert run.returncode == 0, run.stderr
    (first_dir, first_hits, first_misses), (second_dir, second_hits, second_misses) = (
        run.stdout.split() for run in runs)
    assert first_dir == second_dir  # one folder: the same kernel sources
    assert (first_hits, first_misses) == ("0", "1")  # compiled
    assert (second_hits, second_misses) == ("1", "0")  # loaded
