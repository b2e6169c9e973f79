"""The node processes of ``robot-control launch``: start one per planned node (own session,
signals held until the node can take them), copy its output line by line with its prefix, and
stop them all (SIGINT, then SIGTERM, then SIGKILL). What to start is launch_runner.py's plan."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from typing import IO

from robot_control.bringup.child_process import die_with_parent, hold_stop_signals
from robot_control.bringup.node_forks import ForkedProcess, ForkServer
from robot_control.bringup.runner import NodeLaunch, node_command, node_module
from robot_control.nodes.start_gate import GATE_ENV, GO


class LineWriter:
    """Whole lines from several threads onto one stream, each with its node's prefix."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.lock = threading.Lock()

    def write(self, label: str, line: str) -> None:
        with self.lock:
            self.stream.write(f"[{label}] {line}\n")
            self.stream.flush()


class NodeProcess:
    """One node's process and the thread copying its output, line by line, with a prefix: forked
    by the fork server when one is given and the node may be (bringup/node_forks.py), else a
    fresh interpreter."""

    def __init__(self, node: NodeLaunch, env: dict[str, str], out: LineWriter,
                 gated: bool = False, forks: ForkServer | None = None) -> None:
        self.node = node
        self.command = node_command(node)
        self.gate: int | None = None  # the write end of its start gate (nodes/start_gate.py)
        env = {**env, **node.env}
        read_end = None
        if gated:
            read_end, self.gate = os.pipe()
        try:
            if forks is not None and forks.serves(node):
                self.proc = self._fork(forks, env, read_end)
            else:
                self.proc = self._spawn(env, read_end)
        except BaseException:
            self.release(go=False)
            raise
        finally:
            if read_end is not None:
                os.close(read_end)
        self.reader = threading.Thread(target=self._copy, args=(out,), daemon=True,
                                       name=f"output-{node.label}")
        self.reader.start()

    def _spawn(self, env: dict[str, str], gate: int | None) -> subprocess.Popen:
        if gate is not None:
            env = {**env, GATE_ENV: str(gate)}
        # Own session: a terminal's Ctrl-C reaches the runner only, which stops nodes in order.
        return subprocess.Popen(self.command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, env=env,
                                pass_fds=() if gate is None else (gate,),
                                start_new_session=True, preexec_fn=_child_setup)

    def _fork(self, forks: ForkServer, env: dict[str, str], gate: int | None) -> ForkedProcess:
        read_end, write_end = os.pipe()
        try:
            proc = forks.start(node_module(self.node), self.command[3:], env, write_end,
                               None if gate is None else (GATE_ENV, gate))
        except BaseException:
            os.close(read_end)
            raise
        finally:
            os.close(write_end)
        proc.stdout = os.fdopen(read_end, "rb")
        return proc

    def _copy(self, out: LineWriter) -> None:
        for raw in iter(self.proc.stdout.readline, b""):
            out.write(self.node.label, raw.decode(errors="replace").rstrip("\n"))
        self.proc.stdout.close()

    def release(self, go: bool) -> None:
        """Open its start gate (go) or close it without (the node ends quietly); once."""
        if self.gate is None:
            return
        try:
            if go:
                os.write(self.gate, GO)
        except OSError:  # it has ended already
            pass
        finally:
            os.close(self.gate)
            self.gate = None

    @property
    def returncode(self) -> int | None:
        return self.proc.poll()

    def signal(self, sig: int) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(sig)
            except ProcessLookupError:
                pass


def _child_setup() -> None:
    """In the fresh interpreter's child, before exec: its start (bringup/child_process.py)."""
    hold_stop_signals()
    die_with_parent()


def stop_processes(procs: list[NodeProcess], sigint_timeout: float = 5.0,
                   sigterm_timeout: float = 3.0, log: Callable[[str], None] = print) -> None:
    """SIGINT every node, then SIGTERM the ones still running, then SIGKILL (a node still at
    its start gate is told no first)."""
    for p in procs:
        p.release(go=False)
    for sig, timeout in ((signal.SIGINT, sigint_timeout), (signal.SIGTERM, sigterm_timeout),
                         (signal.SIGKILL, 5.0)):
        alive = [p for p in procs if p.returncode is None]
        if not alive:
            break
        if sig != signal.SIGINT:
            log(f"{', '.join(p.node.label for p in alive)} still running: "
                f"sending {signal.Signals(sig).name}")
        for p in alive:
            p.signal(sig)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and any(p.returncode is None for p in alive):
            time.sleep(0.02)
    for p in procs:
        p.reader.join(timeout=2.0)


def child_environment() -> dict[str, str]:
    """The runner's environment for the nodes, with unbuffered output so lines come promptly."""
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def describe_exit(returncode: int) -> str:
    if returncode < 0:
        return f"killed by {signal.Signals(-returncode).name}"
    return f"exit code {returncode}"


#: how a node may end once asked to stop (our nodes return 0 on SIGINT / SIGTERM); SIGKILL is not
STOPPED_CODES = (0, -signal.SIGINT, -signal.SIGTERM, 128 + signal.SIGINT, 128 + signal.SIGTERM)
