"""Suite-wide rules: tests marked ``ros2`` run against a sourced ROS 2 and are skipped, with the
reason, anywhere else (the ROS 2 suite is ``bash scripts/test_ros2.sh``); and Ctrl-C works in the
processes tests start, even when this run was started in the background of a script."""

from __future__ import annotations

import signal

import pytest
from ros2_env import ros2_missing


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
