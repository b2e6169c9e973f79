"""The launcher's fork server (bringup/fork_server.py, bringup/node_forks.py): a node it forks is
the process ``python -m MODULE`` would have been — own session, output on its pipe, SIGINT and
SIGTERM held, the node's environment and argv, its exit status reported — and ends when the
server does; ``robot-control launch`` forks its nodes from it unless told not to."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest
from launch_run import Stack, stack_env

from robot_control.bringup.fork_server import fork_refusal
from robot_control.bringup.node_forks import FORK_ENV, SERVER_LOST, ForkServer, start_fork_server
from robot_control.bringup.runner import load_launch_file

#: a node module for the server: prints what its process looks like, then ends as argv says
PROBE = '''
import json, os, signal, sys, time

def main():
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    gate = os.environ.get("PROBE_GATE_VAR")
    print(json.dumps({
        "pid": os.getpid(), "sid": os.getsid(0), "argv": sys.argv,
        "probe_value": os.environ.get("PROBE_VALUE"),
        "blocked": sorted(int(s) for s in blocked),
        "stdin": os.readlink("/proc/self/fd/0"),
        "comm": open("/proc/self/comm").read().strip(),
        "gate": os.read(int(os.environ[gate]), 1).decode() if gate else None,
        "numpy_draw": __import__("numpy").random.random(),
    }), flush=True)
    print("to stderr", file=sys.stderr, flush=True)
    if "--wait" in sys.argv:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM])
        time.sleep(60)
    return int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 0
'''


@pytest.fixture
def server(tmp_path):
    (tmp_path / "fork_probe.py").write_text(PROBE)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get(
        "PYTHONPATH", "")]), "ROBOT_CONTROL_BUS": "dds"}
    forks = ForkServer(["fork_probe"], env)
    yield forks, env
    forks.close()


def start_probe(forks: ForkServer, env: dict[str, str], *argv: str, gate: bytes | None = None):
    read_end, write_end = os.pipe()
    gate_pipe = os.pipe() if gate is not None else None
    try:
        proc = forks.start("fork_probe", list(argv), {**env, "PROBE_VALUE": "seen",
                                                        "PROBE_GATE_VAR": "GATE" if gate_pipe
                                                        else ""},
                           write_end, ("GATE", gate_pipe[0]) if gate_pipe else None)
    finally:
        os.close(write_end)
        if gate_pipe:
            os.close(gate_pipe[0])
    if gate_pipe:
        os.write(gate_pipe[1], gate)
        os.close(gate_pipe[1])
    return proc, os.fdopen(read_end, "rb")


@pytest.mark.timeout(60)
def test_a_forked_node_is_the_process_python_m_would_start(server):
    forks, env = server
    assert forks.usable() == ""
    proc, out = start_probe(forks, env, "3", "--ros-args", gate=b"1")
    assert proc.wait(30) == 3
    lines = out.read().decode().splitlines()
    seen = json.loads(lines[0])
    assert lines[1] == "to stderr"  # stdout and stderr on the node's one pipe
    assert seen["pid"] == proc.pid and seen["sid"] == proc.pid  # own session, as the launcher's
    assert Path(seen["argv"][0]).name == "fork_probe.py"
    assert seen["argv"][1:] == ["3", "--ros-args"]
    assert seen["probe_value"] == "seen"  # the node's environment, not the server's
    assert {signal.SIGINT, signal.SIGTERM} <= set(seen["blocked"])  # held until run_node
    assert seen["stdin"] == os.devnull
    assert seen["comm"] == "fork_probe"  # what top and ps -e show
    assert seen["gate"] == "1"  # the start gate's read end, named by the variable


@pytest.mark.timeout(60)
def test_each_child_draws_its_own_random_numbers(server):
    forks, env = server
    draws = []
    for _ in range(2):
        proc, out = start_probe(forks, env)
        assert proc.wait(30) == 0
        draws.append(json.loads(out.read().decode().splitlines()[0])["numpy_draw"])
    assert draws[0] != draws[1]  # numpy's global generator is reseeded after the fork


@pytest.mark.timeout(60)
def test_a_signal_ends_it_with_the_signal_status(server):
    forks, env = server
    proc, out = start_probe(forks, env, "--wait")
    out.readline()
    assert proc.poll() is None
    proc.send_signal(signal.SIGKILL)
    assert proc.wait(30) == -signal.SIGKILL


@pytest.mark.timeout(60)
def test_its_nodes_end_when_the_server_ends(server):
    forks, env = server
    proc, out = start_probe(forks, env, "--wait")
    out.readline()
    forks.proc.kill()  # as if the launcher's fork server crashed
    assert proc.wait(30) == SERVER_LOST  # nobody is left to report its status: never "ok"
    deadline = time.monotonic() + 20
    while _alive(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(proc.pid)  # SIGTERM from its parent's death


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_server_with_python_threads_refuses_to_fork():
    assert fork_refusal() == ""
    stop = threading.Event()
    worker = threading.Thread(target=stop.wait, name="a-worker")
    worker.start()
    try:
        assert "a-worker" in fork_refusal()
    finally:
        stop.set()
        worker.join()


def test_only_nodes_with_the_servers_environment_are_forked(tmp_path):
    launch = tmp_path / "two.launch.yaml"
    launch.write_text("""launch:
- set_env: {name: COMMON, value: "1"}
- node: {pkg: robot_control, exec: plant, name: plant}
- node: {pkg: robot_control, exec: controller, name: controller}
- set_env: {name: ONLY_THE_LAST, value: "1"}
- node: {pkg: robot_control, exec: lifecycle_manager, name: lifecycle_manager}
""")
    plan = load_launch_file(launch, {})
    forks = start_fork_server(plan, {**os.environ, FORK_ENV: "1"})
    try:
        assert [forks.serves(node) for node in plan.nodes] == [True, True, False]
    finally:
        forks.close()
    assert start_fork_server(plan, {**os.environ, FORK_ENV: "0"}) is None


def _cmdline(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")


@pytest.mark.slow  # a stack's start and stop, twice
@pytest.mark.timeout(180)
@pytest.mark.parametrize("forking", ["1", "0"])
def test_robot_control_launch_forks_its_nodes_unless_told_not_to(forking):
    stack = Stack({**stack_env(f"node-forks-{forking}"), FORK_ENV: forking},
                  "--duration", "60")
    try:
        assert stack.wait_for("stack active", 90), "\n".join(stack.lines)
        pids = stack.node_pids()
        assert set(pids) >= {"plant", "controller", "lifecycle_manager"}
        commands = {label: _cmdline(pid) for label, pid in pids.items()}
    finally:
        code = stack.stop()
    assert code == 0, "\n".join(stack.lines[-40:])
    for label, argv in commands.items():
        forked = "robot_control.bringup.fork_server" in argv
        assert forked == (forking == "1"), (label, argv)
    assert stack.summary()["nodes"]["plant"]["exit"] == 0  # reported by the server when forked
    assert not any("fresh interpreter" in line for line in stack.lines)


@pytest.mark.timeout(60)
def test_the_server_reports_a_failed_import_and_the_launch_goes_on(tmp_path):
    env = {**os.environ, "ROBOT_CONTROL_BUS": "dds"}
    forks = ForkServer(["no_such_module_here"], env)
    try:
        why = forks.usable()
    finally:
        forks.close()
    assert "could not import" in why and "no_such_module_here" in why
    assert sys.modules.get("no_such_module_here") is None
