"""Where the compiled kernels are cached: the user cache directory (XDG rules), NUMBA_CACHE_DIR
when set, and a read-only install that still caches (the second process loads, not compiles)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from robot_control.dynamics import compile_cache as cc

ROOT = Path(__file__).resolve().parents[1]


def test_user_cache_dir_follows_xdg_and_the_platforms():
    assert cc.user_cache_dir({"HOME": "/h"}, "linux") == Path("/h/.cache/robot_control")
    assert cc.user_cache_dir({"HOME": "/h", "XDG_CACHE_HOME": "/x"}, "linux") == \
        Path("/x/robot_control")
    # the XDG spec: a relative path is invalid and ignored
    assert cc.user_cache_dir({"HOME": "/h", "XDG_CACHE_HOME": "rel"}, "linux") == \
        Path("/h/.cache/robot_control")
    assert cc.user_cache_dir({"HOME": "/h"}, "darwin") == Path("/h/Library/Caches/robot_control")
    assert cc.user_cache_dir({"HOME": "/h", "LOCALAPPDATA": "C:/L"}, "win32") == \
        Path("C:/L/robot_control/Cache")


def test_numba_cache_dir_prefers_numba_cache_dir_and_needs_a_writable_place(tmp_path):
    assert cc.numba_cache_dir({"NUMBA_CACHE_DIR": "/given"}) == Path("/given")
    assert cc.numba_cache_dir({"HOME": str(tmp_path)}) == \
        tmp_path / ".cache/robot_control/numba" / cc.kernel_sources_key()
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        if os.access(locked, os.W_OK):
            pytest.skip("running as a user who can write anywhere (root)")
        assert cc.numba_cache_dir({"HOME": str(locked)}) is None
    finally:
        locked.chmod(stat.S_IRWXU)


PROBE = """
import time, numpy as np
from robot_control.dynamics import compile_cache
from robot_control.model import load_robot
from robot_control import dynamics as dyn
m = load_robot("one_axis")
t = time.perf_counter()
with compile_cache.compiling("rnea"):
    dyn.inverse_dynamics(m, np.zeros(1), np.zeros(1), np.zeros(1))
print(compile_cache.CACHE_DIR, time.perf_counter() - t)
"""


@pytest.mark.slow
def test_a_read_only_install_caches_in_the_user_cache_dir(tmp_path):
    install = tmp_path / "install"
    shutil.copytree(ROOT / "robot_control", install / "robot_control",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for share in ("config", "urdf"):
        shutil.copytree(ROOT / share, install / share)
    shutil.copy(ROOT / "package.xml", install)
    for path in [install, *install.rglob("*")]:
        path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(PYTHONPATH=str(install), XDG_CACHE_HOME=str(tmp_path / "cache"),
               PYTHONDONTWRITEBYTECODE="1")
    try:
        runs = [subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True,
                               text=True, timeout=240, cwd=tmp_path) for _ in range(2)]
    finally:
        for path in [install, *install.rglob("*")]:
            path.chmod(path.stat().st_mode | stat.S_IWUSR)
    for run in runs:
        assert run.returncode == 0, run.stderr
    where = [line.split()[0] for line in (r.stdout.strip() for r in runs)]
    # the folder of this install's kernel sources, in the user cache
    assert [str(Path(w).parent) for w in where] == [str(tmp_path / "cache/robot_control/numba")] * 2
    assert not list(install.rglob("*.nbi"))  # nothing written into the install
    cached = list((tmp_path / "cache/robot_control/numba").rglob("*.nbi"))
    assert any("rnea" in p.name for p in cached)
    first, second = (float(r.stdout.split()[1]) for r in runs)
    assert second < first  # loaded, not compiled again (figures in bench/loop.py, not here)


def test_a_changed_kernel_module_gets_a_fresh_cache_folder(tmp_path):
    """numba keys a cached kernel by its own file only; a kernel it calls in another file
    changing must not load the old compiled code: the folder follows every kernel module."""
    package = tmp_path / "pkg"
    for room in cc.KERNEL_ROOMS:
        (package / room).mkdir(parents=True)
        (package / room / "kernels.py").write_text("x = 1\n")
    (package / "cli").mkdir()
    before = cc.kernel_sources_key(package)
    (package / "cli" / "main.py").write_text("changed = True\n")  # not a kernel room
    assert cc.kernel_sources_key(package) == before
    (package / "sim" / "kernels.py").write_text("x = 2\n")
    assert cc.kernel_sources_key(package) != before


def test_cache_folders_unused_for_two_weeks_are_pruned(tmp_path):
    old, recent, keep = (tmp_path / name for name in ("old", "recent", "keep"))
    for folder in (old, recent, keep):
        folder.mkdir()
        (folder / "entry.nbi").write_text("")
    weeks_ago = time.time() - (cc.PRUNE_DAYS + 1) * 86400
    os.utime(old, (weeks_ago, weeks_ago))
    os.utime(keep, (weeks_ago, weeks_ago))
    cc.prune(tmp_path, keep=keep)
    assert not old.exists() and recent.exists() and keep.exists()


WHERE = """
import importlib, sys
import numba
first = importlib.import_module(sys.argv[1])  # before anything else of the package
from robot_control.dynamics import compile_cache
for name in sys.argv[2:]:
    for value in vars(importlib.import_module(name)).values():
        cached = getattr(getattr(value, "_cache", None), "_cache_path", None)
        if isinstance(value, numba.core.registry.CPUDispatcher) and cached:
            print(value.__module__, value.__name__, cached)
print("CACHE_DIR", compile_cache.CACHE_DIR)
"""


@pytest.mark.parametrize("first", ["robot_control.trajectory.limits",
                                   "robot_control.control.law_kernels",
                                   "robot_control.sim.plant_kernels",
                                   "robot_control.identification"])
def test_every_kernel_caches_in_the_user_cache_whatever_is_imported_first(tmp_path, first):
    """numba fixes a kernel's cache folder when it is defined: a room's kernels defined before
    compile_cache ran would be cached next to the sources instead (a second compile of the
    same kernel in another process, stale code after an edit of a kernel they call)."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(PYTHONPATH=str(ROOT), XDG_CACHE_HOME=str(tmp_path))
    modules = ["robot_control.trajectory.limits", "robot_control.trajectory.sampling",
               "robot_control.control.law_kernels", "robot_control.sim.plant_kernels"]
    run = subprocess.run([sys.executable, "-c", WHERE, first, *modules], env=env,
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    cache_dir = lines[-1].split()[1]
    assert cache_dir.startswith(str(tmp_path))
    kernels = [line.split() for line in lines[:-1]]
    assert {k[0] for k in kernels} >= set(modules)
    assert [k for k in kernels if not k[2].startswith(cache_dir)] == []
