"""The launcher's go-ahead: a node process started by ``robot-control launch`` imports its modules
while the launcher checks the domain, and joins the bus only once the launcher says go.

The rclpy-free launcher refuses to start a node whose name is already on the domain, which takes at
least a second of discovery; the nodes' imports (or its fork server's, bringup/fork_server.py) take
about as long. So it starts the node processes first, each with the read end of a pipe named by
``ROBOT_CONTROL_START_GATE``, and writes one byte to each pipe once the check passed (nothing,
and closes it, when it refused or was stopped: the node then ends quietly). A node started any
other way (``ros2 launch``, by hand) has no gate and goes at once.
"""

from __future__ import annotations

#: the environment variable naming the gate's file descriptor
GATE_ENV = "ROBOT_CONTROL_START_GATE"
#: the byte that says go
GO = b"1"
#: how long a node waits for the launcher's answer before it gives up, s
GATE_TIMEOUT_S = 120.0


class GateTimeout(RuntimeError):
    """The launcher gave no answer in time."""


def wait_for_go(stop) -> bool:
    """Whether this node may join the bus: True without a gate or once the launcher's go came;
    False when the launcher closed the gate without it, or ``stop.requested`` (a Ctrl-C);
    GateTimeout after GATE_TIMEOUT_S without an answer."""
    import os
    import select
    import time

    value = os.environ.pop(GATE_ENV, "")  # not for the processes this node starts
    if not value:
        return True
    fd = int(value)
    deadline = time.monotonic() + GATE_TIMEOUT_S
    try:
        while not stop.requested:
            left = deadline - time.monotonic()
            if left <= 0:
                raise GateTimeout(f"the launcher did not let it start within {GATE_TIMEOUT_S:g} s")
            if select.select([fd], [], [], min(0.1, left))[0]:
                return os.read(fd, 1) == GO
        return False
    finally:
        os.close(fd)


def start_refused(stop, label: str) -> int | None:
    """What a starting node ends with before it joins the bus — 0 when stopped or told no, 2 with
    its one line when the launcher never answered — or None: it may start."""
    import sys

    try:
        return 0 if stop.requested or not wait_for_go(stop) else None
    except GateTimeout as exc:
        print(f"[ERROR] [{label}]: cannot start: {exc}", file=sys.stderr, flush=True)
        return 2
