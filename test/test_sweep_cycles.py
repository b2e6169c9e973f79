"""The trajectory generator's looping sweep reaches the controller cycle by cycle, also when the
generator's process stalls across a cycle's start (real DDS, the node in this process).

Each cycle goes out on the controller's motion topic, stamped with its start, shortly before it
starts. A stall past a cycle's start used to skip that cycle: the generator's own reference went
on into it while the controller held the previous cycle's end, and the next goal, starting from
the generator's reference, was dropped by the controller as a jump (seen on the composed stack
with a browser view open)."""

from __future__ import annotations

import time

import numpy as np
import pytest

pytestmark = pytest.mark.timeout(120)

Q0 = [0.0, 0.5, -0.5]  # DDArm, within its limits


def test_a_cycle_whose_start_a_stalled_generator_missed_is_sent_late_with_its_own_stamp():
    from bus_probe import isolated_bus_env
    from node_harness import managed, shut, spin

    from robot_control.bus.backend import create_node
    from robot_control.nodes.convert import TRAJECTORY_TOPIC, Messages, stamp_ns
    from robot_control.nodes.trajectory_node import TrajectoryNode

    with isolated_bus_env("sweep-cycles"):
        node, gen = managed(TrajectoryNode, "trajectory_generator", "robot:=ddarm",
                            "default_motion:=sweep", "loop:=true", "segment_duration:=0.4")
        probe = create_node("probe", ["prog"], backend="dds")
        states = probe.create_publisher("sensor_msgs/msg/JointState", "/joint_states")
        sent: list[int] = []
        probe.create_subscription("trajectory_msgs/msg/JointTrajectory", "/" + TRAJECTORY_TOPIC,
                                  lambda msg: sent.append(stamp_ns(msg.header.stamp)),
                                  qos="transient_local")
        m = Messages(probe)
        try:
            assert spin([node, probe], 10.0, until=lambda: states.get_subscription_count() > 0)
            states.publish(m.joint_state(time.time_ns(), ["joint1", "joint2", "joint3"], Q0,
                                         [0.0] * 3))
            assert spin([node, probe], 10.0, until=lambda: gen.trajectory is not None and sent)
            assert gen.looping and gen.cycle_ns > 0
            first, cycle = gen.start_ns, gen.cycle_ns
            lookahead = 2e9 * gen._monitor_period() + 50e6
            assert cycle > lookahead + 0.3e9, "the cycle must outlast the lookahead for this test"
            # the generator stalls: no tick from before the second cycle's start until after it
            time.sleep(max(0.0, (first + cycle - time.time_ns()) / 1e9) + 0.15)
            spin([node, probe], 0.5, until=lambda: first + cycle in sent)
            assert first + cycle in sent, f"cycles sent {[(s - first) / 1e9 for s in sent]}"
            # and the generator's reference is that cycle's, as the controller's will be
            assert gen.start_ns == first + cycle
            assert sent.count(first + cycle) == 1 and np.all(np.diff(sent) > 0)
        finally:
            shut(probe, node)
