"""Pieces every node shares: latency statistics, compiling kernels before a node runs, and
``run_node``: the four nodes are managed (lifecycle) nodes whose logic objects provide the
transition hooks. Their shared parameters: nodes/node_parameters.py."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable

import numpy as np

from robot_control.bus.lifecycle import HOOK_NAMES, CallbackReturn
from robot_control.bus.param_table import declare
from robot_control.nodes.node_parameters import AutostartParams
from robot_control.nodes.start_gate import start_refused
from robot_control.nodes.startup_stop import StartupStop


class LatencyStats:
    """Percentiles of durations in µs over a whole run, from a histogram of log-spaced bins about
    1 % wide (1 µs … 10 s): constant time and no allocation per sample however long the run, and
    a report that costs the same at any time. Percentiles are a bin's upper edge (at most the
    maximum, which is exact)."""

    BINS_PER_DECADE = 230  # 10 ** (1 / 230) ≈ 1.010
    DECADES = 7

    def __init__(self) -> None:
        self.bins = [0] * (self.BINS_PER_DECADE * self.DECADES + 1)
        self.count = 0
        self.max = 0.0

    def add(self, seconds: float) -> None:
        us = seconds * 1e6
        i = int(self.BINS_PER_DECADE * math.log10(us)) + 1 if us >= 1.0 else 0
        self.bins[min(i, len(self.bins) - 1)] += 1
        self.count += 1
        if us > self.max:
            self.max = us

    def percentile(self, p: float) -> float:
        """The p-th percentile (0 < p ≤ 100) in µs; 0 without samples."""
        rank = math.ceil(self.count * p / 100.0)
        seen = 0
        for i, n in enumerate(self.bins):
            seen += n
            if n and seen >= rank:
                return min(10.0 ** (i / self.BINS_PER_DECADE), self.max)
        return self.max

    def summary(self) -> dict:
        if self.count == 0:
            return {"p50": None, "p99": None, "max": None}
        return {"p50": self.percentile(50), "p99": self.percentile(99), "max": self.max}


class ErrorStatistics:
    """Running RMS, maximum and last value of the tracking error e, per joint, accumulated in
    place (a controller adds one sample per tick)."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.count = 0
        self.non_finite = 0  # samples with a NaN or infinite error, left out of the figures
        self.sum_sq: np.ndarray | None = None
        self.max_abs: np.ndarray | None = None
        self.last: np.ndarray | None = None
        self._work: np.ndarray | None = None

    def add(self, names: list[str], e: np.ndarray) -> None:
        if not np.all(np.isfinite(e)):
            self.non_finite += 1
            return
        if self.sum_sq is None or e.shape != self.sum_sq.shape:
            # first sample, or the law changed the state size: restart rather than mix
            self.names, self.count = list(names), 0
            self.sum_sq, self.max_abs, self.last, self._work = (np.zeros(e.shape)
                                                                for _ in range(4))
        self.count += 1
        with np.errstate(over="ignore"):  # an overflow is reported as such by summary()
            np.multiply(e, e, out=self._work)
            self.sum_sq += self._work
        np.abs(e, out=self._work)
        np.maximum(self.max_abs, self._work, out=self.max_abs)
        self.last[:] = e

    def summary(self) -> dict[str, object]:
        out: dict[str, object] = {"rms_error": None, "max_error": None, "final_error": None}
        if self.count:
            with np.errstate(over="ignore"):  # an overflowed sum is reported, not raised
                out = {"rms_error": np.sqrt(self.sum_sq / self.count).tolist(),
                       "max_error": self.max_abs.tolist(), "final_error": self.last.tolist()}
        if self.non_finite:
            out["non_finite_error_samples"] = self.non_finite
        return out

    def status(self, names: list[str]) -> dict[str, str | int | float]:
        """The figures as /diagnostics values (JSON lists per joint: what ``robot-control
        launch`` reports), for joints ``names``."""
        out: dict[str, str | int | float] = {"tracking_samples": self.count,
                                             "joint_names": json.dumps(list(names))}
        for key, value in self.summary().items():
            if value is not None:
                out[key] = json.dumps(value) if isinstance(value, list) else value
        return out


def warm_up(log, kernel: str, call: Callable[[], object], wait: bool = True) -> None:
    """Run ``call`` once so the kernels it needs are compiled (or loaded from the cache) now,
    holding the machine-wide lock of ``kernel``: nodes starting together compile it once (a
    lowest-priority process passes ``wait=False``: nobody may wait for it)."""
    from robot_control.dynamics.compile_cache import CACHE_DIR, compiling, is_compiled
    from robot_control.dynamics.compile_once import say_once

    start = time.perf_counter()
    if CACHE_DIR is not None and not is_compiled(kernel):
        # said before the wait, not after: a cold first start is quiet for tens of seconds else
        say_once(kernel, log.info)
    with compiling(kernel, wait):
        call()
    log.debug(f"{kernel} ready in {time.perf_counter() - start:.2f} s")


def announce_compiles(log) -> None:
    """This process's first compile says so on ``log`` at once, and every kernel compiles once
    across the stack's processes (dynamics/compile_once.py)."""
    from robot_control.dynamics import compile_once

    compile_once.announce(log.info)
    compile_once.install_lock()


def configure_failure(log, what: str, exc: Exception) -> CallbackReturn:
    """A configuration the node cannot run (bad parameters, model, scenario): log it, FAILURE
    (the node stays unconfigured, as rclcpp's nodes do)."""
    log.error(f"cannot configure {what}: {exc}")
    return CallbackReturn.FAILURE


def install_hooks(node, logic) -> None:
    """The node's lifecycle hooks are the logic object's methods of the same names."""
    node.set_lifecycle_hooks(**{name: getattr(logic, name) for name in HOOK_NAMES
                                if hasattr(logic, name)})


class LoopTimerHooks:
    """Lifecycle hooks of a node logic whose loop runs on ``self.timer`` while active (made by
    its on_activate): leaving the active state (deactivate, shutdown, error) cancels it."""

    timer = None

    def on_deactivate(self, previous) -> CallbackReturn:
        self._stop_timer()
        return CallbackReturn.SUCCESS

    def on_shutdown(self, previous) -> CallbackReturn:
        self._stop_timer()
        return CallbackReturn.SUCCESS

    def on_error(self, previous) -> CallbackReturn:
        self._stop_timer()
        return CallbackReturn.SUCCESS

    def _stop_timer(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None


def autostart(node) -> bool:
    """Configure and activate now if the ``autostart`` parameter says so; False if it failed."""
    if not declare(node, AutostartParams).autostart:
        return True
    return all(node.trigger_transition(t) == CallbackReturn.SUCCESS
               for t in ("configure", "activate"))


def node_usage(default_name: str, node_class) -> str:
    """``--help`` text of a node executable: how to pass ROS arguments, then its module's doc."""
    import sys

    doc = (sys.modules[node_class.__module__].__doc__ or "").strip()
    return (f"usage: {default_name} [--ros-args [-p NAME:=VALUE] [--params-file FILE] "
            f"[-r FROM:=TO] [--log-level LEVEL]]\n\n{doc}\n")


def run_node(default_name: str, node_class, argv: list[str] | None, managed: bool = True) -> int:
    """The ``main`` of every node: create it on the bus, build its logic, spin until shutdown;
    the exit status is the logic's ``exit_code`` (0 if it has none). A managed node starts
    unconfigured: its logic's methods on_configure … are the transition hooks, and the
    lifecycle_manager (or ``ros2 lifecycle set``, or ``autostart``) drives it.

    A node that cannot start says why in one line and exits 2. SIGINT or SIGTERM before the node
    spins (Ctrl-C during start-up) ends it quietly with 0 once the step under way is done; a
    second one ends it at once. The launch runner starts nodes with both signals blocked, so one
    that arrives while the modules are still importing waits until here.
    """
    import signal
    import sys

    from robot_control.bus import ParameterError, create_node

    argv = sys.argv if argv is None else argv
    own = argv[1:argv.index("--ros-args")] if "--ros-args" in argv else argv[1:]
    if "-h" in own or "--help" in own:  # before --ros-args: ours, not a ROS argument
        print(node_usage(default_name, node_class), end="")
        return 0
    stop = StartupStop.install()
    if (refused := start_refused(stop, default_name)) is not None:
        return refused
    try:
        node = create_node(default_name, argv, managed=managed)
    except (ValueError, ParameterError) as exc:
        print(f"[ERROR] [{default_name}]: cannot start: {exc}", file=sys.stderr, flush=True)
        return 2
    logic = None
    announce_compiles(node.get_logger())  # the node's construction may compile already
    try:
        if not stop.requested:
            logic = node_class(node)
            if managed:
                install_hooks(node, logic)
    except (ValueError, ParameterError) as exc:
        node.get_logger().error(f"cannot start: {exc}")
        node.shutdown()
        return 2
    if stop.requested or (managed and not autostart(node)):
        node.shutdown()
        return 0 if stop.requested else 2
    stop.hand_over()
    node.spin()  # from here the node's own handlers turn a signal into a clean shutdown
    # the process is ending: a second Ctrl-C (a launcher passes on the one the terminal sent to
    # the node too) must not kill it while the interpreter shuts down
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    return getattr(logic, "exit_code", 0)
