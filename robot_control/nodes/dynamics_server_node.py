"""The ``dynamics_server`` node: /robot_description once, and /dynamics/terms for each joint state
while a controller asks for them.

The terms (M(q), C(q,q̇)q̇, g(q), C(q,q̇)) carry the stamp of the state they were computed at, so a
controller in ``dynamics_source: server`` mode pairs each state with its own terms. A joint
state that fails the checks of nodes/validation.py is dropped and counted, never computed on.

A managed node: configuring publishes /robot_description; while active it listens to
/joint_states only while someone subscribes to /dynamics/terms (it looks twice a second, and at
activation), so a stack whose controller uses its own model sends it no states every tick and it
compiles nothing (compiling the terms is the first computation's job, or configure's when a
subscriber is already there).
"""

from __future__ import annotations

import sys

import numpy as np

from robot_control import dynamics as dyn
from robot_control.bus.lifecycle import CallbackReturn
from robot_control.model.urdf_export import robot_description
from robot_control.nodes.common import run_node, warm_up
from robot_control.nodes.convert import Messages, stamp_ns
from robot_control.nodes.health import OK, NodeHealth
from robot_control.nodes.node_parameters import AutostartParams, RobotParams, TimingParams, declare_common
from robot_control.nodes.validation import DropLog, JointVectors, Rejected

#: how often the node looks whether anyone subscribes to /dynamics/terms, s
CHECK_PERIOD_S = 0.5


class DynamicsServerNode:
    """Computes the model terms of the state it receives."""

    #: its parameter tables, in declaration order (docs/parameters.md)
    PARAMETER_TABLES = (RobotParams, TimingParams, AutostartParams)

    def __init__(self, node) -> None:
        self.node = node
        self.log = node.get_logger()
        common = declare_common(node)
        self.model = common.model
        self.n = self.model.nq
        self.joints = JointVectors(self.model)
        self.drops = DropLog(self.log)
        self.served = 0
        self.compiled = False
        self.m = Messages(node)
        self.pub_terms = node.create_lifecycle_publisher("std_msgs/msg/Float64MultiArray",
                                                         "dynamics/terms")
        self.pub_description = node.create_publisher("std_msgs/msg/String", "robot_description",
                                                     qos="transient_local")
        self.state_sub = None  # /joint_states, while /dynamics/terms has a subscriber
        node.create_timer(CHECK_PERIOD_S, self._follow_subscribers)
        self.health = NodeHealth(node, "dynamics_server", self._status, self.drops)

    def _status(self):
        state = "serving" if self.node.is_active else self.node.lifecycle_state.label
        return OK, state, {"terms_published": self.served}

    def on_configure(self, previous) -> CallbackReturn:
        self.pub_description.publish(self.m.String(data=robot_description(self.model)))
        if self.pub_terms.get_subscription_count():
            self._compile()
        self.log.info(f"dynamics of '{self.model.name}' served on /dynamics/terms: configured")
        return CallbackReturn.SUCCESS

    def on_activate(self, previous) -> CallbackReturn:
        self._follow_subscribers()
        return CallbackReturn.SUCCESS

    def on_deactivate(self, previous) -> CallbackReturn:
        self._listen(False)
        return CallbackReturn.SUCCESS

    def on_shutdown(self, previous) -> CallbackReturn:
        self._listen(False)
        return CallbackReturn.SUCCESS

    def _follow_subscribers(self) -> None:
        """Listen to /joint_states while active and someone subscribes to /dynamics/terms."""
        self._listen(self.node.is_active and self.pub_terms.get_subscription_count() > 0)

    def _listen(self, on: bool) -> None:
        if on and self.state_sub is None:
            self.state_sub = self.node.create_subscription("sensor_msgs/msg/JointState",
                                                           "joint_states", self._on_state)
        elif not on and self.state_sub is not None:
            self.node.destroy_subscription(self.state_sub)
            self.state_sub = None

    def _compile(self) -> None:
        """Load (or compile) the kernels of the terms; a subscriber needs them now."""
        zeros = np.zeros(self.n)
        warm_up(self.log, "dynamics_terms", lambda: self._terms(zeros, zeros))
        self.compiled = True

    def _on_state(self, msg) -> None:
        try:
            q, qd = self.joints.state(msg)
        except Rejected as exc:
            self.drops.drop("/joint_states", str(exc))
            return
        if not self.node.is_active or not self.pub_terms.get_subscription_count():
            return
        if not self.compiled:
            self.log.info("a subscriber to /dynamics/terms: compiling the terms")
            self._compile()
        M, C, g = self._terms(q, qd)
        self.pub_terms.publish(self.m.terms(stamp_ns(msg.header.stamp), M, C @ qd, g, C))
        self.served += 1

    def _terms(self, q, qd):
        """M(q), C(q, q̇), g(q)."""
        return (dyn.mass_matrix(self.model, q), dyn.coriolis_matrix(self.model, q, qd),
                dyn.gravity_torques(self.model, q))


def main(argv: list[str] | None = None) -> int:
    return run_node("dynamics_server", DynamicsServerNode, argv)


if __name__ == "__main__":
    sys.exit(main())
