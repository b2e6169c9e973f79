"""The ``cell_controller`` node: one controller for every arm of a cell (Huo §3.13, C15).

Huo's load-sharing law is one computation over all arms — one estimate of the object's pose (the
mean of the arms' forward kinematics), one commanded acceleration, a force split that depends on
every arm's weight — so one node answers each sample of the whole cell at once
(docs/architecture.md). It runs a law that drives a cell (a registered law with a ``cell``
parameter: ``load_sharing``) on the cell's arms_model, with the gains, swaps and bumpless
take-overs of the ``controller`` node (nodes/law_host.py; ``load_sharing.kp`` …).

Its reference is the cell scenario's path of the contact frame E (``scenario``): in lockstep the
scenario's path from t = 0 (the offline simulation's, so a lockstep run equals it to the bit);
in real time the path starts, from the pose of E the law estimates, at the first state answered
after an activation. The pressing force is the scenario's until a ``/force_reference``
(geometry_msgs/WrenchStamped: the force the object exerts on the table) replaces it.

Reads ``/joint_states`` (names ``<arm>_<joint>``); publishes, stamped with the state it answers,
``/joint_command`` (the whole cell's torques), ``/object/reference`` (geometry_msgs/PoseStamped:
the desired pose of E, to compare with the plant's /object/pose) and ``/controller/state``
(sensor_msgs/JointState named ``contact_x`` … ``contact_rz``: position = the task error of E as
the law estimates it, e = desired − estimated, position then orientation). A managed node like
the ``controller``; a state that fails the checks of nodes/validation.py is dropped and counted.
"""

from __future__ import annotations

import sys

import numpy as np

from robot_control.bus.lifecycle import CallbackReturn
from robot_control.control.base import State
from robot_control.control.registry import available, create
from robot_control.model.cell import arms_model
from robot_control.nodes.common import (
    ErrorStatistics,
    configure_failure,
    run_node,
    warm_up,
)
from robot_control.nodes.controller_parameters import LawHostParams
from robot_control.nodes.convert import Messages, read_wrench, seconds, stamp_ns
from robot_control.nodes.health import NodeHealth
from robot_control.nodes.law_host import CONFIGURE_ERRORS, LawHost
from robot_control.nodes.node_parameters import (
    AutostartParams,
    CellScenarioParams,
    FrameParams,
    TimingParams,
    declare_cell_common,
    declare_frame_prefix,
)
from robot_control.nodes.validation import DropLog, JointVectors, Rejected, check_wrench
from robot_control.sim.cell_simulate import cell_path, cell_reference, initial_contact_pose

#: /controller/state names: the task coordinates of E (position, then orientation)
TASK_NAMES = ("contact_x", "contact_y", "contact_z", "contact_rx", "contact_ry", "contact_rz")


def cell_laws() -> list[str]:
    """Registered laws that drive a cell: those with a ``cell`` parameter."""
    return [name for name in available()
            if any(spec.name == "cell" for spec in create(name).declared_parameters())]


class CellControllerNode:
    """Feeds the cell's joint states and the path of E to a cell law; publishes its torques."""

    #: its parameter tables, in declaration order (docs/parameters.md)
    PARAMETER_TABLES = (CellScenarioParams, TimingParams, LawHostParams, FrameParams, AutostartParams)

    def __init__(self, node) -> None:
        self.node = node
        self.log = node.get_logger()
        common = declare_cell_common(node)
        sc = self.scenario = common.scenario
        self.model = arms_model(sc.cell)
        self.names = self.model.joint_names
        self.joints = JointVectors(self.model)
        self.drops = DropLog(self.log)
        self.lockstep = common.timing.lockstep
        self.laws = LawHost(node, self.model, cell_laws(), sc.controller_type,
                            dict(sc.controller_params), lockstep=self.lockstep)
        self.force_reference = sc.force_reference
        self.measured_tau: np.ndarray | None = None  # the plant's applied τ (JointState effort)
        self.start: np.ndarray | None = None  # the scenario's initial pose of E
        self.path = None  # the path of E being tracked, from time t0
        self.t0 = 0.0
        self.errors = ErrorStatistics()  # the task error of E over every answered state
        self.m = Messages(node, declare_frame_prefix(node))
        self.pub_cmd = node.create_lifecycle_publisher("sensor_msgs/msg/JointState",
                                                       "joint_command")
        self.pub_state = node.create_lifecycle_publisher("sensor_msgs/msg/JointState",
                                                         "controller/state")
        self.pub_reference = node.create_lifecycle_publisher("geometry_msgs/msg/PoseStamped",
                                                             "object/reference")
        node.create_subscription("sensor_msgs/msg/JointState", "joint_states", self._on_state)
        node.create_subscription("geometry_msgs/msg/WrenchStamped", "force_reference",
                                 self._on_force_reference)
        self.health = NodeHealth(node, "controller", self._status, self.drops)

    # -------------------------------------------------------------- lifecycle
    def on_configure(self, previous) -> CallbackReturn:
        """Make the law and compile its update; find where the scenario's path starts."""
        try:
            # real time: the other laws compile once the loop stops (nodes/loop_presence.py)
            self.laws.configure(background_now=self.lockstep)
            self.start = initial_contact_pose(self.scenario)
            if not self.lockstep:
                warm_up(self.log, "cell_reference", self._warm_up_reference)
        except CONFIGURE_ERRORS as exc:
            return configure_failure(self.log, f"'{self.laws.name}'", exc)
        self.errors = ErrorStatistics()
        self.health.clear()
        self.log.info(f"cell controller '{self.laws.name}' on cell '{self.scenario.cell.name}' "
                      f"({', '.join(self.scenario.cell.arm_names)}): configured")
        return CallbackReturn.SUCCESS

    def _warm_up_reference(self) -> None:
        """A real-time tick's reference once, on a throw-away path from the estimated pose of
        E: the kernels it needs (the object's pose, the path's sampling) load now, not at the
        first tick (where they stalled the loop 0.6 s on an empty compile cache)."""
        q = np.zeros(len(self.names))
        state = State(0.0, q, np.zeros_like(q))
        cell_reference(cell_path(self.scenario, self.laws.law.object_state(state)[0]), 0.0, q,
                       self.force_reference)

    def on_activate(self, previous) -> CallbackReturn:
        """Take over bumplessly; lockstep: the scenario's path, real time: a path from here."""
        self.laws.activate()
        self.path = cell_path(self.scenario, self.start) if self.lockstep else None
        self.t0 = 0.0
        return CallbackReturn.SUCCESS

    def on_cleanup(self, previous) -> CallbackReturn:
        self.laws.clear()
        return CallbackReturn.SUCCESS

    def on_deactivate(self, previous) -> CallbackReturn:
        """The loop stops: the laws configure left go to the background compiler now."""
        self.laws.compile_rest()
        return CallbackReturn.SUCCESS

    on_shutdown = on_error = on_deactivate

    # ----------------------------------------------------------------- inputs
    def _on_force_reference(self, msg) -> None:
        try:
            self.force_reference = check_wrench(read_wrench(msg))
        except Rejected as exc:
            self.drops.drop("/force_reference", str(exc))

    def _on_state(self, msg) -> None:
        try:
            q, qd, tau = self.joints.measured(msg)
        except Rejected as exc:
            self.drops.drop("/joint_states", str(exc))
            return
        if tau is not None:
            self.measured_tau = tau
        if self.laws.running:
            self._answer(stamp_ns(msg.header.stamp), q, qd)

    # ---------------------------------------------------------------- compute
    def _answer(self, ns: int, q: np.ndarray, qd: np.ndarray) -> None:
        """The law's torque for the state stamped ns, with the reference of E at that time."""
        t = seconds(ns)
        state = State(t, q, qd)
        if self.path is None:  # real time: the path starts here, from the estimated pose of E
            self.path = cell_path(self.scenario, self.laws.law.object_state(state)[0])
            self.t0 = t
        ref = cell_reference(self.path, t - self.t0, q, self.force_reference)
        tau = self.laws.update(t, state, ref, self.measured_tau)
        if tau is None:
            return
        self.pub_cmd.publish(self.m.joint_state(ns, self.names, tau=tau))
        self.pub_reference.publish(self.m.pose(ns, ref.pose, "world"))
        self.pub_state.publish(self.m.joint_state(ns, TASK_NAMES, self.laws.law.task_error))
        self.errors.add(TASK_NAMES, self.laws.law.task_error)

    def _status(self):
        """The law's status and the task error of E, with each arm's prescribed pressing force
        and fraction."""
        level, message, d = self.laws.status()
        d.update(self.errors.status(TASK_NAMES))
        if self.laws.running:
            diag = self.laws.law.diagnostics()
            for key, label in (("arm_normal_forces", "pressing_force_desired"),
                               ("force_fractions", "pressing_fraction_desired")):
                for arm, value in zip(self.scenario.cell.arm_names, diag.get(key, [])):
                    d[f"{arm}_{label}"] = value
        return level, message, d


def main(argv: list[str] | None = None) -> int:
    return run_node("cell_controller", CellControllerNode, argv)


if __name__ == "__main__":
    sys.exit(main())
