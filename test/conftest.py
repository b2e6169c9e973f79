"""Suite-wide rule: tests marked ``ros2`` run against a sourced ROS 2 and are skipped, with the
reason, anywhere else (the ROS 2 suite is ``bash scripts/test_ros2.sh``)."""

from __future__ import annotations

import pytest
from ros2_env import ros2_missing


def pytest_collection_modifyitems(config, items) -> None:
    reason = ros2_missing()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=reason)
    for item in items:
        if "ros2" in item.keywords:
            item.add_marker(skip)
