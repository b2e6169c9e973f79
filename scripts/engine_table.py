#!/usr/bin/env python3
"""Every bundled scenario on the internal engine and on MuJoCo: the table of docs/mujoco_results.md.

    .venv/bin/python scripts/engine_table.py [--write docs/mujoco_results.md]

Tracking: joint error e = q_d − q over all joints and periods (Cartesian scenarios: the tool's
position error |p_d − p|); force: RMS of f_d − f_n over the second half of the run. A ratio
beyond 2× between the engines is listed under the table (its explanation is written by hand
below the generated block).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

BEGIN, END = "<!-- engine_table: begin -->", "<!-- engine_table: end -->"


def figures(result) -> dict:
    """Tracking RMS/max (joint or task) and the second-half force error RMS of a run."""
    if result.task_error is not None:
        err = np.linalg.norm(result.task_error, axis=1)
        kind = "task m"
    else:
        err = np.abs(result.q_ref - result.q).ravel()
        kind = "joint rad"
    out = {"kind": kind, "rms": float(np.sqrt(np.mean(err**2))), "max": float(err.max())}
    if result.force_error is not None:
        half = result.force_error[len(result.force_error) // 2:]
        out["force"] = float(np.sqrt(np.mean(half**2)))
    return out


def scenarios() -> list[str]:
    from robot_control.model.resources import share_path

    return sorted(p.stem for p in share_path("config", "scenarios").glob("*.yaml"))


def cell_figures(result) -> dict:
    """A cell run's figures: E's position error, the force error over the second half, and
    each arm's share of the pressing force (Σp_i / Σλ_E)."""
    err = np.linalg.norm(result.pose_error[:, :3], axis=1)
    half = (result.desired_force - result.contact_force)[len(result.t) // 2:]
    shares = {arm: s["measured_fraction_mean"]
              for arm, s in result.summary["force_shares"].items()}
    return {"kind": "task m", "rms": float(np.sqrt(np.mean(err**2))), "max": float(err.max()),
            "force": float(np.sqrt(np.mean(half**2))), "shares": shares}


def run_both(name: str) -> tuple[dict | None, dict | str]:
    """(internal figures, MuJoCo figures or why there are none)."""
    from robot_control.sim.cell_simulate import is_cell_scenario, load_cell_scenario, run_cell
    from robot_control.sim.scenario import load_scenario
    from robot_control.sim.simulate import run

    cell = is_cell_scenario(name)
    out = []
    for engine in ("internal", "mujoco"):
        sc = load_cell_scenario(name) if cell else load_scenario(name)
        sc.plant["engine"] = engine
        try:
            out.append(cell_figures(run_cell(sc)) if cell else figures(run(sc)))
        except FloatingPointError as exc:
            out.append(f"diverged: {exc}")
    return out[0], out[1]


def _fmt(x: float | None) -> str:
    return "–" if x is None else f"{x:.3g}"


def _ratio(a: float, b: float) -> float:
    lo, hi = sorted((abs(a), abs(b)))
    return np.inf if lo == 0.0 else hi / lo


def table(rows: list[tuple[str, dict | None, dict | str]]) -> str:
    lines = ["| scenario | error | RMS internal | RMS mujoco | max internal | max mujoco | "
             "force RMS internal (N) | force RMS mujoco (N) |",
             "|---|---|---|---|---|---|---|---|"]
    flagged = []
    for name, a, b in rows:
        if isinstance(b, str):
            kind = a["kind"] if a else "–"
            lines.append(f"| {name} | {kind} | {_fmt(a and a['rms'])} | {b} | "
                         f"{_fmt(a and a['max'])} | – | {_fmt(a and a.get('force'))} | – |")
            continue
        lines.append(f"| {name} | {a['kind']} | {_fmt(a['rms'])} | {_fmt(b['rms'])} | "
                     f"{_fmt(a['max'])} | {_fmt(b['max'])} | {_fmt(a.get('force'))} | "
                     f"{_fmt(b.get('force'))} |")
        for key in ("rms", "max", "force"):
            if key in a and _ratio(a[key], b[key]) > 2.0:
                flagged.append(f"- {name}: {key} {a[key]:.3g} (internal) vs {b[key]:.3g} "
                               f"(mujoco), ×{_ratio(a[key], b[key]):.2g}")
    text = "\n".join(lines) + "\n\n" + share_lines(rows) + "Differences beyond 2×:\n\n"
    return text + ("\n".join(flagged) if flagged else "- none") + "\n"


def share_lines(rows: list[tuple[str, dict | None, dict | str]]) -> str:
    """One line per cell scenario: each arm's share of the pressing force on both engines."""
    out = []
    for name, a, b in rows:
        if a and "shares" in a and isinstance(b, dict):
            pairs = ", ".join(f"{arm} {a['shares'][arm]:.6f} / {b['shares'][arm]:.6f} "
                              f"({b['shares'][arm] / a['shares'][arm] - 1:+.1e} relative)"
                              for arm in a["shares"])
            out.append(f"- {name}: force shares Σp_i/Σλ_E internal / mujoco: {pairs}")
    return ("Cells:\n\n" + "\n".join(out) + "\n\n") if out else ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", help="replace the generated block of this Markdown file")
    args = parser.parse_args()
    started = time.perf_counter()
    rows = []
    for name in scenarios():
        a, b = run_both(name)
        rows.append((name, a, b))
        print(f"{name}: done", file=sys.stderr)
    import mujoco

    text = (f"Generated by `scripts/engine_table.py` (MuJoCo {mujoco.__version__}, "
            f"{time.perf_counter() - started:.0f} s).\n\n" + table(rows))
    if args.write:
        path = Path(args.write)
        doc = path.read_text() if path.exists() else f"{BEGIN}\n{END}\n"
        head, rest = doc.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
        path.write_text(f"{head}{BEGIN}\n{text}{END}{tail}")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
