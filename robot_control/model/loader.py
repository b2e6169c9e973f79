"""``load_robot``: a bundled robot by name, or a .urdf / D-H .yaml file by path (its model kept
between processes: model_cache)."""

from __future__ import annotations

from pathlib import Path

from robot_control.foundation.safe_yaml import load_file
from robot_control.model.model_cache import cached_load
from robot_control.model.parameter_groups import parse_parameter_groups
from robot_control.model.resources import share_path
from robot_control.model.robot_model import ModelError, RobotModel
from robot_control.model.urdf import load_urdf

#: Robots shipped in urdf/ (and D-H tables in config/robots/ where the source gives D-H).
BUNDLED = (
    "one_axis",
    "two_axis_planar",
    "scara",
    "rr_point_mass",
    "three_link_planar",
    "stanford_arm",
    "puma560",
    "ddarm",
    "five_bar",
)


def bundled_robots() -> list[str]:
    """Names accepted by ``load_robot`` that resolve to a bundled file."""
    return [n for n in BUNDLED if _bundled_file(n) is not None]


def _bundled_file(name: str) -> Path | None:
    for candidate in (share_path("urdf", f"{name}.urdf"), share_path("config", "robots",
                                                                    f"{name}.yaml")):
        if candidate.is_file():
            return candidate
    return None


def load_robot(name_or_path: str | Path) -> RobotModel:
    """Load a bundled robot ("puma560") or a .urdf / D-H .yaml file, with its parameter groups."""
    text = str(name_or_path)
    if text.lstrip().startswith("<"):
        return load_urdf(text)
    path = robot_file(text)
    if path.suffix not in (".yaml", ".yml", ".urdf", ".xml"):
        raise ModelError(f"{path}: unknown robot file type (expected .urdf or .yaml)")
    return cached_load(path, _group_files(path), lambda: _build(path))


def urdf_source(name_or_path: str | Path) -> Path | str | None:
    """The URDF behind a robot argument: its file (a path or a bundled .urdf), the XML string
    itself (``robot_description``), or None for a D-H table; ModelError if it names nothing."""
    text = str(name_or_path)
    if text.lstrip().startswith("<"):
        return text
    path = robot_file(text)
    return path if path.suffix in (".urdf", ".xml") else None


def robot_file(text: str) -> Path:
    """The file a robot argument names: a path, or a bundled robot's file; ModelError if none."""
    path = Path(text)
    if path.is_file():
        return path
    bundled = _bundled_file(text)
    if bundled is None:
        raise ModelError(
            f"unknown robot '{text}': not a file and not one of {', '.join(bundled_robots())}")
    return bundled


def _build(path: Path) -> RobotModel:
    """The model of a .urdf or D-H .yaml file, with its parameter groups."""
    if path.suffix in (".yaml", ".yml"):
        from robot_control.model.dh import load_dh_yaml

        model = load_dh_yaml(path)
    else:
        model = load_urdf(path)
    _attach_parameter_groups(model, path)
    return model


def _group_files(path: Path) -> tuple[Path, Path]:
    """Where a robot file's parameter groups may be: beside it, or bundled under its name."""
    return path.with_suffix(".groups.yaml"), share_path("config", "robots", f"{path.stem}.groups.yaml")


def _attach_parameter_groups(model: RobotModel, path: Path) -> None:
    """Read ``config/robots/<stem>.groups.yaml`` beside a bundled robot, if there is one."""
    for candidate in _group_files(path):
        if candidate.is_file():
            spec = load_file(candidate, ModelError)
            model.parameter_groups.update(parse_parameter_groups(model, spec, str(candidate)))
            return
