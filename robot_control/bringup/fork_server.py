"""The process ``robot-control launch`` forks its node processes from: the nodes' modules and
numba's compiler imported and set up once, instead of once per node.

A cold start of the rclpy-free stack runs five Python processes on a two-core machine; each spent
about 0.35 s of CPU importing the package, numpy, numba and the bus, and each node that compiles
0.3–0.4 s more on numba's first compile in its process (the typing and target contexts, LLVM's
target machine), while the plant's step compiler, the chain that ends the start, needed a core. So
the launcher starts this process first (``python -m robot_control.bringup.fork_server FD MODULE
…``): it imports the node modules, the bus backend the nodes will choose and numba's compiler,
says ``ready`` on the socket FD, and then forks one child per request. A child becomes the node
``python -m MODULE ARGS`` would have been — its own session, its output on the pipe it was
given, SIGINT and SIGTERM blocked until its node takes them, SIGTERM when this process dies, the
node's environment and ``sys.argv`` — and runs the module's ``main``; its exit status goes back to
the launcher (bringup/node_forks.py).

Fork is safe here because this process has one Python thread when it forks (it checks, and
refuses the requests otherwise: the launcher then starts fresh interpreters); OpenBLAS's worker
threads, which numpy starts, are shut down and restarted by OpenBLAS's own fork handlers.

Protocol (a Unix stream socket, each message a 4-byte length and a JSON object): this process
sends ``{"ready": true}`` or ``{"ready": false, "reason": …}`` once; the launcher sends
``{"module", "argv", "env", "gate"}`` with the node's output pipe (and its start gate's read end
when ``gate``) as SCM_RIGHTS, answered ``{"pid": N}``; for each child that ends, ``{"exit": N,
"code": C}`` (C as subprocess's returncode: negative for a signal). It ends when the launcher
closes the socket.
"""

from __future__ import annotations

import importlib
import json
import os
import select
import signal
import socket
import struct
import sys
from collections.abc import Callable

from robot_control.bringup.child_process import die_with_parent, hold_stop_signals, name_process

#: how many file descriptors a request carries at most (the output pipe, the start gate)
MAX_FDS = 2
_LENGTH = struct.Struct("!I")


def send_message(sock: socket.socket, message: dict, fds: list[int] = ()) -> None:
    """One length-prefixed JSON message, with ``fds`` passed along (SCM_RIGHTS)."""
    data = json.dumps(message).encode()
    frame = _LENGTH.pack(len(data)) + data
    if fds:
        socket.send_fds(sock, [frame], list(fds))
    else:
        sock.sendall(frame)


def receive_message(sock: socket.socket) -> tuple[dict, list[int]] | None:
    """The next message and the descriptors that came with it; None when the peer closed."""
    head, fds = _receive(sock, _LENGTH.size, MAX_FDS)
    if len(head) < _LENGTH.size:
        return None
    (length,) = _LENGTH.unpack(head)
    body, more = _receive(sock, length, 0)
    if len(body) < length:
        return None
    return json.loads(body), fds + more


def _receive(sock: socket.socket, size: int, max_fds: int) -> tuple[bytes, list[int]]:
    data, fds = b"", []
    while len(data) < size:
        if max_fds and not fds:
            chunk, got, _, _ = socket.recv_fds(sock, size - len(data), max_fds)
            fds += got
        else:
            chunk = sock.recv(size - len(data))
        if not chunk:
            break
        data += chunk
    return data, fds


def preload(modules: list[str]) -> None:
    """Import the node modules and the bus backend their nodes will choose, and compile one
    throw-away kernel (numba's once-per-process set-up; not cached, so nothing is written)."""
    for module in modules:
        importlib.import_module(module)
    from robot_control.bus.backend import choose_backend

    if choose_backend() == "dds":
        importlib.import_module("robot_control.bus.dds.node")
        importlib.import_module("robot_control.bus.dds.container")
    else:
        importlib.import_module("robot_control.bus.ros.node")
    import numba

    numba.njit(lambda x: x + 1)(1)


def fork_refusal() -> str:
    """Why this process may not fork a node now ('' when it may)."""
    import threading

    if threading.active_count() > 1:
        names = ", ".join(t.name for t in threading.enumerate())
        return f"the fork server runs Python threads ({names}): a fork would copy their locks"
    return ""


def serve(sock: socket.socket) -> tuple[str, list[str]] | None:
    """Answer requests until the launcher closes the socket (None: this process ends), or, in a
    forked child, the node to run: (module, argv)."""
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    previous = signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_write)
    children: set[int] = set()
    server = os.getpid()
    try:
        while True:
            ready = select.select([sock, wake_read], [], [])[0]
            if wake_read in ready:
                os.read(wake_read, 512)
                _report_exits(sock, children)
            if sock not in ready:
                continue
            try:
                received = receive_message(sock)
            except OSError:  # the launcher is gone
                received = None
            if received is None:
                return None
            request, fds = received
            pid = os.fork()
            if pid == 0:
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, previous)
                for fd in (wake_read, wake_write):
                    os.close(fd)
                sock.close()
                children.clear()  # the launcher's children are not this node's
                return become_node(request, fds, server)
            children.add(pid)
            for fd in fds:
                os.close(fd)
            try:
                send_message(sock, {"pid": pid})
            except OSError:  # the launcher is gone: this process ends, its children with it
                return None
    finally:
        if children:
            _report_exits(sock, children)


def _report_exits(sock: socket.socket, children: set[int]) -> None:
    for pid in list(children):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            children.discard(pid)
            try:
                send_message(sock, {"exit": pid, "code": os.waitstatus_to_exitcode(status)})
            except OSError:  # the launcher is gone: nobody to tell
                pass


def become_node(request: dict, fds: list[int], server: int) -> tuple[str, list[str]]:
    """In the forked child: the process a fresh ``python -m MODULE`` of the launcher would be
    (session, output, signals, environment, argv); (module, argv) to run."""
    os.setsid()  # as start_new_session: a terminal's Ctrl-C reaches the launcher only
    die_with_parent()
    if os.getppid() != server:  # the server ended before the line above: no SIGTERM will come
        os._exit(0)
    name_process(request["module"].rsplit(".", 1)[-1])
    output = fds[0]
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(output, 1)
    os.dup2(output, 2)
    os.close(null)
    os.close(output)
    env = dict(request["env"])
    if request.get("gate"):
        env[request["gate"]] = str(fds[1])
    os.environ.clear()
    os.environ.update(env)
    _reseed_numpy()
    return request["module"], list(request["argv"])


def _reseed_numpy() -> None:
    # numpy's global generator is copied by fork (Python's random module reseeds itself)
    np = sys.modules.get("numpy")
    if np is not None:
        np.random.seed()


def run_module_main(module: str, argv: list[str]) -> int:
    """Run a node module's ``main`` as ``python -m module`` would, with ``argv`` as sys.argv."""
    mod = importlib.import_module(module)
    sys.argv = [mod.__file__ or module, *argv]
    main: Callable[[], int] = mod.main
    return main()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    sock = socket.socket(fileno=int(argv[0]))
    # the launcher's SIGINT / SIGTERM stop the nodes; this process ends when its socket closes
    # (and its children inherit the mask: held until their node takes them)
    hold_stop_signals()
    try:
        preload(argv[1:])
        refusal = fork_refusal()
    except Exception as exc:  # noqa: BLE001 - any failure to preload: the launcher starts fresh
        refusal = f"the fork server could not import the nodes' modules: {exc}"
    try:
        send_message(sock, {"ready": not refusal, "reason": refusal})
    except OSError:  # the launcher is gone already
        return 0
    if refusal:
        return 0
    job = serve(sock)
    if job is None:
        return 0
    return run_module_main(*job)


if __name__ == "__main__":
    sys.exit(main())
