"""A managed node for the lifecycle tests, run in its own process on either bus backend.

``python test/lifecycle_probe.py [--ros-args …]`` runs the managed node ``/lc_probe``:
- every hook logs ``hook on_<x> from <state label>`` and returns SUCCESS, unless parameter
  ``fail_on`` names it (then FAILURE) or ``raise_on`` names it (then it raises: ERROR), or
  ``hang_on`` names it (then it never returns: the caller waits for a reply that never comes);
- a 50 Hz timer publishes a std_msgs/String counter on ``/lc_probe/out`` through a lifecycle
  publisher (so only while active);
- setting parameter ``fault`` to a non-empty reason calls ``node.fail(reason)``;
- logs "lifecycle probe ready" once everything exists.
"""

from __future__ import annotations

import sys
import threading

from robot_control.bus.backend import create_node
from robot_control.bus.lifecycle import HOOK_NAMES, CallbackReturn


def run_probe(argv: list[str]) -> None:
    node = create_node("lc_probe", argv, managed=True)
    log = node.get_logger()
    node.declare_parameter("fail_on", "", "hook that returns FAILURE ('' for none)")
    node.declare_parameter("raise_on", "", "hook that raises, i.e. ERROR ('' for none)")
    node.declare_parameter("hang_on", "", "hook that never returns ('' for none)")
    node.declare_parameter("fault", "", "a non-empty reason calls node.fail(reason)")
    out = node.create_lifecycle_publisher("std_msgs/msg/String", "~/out")
    String = node.msg("std_msgs/msg/String")
    ticks = [0]

    def tick() -> None:
        ticks[0] += 1
        out.publish(String(data=f"tick {ticks[0]}"))

    def hook(name: str):
        def run(previous) -> CallbackReturn:
            log.info(f"hook {name} from {previous.label}")
            if node.get_parameter("raise_on") == name:
                raise RuntimeError(f"{name} asked to raise")
            if node.get_parameter("hang_on") == name:
                threading.Event().wait(600)  # longer than any test: the test ends the process
            if node.get_parameter("fail_on") == name:
                return CallbackReturn.FAILURE
            return CallbackReturn.SUCCESS
        return run

    node.set_lifecycle_hooks(**{name: hook(name) for name in HOOK_NAMES})

    def on_change(new: dict, old: dict) -> None:
        if new.get("fault"):
            log.error(f"fault: {new['fault']}")
            node.fail(new["fault"])

    node.add_parameter_listener(on_change)
    node.create_timer(0.02, tick)
    log.info("lifecycle probe ready")
    node.spin()


if __name__ == "__main__":
    run_probe(sys.argv)
