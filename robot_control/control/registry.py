"""Control laws by name: the built-in ones, ``register``-ed ones, and third-party entry points.

A law is built in by being a :class:`~robot_control.control.base.Controller` subclass with a
``name``, defined in a module of this package (robot_control.control): adding a law is adding
its file (docs/laws.md "Add a law"). setup.py advertises the same laws as entry points
(test_control_registry checks the two agree). Another package adds a law by declaring, in its
packaging metadata, ``[project.entry-points."robot_control.controllers"] my_law =
"my_pkg.laws:MyLaw"`` (setup.py: ``entry_points={"robot_control.controllers": ["my_law =
my_pkg.laws:MyLaw"]}``); the class must subclass Controller. Precedence when names collide:
``register`` > built-in > entry point. Entry points are rescanned on every lookup miss, so a
package installed while a process runs is found without a restart.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from importlib.metadata import entry_points

from robot_control.control.base import Controller

GROUP = "robot_control.controllers"
#: the package whose modules define the built-in laws
PACKAGE = "robot_control.control"


@cache
def builtin() -> dict[str, type[Controller]]:
    """The built-in laws by name, sorted: every Controller subclass with a ``name`` of its own
    defined in a module of PACKAGE (each module imported once)."""
    package = importlib.import_module(PACKAGE)
    found: dict[str, type[Controller]] = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{PACKAGE}.{info.name}")
        for cls in vars(module).values():
            if not (isinstance(cls, type) and issubclass(cls, Controller)
                    and cls.__module__ == module.__name__ and vars(cls).get("name")):
                continue
            if cls.name in found:
                raise TypeError(f"two built-in laws named '{cls.name}': "
                                f"{target(found[cls.name])} and {target(cls)}")
            found[cls.name] = cls
    return dict(sorted(found.items()))


def target(cls: type) -> str:
    """``module:Class`` of a law class (what an entry point names)."""
    return f"{cls.__module__}:{cls.__qualname__}"


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
    return sorted(set(_registered) | set(builtin()) | set(_entry_points()))


def is_available(name: str) -> bool:
    """``create`` accepts ``name`` (the installed plug-ins, a metadata scan, only looked up for a
    name that is neither built in nor registered)."""
    return name in _registered or name in builtin() or name in _entry_points()


def controller_class(name: str) -> type[Controller]:
    """The class registered under ``name``."""
    if name in _registered:
        return _registered[name]
    if name in builtin():
        return builtin()[name]
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
