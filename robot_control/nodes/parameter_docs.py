"""docs/parameters.md: every node's parameters, rendered from its tables (bus/param_table.py).

    python -m robot_control.nodes.parameter_docs            # rewrite docs/parameters.md
    python -m robot_control.nodes.parameter_docs --check    # exit 1 if it is not current

Each node's logic class lists its tables in ``PARAMETER_TABLES`` (declaration order);
test/test_node_parameters.py checks that a running node declares exactly what they say, and that
the file is current.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

from robot_control.bus.param_table import GIVEN, JOINT, ClockParams, Spec, specs

#: executable -> (module, logic class), in the order of the page
NODES = {
    "plant": ("robot_control.nodes.plant_node", "PlantNode"),
    "controller": ("robot_control.nodes.controller_node", "ControllerNode"),
    "trajectory_generator": ("robot_control.nodes.trajectory_node", "TrajectoryNode"),
    "dynamics_server": ("robot_control.nodes.dynamics_server_node", "DynamicsServerNode"),
    "lifecycle_manager": ("robot_control.nodes.lifecycle_manager", "LifecycleManager"),
    "cell_plant": ("robot_control.nodes.cell_plant_node", "CellPlantNode"),
    "cell_controller": ("robot_control.nodes.cell_controller_node", "CellControllerNode"),
}
#: nodes that host laws: their law parameters come from the laws' ParamSpec rows
LAW_HOSTS = ("controller", "cell_controller")
DOC = Path(__file__).resolve().parents[2] / "docs" / "parameters.md"

HEADER = """# Node parameters

Generated from the nodes' parameter tables (robot_control/bus/param_table.py rows, listed by each
node's `PARAMETER_TABLES`) by `python -m robot_control.nodes.parameter_docs`; do not edit by hand
(test/test_node_parameters.py fails when it is not current). The same rows declare the
parameters (with their ParameterDescriptor: ranges, `additional_constraints`, read-only, on both
bus routes), check every set (a refusal names the parameter and the reason) and give the node
its values as a frozen dataclass. `robot-control param describe <node> <name>` or
`ros2 param describe` show a running node's descriptor.

Every node also has `use_sim_time` (bool, default false: {clock}).
Read-only parameters are set at start (`-p name:=value`, `--params-file`); the others also while
the node runs (`ros2 param set`), checked by the same rows. The composed executable
`robot_control_container` makes these nodes with the same parameters.
"""

LAW_NOTE = """
It also declares each offered law's gains as `<law>.<name>` from the law's ParamSpec rows
(control/parameters.py; nodes/law_host.py): list them on a running node with
`robot-control param list /{node}`.
"""


def node_tables(executable: str) -> tuple[type, ...]:
    """The parameter tables of a node executable, in declaration order."""
    module, logic = NODES[executable]
    return getattr(importlib.import_module(module), logic).PARAMETER_TABLES


def render() -> str:
    """The whole page."""
    clock = specs(ClockParams)[0].row.description
    out = [HEADER.format(clock=clock)]
    for executable, (module, logic) in NODES.items():
        out.append(f"\n## {executable}\n\n`{module}.{logic}`"
                   f"{' (managed: lifecycle node)' if executable != 'lifecycle_manager' else ''}."
                   "\n")
        if executable in LAW_HOSTS:
            out.append(LAW_NOTE.format(node=executable.replace("cell_", "")))
        out.append("\n| parameter | type | default | constraints | description |\n"
                   "|---|---|---|---|---|\n")
        for table in node_tables(executable):
            out.extend(_row(s) + "\n" for s in specs(table))
    return "".join(out)


def _row(s: Spec) -> str:
    name = s.name.replace(JOINT, "<joint>")
    return (f"| `{name}` | {s.type_name} | {_default(s)} | {_constraints(s)} | "
            f"{_cell(s.row.description.replace(JOINT, '<joint>').replace('{n}', 'n'))} |")


def _default(s: Spec) -> str:
    if s.row.default is GIVEN:
        return "*" + _cell(s.row.default_doc) + "*"
    return f"`{_value(s.row.default)}`"


def _value(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return f"'{v}'"
    if isinstance(v, tuple):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return f"{v:g}" if isinstance(v, float) else str(v)


def _constraints(s: Spec) -> str:
    r = s.row
    parts = []
    if r.range is not None:
        parts.append(f"[{_value(r.range[0])}, {_value(r.range[1])}]")
    if r.constraints is GIVEN:
        parts.append("*" + _cell(r.constraints_doc) + "*")
    elif r.constraints:
        parts.append(_cell(r.constraints))
    if r.size:
        parts.append({"joint": "one per joint", "joint or empty": "one per joint, or none"}[r.size])
    if JOINT in s.name:
        parts.append("one parameter per joint")
    if r.read_only:
        parts.append("read-only")
    if r.locked_while_active:
        parts.append("set only while inactive")
    return "; ".join(parts)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m robot_control.nodes.parameter_docs",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is not current")
    parser.add_argument("path", nargs="?", default=str(DOC))
    args = parser.parse_args(argv)
    text, path = render(), Path(args.path)
    if args.check:
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        if current != text:
            print(f"{path} is not current: python -m robot_control.nodes.parameter_docs",
                  file=sys.stderr)
            return 1
        return 0
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
