"""The launcher's side of the fork server (bringup/fork_server.py): start it, ask it for node
processes, and watch them through handles that behave as ``subprocess.Popen``'s for
bringup/processes.py (``pid``, ``poll``, ``send_signal``, ``wait``, ``stdout``).

The server's children are not the launcher's, so their exit statuses come from the server, which
reaps them. ``ROBOT_CONTROL_FORK_NODES=0`` starts every node as a fresh interpreter instead (a
tool that must see each node start from scratch: a ``sitecustomize`` hook, ``PYTHON*`` settings
of one node, a profiler); so does a node whose launch-file variables (``set_env``) differ from those
the server was started with (a module may read them at import).
"""

from __future__ import annotations

import os
import queue
import socket
import subprocess
import sys
import threading
import time
from collections import Counter

from robot_control.bringup.fork_server import receive_message, send_message
from robot_control.bringup.runner import GATED, LaunchPlan, NodeLaunch, node_module

#: set to 0 to start every node as a fresh interpreter
FORK_ENV = "ROBOT_CONTROL_FORK_NODES"
#: how long the launcher waits for the server's imports before it starts fresh interpreters (s)
READY_TIMEOUT_S = 60.0
#: the status of a node whose server ended before it could report (the node got SIGTERM)
SERVER_LOST = 255


def forking_enabled(env: dict[str, str]) -> bool:
    return env.get(FORK_ENV, "1").strip() not in ("0", "false", "no")


class ForkServer:
    """A running fork server with the given node modules imported."""

    def __init__(self, modules: list[str], env: dict[str, str],
                 node_env: dict[str, str] | None = None) -> None:
        self.node_env = node_env or {}  # the launch file's variables of the nodes it serves
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "robot_control.bringup.fork_server",
                 str(theirs.fileno()), *modules],
                env=env, stdin=subprocess.DEVNULL, pass_fds=(theirs.fileno(),),
                start_new_session=True)
        finally:
            theirs.close()
        self.refusal: str | None = None  # None until the server said whether it serves
        self.pids: queue.Queue[int] = queue.Queue()
        self.exits: dict[int, int] = {}
        self.lost = False  # the server ended: no more statuses will come
        self.changed = threading.Condition()
        self.send_lock = threading.Lock()
        self.reader: threading.Thread | None = None

    def serves(self, node: NodeLaunch) -> bool:
        """Whether ``node`` may be forked here: the server imported with its environment."""
        return node.env == self.node_env

    def usable(self, timeout: float = READY_TIMEOUT_S) -> str:
        """'' once the server is ready to fork; otherwise why it is not (then it is closed)."""
        if self.refusal is None:
            self.sock.settimeout(timeout)
            try:
                received = receive_message(self.sock)
            except (OSError, ValueError) as exc:
                received = None
                self.refusal = f"the fork server did not answer: {exc}"
            self.sock.settimeout(None)
            if received is None:
                self.refusal = self.refusal or "the fork server ended before it was ready"
            else:
                message, _ = received
                self.refusal = "" if message.get("ready") else str(message.get("reason"))
            if self.refusal:
                self.close()
            else:
                self.reader = threading.Thread(target=self._read, daemon=True,
                                               name="fork-server-reader")
                self.reader.start()
        return self.refusal

    def start(self, module: str, argv: list[str], env: dict[str, str], output: int,
              gate: tuple[str, int] | None = None) -> ForkedProcess:
        """A forked node process running ``python -m module *argv`` with ``env``, its output to
        the pipe end ``output``; ``gate``: (the variable naming it, its read end)."""
        if why := self.usable():
            raise OSError(why)
        fds = [output] + ([gate[1]] if gate else [])
        request = {"module": module, "argv": argv, "env": env, "gate": gate[0] if gate else ""}
        with self.send_lock:
            send_message(self.sock, request, fds)
            try:
                pid = self.pids.get(timeout=READY_TIMEOUT_S)
            except queue.Empty:
                raise OSError("the fork server did not start the node") from None
        if pid <= 0:
            raise OSError("the fork server ended")
        return ForkedProcess(self, pid)

    def _read(self) -> None:
        while True:
            try:
                received = receive_message(self.sock)
            except (OSError, ValueError):
                received = None
            if received is None:
                break
            message, _ = received
            if "pid" in message:
                self.pids.put(int(message["pid"]))
            elif "exit" in message:
                with self.changed:
                    self.exits[int(message["exit"])] = int(message["code"])
                    self.changed.notify_all()
        self.pids.put(-1)
        with self.changed:
            self.lost = True  # every node it has not reported: gone
            self.changed.notify_all()

    def exit_code(self, pid: int) -> int | None:
        with self.changed:
            return self.exits.get(pid, SERVER_LOST if self.lost else None)

    def wait(self, pid: int, timeout: float | None) -> int | None:
        deadline = None if timeout is None else time.monotonic() + timeout
        with self.changed:
            while (code := self.exit_code(pid)) is None:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return None
                self.changed.wait(left)
            return code

    def close(self, timeout: float = 5.0) -> None:
        """Close the socket (the server ends; a child still running gets SIGTERM) and reap it."""
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.reader is not None:
            self.reader.join(timeout)


class ForkedProcess:
    """A node process the fork server started, with the part of Popen's interface the launcher
    uses."""

    def __init__(self, server: ForkServer, pid: int) -> None:
        self.server = server
        self.pid = pid
        self.stdout = None  # set by the launcher: the read end of the output pipe

    def poll(self) -> int | None:
        return self.server.exit_code(self.pid)

    def wait(self, timeout: float | None = None) -> int:
        code = self.server.wait(self.pid, timeout)
        if code is None:
            raise subprocess.TimeoutExpired(f"pid {self.pid}", timeout)
        return code

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)


def start_fork_server(plan: LaunchPlan, env: dict[str, str]) -> ForkServer | None:
    """A fork server for the plan's nodes that may be forked (None: forking is off, or no such
    node), started with their environment; it imports while the launcher goes on. Nodes whose
    own variables (``set_env``) differ from the most common ones are not forked (a module may
    read a variable at import): ``ForkServer.serves`` tells."""
    gated = [node for node in plan.nodes if node.executable in GATED]
    if not gated or not forking_enabled(env):
        return None
    counts = Counter(tuple(sorted(node.env.items())) for node in gated)
    common = dict(counts.most_common(1)[0][0])
    modules = sorted({node_module(node) for node in gated if node.env == common})
    return ForkServer(modules, {**env, **common}, common)
