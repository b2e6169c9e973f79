"""Denavit–Hartenberg tables in YAML → RobotModel (standard D-H, Huo 1-8; modified D-H, Huo 1-9).

Body i is D-H frame i. The joint variable q_i adds to θ_i (σ = 0, revolute) or d_i (σ = 1,
prismatic) on top of the table's offsets θ_i, d_i. File layout (every number may also be an
expression such as ``-pi/2`` over ``pi``, ``deg`` and the file's ``constants``)::

    name: ddarm
    convention: standard            # standard | modified
    gravity: [0, 0, -9.81]          # base frame
    constants: {d2: 0.462}
    base: {xyz: [0, 0, 0], rpy: [0, 0, 0]}   # pose of D-H frame 0 in the base (or matrix: 4×4)
    links:
      - {name: link1, joint: joint1, sigma: 0, a: 0, alpha: pi/2, d: 0, theta: 0,
         mass: 5.0, com: [0, 0, 0],
         inertia: [0.2, 0.3, 0.1, 0, 0, 0],   # [ixx, iyy, izz, ixy, ixz, iyz] or 3×3, about the COM
         lower: -pi, upper: pi, velocity: 3.0, effort: 50.0,
         friction: {viscous: 0.1, coulomb: 0.2, static: 0.5, stribeck_velocity: 0.01}}
    tool: {xyz: [0, 0, 0.1]}        # frame "tool" on the last link
    frames: {camera: {link: link2, xyz: [0.1, 0, 0], rpy: [0, 0, 0]}}

Every row must give the D-H parameters ``a``, ``alpha``, ``d``, ``theta`` and the inertia ``mass``,
``com``, ``inertia`` (a point mass writes ``inertia: [0, 0, 0, 0, 0, 0]``): a missing one is an
error naming it, never a silent 0. ``velocity`` and ``effort`` are required as well; a joint
without a limit says so explicitly with ``.inf`` (YAML's infinity), e.g. ``effort: .inf`` for an
ideal actuator. ``sigma`` defaults to 0 (revolute); ``lower``/``upper`` default to no position
limit; ``name``/``joint`` default to ``link<i>``/``joint<i>``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from robot_control.foundation.safe_yaml import load_file
from robot_control.foundation.spatial import Ad, inverse_transform, rot_x, rot_z, rpy_to_matrix, transform
from robot_control.model.expressions import number, read_constants
from robot_control.model.robot_model import (
    Body,
    Frame,
    Inertia,
    Joint,
    JointFriction,
    ModelError,
    RobotModel,
    check_inertia,
)

CONVENTIONS = ("standard", "modified")
_TOP_KEYS = ("name", "convention", "gravity", "constants", "base", "base_name", "links", "tool",
             "frames")
_LINK_KEYS = ("name", "joint", "sigma", "a", "alpha", "d", "theta", "mass", "com", "inertia",
              "lower", "upper", "velocity", "effort", "friction")
_REQUIRED_KEYS = ("a", "alpha", "d", "theta", "mass", "com", "inertia", "velocity", "effort")
_LIMIT_KEYS = ("velocity", "effort")  # required, but may be .inf: no limit, said explicitly
_FRICTION_KEYS = ("viscous", "coulomb", "static", "stribeck_velocity")
_PLACEMENT_KEYS = ("xyz", "rpy", "matrix")
_Z = np.array([0.0, 0.0, 1.0])


def trans_x(a: float) -> np.ndarray:
    """Trans_x(a): translation by a along x."""
    return transform(None, (a, 0.0, 0.0))


def trans_z(d: float) -> np.ndarray:
    """Trans_z(d): translation by d along z."""
    return transform(None, (0.0, 0.0, d))


def standard_dh_transform(a: float, alpha: float, d: float, theta: float) -> np.ndarray:
    """ⁱ⁻¹A_i = Rot_z(θ) Trans_z(d) Trans_x(a) Rot_x(α) (Huo 1-8)."""
    return transform(rot_z(theta)) @ trans_z(d) @ trans_x(a) @ transform(rot_x(alpha))


def modified_dh_transform(a: float, alpha: float, d: float, theta: float) -> np.ndarray:
    """ⁱ⁻¹A_i = Trans_x(a) Rot_x(α) Trans_z(d) Rot_z(θ) (Huo 1-9)."""
    return trans_x(a) @ transform(rot_x(alpha)) @ trans_z(d) @ transform(rot_z(theta))


def dh_joint(convention: str, sigma: int, a: float, alpha: float, d: float, theta: float):
    """Offset M and unit screw S (in frame i) with ⁱ⁻¹A_i(q) = M · exp([S] q).

    Standard D-H moves about z_{i−1}, before the fixed part: A(q) = Rot_z(q) M (or Trans_z(q) M),
    so S = Ad_{M⁻¹}(ẑ, 0) (or Ad_{M⁻¹}(0, ẑ)). Modified D-H moves about z_i, after it: S = (ẑ, 0)
    or (0, ẑ).
    """
    axis = np.concatenate([np.zeros(3), _Z]) if sigma == 1 else np.concatenate([_Z, np.zeros(3)])
    if convention == "standard":
        M = standard_dh_transform(a, alpha, d, theta)
        return M, Ad(inverse_transform(M)) @ axis
    return modified_dh_transform(a, alpha, d, theta), axis


def load_dh_yaml(source: str | Path | Mapping) -> RobotModel:
    """Build a RobotModel from a D-H YAML file (path) or an already-parsed mapping."""
    if isinstance(source, Mapping):
        spec, where, default_name = source, "D-H table", "robot"
    else:
        path = Path(source)
        if not path.is_file():
            raise FileNotFoundError(f"D-H file not found: {path}")
        spec = load_file(path, ModelError)
        where, default_name = str(path), path.stem
    if not isinstance(spec, Mapping):
        raise ModelError(f"{where}: expected a mapping with a 'links' list")
    _check_keys(spec, _TOP_KEYS, where)
    constants = read_constants(spec.get("constants"), where)
    convention = spec.get("convention", "standard")
    if convention not in CONVENTIONS:
        raise ModelError(
            f"{where}: key 'convention' must be one of {', '.join(CONVENTIONS)}, got {convention!r}"
        )
    links = spec.get("links")
    if not isinstance(links, list) or not links:
        raise ModelError(f"{where}: key 'links' must be a non-empty list of D-H rows")
    base = _placement(spec.get("base", {}), constants, f"{where}: key 'base'", ())
    base_name = spec.get("base_name", "base")
    bodies = [_parse_link(row, i, convention, constants, where) for i, row in enumerate(links)]
    bodies[0].joint.origin = base @ bodies[0].joint.origin
    frames = {str(base_name): Frame(str(base_name), -1, np.eye(4))}
    frames.update(_parse_frames(spec, bodies, str(base_name), constants, where))
    gravity = _vector(spec.get("gravity", [0.0, 0.0, -9.81]), 3, constants,
                      f"{where}: key 'gravity'")
    names = [b.name for b in bodies]
    if len(set(names)) != len(names):
        raise ModelError(f"{where}: link names must be unique, got {names}")
    return RobotModel(str(spec.get("name", default_name)), bodies, gravity=gravity, frames=frames,
                      base_name=str(base_name))


def _parse_link(row: object, i: int, convention: str, constants, where: str) -> Body:
    if not isinstance(row, Mapping):
        raise ModelError(f"{where}: links[{i}] must be a mapping of D-H keys, got {row!r}")
    name = str(row.get("name", f"link{i + 1}"))
    joint_name = str(row.get("joint", f"joint{i + 1}"))
    w = f"{where}: link '{name}' (joint '{joint_name}')"
    _check_keys(row, _LINK_KEYS, w)
    missing = [k for k in _REQUIRED_KEYS if k not in row]
    if missing:
        hint = ("; a joint without a velocity or effort limit says so with .inf"
                if set(missing) & set(_LIMIT_KEYS) else "")
        keys = "key" if len(missing) == 1 else "keys"
        raise ModelError(f"{w}: missing {keys} {', '.join(repr(k) for k in missing)}{hint}")
    sigma = row.get("sigma", 0)
    if isinstance(sigma, bool) or sigma not in (0, 1):
        raise ModelError(f"{w}: key 'sigma' must be 0 (revolute) or 1 (prismatic), got {sigma!r}")
    a, alpha, d, theta = (number(row[k], constants, f"{w}: key '{k}'")
                          for k in ("a", "alpha", "d", "theta"))
    origin, screw = dh_joint(convention, int(sigma), a, alpha, d, theta)
    lower, upper = (number(row[k], constants, f"{w}: key '{k}'") if k in row else default
                    for k, default in (("lower", -np.inf), ("upper", np.inf)))
    velocity, effort = (np.inf if row[k] == np.inf
                        else number(row[k], constants, f"{w}: key '{k}'") for k in _LIMIT_KEYS)
    if lower > upper:
        raise ModelError(f"{w}: key 'lower' ({lower}) exceeds key 'upper' ({upper})")
    for key, value in (("velocity", velocity), ("effort", effort)):
        if value <= 0.0:
            raise ModelError(f"{w}: key '{key}' must be positive, got {value}")
    joint = Joint(joint_name, "prismatic" if sigma == 1 else "revolute", screw, origin,
                  lower, upper, velocity, effort, _friction(row.get("friction"), constants, w))
    return Body(name, i - 1, joint, _inertia(row, constants, w))


def _inertia(row: Mapping, constants, w: str) -> Inertia:
    mass = number(row["mass"], constants, f"{w}: key 'mass'")
    if mass < 0.0:
        raise ModelError(f"{w}: key 'mass' must be non-negative, got {mass}")
    com = _vector(row["com"], 3, constants, f"{w}: key 'com'")
    inertia = _inertia_matrix(row["inertia"], constants, f"{w}: key 'inertia'")
    result = Inertia(mass, com, inertia)
    check_inertia(f"{w}: key 'inertia'", result)
    return result


def _inertia_matrix(value: object, constants, w: str) -> np.ndarray:
    """[ixx, iyy, izz, ixy, ixz, iyz] or a symmetric 3×3 list, about the COM in the link frame."""
    if isinstance(value, list) and len(value) == 3 and all(isinstance(r, list) for r in value):
        rows = [_vector(r, 3, constants, w) for r in value]
        I = np.array(rows)
        if not np.allclose(I, I.T, rtol=0.0, atol=1e-12):
            raise ModelError(f"{w}: the 3×3 inertia matrix is not symmetric")
        return 0.5 * (I + I.T)
    ixx, iyy, izz, ixy, ixz, iyz = _vector(value, 6, constants,
                                           f"{w} ([ixx, iyy, izz, ixy, ixz, iyz] or 3×3)")
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])


def _friction(spec: object, constants, w: str) -> JointFriction:
    """Schilling (6-3-3) coefficients; static friction defaults to the Coulomb level."""
    if spec is None:
        return JointFriction()
    if not isinstance(spec, Mapping):
        raise ModelError(f"{w}: key 'friction' must be a mapping of {', '.join(_FRICTION_KEYS)}")
    _check_keys(spec, _FRICTION_KEYS, f"{w}: friction")
    v = {k: number(spec[k], constants, f"{w}: friction key '{k}'") for k in spec}
    for k, value in v.items():
        if value < 0.0 or (k == "stribeck_velocity" and value == 0.0):
            raise ModelError(f"{w}: friction key '{k}' must be "
                             f"{'positive' if k == 'stribeck_velocity' else 'non-negative'}")
    coulomb = v.get("coulomb", 0.0)
    return JointFriction(viscous=v.get("viscous", 0.0), coulomb=coulomb,
                         static=v.get("static", coulomb),
                         stribeck_velocity=v.get("stribeck_velocity", 0.01))


def _parse_frames(spec: Mapping, bodies: list[Body], base_name: str, constants,
                  where: str) -> dict[str, Frame]:
    """The optional ``tool`` frame (on the last link by default) and the named ``frames``."""
    index = {b.name: i for i, b in enumerate(bodies)}
    index[base_name] = -1
    entries: dict[str, object] = {}
    if "tool" in spec:
        entries["tool"] = spec["tool"]
    named = spec.get("frames", {})
    if not isinstance(named, Mapping):
        raise ModelError(f"{where}: key 'frames' must map frame names to placements")
    for name, entry in named.items():
        if str(name) in entries:
            raise ModelError(f"{where}: frame '{name}' is defined twice")
        entries[str(name)] = entry
    frames: dict[str, Frame] = {}
    for name, entry in entries.items():
        w = f"{where}: frame '{name}'"
        if name in index:
            raise ModelError(f"{w}: name clashes with a link of the same name")
        if not isinstance(entry, Mapping):
            raise ModelError(f"{w}: expected a mapping with link, xyz, rpy or matrix")
        link = str(entry.get("link", bodies[-1].name))
        if link not in index:
            raise ModelError(f"{w}: key 'link' names unknown link '{link}' "
                             f"(links: {', '.join(index)})")
        placement = _placement(entry, constants, w, ("link",))
        frames[name] = Frame(name, index[link], placement)
    return frames


def _placement(entry: object, constants, w: str, extra_keys: tuple[str, ...]) -> np.ndarray:
    """A 4×4 pose from {xyz, rpy} (URDF convention) or {matrix: 4×4}."""
    if not isinstance(entry, Mapping):
        raise ModelError(f"{w}: expected a mapping with xyz/rpy or matrix")
    _check_keys(entry, _PLACEMENT_KEYS + extra_keys, w)
    if "matrix" in entry:
        if "xyz" in entry or "rpy" in entry:
            raise ModelError(f"{w}: give either 'matrix' or 'xyz'/'rpy', not both")
        rows = entry["matrix"]
        if not isinstance(rows, list) or len(rows) != 4:
            raise ModelError(f"{w}: key 'matrix' must be a 4×4 list of rows")
        T = np.array([_vector(r, 4, constants, f"{w}: key 'matrix'") for r in rows])
        R = T[:3, :3]
        if not (np.allclose(T[3], [0, 0, 0, 1]) and np.allclose(R.T @ R, np.eye(3), atol=1e-9)
                and np.linalg.det(R) > 0.0):
            raise ModelError(f"{w}: key 'matrix' is not a rigid transform (rotation + translation)")
        return T
    xyz = _vector(entry.get("xyz", [0.0, 0.0, 0.0]), 3, constants, f"{w}: key 'xyz'")
    rpy = _vector(entry.get("rpy", [0.0, 0.0, 0.0]), 3, constants, f"{w}: key 'rpy'")
    return transform(rpy_to_matrix(rpy), xyz)


def _vector(value: object, n: int, constants, w: str) -> np.ndarray:
    if not isinstance(value, list | tuple) or len(value) != n:
        raise ModelError(f"{w}: expected a list of {n} numbers, got {value!r}")
    return np.array([number(v, constants, w) for v in value])


def _check_keys(spec: Mapping, allowed: tuple[str, ...], w: str) -> None:
    for key in spec:
        if key not in allowed:
            raise ModelError(f"{w}: unknown key '{key}' (allowed: {', '.join(allowed)})")
