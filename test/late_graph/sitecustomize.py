"""Fault injection for test_late_graph.py: in the process that runs the node named by
``RC_LATE_GRAPH_NODE`` (its ``__node:=`` remap), this participant's ros_discovery_info goes out
``RC_LATE_GRAPH_S`` late — the controller's commands then reach the plant before the ROS graph
names their publisher, as authenticated discovery or a loaded machine makes them."""

import os
from pathlib import Path

_node = os.environ.get("RC_LATE_GRAPH_NODE")
if _node:
    _argv = Path("/proc/self/cmdline").read_bytes().split(b"\0")
    if f"__node:={_node}".encode() in _argv:
        from robot_control.bus.dds import context

        context.ANNOUNCE_DELAY_S = float(os.environ["RC_LATE_GRAPH_S"])
