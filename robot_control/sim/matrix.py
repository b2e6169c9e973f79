"""The robot × law matrix: every bundled robot's stack run under every joint-space law, judged.

Each cell is the stack's own run (sim/stack_scenario.py: the robot's stack file, or the gains
derived from its model), simulated offline, which a lockstep run over the bus equals bit for
bit. A cell passes when the plant node would have run it to the end without a fault, a safety
stop or a rejected command, and the tracking error stayed within its law family's bound:

- diverged: the simulation blew up, or a joint speed passed IMPLAUSIBLE_FACTOR × its limit (the
  plant's "plant state diverged" fault);
- safety stop: a joint speed passed ``overspeed_factor`` (1.2) × its limit;
- rejected: a commanded torque passed IMPLAUSIBLE_FACTOR × its effort limit (the plant drops it);
- beyond bound: max |e| over the run above its law family's bound (control/families.py).

The laws and their families come from the law classes (Controller.FAMILY, VARIANTS): a law
added to the registry is added to the matrix by itself.

``python -m robot_control.sim.matrix --update docs/law_matrix.md`` rewrites the table there.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from robot_control.control.families import Family
from robot_control.model.robot_model import IMPLAUSIBLE_FACTOR

#: the plant node's default overspeed trip, × the velocity limit (nodes/plant_node.py)
OVERSPEED_FACTOR = 1.2
RATES = (500.0, 1000.0)

class MatrixLaw(NamedTuple):
    """One law of the matrix: its label, registry name, extra parameters and family."""

    label: str
    law: str
    extra: dict
    family: Family

    @property
    def bound(self) -> float:
        """max |e| (rad or m) the law must keep over the robot's demo motion."""
        return self.family.bound


def joint_laws() -> list[MatrixLaw]:
    """Every law of the matrix, from the laws' own declarations (Controller.FAMILY, VARIANTS),
    in registry order: the built-in laws, registered ones and installed plug-ins that load."""
    from robot_control.control.registry import available, controller_class

    rows = []
    for name in available():
        try:
            cls = controller_class(name)
        except (ImportError, TypeError):  # a broken plug-in says why where it is used
            continue
        rows += [MatrixLaw(label, name, extra, family)
                 for label, extra, family in cls.matrix_rows()]
    return rows


def families() -> dict[str, Family]:
    """The families of the matrix's laws by name."""
    return {row.family.name: row.family for row in joint_laws()}


@dataclass
class Cell:
    """One robot × law × rate run: its figures and verdict ('' when it passed)."""

    robot: str
    law: str
    rate: float
    max_error: float
    torque_ratio: float  # peak |τ commanded| / effort limit, the largest over the joints
    speed_ratio: float  # peak |q̇| / velocity limit
    bound: float
    verdict: str

    @property
    def passed(self) -> bool:
        return not self.verdict


def judge(max_error: float, speed_ratio: float, torque_ratio: float, bound: float) -> str:
    """Why a run fails (the plant node's watchdogs, then the bound), '' if it passes."""
    if not (np.isfinite(max_error) and np.isfinite(speed_ratio) and np.isfinite(torque_ratio)):
        return "diverged (non-finite)"
    if speed_ratio > IMPLAUSIBLE_FACTOR:
        return f"diverged (speed {speed_ratio:.3g}× its limit)"
    if speed_ratio > OVERSPEED_FACTOR:
        return f"safety stop (speed {speed_ratio:.3g}× its limit)"
    if torque_ratio > IMPLAUSIBLE_FACTOR:
        return f"command rejected (torque {torque_ratio:.3g}× its limit)"
    if max_error > bound:
        return f"beyond bound ({max_error:.3g} > {bound:g})"
    return ""


def law_row(label: str) -> MatrixLaw:
    """The matrix's law labelled ``label`` (KeyError naming the labels there are)."""
    rows = joint_laws()
    row = next((row for row in rows if row.label == label), None)
    if row is None:
        raise KeyError(f"no law '{label}' in the matrix (one of "
                       f"{', '.join(r.label for r in rows)})")
    return row


def run_cell(robot: str, label: str, rate: float, duration: float | None = None,
             arm_joints: list[str] | None = None) -> Cell:
    """Simulate the stack's run of the law ``label`` (a matrix label) on ``robot``."""
    from robot_control.sim.stack_scenario import stack_scenario

    row = law_row(label)
    return scenario_cell(robot, label, rate,
                         stack_scenario(robot, row.law, rate, duration, row.extra, arm_joints))


def scenario_cell(robot: str, label: str, rate: float, sc) -> Cell:
    """Run ``sc`` (the stack's run of ``label`` on ``robot``) and judge it."""
    from robot_control.sim.simulate import run

    bound = law_row(label).bound
    model = sc.robot
    try:
        with np.errstate(all="ignore"):
            result = run(sc)
    except (FloatingPointError, ValueError) as exc:
        return Cell(robot, label, rate, np.inf, np.inf, np.inf, bound, f"diverged ({exc})")
    with np.errstate(all="ignore"):
        speed = float(np.max(np.abs(result.qd) / model.velocity_limit))
        torque = float(np.max(np.abs(result.tau_command) / model.effort_limit))
        error = float(np.max(np.abs(result.q_ref - result.q)))
    return Cell(robot, label, rate, error, torque, speed, bound,
                judge(error, speed, torque, bound))


#: the manipulator arms of example-robot-data (pip: example-robot-data, the test extra), by name:
#: the descriptions a user brings first (docs/law_matrix.md "Arms from the wild")
EXAMPLE_ARMS = {
    "ur3": "ur_description/urdf/ur3_robot.urdf",
    "ur5": "ur_description/urdf/ur5_robot.urdf",
    "ur10": "ur_description/urdf/ur10_robot.urdf",
    "panda": "panda_description/urdf/panda.urdf",
    "xarm7": "xarm_description/urdf/xarm7.urdf",
    "z1": "z1_description/urdf/z1.urdf",
    "kinova": "kinova_description/robots/kinova.urdf",
    "so100": "so_arm_description/urdf/so100.urdf",
    "so101": "so_arm_description/urdf/so101.urdf",
}
#: the model-based joint-space laws (labels) the example arms are judged under
MODEL_BASED = ("pd_gravity", "computed_torque", "passivity", "adaptive", "sliding_mode.vs2",
               "robust")


def example_arm(name: str) -> str | None:
    """The path of example-robot-data's URDF of arm ``name`` in this interpreter, or None."""
    import site
    import sysconfig
    from pathlib import Path

    places = [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"],
              *site.getsitepackages(), site.getusersitepackages()]
    for place in places:
        path = Path(place) / "cmeel.prefix" / "share" / "example-robot-data" / "robots"
        if (path / EXAMPLE_ARMS[name]).is_file():
            return str(path / EXAMPLE_ARMS[name])
    return None


def stack_robots() -> list[str]:
    """The bundled robots a stack runs (open chains: the five-bar's loop needs the cell nodes)."""
    from robot_control.model.loader import bundled_robots
    from robot_control.model.resources import share_path

    return [r for r in bundled_robots()
            if not share_path("config", "robots", f"{r}.loop.yaml").is_file()]


def markdown(cells: list[Cell]) -> str:
    """The matrix as a Markdown table: one row per robot × law, max |e| and τ/limit per rate."""
    head = "| robot | law | " + " | ".join(f"{r:g} Hz: max \\|e\\| | τ/limit" for r in RATES)
    lines = [head + " | bound | verdict |",
             "|" + "---|" * (3 + 2 * len(RATES) + 1)]
    by_key = {(c.robot, c.law, c.rate): c for c in cells}
    for robot, law in dict.fromkeys((c.robot, c.law) for c in cells):
        row = [by_key.get((robot, law, r)) for r in RATES]
        figures = " | ".join("- | -" if c is None else f"{c.max_error:.2g} | {c.torque_ratio:.2f}"
                             for c in row)
        verdicts = "; ".join(f"{c.rate:g} Hz: {c.verdict}" for c in row if c and c.verdict)
        bound = next(c.bound for c in row if c is not None)
        lines.append(f"| {robot} | {law} | {figures} | {bound:g} | {verdicts or 'ok'} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m robot_control.sim.matrix",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--robots", default="", help="comma-separated (default: every one)")
    parser.add_argument("--laws", default="", help="comma-separated labels (default: all)")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument("--update", metavar="FILE",
                        help="put the Markdown table between the BEGIN/END MATRIX markers of FILE "
                             "(docs/law_matrix.md)")
    parser.add_argument("--example-arms", action="store_true",
                        help="example-robot-data's arms under the model-based laws instead "
                             "(--update: between the BEGIN/END ARMS markers)")
    args = parser.parse_args(argv)
    if args.example_arms:
        missing = [a for a in EXAMPLE_ARMS if example_arm(a) is None]
        if missing:
            raise SystemExit(f"example-robot-data has no {', '.join(missing)}: "
                             "pip install example-robot-data")
        default_robots, default_laws = list(EXAMPLE_ARMS), list(MODEL_BASED)
    else:
        default_robots, default_laws = stack_robots(), [row.label for row in joint_laws()]
    robots = args.robots.split(",") if args.robots else default_robots
    laws = args.laws.split(",") if args.laws else default_laws
    cells = []
    for robot in robots:
        for law in laws:
            for rate in RATES:
                cell = run_cell(example_arm(robot) if args.example_arms else robot, law, rate)
                cell.robot = robot
                cells.append(cell)
                if not args.markdown:
                    print(f"{robot:18s} {law:18s} {rate:6.0f} Hz  max|e| {cell.max_error:9.3g}  "
                          f"τ/lim {cell.torque_ratio:7.3g}  q̇/lim {cell.speed_ratio:7.3g}  "
                          f"{cell.verdict or 'ok'}", flush=True)
    if args.markdown:
        print(markdown(cells))
    if args.update:
        update_file(args.update, markdown(cells), "ARMS" if args.example_arms else "MATRIX")
    return 0 if all(c.passed for c in cells) else 1


def update_file(path: str, table: str, section: str = "MATRIX") -> None:
    """Replace what lies between the BEGIN/END ``section`` markers of ``path`` by ``table``."""
    from pathlib import Path

    BEGIN, END = f"<!-- BEGIN {section} -->", f"<!-- END {section} -->"
    text = Path(path).read_text()
    head, sep, rest = text.partition(BEGIN)
    _, sep2, tail = rest.partition(END)
    if not (sep and sep2):
        raise SystemExit(f"{path}: no {BEGIN} … {END} markers")
    Path(path).write_text(f"{head}{BEGIN}\n{table}\n{END}{tail}")


if __name__ == "__main__":
    sys.exit(main())
