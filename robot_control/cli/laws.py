"""``robot-control laws [--markdown] [--update FILE]``: the control laws this installation offers.

One line per law — the built-in ones, then any plug-in installed (an entry point of the
``robot_control.controllers`` group) — with its class, seed formula, family in the robot × law
matrix and whether it has a compiled kernel; all of it read from the law classes themselves.
``--update docs/laws.md`` writes the built-in laws' table between that file's BEGIN/END LAWS
markers (test_control_registry checks it is current).
"""

from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--markdown", action="store_true",
                        help="print the built-in laws' table as Markdown (docs/laws.md)")
    parser.add_argument("--update", metavar="FILE",
                        help="put that table between the BEGIN/END LAWS markers of FILE")


def family_text(cls) -> str:
    """The law's matrix family and bound ("-": not in the matrix)."""
    rows = cls.matrix_rows()
    if not rows:
        return "-"
    return ", ".join(dict.fromkeys(f"{family.name} ({family.bound:g})" for _, _, family in rows))


def markdown(classes: dict) -> str:
    """The table of ``classes`` (name → law class): class, formula, family, kernel, parameters."""
    from robot_control.control.registry import target

    lines = ["| law | class | formula | family (bound) | compiled | parameters |",
             "|---|---|---|---|---|---|"]
    for name, cls in classes.items():
        params = ", ".join(spec.name for spec in cls.PARAMETERS) or "-"
        compiled = "yes" if cls.KIND is not None else "no"
        lines.append(f"| {name} | `{target(cls)}` | {cls.formula} | {family_text(cls)} | "
                     f"{compiled} | {params} |")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from robot_control.control.registry import available, builtin, controller_class, target

    if args.markdown or args.update:
        table = markdown(builtin())
        if args.update:
            from robot_control.sim.matrix import update_file

            update_file(args.update, table, "LAWS")
        if args.markdown:
            print(table)
        return 0
    failed = 0
    for name in available():
        try:
            cls = controller_class(name)
        except (ImportError, TypeError) as exc:
            print(f"{name:22s} cannot load: {exc}")
            failed += 1
            continue
        kernel = "compiled" if cls.KIND is not None else "python"
        print(f"{name:22s} {family_text(cls):22s} {kernel:8s} {cls.formula or '-':32s} "
              f"{target(cls)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(run(argparse.Namespace(markdown=True, update=None)))
