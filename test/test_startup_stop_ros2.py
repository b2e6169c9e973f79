"""test_startup_stop.py's late Ctrl-C on the rclpy route: rclpy's own handlers are in place from
its init on and pass the signal on to the start-up handler; the node released by a shutdown before
its spin then spins no more. Run by ``bash scripts/test_ros2.sh``."""

from __future__ import annotations

import pytest
from test_startup_stop import spin_after_a_late_signal

pytestmark = [pytest.mark.ros2, pytest.mark.timeout(120)]


@pytest.mark.parametrize("when", ["before", "after"])
def test_a_signal_before_the_nodes_own_handlers_ends_its_spin_on_rclpy(when) -> None:
    spin_after_a_late_signal("rclpy", when)
