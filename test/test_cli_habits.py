"""The ros2 command-line habits of ``robot-control`` (what a ros2 CLI user expects), with real processes on a
private domain: ``topic hz`` reports a running rate every second; ``action list|info|send_goal``
see the trajectory generator's action as ``ros2 action`` does, ``send_goal`` says "Goal
accepted" before any feedback and a rejection with the server's reason."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from stack_helpers import Stack, private_domain

from robot_control.bus.dds.client import BusClient

PUBLISHER = Path(__file__).resolve().parent / "bag_publisher.py"
ACTION = "/trajectory_generator/follow_joint_trajectory"
TYPE = "control_msgs/action/FollowJointTrajectory"
COMMON = ["rate:=250.0"]


class Lines:
    """A process whose stdout lines are kept with the monotonic time each arrived."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.lines: list[tuple[float, str]] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append((time.monotonic(), line.rstrip("\n")))

    def wait_for(self, text: str, timeout_s: float) -> float | None:
        """When a line holding text came (None if not within timeout_s)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            hit = next((t for t, line in self.lines if text in line), None)
            if hit is not None:
                return hit
            time.sleep(0.05)
        return None

    def finish(self, timeout_s: float = 30.0) -> tuple[int, str]:
        """Wait timeout_s for the exit (0: kill it now); (exit code, stderr)."""
        try:
            self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            if timeout_s:
                raise
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
        self.reader.join(5.0)
        return self.proc.returncode, self.proc.stderr.read()


def past_interpreter_start(pid: int, timeout_s: float) -> bool:
    """Whether process ``pid`` ran into its program within ``timeout_s``: numpy's compiled core
    is mapped, which ``robot-control`` loads inside its Ctrl-C handling (CPython dies of a SIGINT
    during its own start-up, exit −2 with no output, whatever a program does; its SIGINT handler
    is installed before that start-up is done, seconds into it on a loaded machine)."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        try:
            if "_multiarray_umath" in Path(f"/proc/{pid}/maps").read_text():
                return True
        except OSError:
            return False
        time.sleep(0.005)
    return False


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "robot_control.cli", *args]


def test_topic_hz_reports_a_running_rate_every_second_until_ctrl_c():
    env = private_domain(151)
    hz = Lines(cli("topic", "hz", "/joint_states", "--timeout", "30"), env)
    # it publishes once hz has subscribed (hz's own start-up, seconds on a loaded machine, is
    # not what this measures)
    publisher = Lines([sys.executable, str(PUBLISHER), "--count", "2000", "--rate", "200",
                       "--subscribers", "1", "--awaited", "/joint_states"], env)
    try:
        started = publisher.wait_for("publishing", 60)
        assert started is not None, publisher.lines
        first = hz.wait_for("average rate", 30)
        assert first is not None, hz.lines
        assert first - started < 2.5  # a report a second after the first message
        def reports() -> list[tuple[float, str]]:
            return [(t, line) for t, line in hz.lines if line.startswith("average rate")]

        deadline = time.monotonic() + 10.0  # three more reports, about a second apart
        while len(reports()) < 4 and time.monotonic() < deadline:
            time.sleep(0.1)
        reports = reports()
        assert len(reports) >= 4, hz.lines
        gaps = [b[0] - a[0] for a, b in zip(reports, reports[1:])]
        # one a second (a loaded machine may delay one, the next comes on time)
        assert 0.7 < sum(gaps) / len(gaps) < 1.5 and max(gaps) < 3.0, gaps
        rate = float(reports[-1][1].split(":")[1])
        assert 150 < rate < 250, reports[-1]
        assert any(line.startswith("\tmin: ") and "window:" in line for _, line in hz.lines)
        hz.proc.send_signal(2)
        code, err = hz.finish()
        assert code == 0 and "Traceback" not in err, err
    finally:
        publisher.finish(0)
        if hz.proc.poll() is None:
            hz.proc.kill()


def test_topic_hz_with_a_duration_ends_by_itself_and_says_when_the_topic_falls_silent():
    env = private_domain(152)
    hz = Lines(cli("topic", "hz", "/joint_states", "--duration", "8", "--timeout", "30"), env)
    publisher = Lines([sys.executable, str(PUBLISHER), "--count", "600", "--rate", "200",
                       "--subscribers", "0"], env)
    try:
        code, err = hz.finish(60)
        assert code == 0, err
        text = [line for _, line in hz.lines]
        assert any(line.startswith("average rate") for line in text), text
        # 600 messages at 200 Hz last 3 s: then ros2's "no new messages"
        assert "no new messages" in text, text
    finally:
        publisher.finish(0)


@pytest.fixture(scope="module")
def action_stack():
    env = private_domain(153)
    nodes = {"plant": [*COMMON, "initial_q:=[-0.1, 1.5, 1.0]"], "controller": COMMON,
             "trajectory_generator": [*COMMON, "default_motion:=hold"]}
    with pytest.MonkeyPatch.context() as mp, Stack(env, nodes) as stack:
        for key in ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE"):  # for this process' client
            mp.setenv(key, env[key])
        client = BusClient(discovery_s=0.5)
        deadline = time.monotonic() + 120
        while not client.graph.publications(ACTION + "/_action/status"):
            assert time.monotonic() < deadline, stack.stop()
            client.graph.update()
            time.sleep(0.1)
        assert client.topic_echo("/joint_command", timeout_s=120), stack.stop()
        client.close()
        yield env


def test_action_list_and_info_show_the_generators_action(action_stack):
    listed = subprocess.run(cli("action", "list", "-t"), env=action_stack, capture_output=True,
                            text=True, timeout=60)
    assert listed.returncode == 0, listed.stderr
    assert f"{ACTION} [{TYPE}]" in listed.stdout.splitlines(), listed.stdout
    plain = subprocess.run(cli("action", "list"), env=action_stack, capture_output=True,
                           text=True, timeout=60)
    assert ACTION in plain.stdout.splitlines(), plain.stdout
    info = subprocess.run(cli("action", "info", ACTION, "-t"), env=action_stack,
                          capture_output=True, text=True, timeout=60)
    assert info.returncode == 0, info.stderr
    lines = info.stdout.splitlines()
    assert lines[0] == f"Action: {ACTION}" and "Action servers: 1" in lines, lines
    assert f"    /trajectory_generator [{TYPE}]" in lines, lines


def test_send_goal_says_accepted_with_its_id_before_the_feedback(action_stack):
    goal = ("{trajectory: {joint_names: [joint1, joint2, joint3], points: "
            "[{positions: [0.0, 1.4, 0.9], time_from_start: {sec: 1}}]}}")
    deadline = time.monotonic() + 60
    while True:  # until the generator anchored its hold at the first joint state
        done = subprocess.run(cli("action", "send_goal", "--feedback", ACTION, TYPE, goal),
                              env=action_stack, capture_output=True, text=True, timeout=60)
        if "no reference yet" not in done.stdout or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stdout + done.stderr
    accepted = next(i for i, line in enumerate(lines) if line.startswith("Goal accepted with ID: "))
    assert len(lines[accepted].split(": ")[1]) == 32  # the UUID, as ros2 prints it
    feedback = [i for i, line in enumerate(lines) if line == "Feedback:"]
    assert feedback and accepted < feedback[0], lines[:10]
    assert lines[-1] == "Goal finished with status: SUCCEEDED"


def test_send_goal_to_an_inactive_server_prints_its_reason(action_stack):
    goal = ("{trajectory: {joint_names: [joint1, joint2, joint3], points: "
            "[{positions: [0.0, 1.4, 0.9], time_from_start: {sec: 1}}]}}")
    off = subprocess.run(cli("lifecycle", "set", "/trajectory_generator", "deactivate"),
                         env=action_stack, capture_output=True, text=True, timeout=60)
    assert off.returncode == 0, off.stdout + off.stderr
    try:
        done = subprocess.run(cli("action", "send_goal", ACTION, TYPE, goal), env=action_stack,
                              capture_output=True, text=True, timeout=60)
    finally:
        subprocess.run(cli("lifecycle", "set", "/trajectory_generator", "activate"),
                       env=action_stack, capture_output=True, timeout=60)
    # accepted, then aborted at once with the reason (a bare rejection would carry none)
    assert done.returncode == 1
    assert done.stdout.startswith("Goal accepted with ID: "), done.stdout
    assert "ABORTED" in done.stdout and "/trajectory_generator is inactive, not active: the " \
        "stack is starting" in done.stdout, done.stdout


#: the first seconds, while the runner loads the bus modules or the nodes import and compile
EARLY_S = (0.5, 1.0, 2.0, 3.0, 4.0)


def interrupt_launch(when: float | str, env: dict[str, str]) -> tuple[int, list[str]]:
    """``robot-control launch`` sent a terminal's Ctrl-C (what reaches the runner) ``when``
    seconds after the interpreter's start-up, or once a line holding ``when`` came; (exit code,
    output)."""
    import signal

    launch = Lines(cli("launch", "rate:=250"), {**env, "PYTHONUNBUFFERED": "1"})
    try:
        if isinstance(when, float):
            # ``when`` seconds into the command, counted once it is past CPython's own start-up
            assert past_interpreter_start(launch.proc.pid, 60.0), "it never got past start-up"
            time.sleep(when)
        else:
            assert launch.wait_for(when, 120) is not None, launch.lines
        launch.proc.send_signal(signal.SIGINT)  # the nodes run in sessions of their own
        code, err = launch.finish(60)
    finally:
        if launch.proc.poll() is None:
            launch.proc.kill()
    return code, [line for _, line in launch.lines] + err.splitlines()


def check_clean_quiet_stop(code: int, output: list[str], unforced: bool = False) -> None:
    """Exit 0, no ERROR line, no traceback, no node left (``unforced``: and every node ended by
    itself after the runner's SIGINT, none needed its SIGTERM or SIGKILL)."""
    assert code == 0, output[-30:]
    assert not [line for line in output if "ERROR" in line or "Traceback" in line], output
    assert not unforced or not [line for line in output if "still running: sending" in line], \
        output
    pids = [int(line.split("(pid ")[1].split(")")[0]) for line in output
            if line.startswith("[launch] started ")]
    assert not [pid for pid in pids if Path(f"/proc/{pid}").exists()]
    if pids:  # it started: its last line says how it ended
        assert output[-1].startswith(("robot-control launch: ok", "robot-control launch: degraded"))


@pytest.mark.parametrize("when", [
    1.0, "stack active",  # the fast default's two; the rest: scripts/test.sh --slow
    *(pytest.param(s, marks=pytest.mark.slow) for s in EARLY_S if s != 1.0),
    *(pytest.param(s, marks=pytest.mark.slow) for s in ("[launch] started lifecycle_manager",
                                                         "configured in"))])
def test_ctrl_c_of_a_launch_is_a_clean_quiet_stop_at_any_moment(when):
    """A terminal's Ctrl-C at 0.5–4 s (while the command loads, the nodes import or compile),
    once the nodes are started, configured or running: exit 0 within 60 s, every node stopped
    by its SIGINT, no ERROR line, no traceback."""
    check_clean_quiet_stop(*interrupt_launch(when, private_domain(154)))


@pytest.mark.slow  # cold compiles
def test_ctrl_c_while_the_nodes_compile_on_an_empty_cache_is_a_clean_quiet_stop(tmp_path):
    """Ctrl-C the moment a node says it compiles (an empty compile cache: its main thread is in
    the compile, where Python runs no signal handler): every node ends by itself within the
    runner's SIGINT wait, exit 0, quiet."""
    env = {**private_domain(155), "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    check_clean_quiet_stop(*interrupt_launch("compiling ", env), unforced=True)


@pytest.mark.parametrize("command, status, said", [
    (("laws",), 130, ["robot-control: interrupted"]),  # a command that ends by itself
    (("launch", "rate:=250"), 0, []),  # one that runs until Ctrl-C: its usual quiet end
])
def test_ctrl_c_while_the_modules_load_ends_at_once_with_the_commands_status(command, status,
                                                                             said):
    """SIGINT the moment numpy starts loading (the command's modules load for a second more):
    the process ends within a second, by itself (not by a signal: exit −2 was CI's flake), with
    the command's status and at most its one line."""
    import signal

    proc = subprocess.Popen(cli(*command), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=private_domain(156))
    try:
        assert past_interpreter_start(proc.pid, 60.0), "it never got past start-up"
        asked = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        took = time.monotonic() - asked
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == status, (out, err)
    assert err.splitlines() == said and not out, (out, err)
    assert took < 1.0, took
