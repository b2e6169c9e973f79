"""The scenario's environment and joint stops as MuJoCo constraints, with their forces mapped.

MuJoCo's soft constraint (doc/computation "Soft constraints"; engine_core_constraint.c) solves
f = (A + R)⁻¹ (a_ref − a₀) per row, with a_ref = −B v − K d r, R = (1 − d)/d · Ã (Ã:
``efc_diagA``, MuJoCo's diagonal approximation of A = J M⁻¹ Jᵀ from the bodies' and dofs'
invweight0, so constant) and, for solref = (−k', −b'), K = k'/d², B = b'/d. With a constant
impedance d = dmin = dmax ≪ 1, R ≫ A and
    f ≈ −(b' v + k' r) / ((1 − d) Ã),
so k' = k (1 − d) Ã and b' = b (1 − d) Ã make the row the package's spring–damper
f = −k r − b v (≥ 0: a surface and a stop only push), to O(d) = 1e-4 relative. Ã is read from
MuJoCo itself, by probing one constraint row (``diagonal_approximation``), not re-derived.

- compliant plane: a plane geom shifted by the sphere radius below the surface, and a sphere on
  the contact frame: the sphere touches the shifted plane exactly when the frame's origin
  touches the surface, so penetration is the package's δ = offset − n·p for any orientation;
  Coulomb friction μ in an elliptic cone (MuJoCo's friction rows are soft with the damping b,
  so friction is viscous b v_t up to the cone μ f_n; the package's is μ f_n tanh(v_t/v_s));
- rigid plane: MuJoCo's stiffest recommended contact (time constant two physics steps,
  critically damped, impedance 0.99) — a soft constraint where the package has Kim's exact
  unilateral one with a plastic impact;
- joint stops: the limit rows get the package's stop stiffness and damping the same way.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

from robot_control.model.mjcf import Site, _num, _place
from robot_control.sim.environment import CompliantSurface, RigidSurface

Array = np.ndarray
#: constant impedance of mapped spring–damper rows (MuJoCo's smallest, mjMINIMP)
SOFT = 1e-4
#: radius of the contact sphere on the contact frame, m
SPHERE_RADIUS = 0.01
#: rigid plane: impedance and time constant in physics steps (MuJoCo: ≥ 2 steps)
RIGID_IMPEDANCE, RIGID_STEPS = 0.99, 2.0
PLANE, SPHERE = "environment", "contact_sphere"


def _plane_frame(normal: Array, point: Array) -> Array:
    """Placement of a plane geom: z along the normal, origin at ``point``."""
    z = normal / np.linalg.norm(normal)
    x = np.cross([0.0, 1.0, 0.0], z) if abs(z[1]) < 0.9 else np.cross(z, [1.0, 0.0, 0.0])
    x /= np.linalg.norm(x)
    T = np.eye(4)
    T[:3, :3] = np.column_stack([x, np.cross(z, x), z])
    T[:3, 3] = point
    return T


def environment_geoms(environment, model, contact_frame: str) -> tuple[list, list[Site]]:
    """(worldbody elements, sites) for the environment: the plane geom and the contact site."""
    if environment is None:
        return [], []
    if not isinstance(environment, CompliantSurface | RigidSurface):
        raise ValueError(f"engine 'mujoco' cannot represent the environment "
                         f"{type(environment).__name__}")
    plane = environment.plane
    surface = {"condim": "3" if environment.friction > 0.0 else "1",
               "friction": _num([environment.friction, 0.0, 0.0])}
    geom = ET.Element("geom", name=PLANE, type="plane", size="0 0 1", contype="0",
                      conaffinity="1", **surface)
    _place(geom, _plane_frame(plane.normal, plane.normal * (plane.offset - SPHERE_RADIUS)))
    body, X = model.frame_placement(contact_frame)
    if body < 0:
        raise ValueError(f"plant.contact_frame '{contact_frame}' is on the fixed base")
    sphere = {"type": "sphere", "size": f"{SPHERE_RADIUS:.17g}", "contype": "1",
              "conaffinity": "0", **surface}
    return [geom], [Site(SPHERE, body, X, sphere)]


def diagonal_approximation(mujoco, m, d, kind, setup) -> Array:
    """MuJoCo's Ã of the first row of each constraint of ``kind``, by id, after ``setup(d)``."""
    setup(d)
    mujoco.mj_forward(m, d)
    rows = {}
    for r in range(d.nefc):
        if d.efc_type[r] == kind and int(d.efc_id[r]) not in rows:
            rows[int(d.efc_id[r])] = float(d.efc_diagA[r])
    mujoco.mj_resetData(m, d)
    return rows


def spring_solref(stiffness: float, damping: float, diag: float) -> Array:
    """solref (−k', −b') that makes a row with impedance SOFT the spring–damper (k, b)."""
    return np.array([-stiffness * (1.0 - SOFT) * diag, -damping * (1.0 - SOFT) * diag])


SOFT_SOLIMP = np.array([SOFT, SOFT, 0.001, 0.5, 2.0])


def map_environment(mujoco, m, d, environment, dt: float) -> None:
    """Set the contact's solref/solimp on the compiled model from the scenario's surface."""
    if environment is None:
        return
    plane, sphere = m.geom(PLANE).id, m.geom(SPHERE).id
    if isinstance(environment, RigidSurface):
        m.geom_solref[[plane, sphere]] = (RIGID_STEPS * dt, 1.0)
        m.geom_solimp[[plane, sphere]] = (RIGID_IMPEDANCE, RIGID_IMPEDANCE, 0.001, 0.5, 2.0)
        return
    normal = environment.plane.normal

    def press(data):  # move the plane 1 mm into the sphere wherever the arm is (q = 0)
        mujoco.mj_kinematics(m, data)
        centre = data.geom_xpos[sphere]
        m.geom_pos[plane] = centre - normal * (SPHERE_RADIUS - 1e-3)

    saved = m.geom_pos[plane].copy()
    kind = (mujoco.mjtConstraint.mjCNSTR_CONTACT_ELLIPTIC if environment.friction > 0.0
            else mujoco.mjtConstraint.mjCNSTR_CONTACT_FRICTIONLESS)
    diag = diagonal_approximation(mujoco, m, d, kind, press)
    m.geom_pos[plane] = saved
    if not diag:
        raise RuntimeError("MuJoCo made no contact between the probe plane and the contact sphere")
    solref = spring_solref(environment.stiffness, environment.damping, next(iter(diag.values())))
    m.geom_solref[[plane, sphere]] = solref
    m.geom_solimp[[plane, sphere]] = SOFT_SOLIMP


def map_joint_stops(mujoco, m, d, lower: Array, upper: Array, stiffness: float,
                    damping: float) -> None:
    """Give every limited joint the package's stop (k, b) beyond its limits."""
    limited = np.flatnonzero(m.jnt_limited)
    if limited.size == 0:
        return

    def beyond(data):  # every limited joint 1 mrad past its upper limit
        data.qpos[limited] = upper[limited] + 1e-3

    diag = diagonal_approximation(mujoco, m, d, mujoco.mjtConstraint.mjCNSTR_LIMIT_JOINT, beyond)
    for j in limited:
        m.jnt_solref[j] = spring_solref(stiffness, damping, diag[int(j)])
        m.jnt_solimp[j] = SOFT_SOLIMP


def contact_wrench(mujoco, m, d, sphere: int, out: Array) -> None:
    """World wrench (0, f) the environment exerts on the contact sphere (mj_contactForce)."""
    out[:] = 0.0
    f6 = np.zeros(6)
    for i in range(d.ncon):
        c = d.contact[i]
        if sphere not in (c.geom1, c.geom2):
            continue
        mujoco.mj_contactForce(m, d, i, f6)
        # the contact frame's rows are the normal (geom1 → geom2) and two tangents; f acts on geom2
        force = c.frame.reshape(3, 3).T @ f6[:3]
        out[3:] += force if c.geom2 == sphere else -force
