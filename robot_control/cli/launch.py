"""``robot-control launch [FILE] [name:=value …] [--duration S] [--summary out.json]``.

Runs a launch file of this package without ROS 2 (:mod:`robot_control.bringup.runner` reads it
and starts the nodes), watches the stack over the bus (:mod:`robot_control.bringup.summary`) and
stops every node on Ctrl-C, after ``--duration`` seconds of closed-loop control, or as soon as
one node fails; then prints the summary as JSON.

It refuses to start a node whose name a node on the domain already has (a second stack on the
same ROS_DOMAIN_ID would drive the first one's robot), and while the stack runs it watches:

- faults: a node reporting level ERROR on /diagnostics (a diverged plant) stops the run;
- duplicates: another node taking one of the stack's names on the domain is reported (once a
  name, ``duplicate_names`` in the summary), and the stack goes on: an outside process must not
  stop it, and its plant keeps obeying the controller it started with;
- liveness: a node whose heartbeat (its /diagnostics status, twice a second) is silent for
  ``--liveness-timeout`` seconds is reported as stalled (and stops the run with ``--strict``).

Exit status: 0; 1 if a node failed, faulted or stalled (``--strict``), names clashed while
running, the loop never ran, the plant made a safety stop or rejected commands persistently, the
controller tracked nothing of the generator's motion, or the tracking error passed the law's bound
(bringup/verdict.py ``run_verdict``); a run that held but missed more than 10 % of its deadlines
or saturated a torque is ``degraded`` (exit 0, 1 with ``--strict``); 2 for a launch file, argument
or domain it cannot run. The last line printed says which (``… ok: ok``, ``… degraded: <figures>``
or ``… FAILED: <reason>``); the summary's ``outcome`` and ``verdict`` hold the same.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import signal
import sys
import threading
import time
from dataclasses import dataclass
from typing import IO

from robot_control.bringup.node_forks import start_fork_server
from robot_control.bringup.processes import (
    STOPPED_CODES,
    LineWriter,
    NodeProcess,
    child_environment,
    describe_exit,
    stop_processes,
)
from robot_control.bringup.runner import (
    CONTROLLERS,
    GATED,
    LaunchError,
    LaunchPlan,
    load_launch_file,
    node_command,
    node_module,
    resolve_launch_file,
    split_overrides,
)
from robot_control.bringup.summary import ERROR_LEVEL, figures_line, json_safe
from robot_control.bringup.verdict import degradation, run_verdict

#: how long a failed node's last status may trail its exit (it is sent just before)
STATUS_AFTER_EXIT_S = 1.0


def seconds_arg(text: str) -> float:
    """An argparse type: a finite, positive number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of seconds") from None
    if not (math.isfinite(value) and value > 0.0):
        raise argparse.ArgumentTypeError(f"must be a positive, finite number of seconds, got "
                                         f"'{text}'")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("items", nargs="*", metavar="[FILE] name:=value",
                        help="launch file (default: the package's control.launch.yaml) and "
                             "launch arguments, e.g. controller:=adaptive rate:=500")
    parser.add_argument("--duration", type=seconds_arg, metavar="S",
                        help="stop S seconds after the control loop is running (default: run "
                             "until Ctrl-C)")
    parser.add_argument("--summary", metavar="FILE", help="also write the summary JSON here")
    parser.add_argument("--startup-timeout", type=seconds_arg, default=60.0, metavar="S",
                        help="give up if the control loop is not running after S seconds "
                             "(default 60)")
    parser.add_argument("--liveness-timeout", type=seconds_arg, default=3.0, metavar="S",
                        help="report a node whose heartbeat (/diagnostics) is silent for S "
                             "seconds while the loop runs (default 3)")
    parser.add_argument("--strict", action="store_true",
                        help="a stalled node is a failure (stop and exit 1), and so is a "
                             "degraded run (more than 10 %% deadlines missed, or saturation)")
    parser.add_argument("--no-monitor", action="store_true",
                        help="do not watch the bus (no summary figures)")
    parser.add_argument("-s", "--show-args", action="store_true",
                        help="list the launch file's arguments and exit")
    parser.add_argument("--dry-run", action="store_true",
                        help="print each node's command line and exit")


@dataclass
class RunOptions:
    duration_s: float | None = None  # stop this long after the control loop is running
    startup_timeout_s: float = 60.0  # give up if the loop is not running by then
    monitor: bool = True  # collect the summary over the bus
    sigint_timeout_s: float = 5.0
    sigterm_timeout_s: float = 3.0
    liveness_s: float = 3.0  # a node silent this long on /diagnostics is stalled
    strict: bool = False  # a stall stops the run and fails it; so does a degraded run


def run(args: argparse.Namespace, epilogue: str = "") -> int:
    """Run the command; ``epilogue`` goes to stderr before the final line (the demo's hints)."""
    try:
        file, overrides = split_overrides(args.items)
        path = resolve_launch_file(file)
        if args.show_args:
            return _show_args(load_launch_file(path, {}))
        plan = load_launch_file(path, overrides)
        if args.dry_run:
            for node in plan.nodes:
                print(f"{node.label}: {shlex.join(node_command(node))}")
            return 0
    except (LaunchError, OSError) as exc:
        print(f"robot-control launch: {exc}", file=sys.stderr)
        return 2
    options = RunOptions(args.duration, args.startup_timeout, not args.no_monitor,
                         liveness_s=args.liveness_timeout, strict=args.strict)
    try:
        code, summary = run_plan(plan, options)
    except LaunchError as exc:
        print(f"robot-control launch: {exc}", file=sys.stderr)
        return 2
    text = json.dumps(summary, indent=2, allow_nan=False)
    print(text)
    if args.summary:
        with open(args.summary, "w") as fh:
            fh.write(text + "\n")
    if epilogue:
        print(epilogue, file=sys.stderr, flush=True)
    sys.stdout.flush()
    print(final_line(code, summary), flush=True)
    return code


def final_line(code: int, summary: dict[str, object]) -> str:
    """The run's outcome in one line, the last the command prints."""
    return f"robot-control launch: {summary['outcome']}: {summary['verdict']}"


def main(argv: list[str] | None = None) -> int:
    """``python -m robot_control.cli.launch …``: the same as ``robot-control launch …``."""
    parser = argparse.ArgumentParser(prog="robot-control launch")
    add_arguments(parser)
    try:
        return run(parser.parse_args(argv))
    except KeyboardInterrupt:  # Ctrl-C while it loads the launch file: quiet, as robot-control
        return 0


def _show_args(plan: LaunchPlan) -> int:
    print("Arguments (pass arguments as '<name>:=<value>'):")
    for arg in plan.arguments:
        print(f"\n    '{arg.name}':\n        {arg.description or 'no description given'}")
        if arg.default is not None:
            print(f"        (default: '{arg.default}')")
    return 0


class _StopRequest:
    """SIGINT / SIGTERM to the runner: the first stops the stack, a second hurries it."""

    def __init__(self) -> None:
        self.count = 0
        self.saved: list = []

    def __call__(self, signum, frame) -> None:
        self.count += 1

    def install(self) -> None:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self.saved.append((sig, signal.getsignal(sig)))
                signal.signal(sig, self)

    def restore(self) -> None:
        for sig, handler in self.saved:
            signal.signal(sig, handler)


def run_plan(plan: LaunchPlan, options: RunOptions, stream: IO[str] = sys.stdout
             ) -> tuple[int, dict[str, object]]:
    """Start every node of the plan, watch them, stop them all; (exit code, summary)."""
    out = LineWriter(stream)
    log = lambda message: out.write("launch", message)  # noqa: E731
    for node in plan.nodes:
        node_module(node)  # refuse a file we cannot run before starting anything
    # first of all: a Ctrl-C while the bus modules load (seconds on a busy machine) stops the run
    # quietly, and one before the nodes start starts none of them
    stop = _StopRequest()
    stop.install()
    monitor = None
    procs: list[NodeProcess] = []
    forks = check = None
    reason, failed = "", {}
    watch = Watch(plan, options, log)
    ended = time.monotonic()
    load_at_start = os.getloadavg()
    try:
        env = child_environment()
        domain = check_domain(env)
        forks = start_fork_server(plan, env)  # imports while the runner sets up its watch
        client_factory = _client_factory(plan, env)
        if options.monitor and not stop.count:
            from robot_control.bringup.summary import StackMonitor

            members = dict(plan.members())  # executable -> fully qualified name, composed too
            monitor = StackMonitor(client_factory,
                                   tracking_node=members.get("trajectory_generator"),
                                   controller_node=next((members[exe] for exe in CONTROLLERS
                                                         if exe in members), None),
                                   namespace=plan.namespace)
        # the nodes import their modules (or the fork server does) while the domain is checked,
        # and join it only after (a refused or interrupted launch tells them no: they end
        # quietly, never on the bus)
        check = NameCheck(monitor, client_factory) if not stop.count else None
        if forks is not None and not stop.count and (why := forks.usable()):
            log(f"starting each node as a fresh interpreter: {why}")
            forks = None
        procs += [NodeProcess(node, env, out, gated=True, forks=forks) for node in plan.nodes
                  if node.executable in GATED and not stop.count]
        if not stop.count:
            refuse_name_clashes(plan, check.result(), domain)
        for p in procs:
            p.release(go=not stop.count)
        procs += [NodeProcess(node, env, out) for node in plan.nodes
                  if node.executable not in GATED and not stop.count]
        if not stop.count:
            for p in procs:
                log(f"started {p.node.label} (pid {p.proc.pid}): {shlex.join(p.command[1:])}")
        reason, failed = watch.run(procs, monitor, stop)
        log(f"stopping: {reason}")
        ended = time.monotonic()
        if monitor is not None and reason == "duration reached":
            monitor.wait_for_diagnostics(after=ended)  # the plant's figures up to the end
    finally:
        if check is not None:
            check.wait()  # before its bus client closes
        if monitor is not None:
            monitor.stop()
        hurry = stop.count > 1
        stop_processes(procs, 0.5 if hurry else options.sigint_timeout_s,
                       0.5 if hurry else options.sigterm_timeout_s, log)
        if forks is not None:
            forks.close()
        stop.restore()
    summary: dict[str, object] = {
        "launch_file": str(plan.file), "arguments": dict(plan.values), "namespace": plan.namespace,
        "robot": plan.values.get("robot"), "controller": plan.values.get("controller"),
        "requested_rate_hz": _number(plan.values.get("rate")),
        # the machine's load (1, 5, 15 min): wall-clock figures are worth what it leaves
        "load_average": {"start": list(load_at_start), "end": list(os.getloadavg())},
    }
    if monitor is not None:
        summary.update(monitor.summary(until=ended))
        log(figures_line(summary))
    summary.update(watch.summary())
    summary["stopped_by"] = reason
    summary["nodes"] = {p.node.label: {"pid": p.proc.pid, "exit": p.returncode} for p in procs}
    unclean = {p.node.label: p.returncode for p in procs if p.returncode not in STOPPED_CODES}
    failed = failed or unclean
    if failed:
        summary["failed"] = failed
    notes: dict[str, str] = {}
    summary = json_safe(summary, notes=notes)
    if notes:
        summary["non_finite"] = notes  # e.g. the RMS error of a run whose error overflowed
    judged = not failed and reason != "interrupted" and monitor is not None
    members = [exe for exe, _ in plan.members()]
    verdict = run_verdict(summary, plan.values.get("lockstep") == "true",
                          expects_tracking="trajectory_generator" in members and any(
                              exe in CONTROLLERS for exe in members)) if judged else ""
    if failed:
        verdict = reason if reason.startswith(("fault", "node failed", "the control loop")) \
            else f"node(s) failed: {', '.join(map(str, failed))}"
    # an interrupted run is judged on its figures too (no failure: it may have stopped early)
    degraded = degradation(summary) if monitor is not None and not verdict else ""
    if degraded and options.strict:
        verdict = f"degraded (--strict): {degraded}"
    summary["outcome"] = "FAILED" if failed or verdict else ("degraded" if degraded else "ok")
    summary["verdict"] = verdict or degraded or "ok"
    return (1 if failed or verdict else 0), summary


def check_domain(env: dict[str, str]) -> int:
    """The ROS domain id the nodes will use; LaunchError if the environment names none."""
    from robot_control.bus.discovery import domain_id_from_env

    try:
        return domain_id_from_env(env)
    except ValueError as exc:
        raise LaunchError(str(exc)) from None


def _client_factory(plan: LaunchPlan, env: dict[str, str]):
    """What the runner watches the bus with: a BusClient (None: the default), or for a secure
    plan, once every node's enclave checked out, an rclpy node in the observer enclave (a plain
    participant is not admitted to a secure domain); LaunchError if the plan cannot run
    securely."""
    from robot_control.bringup.security_check import check_plan
    from robot_control.bus import choose_backend
    from robot_control.security import SecurityError

    try:
        secure_env = check_plan(plan, env, choose_backend())
    except SecurityError as exc:
        raise LaunchError(str(exc)) from None
    if secure_env is None and choose_backend() != "rclpy":
        return None
    from robot_control.bus.ros.monitor_client import RclpyBusClient

    # on the rclpy route the monitor is an rclpy participant too: no cyclonedds package there
    watched = env if secure_env is None else secure_env
    return lambda: RclpyBusClient(watched)


def names_on_domain(monitor, client_factory=None, settle_s: float = 1.0) -> list[str]:
    """The nodes on the domain now, after discovering for at least settle_s."""
    if monitor is not None:
        return monitor.node_names(wait_s=30.0, settle_s=settle_s) or []
    from robot_control.bus.dds.client import BusClient

    factory = client_factory or (lambda: BusClient(discovery_s=settle_s + 2.0))
    with factory() as client:
        client.graph.settle(min_s=settle_s, max_s=settle_s + 2.0)
        return client.node_list()


class NameCheck:
    """names_on_domain in a thread of its own, from now: its second of discovery overlaps the
    nodes' start (the fork server's imports, or the nodes' own)."""

    #: longer than names_on_domain can take (the monitor's 30 s wait for its graph, then 3 s)
    TIMEOUT_S = 60.0

    def __init__(self, monitor, client_factory=None) -> None:
        self.names: list[str] = []
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(monitor, client_factory),
                                       daemon=True, name="name-check")
        self.thread.start()

    def _run(self, monitor, client_factory) -> None:
        try:
            self.names = names_on_domain(monitor, client_factory)
        except BaseException as exc:  # noqa: BLE001 - raised again by result()
            self.error = exc

    def wait(self) -> None:
        """Until the check ended, at most TIMEOUT_S."""
        self.thread.join(self.TIMEOUT_S)

    def result(self) -> list[str]:
        """The node names on the domain (the check's exception, if it raised)."""
        self.wait()
        if self.thread.is_alive():
            raise LaunchError(f"could not list the nodes on the domain within {self.TIMEOUT_S:g} s")
        if self.error is not None:
            raise self.error
        return self.names


def refuse_name_clashes(plan: LaunchPlan, names_on_domain: list[str], domain: int) -> None:
    """LaunchError if a node of the plan has the name of a node already on the domain."""
    clash = sorted({fqn for _, fqn in plan.members()} & set(names_on_domain))
    if clash:
        raise LaunchError(f"ROS domain {domain} already has node(s) named {', '.join(clash)} "
                          f"(another stack in namespace {plan.namespace}?): refusing "
                          "to start a second node with the same name; "
                          "stop the other one, or use another ROS_DOMAIN_ID or namespace")


class Watch:
    """The runner's watch over a started stack: when to stop, and what it saw on the way."""

    def __init__(self, plan: LaunchPlan, options: RunOptions, log) -> None:
        self.plan = plan
        self.options = options
        self.log = log
        self.fqns = [fqn for _, fqn in plan.members()]
        self.stalled: dict[str, float] = {}  # node -> monotonic time its silence was reported
        self.stalls: list[dict[str, object]] = []
        self.faults: dict[str, str] = {}
        self.clashes: list[str] = []
        self.loop_closed_s: float | None = None  # from the nodes' start to the closed loop
        self._next_graph_check = 0.0

    def run(self, procs: list[NodeProcess], monitor, stop: _StopRequest
            ) -> tuple[str, dict[str, object]]:
        """Wait for the reason to stop: a signal, a failed or faulted node, a name clash, a
        stall (strict), the duration, a startup timeout."""
        options, started = self.options, time.monotonic()
        # with a controller in the plan, "running" means the loop is closed (its state is flowing)
        needs_loop = monitor is not None and any(exe in CONTROLLERS
                                                 for exe, _ in self.plan.members())
        announced = False
        while True:
            now = time.monotonic()
            if needs_loop and monitor.running and not announced:
                announced = True
                self.loop_closed_s = monitor.running_since - started
                self.log(f"control loop running ({self.loop_closed_s:.1f} s after start)")
            crashed = [p for p in procs if p.returncode not in (None, 0)]
            if stop.count:
                return "interrupted", {}
            if crashed:
                blamed = self._stopped_for(monitor, wait_s=STATUS_AFTER_EXIT_S)
                if blamed is not None:
                    return blamed
                return ("node failed: " + ", ".join(
                    f"{p.node.label} ({describe_exit(p.returncode)})" for p in crashed),
                    {p.node.label: p.returncode for p in crashed})
            if all(p.returncode is not None for p in procs):
                return "all nodes exited", {}
            ended = [p for p in procs if p.node.on_exit == "shutdown" and p.returncode == 0]
            if ended:  # (a non-zero exit is a failure, above)
                return f"{ended[0].node.label} exited: on_exit shutdown", {}
            if monitor is not None:
                verdict = self._check_bus(monitor, now)
                if verdict is not None:
                    return verdict
            if needs_loop and not monitor.running and now - started > options.startup_timeout_s:
                return (f"the control loop was not running after "
                        f"{options.startup_timeout_s:g} s", {"startup": "timeout"})
            if options.duration_s is not None:
                since = monitor.running_since if needs_loop else started
                if since is not None and now - since >= options.duration_s:
                    return "duration reached", {}
            time.sleep(0.05)

    def _stopped_for(self, monitor, wait_s: float = 0.0) -> tuple[str, dict[str, object]] | None:
        """A node of the stack that stopped it for another (the lifecycle manager: a silent or
        faulted member; its status's ``stopped_for``): the reason naming that member, waiting up
        to ``wait_s`` for the status (it is sent just before the node exits)."""
        deadline = time.monotonic() + wait_s
        while monitor is not None:
            for fqn in self.fqns:
                status = monitor.statuses.get(fqn) or {}
                culprit = status.get("stopped_for")
                if culprit:
                    why = f"{culprit} {status.get('stop_reason')}"
                    return (f"node failed: {why} (so {fqn} stopped the stack)",
                            {str(culprit): why})
            if time.monotonic() >= deadline:
                break
            time.sleep(0.02)
        return None

    def _check_bus(self, monitor, now: float) -> tuple[str, dict[str, object]] | None:
        """Faults and stalls seen on the bus (a reason to stop, or None); name clashes."""
        blamed = self._stopped_for(monitor)
        if blamed is not None:
            return blamed
        for fqn in self.fqns:
            beat = monitor.heartbeats.get(fqn)
            if beat is not None and beat[1] >= ERROR_LEVEL and fqn not in self.faults:
                reason = beat[2].removeprefix("fault: ")
                self.faults[fqn] = reason
                return f"fault on {fqn}: {reason}", {fqn: f"fault: {reason}"}
        if now >= self._next_graph_check:
            names = monitor.node_names()
            if names is not None:
                self._next_graph_check = now + 1.0
                dupes = sorted(n for n in set(names) if n in self.fqns and names.count(n) > 1
                               and n not in self.clashes)
                if dupes:  # said once per name; the stack goes on (its plant obeys the
                    self.clashes += dupes  # controller it started with: command_source.py)
                    self.log(f"another node took the name {', '.join(dupes)} on ROS domain "
                             f"{monitor.domain_id} (a second stack?): this stack goes on")
        if monitor.running:
            stalled = self._check_liveness(monitor, now)
            if stalled and self.options.strict:
                return (f"stalled: {', '.join(stalled)} silent for more than "
                        f"{self.options.liveness_s:g} s (--strict)",
                        {n: "stalled" for n in stalled})
        return None

    def _check_liveness(self, monitor, now: float) -> list[str]:
        """Report nodes whose heartbeat went silent (and when it comes back); the silent ones."""
        silent = []
        for fqn in self.fqns:
            beat = monitor.heartbeats.get(fqn)
            last = beat[0] if beat is not None else monitor.running_since
            quiet = now - max(last, monitor.running_since)
            if quiet > self.options.liveness_s:
                silent.append(fqn)
                if fqn not in self.stalled:
                    self.stalled[fqn] = now - quiet
                    self.log(f"{fqn} stalled: no heartbeat on /diagnostics for {quiet:.1f} s")
            elif fqn in self.stalled:
                began = self.stalled.pop(fqn)
                self.stalls.append({"node": fqn, "silent_s": round(last - began, 3)})
                self.log(f"{fqn} is back after {last - began:.1f} s of silence")
        return silent

    def summary(self) -> dict[str, object]:
        now = time.monotonic()
        stalls = self.stalls + [{"node": n, "silent_s": round(now - t, 3), "at_end": True}
                                for n, t in self.stalled.items()]
        out: dict[str, object] = {"loop_closed_s": self.loop_closed_s, "stalls": stalls}
        if self.faults:
            out["faults"] = dict(self.faults)
        if self.clashes:
            out["duplicate_names"] = list(self.clashes)
        return out


def _number(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


if __name__ == "__main__":
    sys.exit(main())
