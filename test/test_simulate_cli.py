"""``robot-control simulate FILE [--out] [--plot]`` as a user runs it: a separate process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
SCENARIOS = REPO / "config" / "scenarios"
STABLE_KEYS = ("rms_error", "max_error", "final_error", "max_torque", "steps", "wall_time_s",
               "realtime_factor")
PER_JOINT = ("rms_error", "max_error", "final_error", "max_torque")


def simulate(*args: str) -> subprocess.CompletedProcess:
    """Run ``robot-control simulate`` the way the console script does (cli.py's main)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-m", "robot_control.cli", "simulate", *args],
                          capture_output=True, text=True, timeout=300, cwd=REPO, env=env)


def write_scenario(path: Path, doc: dict) -> str:
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return str(path)


def test_bundled_scenario_prints_summary_and_writes_series_and_plot(tmp_path):
    out, png = tmp_path / "result.json", tmp_path / "run.png"
    # a bundled scenario by name: found in config/scenarios without a path
    proc = simulate("huo_3_1_pd_fixed_gravity", "--out", str(out), "--plot", str(png))
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert set(STABLE_KEYS) <= set(summary)
    for key in PER_JOINT:
        assert len(summary[key]) == 3
    assert summary["steps"] == 3000
    assert summary["wall_time_s"] > 0.0
    assert summary["realtime_factor"] == pytest.approx(3.0 / summary["wall_time_s"])
    assert max(abs(e) for e in summary["final_error"]) < 1e-4  # Ex 3-1: no steady-state error
    saved = json.loads(out.read_text())
    assert saved["summary"] == summary
    series = saved["series"]
    assert len(series["t"]) == 3001 and series["t"][-1] == pytest.approx(3.0)
    for key in ("q", "qd", "q_ref", "tau"):
        assert len(series[key]) == 3001 and len(series[key][0]) == 3
    assert series["q"][0] == [-0.1, 1.5, 1.0]
    assert series["q_ref"][-1] == [0.6, 1.0, -0.5]
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000


def test_force_scenario_reports_force_error_and_plots_the_contact_force(tmp_path):
    doc = yaml.safe_load((SCENARIOS / "impedance_three_link_planar_surface.yaml").read_text())
    doc["duration"] = 0.2
    png = tmp_path / "contact.png"
    proc = simulate(write_scenario(tmp_path / "short.yaml", doc), "--plot", str(png))
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["steps"] == 200
    assert set(summary["force_error"]) == {"rms", "max", "final", "rms_second_half"}
    assert png.read_bytes()[:4] == b"\x89PNG"


def bad_documents(tmp_path: Path) -> dict[str, tuple[str, str]]:
    base = {"robot": "ddarm", "duration": 0.1, "controller": {"type": "pd"}}
    return {
        "unknown key": (write_scenario(tmp_path / "a.yaml", base | {"speed": 2}), "speed"),
        "missing file": (str(tmp_path / "nowhere.yaml"), "nowhere"),
        "bad parameter": (write_scenario(tmp_path / "b.yaml", base | {
            "controller": {"type": "pd", "params": {"kp": [1, 2]}}}), "kp"),
    }


@pytest.mark.parametrize("case", ["unknown key", "missing file", "bad parameter"])
def test_bad_scenario_exits_nonzero_with_a_one_line_reason(tmp_path, case):
    path, named = bad_documents(tmp_path)[case]
    proc = simulate(path)
    assert proc.returncode != 0
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith("robot-control simulate: ") and named in proc.stderr


@pytest.mark.parametrize("text, named", [
    ("robot: ddarm\nduration: 0.1\ncontroller: {type: no_such_law}\n", "no_such_law"),
    ("robot: ddarm\nduration: [0.1\ncontroller: {type: pd}\n", "line"),
], ids=["unknown controller", "yaml syntax"])
def test_unreadable_scenario_exits_nonzero_without_a_traceback(tmp_path, text, named):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    proc = simulate(str(path))
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith("robot-control simulate: ") and named in proc.stderr


def test_warmup_runs_the_named_scenarios_and_reports_each():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, "-m", "robot_control.cli", "warmup", "huo_3_1_pd",
                           "no_such_scenario"], capture_output=True, text=True, timeout=300,
                          cwd=REPO, env=env)
    assert done.returncode == 1, done.stderr  # the unknown one fails, the other still runs
    assert "[1/2] huo_3_1_pd: " in done.stderr and "s\n" in done.stderr
    assert "[2/2] no_such_scenario: failed" in done.stderr


def test_a_slow_compile_says_so_and_a_quick_one_does_not():
    import io
    import time

    from robot_control.dynamics.compile_cache import notice_if_slow

    slow, quick = io.StringIO(), io.StringIO()
    with notice_if_slow("the offline loop of pd", delay_s=0.05, stream=slow):
        time.sleep(0.5)
    with notice_if_slow("the offline loop of pd", delay_s=5.0, stream=quick):
        pass
    assert "compiling the offline loop of pd" in slow.getvalue()
    assert quick.getvalue() == ""
