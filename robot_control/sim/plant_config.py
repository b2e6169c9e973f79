"""The plant's deviations from the nominal model, read from a scenario's ``plant:`` mapping."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from robot_control.model.robot_model import Inertia, RobotModel

Array = np.ndarray
INTEGRATORS = ("rk4", "semi_implicit_euler", "huo_2_107")
#: physics engines of the plant: the package's own dynamics, or MuJoCo (sim/mujoco_engine.py)
ENGINES = ("internal", "mujoco")
#: integrators of each engine, the default first (MuJoCo: implicitfast, see mujoco_engine.py)
ENGINE_INTEGRATORS = {"internal": INTEGRATORS,
                      "mujoco": ("implicitfast", "rk4", "semi_implicit_euler")}
_KEYS = {
    "engine", "payload", "inertia_scale", "parameters", "friction", "actuator_inertia", "disturbance",
    "saturate", "joint_limits", "noise", "integrator", "environment", "contact_frame",
}


@dataclass
class PlantConfig:
    """Model mismatch, friction, actuators, disturbance, limits, noise and environment of a plant."""

    payload: Inertia | None = None
    inertia_scale: Array | None = None
    parameters: Array | None = None
    friction: Array | None = None  # (n, 4): viscous, coulomb, static, stribeck velocity
    actuator_inertia: Array | None = None
    disturbance_amplitude: Array | None = None
    disturbance_frequency: float = 1.0
    disturbance_seed: int = 0
    saturate: bool = True
    limit_stiffness: float = 1e4
    limit_damping: float = 100.0
    limits_enabled: bool = True
    noise_position: float = 0.0
    noise_velocity: float = 0.0
    noise_seed: int = 0
    integrator: str = "rk4"
    engine: str = "internal"
    environment: dict = field(default_factory=dict)
    contact_frame: str | None = None


def _per_joint(value, n: int, where: str, positive: bool = True) -> Array:
    a = np.asarray(value, dtype=float)
    if a.ndim == 0:
        a = np.full(n, float(a))
    if a.shape != (n,) or not np.all(np.isfinite(a)):
        raise ValueError(f"{where} must be a number or a list of {n} numbers, got {value}")
    if positive and np.any(a < 0.0):
        raise ValueError(f"{where} must be non-negative, got {value}")
    return a


def parse_plant_config(cfg: dict | None, model: RobotModel) -> PlantConfig:
    """Validate a ``plant:`` mapping against the model; every error names the offending key."""
    cfg = dict(cfg or {})
    unknown = set(cfg) - _KEYS
    if unknown:
        raise ValueError(f"plant: unknown keys {sorted(unknown)} (known: {sorted(_KEYS)})")
    n = model.nq
    out = PlantConfig()
    if "payload" in cfg:
        p = cfg["payload"]
        mass = float(p.get("mass", 0.0))
        if mass < 0.0:
            raise ValueError(f"plant.payload.mass must be ≥ 0, got {mass}")
        com = np.asarray(p.get("com", (0.0, 0.0, 0.0)), dtype=float)
        inertia = np.asarray(p.get("inertia", np.zeros((3, 3))), dtype=float)
        if com.shape != (3,) or inertia.shape != (3, 3):
            raise ValueError("plant.payload: com must be 3 numbers and inertia a 3×3 matrix")
        out.payload = Inertia(mass, com, inertia)
    if "inertia_scale" in cfg:
        out.inertia_scale = _per_joint(cfg["inertia_scale"], n, "plant.inertia_scale")
    if "parameters" in cfg:
        th = np.asarray(cfg["parameters"], dtype=float)
        if th.shape != (10 * n,):
            raise ValueError(f"plant.parameters must have {10 * n} numbers (10 per link)")
        out.parameters = th
    if "friction" in cfg:
        f = cfg["friction"]
        keys = ("viscous", "coulomb", "static", "stribeck_velocity")
        bad = set(f) - set(keys)
        if bad:
            raise ValueError(f"plant.friction: unknown keys {sorted(bad)} (known: {list(keys)})")
        cols = [
            _per_joint(f.get("viscous", 0.0), n, "plant.friction.viscous"),
            _per_joint(f.get("coulomb", 0.0), n, "plant.friction.coulomb"),
            _per_joint(f.get("static", f.get("coulomb", 0.0)), n, "plant.friction.static"),
            _per_joint(f.get("stribeck_velocity", 0.01), n, "plant.friction.stribeck_velocity"),
        ]
        if np.any(cols[3] <= 0.0):
            raise ValueError("plant.friction.stribeck_velocity must be > 0")
        out.friction = np.column_stack(cols)
    if "actuator_inertia" in cfg:
        out.actuator_inertia = _per_joint(cfg["actuator_inertia"], n, "plant.actuator_inertia")
    if "disturbance" in cfg:
        d = cfg["disturbance"]
        out.disturbance_amplitude = _per_joint(d.get("amplitude", 0.0), n,
                                               "plant.disturbance.amplitude")
        out.disturbance_frequency = float(d.get("frequency", 1.0))
        out.disturbance_seed = int(d.get("seed", 0))
    out.saturate = bool(cfg.get("saturate", True))
    if "joint_limits" in cfg:
        jl = cfg["joint_limits"]
        if jl is False:
            out.limits_enabled = False
        else:
            out.limit_stiffness = float(jl.get("stiffness", out.limit_stiffness))
            out.limit_damping = float(jl.get("damping", out.limit_damping))
            if out.limit_stiffness <= 0.0 or out.limit_damping < 0.0:
                raise ValueError("plant.joint_limits: stiffness must be > 0 and damping ≥ 0")
    if "noise" in cfg:
        nz = cfg["noise"]
        out.noise_position = float(nz.get("position", 0.0))
        out.noise_velocity = float(nz.get("velocity", 0.0))
        out.noise_seed = int(nz.get("seed", 0))
        if out.noise_position < 0.0 or out.noise_velocity < 0.0:
            raise ValueError("plant.noise: standard deviations must be ≥ 0")
    out.engine = str(cfg.get("engine", "internal"))
    if out.engine not in ENGINES:
        raise ValueError(f"plant.engine must be one of {ENGINES}, got '{out.engine}'")
    known = ENGINE_INTEGRATORS[out.engine]
    out.integrator = str(cfg.get("integrator", known[0]))
    if out.integrator not in known:
        raise ValueError(f"plant.integrator must be one of {known} on engine '{out.engine}', "
                         f"got '{out.integrator}'")
    out.environment = dict(cfg.get("environment") or {})
    out.contact_frame = cfg.get("contact_frame")
    return out


def plant_model(model: RobotModel, cfg: PlantConfig) -> RobotModel:
    """The model the plant integrates: nominal parameters replaced/scaled, payload on the last link."""
    theta = model.inertial_parameters() if cfg.parameters is None else cfg.parameters.copy()
    changed = cfg.parameters is not None
    if cfg.inertia_scale is not None:
        theta = (theta.reshape(-1, 10) * cfg.inertia_scale[:, None]).ravel()
        changed = True
    if cfg.payload is not None and cfg.payload.mass > 0.0:
        last = model.body_index(cfg.contact_frame) if cfg.contact_frame else model.nq - 1
        theta[10 * last : 10 * last + 10] += cfg.payload.parameters()
        changed = True
    # the nominal parameters were checked when the model was built: only changed ones need it
    # again (the checks, an eigenvalue problem per body, were a millisecond of each run)
    plant = model.with_inertial_parameters(theta, check=changed)
    if cfg.friction is not None:
        plant.friction = cfg.friction.copy()
    return plant
