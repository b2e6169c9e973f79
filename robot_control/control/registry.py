"""Control laws by name: the built-in ones, ``register``-ed ones, and third-party entry points.

Another package adds a law by declaring, in its packaging metadata,
``[project.entry-points."robot_control.controllers"] my_law = "my_pkg.laws:MyLaw"`` (setup.py:
``entry_points={"robot_control.controllers": ["my_law = my_pkg.laws:MyLaw"]}``); the class must
subclass :class:`robot_control.control.base.Controller`. Precedence when names collide:
``register`` > built-in > entry point. Entry points are rescanned on every lookup miss, so a
package installed while a process runs is found without a restart.
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points

from robot_control.control.base import Controller

GROUP = "robot_control.controllers"

#: built-in laws as "module:Class" (imported on first use)
BUILTIN: dict[str, str] = {
    "pd": "robot_control.control.pd:PD",
    "pd_gravity": "robot_control.control.pd:PDGravity",
    "pd_fixed_gravity": "robot_control.control.pd:PDFixedGravity",
    "computed_torque": "robot_control.control.computed_torque:ComputedTorque",
    "resolved_acceleration": "robot_control.control.resolved_acceleration:ResolvedAcceleration",
    "passivity": "robot_control.control.passivity:Passivity",
    "adaptive": "robot_control.control.adaptive:SlotineLi",
    "adaptive_craig": "robot_control.control.adaptive_craig:AdaptiveCraig",
    "sliding_mode": "robot_control.control.sliding_mode:SlidingMode",
    "robust": "robot_control.control.robust:Robust",
    "hybrid_force": "robot_control.control.force:HybridForce",
    "impedance": "robot_control.control.force:Impedance",
    "load_sharing": "robot_control.control.load_sharing:LoadSharing",
}

_registered: dict[str, type[Controller]] = {}


class UnknownControllerError(KeyError):
    """No law of that name is built in, registered or installed."""

    def __str__(self) -> str:
        return str(self.args[0])


def register(name: str, cls: type[Controller]) -> None:
    """Make ``cls`` available as ``name`` in this process (overrides a built-in of that name)."""
    if not (isinstance(cls, type) and issubclass(cls, Controller)):
        raise TypeError(f"{cls!r} is not a Controller subclass")
    if not name or not name.replace("_", "").isalnum():
        raise ValueError(f"controller name must be a non-empty identifier, got '{name}'")
    _registered[name] = cls


def unregister(name: str) -> None:
    """Forget a ``register``-ed law (built-ins and entry points stay)."""
    _registered.pop(name, None)


def _entry_points() -> dict[str, object]:
    return {ep.name: ep for ep in entry_points(group=GROUP)}


def available() -> list[str]:
    """Every name ``create`` accepts, sorted."""
    return sorted(set(_registered) | set(BUILTIN) | set(_entry_points()))


def is_available(name: str) -> bool:
    """``create`` accepts ``name`` (the installed plug-ins, a metadata scan, only looked up for a
    name that is neither built in nor registered)."""
    return name in _registered or name in BUILTIN or name in _entry_points()


def _import(target: str) -> type:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def controller_class(name: str) -> type[Controller]:
    """The class registered under ``name``."""
    if name in _registered:
        return _registered[name]
    if name in BUILTIN:
        return _import(BUILTIN[name])
    ep = _entry_points().get(name)
    if ep is None:
        raise UnknownControllerError(
            f"unknown controller '{name}' (available: {', '.join(available())})"
        )
    try:
        cls = ep.load()
    except Exception as exc:  # noqa: BLE001 - report any import failure of a plug-in with its cause
        raise ImportError(f"controller '{name}' ({ep.value}) failed to load: {exc}") from exc
    if not (isinstance(cls, type) and issubclass(cls, Controller)):
        raise TypeError(f"controller '{name}' ({ep.value}) is not a Controller subclass")
    return cls


def create(name: str) -> Controller:
    """A new, unconfigured instance of the law ``name``."""
    return controller_class(name)()
