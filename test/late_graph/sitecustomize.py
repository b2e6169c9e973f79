"""Fault injection for test_late_graph.py: in the process that runs the node named by
``RC_LATE_GRAPH_NODE`` (its ``__node:=`` remap), the ROS graph (ros_discovery_info) names its
entities ``RC_LATE_GRAPH_S`` late — as authenticated discovery or a loaded machine makes them.
``RC_LATE_GRAPH_SINCE``: ``creation`` delays every announcement of the graph (the lockstep
plant waits for it before its first state); ``command`` names the writer of ``joint_command``
only that long after its first command, so that however long the bring-up before that command,
the commands reach the plant before the graph names their publisher."""

import os
from pathlib import Path

_node = os.environ.get("RC_LATE_GRAPH_NODE")
if _node:
    _argv = Path("/proc/self/cmdline").read_bytes().split(b"\0")
    if f"__node:={_node}".encode() in _argv and os.environ.get("RC_LATE_GRAPH_SINCE") == "creation":
        from robot_control.bus.dds import context

        context.ANNOUNCE_DELAY_S = float(os.environ["RC_LATE_GRAPH_S"])
    elif f"__node:={_node}".encode() in _argv:
        import threading
        import time

        from robot_control.bus.dds import context, node

        _late_s = float(os.environ["RC_LATE_GRAPH_S"])
        _hidden: set = set()  # GIDs of the command writers the graph does not name yet
        _named_after: list = []  # monotonic time from which the graph names them
        _entities_info = context.DdsContext.entities_info
        _init = node.DdsPublisher.__init__
        _publish = node.DdsPublisher.publish

        def _late_entities_info(self):
            info = _entities_info(self)
            if not _named_after or time.monotonic() < _named_after[0]:
                for entry in info.node_entities_info_seq:
                    entry.writer_gid_seq = [g for g in entry.writer_gid_seq
                                            if bytes(g.data) not in _hidden]
            return info

        def _late_init(self, *args, **kwargs):
            _init(self, *args, **kwargs)
            if self.topic_name.endswith("joint_command"):
                _hidden.add(bytes(self.gid))

        def _late_publish(self, msg):
            if bytes(self.gid) in _hidden and not _named_after:
                _named_after.append(time.monotonic() + _late_s)
                ctx = context._context
                if ctx is not None:  # the announcement that names the writer
                    timer = threading.Timer(_late_s + 0.01, ctx._publish_graph)
                    timer.daemon = True
                    timer.start()
            _publish(self, msg)

        context.DdsContext.entities_info = _late_entities_info
        node.DdsPublisher.__init__ = _late_init
        node.DdsPublisher.publish = _late_publish
