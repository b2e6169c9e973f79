"""The socket receive buffer every node of the package asks Cyclone DDS for, on both routes.

A large message overflows Cyclone's default receive buffer on a loaded machine: a 250 000-point
goal is a 12 MB request, about 9000 UDP fragments, and each lost fragment is resent only at the
writer's next heartbeat (100 ms). Measured with ``bench/goal_caps_rclpy.py --servers screened``
(2 cores, four busy loops beside it, 2026-11-29): the oversized goal's refusal reached the client
190–630 ms after it was sent with Cyclone's default, 13–23 ms with a 4 MB buffer (the server's
own take: 0.3–4 ms either way).

The request is a maximum, not a minimum: the kernel grants up to ``net.core.rmem_max`` and
Cyclone takes what it gets, silently (a minimum it cannot get would stop the node). The user's
own ``CYCLONEDDS_URI`` comes after it, and Cyclone lets a later part override an earlier one, so
a deployment that sets ``SocketReceiveBufferSize`` itself keeps its value.
"""

from __future__ import annotations

import os

#: the fragment the package puts before the user's CYCLONEDDS_URI
RECEIVE_BUFFER_FRAGMENT = ('<CycloneDDS><Domain><Internal><SocketReceiveBufferSize max="4MB"/>'
                           '</Internal></Domain></CycloneDDS>')


def with_receive_buffer(cyclonedds_uri: str) -> str:
    """``CYCLONEDDS_URI`` with the package's receive-buffer request before the user's parts."""
    if RECEIVE_BUFFER_FRAGMENT in cyclonedds_uri:
        return cyclonedds_uri
    return RECEIVE_BUFFER_FRAGMENT + ("," + cyclonedds_uri if cyclonedds_uri else "")


def ask_for_receive_buffer() -> None:
    """This process's rmw_cyclonedds domain (made after this call) asks for the buffer too."""
    os.environ["CYCLONEDDS_URI"] = with_receive_buffer(os.environ.get("CYCLONEDDS_URI", ""))
