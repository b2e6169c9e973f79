"""``make_plant`` / ``make_cell_plant``: a scenario's plant on the engine it asks for
(``plant.engine``)."""

from __future__ import annotations

from robot_control.model.cell import Cell
from robot_control.model.robot_model import RobotModel
from robot_control.sim.cell import CellPlantBase
from robot_control.sim.plant_base import PlantBase
from robot_control.sim.plant_config import ENGINES, PlantConfig, parse_plant_config


def with_engine(plant_cfg: dict | None, engine: str | None) -> dict:
    """A copy of a ``plant:`` mapping with ``engine`` set (None or '': the mapping's own)."""
    cfg = dict(plant_cfg or {})
    if engine:
        if engine not in ENGINES:
            raise ValueError(f"engine must be one of {ENGINES}, got '{engine}'")
        cfg["engine"] = engine
    return cfg


def preload(engine: str | None) -> None:
    """Import what ``engine`` needs (MuJoCo's bindings: ~0.4 s) ahead of a timed run, as the
    package's own modules are; nothing when it is missing (making the plant then says so)."""
    if engine == "mujoco":
        from robot_control.model.mjcf import MujocoMissing, require_mujoco

        try:
            require_mujoco()
        except MujocoMissing:
            pass


def make_plant(model: RobotModel, config: PlantConfig | dict | None,
               physics_dt: float) -> PlantBase:
    """Plant (the package's dynamics) or MujocoPlant (MuJoCo), as ``config.engine`` says."""
    cfg = config if isinstance(config, PlantConfig) else parse_plant_config(config, model)
    if cfg.engine == "mujoco":
        from robot_control.model.mjcf import MujocoMissing
        from robot_control.sim.mujoco_engine import MujocoPlant

        try:
            return MujocoPlant(model, cfg, physics_dt)
        except MujocoMissing as exc:  # a configuration error like any other, one line
            raise ValueError(str(exc)) from None
    from robot_control.sim.plant import Plant

    return Plant(model, cfg, physics_dt)


def make_cell_plant(cell: Cell, config: dict | None, physics_dt: float) -> CellPlantBase:
    """CellPlant (Kim's constrained dynamics) or MujocoCellPlant (MuJoCo, welded grasps), as
    the cell's ``plant.engine`` says."""
    engine = (config or {}).get("engine", "internal")
    if engine not in ENGINES:
        raise ValueError(f"plant.engine must be one of {ENGINES}, got '{engine}'")
    if engine == "mujoco":
        from robot_control.model.mjcf import MujocoMissing
        from robot_control.sim.mujoco_cell import MujocoCellPlant

        try:
            return MujocoCellPlant(cell, config, physics_dt)
        except MujocoMissing as exc:  # a configuration error like any other, one line
            raise ValueError(str(exc)) from None
    from robot_control.sim.cell import CellPlant

    return CellPlant(cell, config, physics_dt)
