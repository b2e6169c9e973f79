"""The cell on MuJoCo (``engine: mujoco``): sim/cell.py's closed chain, stepped by MuJoCo.

The MJCF is the closed-chain model itself (model/cell.py ``closed_chain_model`` through
model/mjcf.py): the arms on the common base and the object on its six coordinate joints
X = (x, y, z, yaw, pitch, roll), so MuJoCo's qpos is the internal engine's q, joint for joint,
and the package's kinematics of q (frames, the object's accelerations) apply to both. What
closes the chain is MuJoCo's:

- each grasp is a ``weld`` equality between the arm's grasping site ``<arm>_ee`` and its place
  on the object ``grasp_<arm>`` (six rows, the internal loop closure's). MuJoCo's constraints
  are soft: impedance 0.9999 (mjMAXIMP, the stiffest), time constant two physics steps,
  critically damped — where the internal engine holds the loop exactly (Kim's constrained
  dynamics, Baumgarte against drift). Under a steady load a soft row carries the exact force
  with a small violation (f = R⁻¹ a_ref), so the forces agree at rest and differ in transients;
- the table is the single-arm rigid plane's geometry (sim/mujoco_contact.py: a plane geom and
  a sphere at E), frictionless (condim 1) like the internal smooth plane, with the welds'
  impedance and time constant (the single arm's impedance 0.99 leaves the first millisecond's
  force 4 % short), damping ratio 2 where the internal engine's impact is plastic (at 1 the
  bar landing from 1 cm rebounds for 40 ms; at 2 it stays down, 9 nm deep under 30 N; at 10
  the force still creeps by 2 mN half a second after landing), and a 1 nm margin, so E at
  distance 0 is in contact as at the internal engine's depth > −1e-9 m (without it the first
  period has no contact: the bar drops and lands with a 65 N spike). A soft unilateral contact
  where the internal engine has an exact one: a landing's impulse is spread over a physics
  step (a one-sample spike of ~4 kN where the internal engine's velocity jumps).

The object's five massless coordinate links and PUMA's massless link 1 weigh MIN_MASS = 1e-6 kg
in MuJoCo (model/mjcf.py ``loadable``): 5e-5 N more on the table.

Forces, at the state after ``mj_forward`` under the held torque: the table's push from
``mj_contactForce``; the wrench w_i arm i exerts on the object at its grasp from its weld's rows
of ``efc_force``: their generalized force J_iᵀf_i (``mj_mulJacTVec``) on the object's six joints
is J_Gᵀ w_i, with J_G the Jacobian of frame ``grasp_<arm>`` in X (6 × 6, regular away from
pitch ±90°), so w_i = J_G⁻ᵀ (J_iᵀ f_i)_X — the internal engine's −λ_i, in its frame and rows.

Joint friction, damping and stops: none, as in the internal engine's cell (the cell's joints
have no stops; ``at_limit`` reports). Integrator: implicitfast at ``physics_dt``, MuJoCo's
recommended (sim/mujoco_engine.py); the internal cell integrates RK4.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

from robot_control import dynamics as dyn
from robot_control.model.cell import Cell
from robot_control.model.mjcf import compile_mjcf, require_mujoco, to_mjcf
from robot_control.sim import mujoco_contact as MC
from robot_control.sim.cell import CellPlantBase
from robot_control.sim.plant_base import finite

Array = np.ndarray
#: the grasp welds and the table: MuJoCo's largest impedance (mjMAXIMP) and a time constant of
#: two physics steps (the smallest MuJoCo keeps stable), critically damped
WELD_IMPEDANCE, WELD_STEPS = 0.9999, 2.0
SOLIMP = f"{WELD_IMPEDANCE} {WELD_IMPEDANCE} 0.001 0.5 2"
#: the table: damping ratio (no rebound: the internal impact is plastic) and the distance at
#: which E touches it, m (the internal engine's contact test, depth > −1e-9)
TABLE_DAMPRATIO, TABLE_MARGIN = 2.0, 1e-9


def grasp_welds(cell: Cell, dt: float) -> ET.Element:
    """``<equality>`` with one weld per arm: its grasping site on its place on the object."""
    equality = ET.Element("equality")
    for arm in cell.arms:
        ET.SubElement(equality, "weld", name=f"grasp_{arm.name}", site1=f"{arm.name}_ee",
                      site2=f"grasp_{arm.name}", solref=f"{WELD_STEPS * dt:.17g} 1",
                      solimp=SOLIMP)
    return equality


class MujocoCellPlant(CellPlantBase):
    """The cell stepped by MuJoCo; the interface of sim/cell.py's CellPlant."""

    ENGINE = "mujoco"

    def __init__(self, cell: Cell, config: dict | None = None, physics_dt: float = 1e-3) -> None:
        mujoco = self._mujoco = require_mujoco()
        super().__init__(cell, config, physics_dt)
        world, sites = MC.environment_geoms(self.environment, self.model, "contact")
        xml = to_mjcf(self.model, timestep=self.dt, integrator="implicitfast", sites=sites,
                      world=world, extra=[grasp_welds(cell, self.dt)],
                      quiet=self.model.name in _WARNED)
        _WARNED.add(self.model.name)  # the minimum-mass warnings once per cell and process
        m = self.mj = compile_mjcf(xml)
        d = self.mj_data = mujoco.MjData(m)
        m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_AUTORESET  # divergence is seen
        m.jnt_limited[:] = 0
        m.dof_damping[:] = 0.0
        m.dof_frictionloss[:] = 0.0
        self._sphere = m.geom(MC.SPHERE).id
        table = [m.geom(MC.PLANE).id, self._sphere]
        m.geom_solref[table] = (WELD_STEPS * self.dt, TABLE_DAMPRATIO)
        m.geom_solimp[table] = np.array(SOLIMP.split(), float)
        m.geom_margin[self._sphere] = TABLE_MARGIN
        self._object = np.arange(self.n_arms, self.n)  # X's dofs (hinges and slides: nv = nq)
        self._equality = mujoco.mjtConstraint.mjCNSTR_EQUALITY
        # views into MjData, fetched once
        self._qpos, self._qvel, self._qacc = d.qpos, d.qvel, d.qacc
        self._tau = d.qfrc_applied[: self.n_arms]
        self._wrench = np.zeros(6)
        self._qfrc = np.zeros(m.nv)
        self._grasp = np.zeros((cell.m, 6))
        self._normal = 0.0

    def reset(self, q_arms_guess, object_pose, t: float = 0.0) -> None:
        """Grasp the object at rest at ``object_pose`` (the internal engine's assembly)."""
        super().reset(q_arms_guess, object_pose, t)
        mujoco, d = self._mujoco, self.mj_data
        mujoco.mj_resetData(self.mj, d)  # also clears the solver's warm start
        d.qpos[:], d.qvel[:], d.time = self.q, self.qd, self.t
        mujoco.mj_forward(self.mj, d)
        self._grasp[:] = 0.0
        self._normal = 0.0

    def contact_force(self) -> float:
        """Normal force the table exerts on E at the last evaluated state (0 off the table)."""
        return self._normal

    def grasp_wrenches(self) -> Array:
        """(m, 6): wrench (n, f) each arm exerts on the object at its grasp point, world axes."""
        return self._grasp.copy()

    def evaluate(self, tau_arms) -> None:
        """q̈ and the constraint forces at the current state under ``tau_arms`` (``mj_forward``:
        the state and the solver's warm start are untouched)."""
        self._tau[:] = self.saturate(tau_arms)
        self._mujoco.mj_forward(self.mj, self.mj_data)
        self.qdd = self._qacc.copy()
        self._read_forces()

    def step(self, tau_arms, duration: float) -> Array:
        """Hold the arm torques for ``duration`` (whole physics steps); returns the torque applied."""
        tau = self.saturate(tau_arms)
        if not finite(tau):  # what NaN torques do to the internal engine, at once
            raise FloatingPointError(f"cell state diverged at t = {self.t:.6f} s (torque {tau})")
        self._tau[:] = tau
        self._mujoco.mj_step(self.mj, self.mj_data, max(1, int(round(duration / self.dt))))
        self.q, self.qd = self._qpos.copy(), self._qvel.copy()
        self.t = float(self.mj_data.time)
        self.applied = tau
        if not (finite(self.q) and finite(self.qd)):
            raise FloatingPointError(f"cell state diverged at t = {self.t:.6f} s")
        return tau

    def _read_forces(self) -> None:
        """The table's normal push on E and each arm's grasp wrench, from MuJoCo's forces."""
        mujoco, m, d = self._mujoco, self.mj, self.mj_data
        MC.contact_wrench(mujoco, m, d, self._sphere, self._wrench)
        self._normal = float(self.plane.normal @ self._wrench[3:])
        self.in_contact = self._normal > 0.0
        rows = d.efc_type == self._equality
        for k, arm in enumerate(self.cell.arms):
            mujoco.mj_mulJacTVec(m, d, self._qfrc, np.where(rows & (d.efc_id == k),
                                                            d.efc_force, 0.0))
            J = dyn.jacobian(self.model, self.q, f"grasp_{arm.name}")[:, self._object]
            self._grasp[k] = np.linalg.solve(J.T, self._qfrc[self._object])


_WARNED: set[str] = set()
