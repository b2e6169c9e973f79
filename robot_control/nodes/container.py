"""The ``robot_control_container`` executable: nodes of this package composed into one process.

    robot_control_container [NODE …] [--ros-args …]

NODE names the executables to compose (default: the whole stack, controller, plant,
trajectory_generator, dynamics_server and lifecycle_manager). As in a ROS 2 component container
every node stays a node of its own — its name, parameters, parameter and lifecycle services,
/diagnostics heartbeat — and all of them run on one executor, in one thread. ``--ros-args``
apply to every node unless prefixed with a node's name (``-p plant:initial_q:=[0.0, 1.0, 0.5]``,
``-r controller:__ns:=/arm``), as rcl reads them; do not give an unprefixed ``__node:=``, which
renames every node of the process.

On Cyclone DDS (no ROS 2 sourced) the nodes hand each other their messages by reference
(robot_control.bus.dds.intra_process) and publish to DDS only what a reader in another process
subscribes to; with rclpy they share one SingleThreadedExecutor. The subscriptions are made in
the order of the NODE list, and same-process messages are delivered in that order: the
controller comes first so that it answers the plant's state before anyone else reads it.

The exit status is the highest of the nodes' (the lifecycle_manager's 1 when the bring-up
failed); 2 when a node cannot start.
"""

from __future__ import annotations

import importlib
import signal
import sys
from dataclasses import dataclass

from robot_control.nodes.common import StartupStop, announce_compiles, autostart, install_hooks
from robot_control.nodes.start_gate import start_refused


@dataclass(frozen=True)
class Component:
    """A node this container can make: its module, logic class and whether it is managed."""

    module: str
    logic: str
    managed: bool = True

    def logic_class(self) -> type:
        return getattr(importlib.import_module(self.module), self.logic)


COMPONENTS = {
    "controller": Component("robot_control.nodes.controller_node", "ControllerNode"),
    "plant": Component("robot_control.nodes.plant_node", "PlantNode"),
    "trajectory_generator": Component("robot_control.nodes.trajectory_node", "TrajectoryNode"),
    "dynamics_server": Component("robot_control.nodes.dynamics_server_node",
                                 "DynamicsServerNode"),
    "lifecycle_manager": Component("robot_control.nodes.lifecycle_manager", "LifecycleManager",
                                   managed=False),
}
DEFAULT_NODES = tuple(COMPONENTS)


def component_names(own_args: list[str]) -> list[str]:
    """The nodes to compose, from the arguments before --ros-args; ValueError for unknown ones
    or a node named twice."""
    names = list(own_args) or list(DEFAULT_NODES)
    unknown = [n for n in names if n not in COMPONENTS]
    if unknown:
        raise ValueError(f"unknown node(s) {unknown}; this container makes "
                         f"{', '.join(COMPONENTS)}")
    if len(set(names)) != len(names):
        raise ValueError(f"a node is named twice in {names}")
    return names


class ContainerLog:
    """The container's own lines (not one node's): on stderr, as its start-up errors."""

    @staticmethod
    def info(line: str) -> None:
        print(f"[INFO] [robot_control_container]: {line}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    from robot_control.bus import ParameterError, create_container

    argv = sys.argv if argv is None else argv
    own = argv[1:argv.index("--ros-args")] if "--ros-args" in argv else argv[1:]
    if "-h" in own or "--help" in own:
        print(f"usage: robot_control_container [NODE ...] [--ros-args ...]\n\n{__doc__.strip()}")
        return 0
    try:
        names = component_names(own)
    except ValueError as exc:
        print(f"[ERROR] [robot_control_container]: {exc}", file=sys.stderr, flush=True)
        return 2
    stop = StartupStop.install()
    if (refused := start_refused(stop, "robot_control_container")) is not None:
        return refused
    try:
        container = create_container(argv)
    except ValueError as exc:
        print(f"[ERROR] [robot_control_container]: cannot start: {exc}", file=sys.stderr,
              flush=True)
        return 2
    announce_compiles(ContainerLog())
    logics = []
    for name in names:
        if stop.requested:
            break
        component = COMPONENTS[name]
        try:
            node = container.create_node(name, managed=component.managed)
            logic = component.logic_class()(node)
        except (ValueError, ParameterError) as exc:
            print(f"[ERROR] [{name}]: cannot start: {exc}", file=sys.stderr, flush=True)
            container.shutdown()
            return 2
        if component.managed:
            install_hooks(node, logic)
        logics.append((node, logic, component.managed))
    started = not stop.requested and all(autostart(node) for node, _, managed in logics
                                         if managed)
    if not started:
        container.shutdown()
        return 0 if stop.requested else 2
    stop.hand_over()
    container.spin()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as run_node: a second Ctrl-C while exiting
    return max((getattr(logic, "exit_code", 0) for _, logic, _ in logics), default=0)


if __name__ == "__main__":
    sys.exit(main())
