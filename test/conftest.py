"""Suite-wide rules and the one fixture the control-law tests share (``ddarm``): tests marked
``ros2`` run against a sourced ROS 2 and are skipped, with the reason, anywhere else (the ROS 2
suite is ``bash scripts/test_ros2.sh``); and Ctrl-C works in the processes tests start, even when
this run was started in the background of a script; and the ``ros2`` daemons a module's CLI calls
started end with the module."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import domains
import pytest
from ros2_env import ros2_missing

from robot_control.model import load_robot


def pytest_configure(config) -> None:
    # A shell without job control starts background commands with SIGINT ignored, and that
    # survives exec: launchers (ros2 launch, robot-control launch, ros2 bag record) would then
    # not stop on the SIGINT the tests send them, as they do on Ctrl-C.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_modifyitems(config, items) -> None:
    reason = ros2_missing()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=reason)
    for item in items:
        if "ros2" in item.keywords:
            item.add_marker(skip)


def _ros2_daemons() -> dict[int, int]:
    """{pid: domain id} of the running ``ros2 daemon`` processes (one per domain the ros2 CLI was
    used on)."""
    found = {}
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            argv = (proc / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if any("ros2cli.daemon" in a for a in argv) and "--ros-domain-id" in argv:
            try:
                found[int(proc.name)] = int(argv[argv.index("--ros-domain-id") + 1])
            except (IndexError, ValueError):
                pass
    return found


@pytest.fixture(autouse=True, scope="module")
def _stop_ros2_daemons_of_the_module():
    """The ros2 CLI leaves a daemon per domain behind; a run of the ROS 2 suite would end with
    dozens, each waking on discovery traffic, while the real-time tests share the cores. Those
    a module started on this process's own domains (domains.claim) end with it."""
    if not Path("/proc").is_dir():
        yield
        return
    before = set(_ros2_daemons())
    yield
    for pid, domain in _ros2_daemons().items():
        if pid not in before and domain in domains.held():
            try:
                os.kill(pid, signal.SIGTERM)
            except OSError:
                pass


@pytest.fixture(scope="module")
def ddarm():
    """The bundled DDArm model, one per test module."""
    return load_robot("ddarm")
