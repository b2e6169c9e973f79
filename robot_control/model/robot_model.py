"""RobotModel: a fixed-base kinematic tree of rigid bodies joined by 1-DOF joints.

Every movable joint carries exactly one body (fixed joints are merged into their parent
by the loaders), so body i and coordinate i are the same index and ``parent[i] < i``.
The placement of body i in its parent is T_{λ(i),i}(q) = M_i · exp([S_i] q_i) (Kim §2):
a fixed offset M_i, then the joint motion about the unit screw S_i expressed in body i.
URDF joints have S = (axis, 0) or (0, axis); standard D-H joints have a general screw.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace

import numpy as np

from robot_control.foundation.spatial import (
    Array,
    inertia_to_parameters,
    parameters_to_inertia,
    spatial_inertia,
)

JOINT_TYPES = ("revolute", "continuous", "prismatic")
#: Integer joint codes used by the compiled kernels.
REVOLUTE, PRISMATIC = 0, 1
#: a value this many times its joint's limit is garbage, not a measurement or a command: the
#: nodes drop it (nodes/validation.py), the robot × law matrix calls it a failure (sim/matrix.py)
IMPLAUSIBLE_FACTOR = 10.0


class ModelError(ValueError):
    """A robot description that cannot be a physical fixed-base manipulator."""


@dataclass
class JointFriction:
    """Joint friction of Schilling (6-3-3): viscous, Coulomb (dynamic) and static with a Stribeck speed."""

    viscous: float = 0.0
    coulomb: float = 0.0
    static: float = 0.0
    stribeck_velocity: float = 0.01

    def is_zero(self) -> bool:
        return self.viscous == 0.0 and self.coulomb == 0.0 and self.static == 0.0


@dataclass
class Joint:
    """A 1-DOF joint: fixed offset ``origin`` (4×4, in the parent body) then motion about ``screw``."""

    name: str
    type: str
    screw: Array
    origin: Array
    lower: float = -np.inf
    upper: float = np.inf
    velocity_limit: float = np.inf
    effort_limit: float = np.inf
    friction: JointFriction = field(default_factory=JointFriction)

    @property
    def code(self) -> int:
        return PRISMATIC if self.type == "prismatic" else REVOLUTE


@dataclass
class Inertia:
    """Rigid-body inertia in the body frame: mass, centre of mass, rotational inertia about the COM."""

    mass: float
    com: Array
    inertia_com: Array

    @classmethod
    def zero(cls) -> Inertia:
        return cls(0.0, np.zeros(3), np.zeros((3, 3)))

    def spatial(self) -> Array:
        return spatial_inertia(self.mass, self.com, self.inertia_com)

    def parameters(self) -> Array:
        return inertia_to_parameters(self.mass, self.com, self.inertia_com)

    def __add__(self, other: Inertia) -> Inertia:
        m = self.mass + other.mass
        if m == 0.0:
            return Inertia.zero()
        c = (self.mass * self.com + other.mass * other.com) / m
        Ic = np.zeros((3, 3))
        for part in (self, other):
            d = part.com - c
            Ic += part.inertia_com + part.mass * (d @ d * np.eye(3) - np.outer(d, d))
        return Inertia(m, c, Ic)


@dataclass
class Body:
    """A rigid body and the joint that carries it; ``parent`` is −1 for the fixed base."""

    name: str
    parent: int
    joint: Joint
    inertia: Inertia


@dataclass(frozen=True)
class Frame:
    """A named frame rigidly attached to a body (−1: the base), e.g. a merged URDF link or a tool."""

    name: str
    body: int
    placement: Array


def check_inertia(where: str, inertia: Inertia, tol: float = 1e-9) -> None:
    """Raise ModelError unless mass ≥ 0 and the COM inertia is symmetric PSD with the triangle inequality."""
    if not np.isfinite(inertia.mass) or inertia.mass < 0.0:
        raise ModelError(f"{where}: mass must be a finite non-negative number, got {inertia.mass}")
    Ic = np.asarray(inertia.inertia_com, dtype=float)
    if Ic.shape != (3, 3) or not np.all(np.isfinite(Ic)):
        raise ModelError(f"{where}: inertia must be a finite 3×3 matrix")
    if not np.all(np.isfinite(inertia.com)):
        raise ModelError(f"{where}: centre of mass must be finite")
    if not np.allclose(Ic, Ic.T, atol=tol):
        raise ModelError(f"{where}: inertia matrix is not symmetric")
    scale = max(1.0, float(np.abs(Ic).max()))
    eig = np.linalg.eigvalsh(Ic)
    if eig[0] < -tol * scale:
        raise ModelError(
            f"{where}: inertia is not positive (semi-)definite, principal moments {eig.tolist()}"
        )
    for k in range(3):
        if eig[k] > eig[(k + 1) % 3] + eig[(k + 2) % 3] + tol * scale:
            raise ModelError(
                f"{where}: principal moments {eig.tolist()} violate the triangle inequality"
            )


def check_joint(joint: Joint) -> None:
    """Raise ModelError for an unknown type, a zero/non-unit screw, or inconsistent limits."""
    if joint.type not in JOINT_TYPES:
        raise ModelError(
            f"joint '{joint.name}': unknown or unsupported type '{joint.type}' "
            f"(supported: {', '.join(JOINT_TYPES)}, and 'fixed' which is merged)"
        )
    S = np.asarray(joint.screw, dtype=float)
    if S.shape != (6,) or not np.all(np.isfinite(S)):
        raise ModelError(f"joint '{joint.name}': axis must be three finite numbers")
    w, v = S[:3], S[3:]
    if joint.type == "prismatic":
        if np.any(w) or abs(np.linalg.norm(v) - 1.0) > 1e-9:
            raise ModelError(f"joint '{joint.name}': prismatic axis must be a non-zero direction")
    elif abs(np.linalg.norm(w) - 1.0) > 1e-9:
        raise ModelError(f"joint '{joint.name}': revolute axis must be a non-zero direction")
    if joint.lower > joint.upper:
        raise ModelError(f"joint '{joint.name}': lower limit {joint.lower} > upper {joint.upper}")
    if joint.velocity_limit <= 0.0 or joint.effort_limit <= 0.0:
        raise ModelError(f"joint '{joint.name}': velocity and effort limits must be positive")


class RobotModel:
    """A fixed-base kinematic tree with packed arrays prepared once for the compiled kernels."""

    def __init__(
        self,
        name: str,
        bodies: list[Body],
        gravity: Array = (0.0, 0.0, -9.81),
        frames: dict[str, Frame] | None = None,
        base_name: str = "base",
        parameter_groups: dict | None = None,
    ) -> None:
        self.name = name
        self.bodies = list(bodies)
        self.gravity = np.asarray(gravity, dtype=float).copy()
        self.frames: dict[str, Frame] = dict(frames or {})
        self.base_name = base_name
        #: named parameter-group sets, e.g. {"huo_p": {"names": [...], "matrix": G}} (see regressor)
        self.parameter_groups: dict = dict(parameter_groups or {})
        self._validate()
        self._pack()

    # ---------------------------------------------------------------- structure
    @property
    def nq(self) -> int:
        return len(self.bodies)

    @property
    def nv(self) -> int:
        return len(self.bodies)

    @property
    def joint_names(self) -> list[str]:
        return [b.joint.name for b in self.bodies]

    @property
    def body_names(self) -> list[str]:
        return [b.name for b in self.bodies]

    @property
    def joints(self) -> list[Joint]:
        return [b.joint for b in self.bodies]

    def body_index(self, name: str) -> int:
        """Index of a body, or of the body a named frame is attached to (−1: base)."""
        if name in self.body_names:
            return self.body_names.index(name)
        if name in self.frames:
            return self.frames[name].body
        raise KeyError(f"model '{self.name}' has no body or frame named '{name}'")

    def frame_placement(self, name: str) -> tuple[int, Array]:
        """(body index, 4×4 placement in that body) of a body or named frame."""
        if name in self.body_names:
            return self.body_names.index(name), np.eye(4)
        if name in self.frames:
            f = self.frames[name]
            return f.body, f.placement
        raise KeyError(f"model '{self.name}' has no body or frame named '{name}'")

    @property
    def end_effector(self) -> str:
        """Name of the default end-effector frame: a frame named tool/ee if any, else the last body."""
        for cand in ("tool", "tool0", "ee", "ee_link", "end_effector"):
            if cand in self.frames or cand in self.body_names:
                return cand
        return self.bodies[-1].name

    @property
    def lower(self) -> Array:
        return np.array([b.joint.lower for b in self.bodies])

    @property
    def upper(self) -> Array:
        return np.array([b.joint.upper for b in self.bodies])

    @property
    def velocity_limit(self) -> Array:
        return np.array([b.joint.velocity_limit for b in self.bodies])

    @property
    def effort_limit(self) -> Array:
        return np.array([b.joint.effort_limit for b in self.bodies])

    # ------------------------------------------------------------- parameters
    def inertial_parameters(self) -> Array:
        """Stacked standard parameters, 10 per body [xx, xy, xz, yy, yz, zz, mx, my, mz, m] (Huo 2-113)."""
        return np.concatenate([b.inertia.parameters() for b in self.bodies])

    def with_inertial_parameters(self, theta: Array, check: bool = True) -> RobotModel:
        """A copy of this model with its inertial parameters replaced by ``theta`` (10 per body)."""
        theta = np.asarray(theta, dtype=float).reshape(self.nq, 10)
        bodies = []
        for b, th in zip(self.bodies, theta):
            m, c, Ic = parameters_to_inertia(th)
            bodies.append(replace(b, inertia=Inertia(m, c, Ic)))
        model = RobotModel.__new__(RobotModel)
        model.name, model.bodies, model.gravity = self.name, bodies, self.gravity.copy()
        model.frames, model.base_name = dict(self.frames), self.base_name
        model.parameter_groups = dict(self.parameter_groups)
        if check:
            model._validate()
        model._pack()
        return model

    def copy(self) -> RobotModel:
        return self.with_inertial_parameters(self.inertial_parameters(), check=False)

    # --------------------------------------------------------------- internals
    def _validate(self) -> None:
        if not self.bodies:
            raise ModelError(f"model '{self.name}' has no movable joints")
        seen: set[str] = set()
        for i, b in enumerate(self.bodies):
            if not -1 <= b.parent < i:
                raise ModelError(
                    f"joint '{b.joint.name}': parent of link '{b.name}' must come before it in the tree"
                )
            if b.joint.name in seen:
                raise ModelError(f"joint '{b.joint.name}' is defined twice")
            seen.add(b.joint.name)
            check_joint(b.joint)
            check_inertia(f"link '{b.name}'", b.inertia)
        if self.gravity.shape != (3,) or not np.all(np.isfinite(self.gravity)):
            raise ModelError("gravity must be three finite numbers")
        # A subtree with no mass makes the articulated inertia singular (Kim's pitfall).
        mass = np.array([b.inertia.mass for b in self.bodies])
        for i in reversed(range(self.nq)):
            p = self.bodies[i].parent
            if p >= 0:
                mass[p] += mass[i]
        for i, b in enumerate(self.bodies):
            rot = self.bodies[i].inertia.inertia_com
            if mass[i] <= 0.0 and not np.any(rot):
                raise ModelError(
                    f"link '{b.name}': joint '{b.joint.name}' moves no mass (missing <inertial>?)"
                )

    def _pack(self) -> None:
        n = self.nq
        self.parent = np.array([b.parent for b in self.bodies], dtype=np.int64)
        self.joint_type = np.array([b.joint.code for b in self.bodies], dtype=np.int64)
        self.screw = np.array([b.joint.screw for b in self.bodies], dtype=float).reshape(n, 6)
        self.origin_rotation = np.array([b.joint.origin[:3, :3] for b in self.bodies]).reshape(
            n, 3, 3
        )
        self.origin_translation = np.array([b.joint.origin[:3, 3] for b in self.bodies]).reshape(
            n, 3
        )
        self.spatial_inertia = np.array([b.inertia.spatial() for b in self.bodies]).reshape(n, 6, 6)
        self.friction = np.array(
            [
                [
                    b.joint.friction.viscous,
                    b.joint.friction.coulomb,
                    b.joint.friction.static,
                    b.joint.friction.stribeck_velocity,
                ]
                for b in self.bodies
            ]
        ).reshape(n, 4)
        for a in (self.parent, self.joint_type, self.screw, self.origin_rotation,
                  self.origin_translation, self.spatial_inertia, self.friction):
            a.setflags(write=False)  # the model is immutable: a change is a new model
        self._kernel_cache: dict = {}  # what the algorithms derive from the model (bases…)
        self._packed = None  # the rows robot_control.dynamics.packing packs, built on first use
        self._local = threading.local()  # each thread's dynamics.packing.Data (model_data)

    def __getstate__(self) -> dict:
        # a thread's workspace is scratch and cannot be pickled; the packed rows are rebuilt
        return {k: v for k, v in self.__dict__.items() if k not in ("_local", "_packed")}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._packed = None
        self._local = threading.local()

    def __repr__(self) -> str:
        return f"RobotModel('{self.name}', nq={self.nq}, joints={self.joint_names})"
