"""The view process: its arguments (``robot-control view``, or a launch file's node with
``--ros-args``), the port check, the bus node and its spin thread, and the page's loop."""

from __future__ import annotations

import argparse
import errno
import os
import socket
import sys
import threading
from pathlib import Path

DEFAULT_PORT = 8080
DEFAULT_BIND = "127.0.0.1"
INSTALL_HINT = "pip install -e .[view]` or `bash scripts/setup.sh view"


class ViewError(RuntimeError):
    """Why the view cannot start, in one line."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--namespace", action="append", metavar="NS",
                        help="a stack's namespace to watch (repeat for several robots; default: "
                        "the root namespace, or the node's own with --ros-args __ns:=)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT,
                        help=f"the page's port (default {DEFAULT_PORT})")
    parser.add_argument("--bind", default=DEFAULT_BIND, metavar="ADDR",
                        help="address to serve on (default 127.0.0.1: this machine only; "
                        "0.0.0.0: the LAN)")
    parser.add_argument("--bag", metavar="DIR",
                        help="replay a rosbag2 recording instead of watching the bus")
    parser.add_argument("--window", type=float, default=10.0, metavar="S",
                        help="seconds of signals the plots show (default 10)")


def check_port(bind: str, port: int) -> None:
    """ViewError when the address cannot be served (viser would quietly take the next port)."""
    if not 0 < port < 65536:
        raise ViewError(f"--port {port}: not a TCP port (1–65535)")
    try:
        family = socket.AF_INET6 if ":" in bind else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((bind, port))
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise ViewError(f"port {port} on {bind} is in use (another view, or another "
                            f"server): choose another with --port") from None
        raise ViewError(f"cannot serve on {bind}:{port}: {exc.strerror or exc}") from None


def start_server(bind: str, port: int):
    """The viser server on exactly bind:port."""
    try:
        import viser
    except ModuleNotFoundError:
        raise ViewError(f"needs the viser package: `{INSTALL_HINT}`") from None
    from viser import infra

    from robot_control.model.resources import user_cache_dir
    from robot_control.view.client_page import PageError, page_root, serving_from

    check_port(bind, port)
    server = None
    try:  # viser's page with the view's script (client_page.py: why, and how)
        root = page_root(Path(viser.__file__).parent / "client" / "build",
                         user_cache_dir() / "view")
        with serving_from(infra, root):
            server = viser.ViserServer(host=bind, port=port, verbose=False)
    except PageError as exc:
        if server is not None:  # built, but serving viser's page without the script
            server.stop()
        raise ViewError(str(exc)) from None
    if server.get_port() != port:  # taken between the check and viser's bind
        server.stop()
        raise ViewError(f"port {port} on {bind} is in use: choose another with --port")
    server.gui.configure_theme(control_width="large", dark_mode=False, show_logo=False)
    # the panel beside the 3D view, not over it: a canvas a third narrower to draw, and no
    # panel to composite over it every frame (docs/view.md, "Cost")
    server.gui.main_panel.dock_right()
    server.scene.set_up_direction("+z")
    # no shadow pass and no environment map (image-based lighting samples it at every pixel):
    # the page stays smooth where WebGL is software (a laptop on battery, CI); plain lights
    server.scene.configure_default_lights(cast_shadow=False)
    server.scene.configure_environment_map(hdri=None)
    # the floor as thin lines, not viser's grid: the grid is a plane whose shader runs at every
    # pixel it covers (half the screen), the frame's largest cost in software WebGL; 2 px: at
    # the half pixel ratio of software WebGL (view/software_webgl.js) 1 px lines show dotted
    server.scene.add_line_segments("/ground", *floor_lines(4.0, 0.1, 0.5), thickness=2.0,
                                   thickness_units="screen")
    server.initial_camera.position = (1.0, -1.4, 0.9)
    server.initial_camera.look_at = (0.0, 0.0, 0.2)
    return server


def floor_lines(width: float, cell: float, section: float) -> tuple:
    """Line segments (N × 2 × 3) of a square floor grid centred at the origin, and their
    colours (N × 2 × 3): every ``cell`` metres light, every ``section`` metres darker."""
    import numpy as np

    n = int(round(width / cell))
    ticks = (np.arange(n + 1) - n / 2) * cell
    half = width / 2.0
    along_x = np.stack([np.stack([np.full_like(ticks, -half), ticks, np.zeros_like(ticks)], 1),
                        np.stack([np.full_like(ticks, half), ticks, np.zeros_like(ticks)], 1)], 1)
    points = np.concatenate([along_x, along_x[:, :, [1, 0, 2]]])
    on_section = np.isclose(np.remainder(np.concatenate([ticks, ticks]) + section / 2, section),
                            section / 2, atol=cell / 10)
    colors = np.where(on_section[:, None, None], np.uint8(140), np.uint8(205))
    return points.astype(np.float32), np.broadcast_to(colors, points.shape).astype(np.uint8)


def run(args: argparse.Namespace, ros_argv: list[str] | None = None) -> int:
    """Serve the page until Ctrl-C / SIGTERM; 1 with one line if it cannot start."""
    import signal

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    # a launch starts its processes with SIGINT / SIGTERM blocked until they can take them
    # (bringup/processes.py): this one can now
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    node = None
    try:
        server = start_server(args.bind, args.port)
        if args.bag:
            robots = _replayed(server, args)
        else:
            node, robots = _live(server, args, ros_argv or [], stop)
        url = f"http://{_shown_host(args.bind)}:{args.port}/"
        if node is not None:
            _heartbeat(node, server, url)
        print(f"robot-control view: {url}", flush=True)
        from robot_control.view.page import run_page

        # the heartbeat also goes out from the page's loop: the bus thread, busy with 1 kHz
        # joint states on a loaded machine, let the node's own timer fall 3 s behind
        run_page(server, robots, stop,
                 node.health.publish_if_due if node is not None else None)
    except ViewError as exc:
        print(f"robot-control view: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        if node is not None:
            node.spinner.join(2.0)
            node.shutdown()
    server.stop()
    return 0


def _shown_host(bind: str) -> str:
    return "localhost" if bind in ("127.0.0.1", "0.0.0.0", "::") else bind


def _heartbeat(node, server, url: str) -> None:
    """The view's status on /diagnostics, as every node of a stack has (a launch watches it)."""
    from robot_control.nodes.health import OK, NodeHealth

    node.health = NodeHealth(node, "view", lambda: (
        OK, f"serving {url}", {"pages_open": len(server.get_clients())}))


def _replayed(server, args) -> list:
    from robot_control.recording.bag import BagError
    from robot_control.view.page import ReplayedRobot
    from robot_control.view.replay import Recording

    robots = []
    for i, ns in enumerate(args.namespace or ["/"]):
        try:
            robots.append(ReplayedRobot(server, i, Recording(args.bag, ns, args.window)))
        except BagError as exc:
            server.stop()
            raise ViewError(str(exc)) from None
    return robots


def _live(server, args, ros_argv: list[str], stop: threading.Event):
    """The view's bus node, one watched namespace per --namespace, spun in a thread."""
    from robot_control.bus import create_node
    from robot_control.bus.ros_args import parse_ros_args
    from robot_control.view.commands import StackCommands
    from robot_control.view.frames import TfTree
    from robot_control.view.page import LiveRobot
    from robot_control.view.watch import StackWatch

    # a launch names its view (__node:=view); one started by hand is one of many on a domain,
    # and a second node of a name already there is what a launch refuses to start
    name = "view" if ros_argv else f"view_{os.getpid()}"
    node = create_node(name, [name, "--ros-args", *ros_argv] if ros_argv else [name])
    own = parse_ros_args(["--ros-args", *ros_argv]).namespace if ros_argv else None
    namespaces = args.namespace or [own or "/"]
    tf = TfTree(node)  # /tf and /tf_static are global: one subscription for every robot
    robots = []
    for i, ns in enumerate(namespaces):
        watch = StackWatch(node, ns, args.window, tf)
        robots.append(LiveRobot(server, i, watch, StackCommands(node, watch.namespace)))

    def spin() -> None:
        while not stop.is_set() and node.ok:
            node.spin_once(0.05)
    spinner = threading.Thread(target=spin, daemon=True, name="view-bus")
    spinner.start()
    node.spinner = spinner
    return node, robots


def main(argv: list[str] | None = None) -> int:
    """The launch files' ``robot_control_view`` executable: our arguments, then --ros-args."""
    argv = list(sys.argv[1:] if argv is None else argv)
    ros_argv: list[str] = []
    if "--ros-args" in argv:
        at = argv.index("--ros-args")
        argv, ros_argv = argv[:at], argv[at + 1:]
    parser = argparse.ArgumentParser(prog="robot_control_view")
    add_arguments(parser)
    return run(parser.parse_args(argv), ros_argv)


if __name__ == "__main__":
    sys.exit(main())
