"""``robot-control view``: watch and tune running stacks (or replay a recording) in a browser.

    robot-control view                          # the stack in the root namespace, localhost:8080
    robot-control view --namespace arm1 --namespace arm2 --port 8090
    robot-control view --bind 0.0.0.0           # reachable from the LAN
    robot-control view --bag live               # a recording, with a time slider

The page (robot_control/view) is served by this process with viser, which ships its web client:
no CDN, nothing fetched from the internet. Without viser installed: one line saying how.
"""

from __future__ import annotations

import argparse

from robot_control.view.app import add_arguments as add_arguments
from robot_control.view.app import run as _run


def run(args: argparse.Namespace) -> int:
    return _run(args)
