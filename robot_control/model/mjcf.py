"""RobotModel → MJCF (MuJoCo's XML), built from the package's model rather than from URDF text.

Body i of MuJoCo is body i of the package, with the same frame: MuJoCo places a body at
``pos``/``quat`` in its parent and then turns it about its joint's axis through ``pos`` of the
joint, i.e. T_{λ,i}(q) = M_i · exp([S_i] q) with S_i = (a, p × a) for a revolute joint through
p with unit axis a (Kim §2). A package screw S = (ω, v) without pitch is exactly that with
a = ω and p = ω × v (the point of the axis nearest the body origin); prismatic S = (0, v) is
axis v. So joint order, signs and body frames are the package's, and named frames become sites.

MuJoCo refuses moving bodies whose mass or principal inertias are below mjMINVAL = 1e-15
(``CheckBodyMassInertia`` in user_model.cc): PUMA 560's link 1 has no mass (only a rotor about
its axis), rods and point masses lack principal moments. ``loadable`` raises each of those to
MIN_MASS / MIN_INERTIA (far below anything physical, far above mjMINVAL) and logs a warning
that names the link and the change; the MJCF is written from the changed model, so the
package's dynamics of ``loadable(model)`` is what MuJoCo computes (test_mjcf.py).
"""

from __future__ import annotations

import logging
import xml.etree.ElementTree as ET
from dataclasses import dataclass, replace

import numpy as np

from robot_control.foundation.spatial import quaternion_xyzw
from robot_control.model.robot_model import Inertia, ModelError, RobotModel
from robot_control.model.xml_text import element_text

log = logging.getLogger(__name__)
Array = np.ndarray

#: smallest mass (kg) and principal moment (kg·m²) written for a moving body; MuJoCo needs > 1e-15
MIN_MASS = 1e-6
MIN_INERTIA = 1e-9
#: deepest body nesting MuJoCo's XML parser reads: tinyxml2 refuses elements 500 deep
#: (TINYXML2_MAX_ELEMENT_DEPTH), counting <mujoco>, <worldbody> and a body's <joint> (measured:
#: a 496-link chain loads, 497 does not, MuJoCo 3.x)
MJ_MAX_BODY_DEPTH = 496
#: integrators the MJCF can ask for (MuJoCo's names)
MJ_INTEGRATORS = ("implicitfast", "RK4", "Euler", "implicit")


@dataclass(frozen=True)
class Site:
    """A named point on a body (−1: the world); with ``geom`` attributes also a geom there."""

    name: str
    body: int
    placement: Array
    geom: dict | None = None


def loadable(model: RobotModel) -> tuple[RobotModel, list[str]]:
    """The model with every moving body at least MIN_MASS and MIN_INERTIA, and what was changed."""
    changes: list[str] = []
    bodies = []
    for b in model.bodies:
        inertia, what = _bounded(b.inertia)
        if what:
            changes.append(f"link '{b.name}': {what} (MuJoCo needs mass and inertia of moving "
                           "bodies > 1e-15)")
        bodies.append(replace(b, inertia=inertia))
    if not changes:
        return model, changes
    theta = np.concatenate([b.inertia.parameters() for b in bodies])
    return model.with_inertial_parameters(theta, check=False), changes


def _bounded(inertia: Inertia) -> tuple[Inertia, str]:
    """Raise mass to MIN_MASS and principal moments to MIN_INERTIA (axes kept); what changed."""
    parts = []
    mass = inertia.mass
    if mass < MIN_MASS:
        parts.append(f"mass {mass:.3g} -> {MIN_MASS:g} kg")
        mass = MIN_MASS
    Ic = 0.5 * (inertia.inertia_com + inertia.inertia_com.T)
    eig, axes = np.linalg.eigh(Ic)
    if eig.min() < MIN_INERTIA:
        raised = np.maximum(eig, MIN_INERTIA)
        parts.append(f"principal inertias {np.round(eig, 12).tolist()} -> "
                     f"{np.round(raised, 12).tolist()} kg·m²")
        Ic = axes @ np.diag(raised) @ axes.T
    if not parts:
        return inertia, ""
    return Inertia(mass, inertia.com.copy(), Ic), ", ".join(parts)


def _num(values) -> str:
    return " ".join(f"{float(v):.17g}" for v in np.atleast_1d(values))




def _place(element: ET.Element, T: Array) -> None:
    element.set("pos", _num(T[:3, 3]))
    x, y, z, w = quaternion_xyzw(T[:3, :3])
    element.set("quat", _num((w, x, y, z)))  # MuJoCo: w first


def joint_axis(joint) -> tuple[Array, Array]:
    """(point on the axis, unit axis) in the body frame of a package joint (refuses a pitch)."""
    w, v = np.asarray(joint.screw[:3], float), np.asarray(joint.screw[3:], float)
    if joint.type == "prismatic":
        return np.zeros(3), v
    pitch = float(w @ v)
    if abs(pitch) > 1e-9 * max(1.0, float(np.linalg.norm(v))):
        raise ModelError(f"joint '{joint.name}': a screw with pitch {pitch:g} has no MuJoCo joint")
    return np.cross(w, v), w


def body_depth(model: RobotModel) -> int:
    """How deep the model's bodies nest (1: every body on the world), without recursion."""
    depth: list[int] = []
    for b in model.bodies:  # parents come before their children
        depth.append(1 if b.parent < 0 else depth[b.parent] + 1)
    return max(depth, default=0)


def to_mjcf(model: RobotModel, timestep: float = 1e-3, integrator: str = "implicitfast",
            armature: Array | None = None, sites: list[Site] | tuple = (),
            world: list[ET.Element] | tuple = (), quiet: bool = False,
            extra: list[ET.Element] | tuple = ()) -> str:
    """MJCF text of the model (after ``loadable``): bodies, inertias, joints, sites, motors.

    ``armature`` is the reflected rotor inertia per joint (added to M's diagonal by MuJoCo);
    ``sites`` extra named points, ``world`` extra elements of the worldbody (environment geoms),
    ``extra`` extra top-level elements (e.g. the ``<equality>`` welds closing a cell's loops).
    """
    if integrator not in MJ_INTEGRATORS:
        raise ModelError(f"integrator must be one of {MJ_INTEGRATORS}, got '{integrator}'")
    if not timestep > 0.0:
        raise ModelError(f"timestep must be > 0, got {timestep}")
    deepest = body_depth(model)
    if deepest > MJ_MAX_BODY_DEPTH:
        raise ModelError(f"MJCF of '{model.name}': its bodies nest {deepest} deep and MuJoCo's XML "
                         f"parser reads at most {MJ_MAX_BODY_DEPTH}, so no MJCF of it would load "
                         "(the URDF export has no such limit)")
    model, changes = loadable(model)
    for change in changes:
        if not quiet:
            log.warning("MJCF of '%s': %s", model.name, change)
    root = ET.Element("mujoco", model=model.name)
    ET.SubElement(root, "compiler", angle="radian", inertiafromgeom="false", autolimits="true",
                  balanceinertia="false", boundmass="0", boundinertia="0")
    ET.SubElement(root, "option", timestep=f"{timestep:.17g}", integrator=integrator,
                  gravity=_num(model.gravity), cone="elliptic")
    worldbody = ET.SubElement(root, "worldbody")
    for element in world:
        worldbody.append(element)
    elements = {-1: worldbody}
    arm = np.zeros(model.nq) if armature is None else np.asarray(armature, float)
    for i, b in enumerate(model.bodies):
        body = ET.SubElement(elements[b.parent], "body", name=b.name)
        _place(body, b.joint.origin)
        I = b.inertia.inertia_com
        ET.SubElement(body, "inertial", pos=_num(b.inertia.com), mass=f"{b.inertia.mass:.17g}",
                      fullinertia=_num([I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]]))
        j = b.joint
        point, axis = joint_axis(j)
        attrs = {"name": j.name, "type": "slide" if j.type == "prismatic" else "hinge",
                 "pos": _num(point), "axis": _num(axis), "armature": f"{arm[i]:.17g}",
                 "damping": f"{j.friction.viscous:.17g}",
                 "frictionloss": f"{j.friction.coulomb:.17g}"}
        if j.type != "continuous" and np.isfinite(j.lower) and np.isfinite(j.upper):
            attrs["range"] = _num([j.lower, j.upper])
        else:
            attrs["limited"] = "false"
        if np.isfinite(j.effort_limit):
            attrs["actuatorfrcrange"] = _num([-j.effort_limit, j.effort_limit])
        ET.SubElement(body, "joint", **attrs)
        elements[i] = body
    frames = [Site(name, f.body, f.placement) for name, f in model.frames.items()
              if name not in model.body_names and name != model.base_name]
    for site in [*frames, *sites]:
        element = ET.SubElement(elements[site.body], "site", name=site.name, size="0.005")
        _place(element, np.asarray(site.placement, float))
        if site.geom is not None:  # e.g. the collision sphere of a contact frame
            geom = ET.SubElement(elements[site.body], "geom", name=site.name, **site.geom)
            _place(geom, np.asarray(site.placement, float))
    actuators = ET.SubElement(root, "actuator")
    for b in model.bodies:  # torque motors (gear 1) for other users; the plant uses qfrc_applied
        attrs = {"name": f"{b.joint.name}_motor", "joint": b.joint.name}
        if np.isfinite(b.joint.effort_limit):
            attrs["ctrlrange"] = _num([-b.joint.effort_limit, b.joint.effort_limit])
        ET.SubElement(actuators, "motor", **attrs)
    root.extend(extra)
    return element_text(root) + "\n"  # not ET.indent/tostring: they recurse a level a body


def compile_mjcf(xml: str):
    """mujoco.MjModel of MJCF text; MuJoCo's refusal becomes one ModelError line naming the body."""
    mujoco = require_mujoco()
    try:
        return mujoco.MjModel.from_xml_string(xml)
    except ValueError as exc:
        reason = " ".join(str(exc).split())
        raise ModelError(f"MuJoCo refuses the model: {reason}") from None


class MujocoMissing(ImportError):
    """The optional ``mujoco`` package is not installed."""


def require_mujoco():
    """The mujoco module, or MujocoMissing with the one-line remedy."""
    try:
        import mujoco
    except ImportError:
        raise MujocoMissing("engine 'mujoco' needs the mujoco package: pip install mujoco") from None
    return mujoco
