"""The ``cell_plant`` node: m arms holding one object on a table (Huo §3.13) simulated as one
closed chain (sim/cell.py; ``engine: mujoco``: sim/mujoco_cell.py), driven like the ``plant`` node.

It is the ``plant`` node's drive (nodes/plant_node.py: which commands apply, lockstep, the safe
behaviour, the safety stop, faults, its figures on /diagnostics) around a different mechanism:
the arms and the object are one system whose grasp forces couple every joint within a physics
step, so the whole cell is one plant (docs/architecture.md). Its configuration is a cell scenario
(``scenario``): the cell, where the object starts, the table and the sensors' noise.

Published, frame ``world`` (stamps: the state's time t_k):

- ``/joint_states``: every arm's joints, named ``<arm>_<joint>`` (the cell's arms_model, the
  ros2_control convention for several arms in one system) — what the cell controller reads and
  answers, one consistent sample of the whole cell;
- ``/<arm>/joint_states``: the same sample per arm, named as the arm's own robot model names its
  joints, for single-arm tools (a robot_state_publisher in the arm's namespace, a plot, a bag);
- ``/object/pose`` (geometry_msgs/PoseStamped): the true pose of the object's contact frame E
  (the frame of Huo's X, whose reference the cell controller publishes on /object/reference).

At the start of each period, under the torque applied from then on (t_k⁺, the instant the
offline simulation logs its forces), stamped t_k:

- ``/wrench``: the table's wrench on the object at E (the normal force λ_E along the plane's
  normal; zero when E is off the table);
- ``/<arm>/wrench``: the wrench arm i exerts on the object at its grasp, world axes;
- ``/object/accel`` (geometry_msgs/AccelStamped): the object's angular acceleration and the
  linear acceleration of its centre of mass — with the grasp forces, what it takes to split the
  pressing force among the arms (sim/cell_simulate.pressing_forces).

It applies ``/joint_command`` of the whole cell (names ``<arm>_<joint>``). The safe behaviour
``hold`` makes each arm carry itself and its share ``load_shares`` of the object (the augmented
arm models of Huo 3-148, 3-154: gravity compensation with damping), so a cell without commands
stays put. Its /diagnostics status adds the contact force and each arm's pressing force p_i
(beyond carrying its share of the object) and its fraction of the total.
"""

from __future__ import annotations

import sys

import numpy as np

from robot_control import dynamics as dyn
from robot_control.bus import ParameterError
from robot_control.bus.param_table import declare
from robot_control.model.cell import arms_model, augmented_arm_model, share_vector
from robot_control.nodes.common import run_node, warm_up
from robot_control.nodes.convert import period_ns, seconds
from robot_control.nodes.drive_safety import DriveSafety
from robot_control.nodes.node_parameters import (
    AutostartParams,
    CellScenarioParams,
    EngineParams,
    FrameParams,
    TimingParams,
    declare_cell_common,
    declare_engine,
)
from robot_control.nodes.plant_node import PlantNode
from robot_control.nodes.plant_parameters import (
    CellLockstepStart,
    CellPlantParams,
    CommandSourceParams,
)
from robot_control.nodes.realtime import RealtimeParams
from robot_control.nodes.tf_publisher import TfParams
from robot_control.sim.cell import CellPlantBase
from robot_control.sim.cell_simulate import pressing_forces
from robot_control.sim.engine import make_cell_plant


class ForceFigures:
    """The contact force and each arm's pressing force over a run (one sample per period)."""

    def __init__(self, arms: list[str]) -> None:
        self.arms = arms
        self.count = 0
        self.contact_sum = 0.0
        self.contact_min = np.inf
        self.contact_max = -np.inf
        self.contact_last = 0.0
        self.pressing_sum = np.zeros(len(arms))
        self.pressing_last = np.zeros(len(arms))

    def add(self, contact: float, pressing: np.ndarray) -> None:
        self.count += 1
        self.contact_sum += contact
        self.contact_min = min(self.contact_min, contact)
        self.contact_max = max(self.contact_max, contact)
        self.contact_last = contact
        self.pressing_sum += pressing
        self.pressing_last = pressing

    def summary(self) -> dict:
        """Key/values for /diagnostics; an arm's fraction is Σp_i / Σλ_E (the offline summary's
        measured_fraction_mean)."""
        if not self.count:
            return {}
        out = {"contact_force": self.contact_last, "contact_force_min": self.contact_min,
               "contact_force_max": self.contact_max}
        for i, arm in enumerate(self.arms):
            out[f"{arm}_pressing_force"] = float(self.pressing_last[i])
            out[f"{arm}_pressing_fraction"] = (float(self.pressing_sum[i] / self.contact_sum)
                                               if self.contact_sum else None)
        return out


class CellPlantNode(PlantNode):
    """Wires a cell plant (sim/cell.py, or sim/mujoco_cell.py with ``engine: mujoco``) to the bus."""

    #: its parameter tables, in declaration order (docs/parameters.md)
    PARAMETER_TABLES = (CellScenarioParams, TimingParams, CellPlantParams, EngineParams, DriveSafety,
                        RealtimeParams, FrameParams, TfParams, CellLockstepStart, CommandSourceParams,
                        AutostartParams)

    COMMAND_SOURCE = "cell_controller"
    LOCKSTEP_START = CellLockstepStart

    def _declare_plant(self, node) -> None:
        common = declare_cell_common(node)
        sc = self.scenario = common.scenario
        self.cell = sc.cell
        self.model = arms_model(sc.cell)
        self.lockstep = common.timing.lockstep
        self.period_ns = period_ns(common.timing.rate)
        own = declare(node, CellPlantParams, physics_dt=sc.physics_dt, load_shares=[
            float(s) for s in sc.controller_params.get("load_shares", [])])
        self.dt, shares = own.physics_dt, own.load_shares
        steps = seconds(self.period_ns) / self.dt
        if round(steps) < 1 or abs(steps - round(steps)) > 1e-6:
            raise ParameterError(f"physics_dt {self.dt:g} s must divide the control period "
                                 f"{seconds(self.period_ns):g} s into whole steps")
        try:
            self.shares = share_vector(shares, self.cell.m)
        except ValueError as exc:
            raise ParameterError(str(exc)) from None
        self.hold_models = [augmented_arm_model(self.cell, i, s)
                            for i, s in enumerate(self.shares)]
        self.slices = self.cell.joint_slices()
        self.n_arms = self.cell.nq
        self.q0, self.qd0 = sc.arm_guess, None
        self.plant_cfg = declare_engine(node, sc.plant)
        arms = self.cell.arm_names
        self.arm_joints = [arm.model.joint_names for arm in self.cell.arms]
        publisher = node.create_lifecycle_publisher
        self.pub_arm_states = [publisher("sensor_msgs/msg/JointState", f"{a}/joint_states")
                               for a in arms]
        self.pub_arm_wrenches = [publisher("geometry_msgs/msg/WrenchStamped", f"{a}/wrench")
                                 for a in arms]
        self.pub_contact = publisher("geometry_msgs/msg/WrenchStamped", "wrench")
        self.pub_pose = publisher("geometry_msgs/msg/PoseStamped", "object/pose")
        self.pub_accel = publisher("geometry_msgs/msg/AccelStamped", "object/accel")

    def _new_plant(self) -> CellPlantBase:
        plant = make_cell_plant(self.cell, self.plant_cfg, self.dt)
        plant.reset(self.scenario.arm_guess, self.scenario.object_pose)
        return plant

    def _driven_state(self) -> tuple[np.ndarray, np.ndarray]:
        return self.plant.q[: self.n_arms], self.plant.qd[: self.n_arms]

    def _hold_torque(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Each arm: τ_i = g̃_i(q_i) − d M̃_i(q_i) q̇_i on its model holding its share of the
        object (Huo 3-148, 3-154); one Newton–Euler pass per arm, q̈ = −d q̇."""
        tau = np.empty(self.n_arms)
        for model, s in zip(self.hold_models, self.slices):
            tau[s] = dyn.inverse_dynamics(model, q[s], np.zeros_like(qd[s]),
                                          -self.safety.hold_damping * qd[s])
        return tau

    def _predicted_velocity(self, tau: np.ndarray, steps: int) -> None:
        """No prediction for the cell (the arms' q̈ depends on the grasp's constraint forces):
        its overspeed stop still holds."""
        return None

    def _step(self, tau: np.ndarray, steps: int, answers_state: bool) -> np.ndarray:
        if answers_state:
            self.plant.evaluate(tau)  # λ and q̈ under τ at the state published (t_k⁺)
            self._publish_forces(self.stamp)
        return self.plant.step(tau, steps * self.dt)

    def _publish_forces(self, stamp: int) -> None:
        """Contact and grasp wrenches and the object's accelerations at t_k⁺; the figures."""
        plant = self.plant
        angular, linear = plant.object_accelerations()
        grasp = plant.grasp_wrenches()
        contact = plant.contact_force()
        self.pub_contact.publish(self.m.wrench(
            stamp, np.concatenate([np.zeros(3), contact * plant.plane.normal]), "world"))
        for pub, wrench in zip(self.pub_arm_wrenches, grasp):
            pub.publish(self.m.wrench(stamp, wrench, "world"))
        self.pub_accel.publish(self.m.accel(stamp, angular, linear, "world"))
        self.forces.add(contact, pressing_forces(grasp[:, 3:], self.cell.object_inertia.mass,
                                                 linear, self.cell.gravity, plant.plane.normal,
                                                 self.shares))

    def _publish_extras(self, stamp: int, q: np.ndarray, qd: np.ndarray) -> None:
        applied = self.plant.applied
        for pub, names, s in zip(self.pub_arm_states, self.arm_joints, self.slices):
            pub.publish(self.m.joint_state(stamp, names, q[s], qd[s], applied[s]))
        self.pub_pose.publish(self.m.pose(stamp, self.plant.frame_pose("contact"), "world"))

    def _on_new_plant(self) -> None:
        """Load the closed chain's kernels (a throw-away plant steps once under the hold)."""
        def step_once() -> None:
            plant = self._new_plant()
            tau = self._hold_torque(plant.q[: self.n_arms], np.zeros(self.n_arms))
            plant.evaluate(tau)
            _, linear = plant.object_accelerations()
            pressing_forces(plant.grasp_wrenches()[:, 3:], self.cell.object_inertia.mass, linear,
                            self.cell.gravity, plant.plane.normal, self.shares)
            plant.step(tau, seconds(self.period_ns))

        warm_up(self.log, "inverse_dynamics",
                lambda: self._hold_torque(self.q0, np.zeros(self.n_arms)))
        warm_up(self.log, f"cell_plant_step.{self.cell.name}", step_once)

    def _reset_bookkeeping(self) -> None:
        super()._reset_bookkeeping()
        self.forces = ForceFigures(self.cell.arm_names)

    def stats(self) -> dict:
        return {**super().stats(), **self.forces.summary()}


def main(argv: list[str] | None = None) -> int:
    return run_node("cell_plant", CellPlantNode, argv)


if __name__ == "__main__":
    sys.exit(main())
