"""Pieces every node shares: loading the robot / scenario named by parameters, latency
statistics, compiling kernels before a node runs, and ``run_node``: the four nodes are managed
(lifecycle) nodes whose logic objects provide the transition hooks."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable

import numpy as np

from robot_control.bus.lifecycle import HOOK_NAMES, CallbackReturn
from robot_control.bus.parameters import STRING_ARRAY
from robot_control.model.arm import load_arm
from robot_control.nodes.startup_stop import StartupStop


def declare_common(node, default_robot: str = "ddarm") -> dict:
    """Declare ``robot``, ``scenario``, ``rate`` and ``lockstep`` and return their values.

    A scenario file supplies the robot, rate and the rest of the experiment, so that a bus run
    and an offline ``robot-control simulate`` of the same file do the same thing.
    """
    values = {
        "robot": node.declare_parameter("robot", default_robot,
                                        "bundled robot name or path to a .urdf / D-H .yaml",
                                        read_only=True),
        "scenario": node.declare_parameter("scenario", "",
                                           "scenario file (or bundled name) to take the robot, "
                                           "rates, trajectory and law from; '' for none",
                                           read_only=True),
    }
    values["arm_joints"] = node.declare_parameter(
        "arm_joints", [], "the joints the laws drive, in the description's order; empty: "
        "every movable joint but grippers and fingers (model/arm.py), which are held",
        read_only=True, ptype=STRING_ARRAY)
    scenario = load_scenario_param(values["scenario"])
    values.update(_declare_timing(node, scenario.rate if scenario is not None else 1000.0))
    values["scenario_obj"] = scenario
    values["model"] = (scenario.robot if scenario is not None
                       else load_arm(values["robot"], list(values["arm_joints"])))
    held = getattr(values["model"], "held_joints", {})
    if held:
        node.get_logger().info("tool joints held (not driven by the arm's law): " + ", ".join(
            f"{k} at {v:.4g}" for k, v in held.items()))
    return values


def declare_engine(node, plant_cfg: dict) -> dict:
    """The plant's read-only ``engine`` parameter ('' = the scenario's plant.engine, else
    internal); the ``plant:`` mapping with it set."""
    from robot_control.bus import ParameterError
    from robot_control.sim.engine import with_engine
    from robot_control.sim.plant_config import ENGINES

    default = str(plant_cfg.get("engine", "internal"))
    engine = node.declare_parameter(
        "engine", default, "the plant's physics engine: internal (the package's dynamics) or "
        "mujoco ('' = the scenario's)", additional_constraints="internal | mujoco",
        read_only=True) or default
    if engine not in ENGINES:
        raise ParameterError(f"engine must be one of {ENGINES}, got '{engine}'")
    return with_engine(plant_cfg, engine)


def _declare_timing(node, default_rate: float) -> dict:
    """Declare ``rate`` and ``lockstep``."""
    return {
        "rate": node.declare_parameter("rate", default_rate, "control rate, Hz",
                                       floating_point_range=(1.0, 10000.0), read_only=True),
        "lockstep": node.declare_parameter(
            "lockstep", False, "deterministic mode: the plant steps only when the command for "
            "the current state has arrived and publishes /clock", read_only=True),
    }


def declare_frame_prefix(node) -> str:
    """Declare ``frame_prefix`` (prepended to the frame_ids the node stamps, and to its /tf frames,
    as robot_state_publisher's parameter of that name) and return it; default: the node's
    namespace as a prefix (``/arm1`` → ``arm1/``, the root namespace → none)."""
    namespace = node.namespace.strip("/")
    return node.declare_parameter(
        "frame_prefix", f"{namespace}/" if namespace else "", "prepended to every frame_id "
        "and /tf frame this node stamps (default: its namespace, 'arm1/')", read_only=True)


#: the cell nodes' scenario unless told otherwise
DEFAULT_CELL_SCENARIO = "huo_3_13_load_sharing"


def declare_cell_common(node) -> dict:
    """Declare a cell node's ``scenario`` (a cell scenario: the cell, the object's start, the
    table, the path of E, the law and its gains), ``rate`` and ``lockstep``; return their values
    and the loaded scenario (``scenario_obj``), so a bus run and an offline run of the same file
    do the same thing."""
    from robot_control.sim.cell_simulate import load_cell_scenario

    values = {"scenario": node.declare_parameter(
        "scenario", DEFAULT_CELL_SCENARIO, "cell scenario file or bundled name (config/"
        "scenarios/): the cell, where the object starts, the table, the path of E, the law",
        read_only=True)}
    values["scenario_obj"] = scenario = load_cell_scenario(values["scenario"])
    values.update(_declare_timing(node, scenario.rate))
    return values


def load_scenario_param(name: str):
    """The Scenario a ``scenario`` parameter names, or None when it is empty."""
    if not name:
        return None
    from robot_control.sim.scenario import load_scenario

    return load_scenario(name)


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
    if not node.declare_parameter(
            "autostart", False, "configure and activate at start, for a node run on its own "
            "(a launch file leaves it to the lifecycle_manager, which brings the stack up in "
            "order)", read_only=True):
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
    if stop.requested:
        return 0
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
