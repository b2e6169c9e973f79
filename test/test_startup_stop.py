"""Ctrl-C in the last moment of a node's start (nodes/startup_stop.py): after run_node looked at
``requested`` and before the node's spin put its own handlers in place, the signal still reaches
the start-up handler. It must end the spin: a node that spun on would be a process that ignored
Ctrl-C (seen once: a plant executable still running 120 s after its SIGINT). Each case runs in a
process of its own, a real node on a private ROS domain, the signal sent to itself at that moment.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import domains
import pytest

pytestmark = pytest.mark.timeout(120)

#: a node made, the start-up handler installed and handed over, SIGINT at the moment named by
#: WHEN ("before": since the caller last looked, before hand_over; "after": after hand_over,
#: before spin), then spin: it must return, and the process end with 0
SCRIPT = textwrap.dedent("""
    import os, signal, sys, time
    from robot_control.nodes.startup_stop import StartupStop
    from robot_control.bus import create_node
    when = sys.argv[1]
    stop = StartupStop.install()
    node = create_node("startup_stop_probe", ["probe"], managed=True)
    if when == "before":
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.2)  # the handler runs: requested, as after run_node's last look
    stop.hand_over()
    if when == "after":
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.2)
    started = time.monotonic()
    node.spin()
    print(f"spin returned after {time.monotonic() - started:.2f} s", flush=True)
""")


def spin_after_a_late_signal(backend: str, when: str) -> None:
    """SCRIPT on ``backend``: the spin returns, the process ends with 0 and no traceback."""
    domain = domains.claim(f"startup-stop-{when}")
    try:
        env = {**os.environ, "ROS_DOMAIN_ID": str(domain), "ROBOT_CONTROL_BUS": backend}
        try:
            got = subprocess.run([sys.executable, "-c", SCRIPT, when], env=env,
                                 capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired as exc:
            pytest.fail(f"the node spun on after SIGINT ({when} hand_over): {exc.stdout!r}")
    finally:
        domains.release(domain)
    assert got.returncode == 0, got.stderr[-2000:]
    assert "spin returned" in got.stdout, got.stdout + got.stderr[-2000:]
    assert "Traceback" not in got.stderr, got.stderr[-2000:]


@pytest.mark.parametrize("when", ["before", "after"])
def test_a_signal_before_the_nodes_own_handlers_ends_its_spin(when) -> None:
    spin_after_a_late_signal("dds", when)
