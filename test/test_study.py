"""A study's loop without a cluster: records of a local pool, failures as records, the
results file and --resume, the progress line on a terminal (the Dask runs: test_sweep_cluster.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from robot_control.cli import main
from robot_control.sim.jobs import make_jobs
from robot_control.sim.results_file import ResultsWriter, read_records
from robot_control.sim.study import run_study

SCENARIO = "huo_3_2_computed_torque_intended"
GRID = [{"duration": 0.2, "controller.params.kd": [k] * 3} for k in (5, 10)]


class _Terminal:
    """A stand-in stderr that says it is a terminal and keeps what is written."""

    def __init__(self) -> None:
        self.text = ""

    def isatty(self) -> bool:
        return True

    def write(self, s: str) -> int:
        self.text += s
        return len(s)

    def flush(self) -> None:
        pass


def test_a_study_shows_runs_done_rate_and_eta_on_a_terminal(monkeypatch, tmp_path):
    jobs, files = make_jobs([SCENARIO], GRID + [{"duration": 0.2, "plant.inertia_scale": 0.001,
                                                 "plant.saturate": False}])
    err = _Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    records = run_study(jobs, files, tmp_path / "r.jsonl", workers=2)
    assert "3/3" in err.text and "run/s" in err.text  # done/total, rate (ETA: [elapsed<left])
    assert [r["status"] for r in records] == ["ok", "ok", "failed"]
    assert "diverged" in records[2]["error"]
    # in input order, whatever order they finished in; the file holds the same records
    assert {r["key"] for r in read_records(tmp_path / "r.jsonl")[0]} == {j.key for j in jobs}
    assert [r["key"] for r in records] == [j.key for j in jobs]


def test_resume_takes_the_finished_runs_from_the_file_and_reruns_lost_ones(tmp_path):
    jobs, files = make_jobs([SCENARIO], GRID)
    out = tmp_path / "r.jsonl"
    first = run_study(jobs[:1], files, out, workers=1)
    with ResultsWriter(out) as w:  # a run whose workers kept dying: not a result, run again
        w.write({"key": jobs[1].key, "status": "lost", "error": "KilledWorker"})
    again = run_study(jobs, files, out, resume=True, workers=1)
    assert again[0] == first[0] and again[1]["status"] == "ok"
    records, bad = read_records(out)
    assert bad == 0 and [r["status"] for r in records] == ["ok", "lost", "ok"]


def test_the_same_run_twice_in_a_study_runs_once(tmp_path):
    jobs, files = make_jobs([SCENARIO, SCENARIO], GRID[:1])
    assert jobs[0].key == jobs[1].key
    records = run_study(jobs, files, tmp_path / "r.jsonl", workers=1)
    assert records[0] is records[1] and len(read_records(tmp_path / "r.jsonl")[0]) == 1


def test_resume_needs_a_jsonl_file_and_the_old_json_keeps_the_series(tmp_path, capsys):
    assert main(["sweep", SCENARIO, "--set", "duration=0.2", "--out", str(tmp_path / "a.json"),
                 "--resume", "--workers", "1"]) == 2
    assert "--resume needs --out FILE.jsonl" in capsys.readouterr().err
    out = tmp_path / "b.json"
    assert main(["sweep", SCENARIO, "--set", "duration=0.2", "--out", str(out),
                 "--workers", "1"]) == 0
    (row,) = json.loads(out.read_text())
    assert row["status"] == "ok" and len(row["series"]["t"]) == 201


@pytest.mark.parametrize("bad", ["nope_scenario", "-"])
def test_a_scenario_that_cannot_be_read_is_one_line_before_anything_runs(bad, capsys, tmp_path):
    out = tmp_path / "r.jsonl"
    assert main(["sweep", bad, "--out", str(out)]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1 and not out.exists()


def test_the_robot_files_a_scenario_names_travel_with_its_jobs(tmp_path):
    """The robot and the controller's model given by path: the jobs carry both files (and the
    groups beside the robot); a run from the copies equals the run from the originals."""
    import shutil

    from robot_control.model.resources import share_path
    from robot_control.sim.dispatch import run_local
    from robot_control.sim.jobs import materialise

    robots = share_path("config", "robots")
    shutil.copy(robots / "ddarm.yaml", tmp_path / "arm.yaml")
    shutil.copy(robots / "ddarm.groups.yaml", tmp_path / "arm.groups.yaml")
    shutil.copy(robots / "ddarm.yaml", tmp_path / "model.yaml")
    doc = {"robot": str(tmp_path / "arm.yaml"), "duration": 0.2, "initial": {"q": [-0.1, 1.5, 1.0]},
           "trajectory": {"type": "named", "name": "huo_intended"},
           "controller": {"type": "computed_torque", "model": str(tmp_path / "model.yaml"),
                          "params": {"kp": [50] * 3, "kd": [10] * 3}}}
    jobs, files = make_jobs([doc], [{}])
    assert set(files) == {doc["robot"], doc["controller"]["model"]}
    assert files[doc["robot"]].groups is not None and files[doc["controller"]["model"]].groups is None
    (before,) = run_local(jobs, files, workers=1)
    for name in ("arm.yaml", "arm.groups.yaml", "model.yaml"):
        (tmp_path / name).unlink()
    local = materialise(jobs[0].document, files, tmp_path / "cache")
    assert local["robot"].startswith(str(tmp_path / "cache")) and local["robot"].endswith("arm.yaml")
    assert Path(local["robot"]).with_suffix(".groups.yaml").is_file()
    (after,) = run_local(jobs, files, workers=1)
    assert before["status"] == after["status"] == "ok"
    assert {k: v for k, v in before["summary"].items() if k not in ("wall_time_s", "realtime_factor")} \
        == {k: v for k, v in after["summary"].items() if k not in ("wall_time_s", "realtime_factor")}
