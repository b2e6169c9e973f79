"""The package's shape: rooms in a stated layer order, no import circle, small modules.

The import graph counts every import statement of every module — at module level, inside
functions and under ``if TYPE_CHECKING:`` alike (a function-level import is still a dependency,
only a later one; a type-only import still ties the rooms together, and is the usual way to hide
a circle) — and every ``importlib.import_module("literal")``. An edge goes to the module an
import names: ``from a.b import c`` depends on ``a.b.c`` when that is a module, else on ``a.b``.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "robot_control"
#: the rooms from the bottom up (docs/architecture.md): each imports only rooms at or below it
LAYERS = ("root", "foundation", "model", "dynamics", "trajectory", "control", "sim", "identification",
          "security", "bus", "nodes", "recording", "view", "bringup", "cli")
#: (importer, imported) modules allowed against LAYERS, each with the reason why; empty
ALLOWED_UPWARD: set[tuple[str, str]] = set()
MAX_LINES = 600


def module_files() -> dict[str, Path]:
    """Dotted module name → file, for every module of the package."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _known(name: str, modules: dict[str, Path]) -> str | None:
    """The longest prefix of a dotted name that is one of our modules."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in modules:
            return candidate
    return None


def _base(module: str, path: Path, node: ast.ImportFrom) -> str:
    """The absolute module a ``from … import`` names (relative imports resolved)."""
    if not node.level:
        return node.module or ""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    package = package[: len(package) - (node.level - 1)]
    return ".".join([*package, node.module] if node.module else package)


def _literal_import_module(node: ast.Call) -> str | None:
    """The module of an ``importlib.import_module("a.b")`` call with a literal name, else None."""
    name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
    if name != "import_module" or not node.args or not isinstance(node.args[0], ast.Constant):
        return None
    return node.args[0].value if isinstance(node.args[0].value, str) else None


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules that ``module`` imports anywhere in its text."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {_known(alias.name, modules) for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = _base(module, path, node)
            for alias in node.names:
                found.add(_known(f"{base}.{alias.name}", modules) or _known(base, modules))
        elif isinstance(node, ast.Call) and (name := _literal_import_module(node)):
            found.add(_known(name, modules))
    found.discard(None)
    found.discard(module)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = module_files()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def room_of(module: str) -> str:
    """The room a module lives in: its sub-package, or "root" for the package itself."""
    parts = module.split(".")
    return "root" if len(parts) == 1 else parts[1]


def room_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Room → the other rooms its modules import."""
    rooms: dict[str, set[str]] = {}
    for module, imported in graph.items():
        rooms.setdefault(room_of(module), set()).update(room_of(m) for m in imported)
    return {room: imported - {room} for room, imported in rooms.items()}


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Every import of a room above the importer's in LAYERS, as "importer -> imported"."""
    rank = {room: i for i, room in enumerate(LAYERS)}
    return sorted(f"{module} -> {other}" for module, imported in graph.items() for other in imported
                  if rank[room_of(other)] > rank[room_of(module)]
                  and (module, other) not in ALLOWED_UPWARD)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan 1972), iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_circle_and_only_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []


def test_the_import_graph_sees_function_level_and_relative_imports(tmp_path):
    modules = {"p": tmp_path / "p.py", "p.a": tmp_path / "a.py", "p.b": tmp_path / "b.py"}
    modules["p.a"].write_text("def f():\n    from p import b\n")
    modules["p.b"].write_text("from . import a\nfrom .a import f\n")
    assert imports_of("p.a", modules["p.a"], modules) == {"p.b"}
    assert imports_of("p.b", modules["p.b"], modules) == {"p.a"}


def test_the_import_graph_sees_type_checking_and_literal_import_module(tmp_path):
    modules = {"p": tmp_path / "p.py", "p.a": tmp_path / "a.py", "p.b": tmp_path / "b.py",
               "p.c": tmp_path / "c.py"}
    modules["p.a"].write_text("from typing import TYPE_CHECKING\nimport importlib\n"
                              "if TYPE_CHECKING:\n    from p.b import X\n"
                              "def f():\n    return importlib.import_module('p.c')\n")
    assert imports_of("p.a", modules["p.a"], modules) == {"p.b", "p.c"}


def test_the_layer_check_names_an_upward_import_and_only_that():
    graph = {"robot_control.model.a": {"robot_control.foundation.spatial",
                                       "robot_control.dynamics.b"},
             "robot_control.dynamics.b": {"robot_control.model.a",
                                          "robot_control.foundation.safe_yaml"},
             "robot_control.cli": {"robot_control.nodes.c"}, "robot_control.nodes.c": set()}
    assert upward_imports(graph) == ["robot_control.model.a -> robot_control.dynamics.b"]
    assert room_graph(graph) == {"model": {"foundation", "dynamics"},
                                 "dynamics": {"model", "foundation"},
                                 "cli": {"nodes"}, "nodes": set()}


def test_every_room_has_its_place_in_the_layer_order():
    rooms = {room_of(module) for module in import_graph()}
    assert rooms == set(LAYERS), f"rooms not in LAYERS: {sorted(rooms - set(LAYERS))}"


def test_each_room_imports_only_rooms_at_or_below_it():
    assert upward_imports(import_graph()) == []
    assert cycles(room_graph(import_graph())) == []


def test_no_import_circle_among_the_package_modules():
    graph = import_graph()
    assert len(graph) > 100, "the walk found too few modules"
    assert cycles(graph) == []


def test_the_backends_are_chosen_outside_the_interface():
    graph = import_graph()
    rooms = ("robot_control.bus.dds", "robot_control.bus.ros")
    backends = {m for m in graph if m in rooms or m.startswith(tuple(r + "." for r in rooms))}
    assert not graph["robot_control.bus.node"] & backends
    assert {"robot_control.bus.dds.node", "robot_control.bus.ros.node"} <= graph["robot_control.bus.backend"]


def test_the_root_holds_only_rooms():
    loose = {p.name for p in PACKAGE.glob("*.py")}
    assert loose == {"__init__.py"}, f"modules outside a room: {sorted(loose - {'__init__.py'})}"


def test_command_line_code_lives_in_the_cli_room():
    stray = [p for p in PACKAGE.rglob("*.py")
             if (p.stem == "cli" or p.stem.startswith("cli_")) and p.parent != PACKAGE / "cli"]
    assert stray == []


def test_no_module_over_the_size_limit():
    long = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert long == {}
