"""robot-control sweep on a real Dask cluster: a scheduler and two worker processes
started here over TCP on 127.0.0.1 (distributed.LocalCluster, nannies and all), stopped at the end
of the module. The runs are short (0.2 s of a bundled DDArm scenario) except where a worker is
killed mid-run."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from robot_control.cli import main
from robot_control.model.resources import share_path
from robot_control.sim.dispatch import run_dask, run_local
from robot_control.sim.jobs import make_jobs
from robot_control.sim.results_file import read_records

distributed = pytest.importorskip("distributed")
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

SCENARIO = "huo_3_2_computed_torque_intended"
KD = "controller.params.kd=[5,5,5];[10,10,10];[20,20,20]"
#: the summary fields that depend on the wall clock, not on the run
WALL = ("wall_time_s", "realtime_factor")
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def cluster():
    lc = distributed.LocalCluster(processes=True, n_workers=2, threads_per_worker=1,
                                  host="127.0.0.1", dashboard_address="127.0.0.1:0")
    try:
        yield lc.scheduler_address
    finally:
        lc.close(timeout=60)


def physics(summary: dict) -> dict:
    return {k: v for k, v in summary.items() if k not in WALL}


def sweep(*argv: str) -> int:
    return main(["sweep", *argv])


def test_cluster_sweep_gives_the_local_numbers(cluster, tmp_path, capsys):
    out = tmp_path / "runs.jsonl"
    assert sweep(SCENARIO, "--set", KD, "--set", "duration=0.2", "--cluster", cluster,
                 "--out", str(out)) == 0
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    records, bad = read_records(out)
    assert bad == 0 and len(records) == 3 == len(printed)
    assert all(r["worker"].startswith("tcp://127.0.0.1:") for r in records)
    jobs, files = make_jobs([SCENARIO], [{"controller.params.kd": [k] * 3, "duration": 0.2}
                                         for k in (5, 10, 20)])
    local = {r["key"]: r for r in run_local(jobs, files, workers=1)}
    for r in records:
        assert r["status"] == "ok"
        assert physics(r["summary"]) == physics(local[r["key"]]["summary"])
        assert r["saturated_periods"] == local[r["key"]]["saturated_periods"]
    assert len({json.dumps(r["summary"]["rms_error"]) for r in records}) == 3  # kd did change them
    # two runs a task (the last task one): the same records
    batched = tmp_path / "batched.jsonl"
    assert sweep(SCENARIO, "--set", KD, "--set", "duration=0.2", "--cluster", cluster,
                 "--batch", "2", "--out", str(batched)) == 0
    again = {r["key"]: r for r in read_records(batched)[0]}
    assert len(again) == 3
    for r in records:
        assert physics(again[r["key"]]["summary"]) == physics(r["summary"])


def test_a_robot_file_travels_with_the_job(cluster, tmp_path):
    robot = tmp_path / "my_arm.yaml"
    shutil.copy(share_path("config", "robots", "ddarm.yaml"), robot)
    scenario = tmp_path / "mine.yaml"
    text = share_path("config", "scenarios", f"{SCENARIO}.yaml").read_text()
    scenario.write_text(text.replace("robot: ddarm", f"robot: {robot}"))
    jobs, files = make_jobs([str(scenario)], [{"duration": 0.2}])
    assert list(files) == [str(robot)]
    expected = list(run_local(jobs, files, workers=1))[0]
    robot.unlink()  # the workers never see the user's file: its contents go with the job
    (record,) = run_dask(jobs, files, cluster)
    assert record["status"] == "ok", record.get("error")
    assert physics(record["summary"]) == physics(expected["summary"])


def test_a_failing_run_is_recorded_and_the_sweep_goes_on(cluster, tmp_path, capsys):
    out = tmp_path / "runs.jsonl"
    # links 1000× lighter than the law's model, torque unlimited: the plant diverges;
    # controller.type nope: the worker refuses the scenario
    code = sweep(SCENARIO, "--set", "duration=0.2", "--set", "plant.saturate=false", "--set",
                 "plant.inertia_scale=1;0.001", "--cluster", cluster, "--out", str(out))
    diverged, _ = read_records(out)
    code_refused = sweep(SCENARIO, "--set", "duration=0.2", "--set", "controller.type=nope",
                         "--cluster", cluster, "--out", str(out))
    err = capsys.readouterr().err
    records, _ = read_records(out)
    assert code == 1 and code_refused == 1
    assert "2 runs: 1 failed, 1 ok" in err and "1 runs: 1 failed" in err
    by_scale = {r["overrides"]["plant.inertia_scale"]: r for r in diverged}
    assert by_scale[1]["status"] == "ok"
    assert by_scale[0.001]["status"] == "failed" and "diverged" in by_scale[0.001]["error"]
    assert records[-1]["status"] == "failed" and "nope" in records[-1]["error"]


def test_resume_runs_only_what_the_file_lacks(cluster, tmp_path, capsys):
    out = tmp_path / "runs.jsonl"
    assert sweep(SCENARIO, "--set", "controller.params.kd=[5,5,5];[10,10,10]", "--set",
                 "duration=0.2", "--cluster", cluster, "--out", str(out)) == 0
    first, _ = read_records(out)
    with open(out, "a") as fh:  # a stop mid-write leaves half a line
        fh.write('{"key": "cut sh')
    assert sweep(SCENARIO, "--set", KD, "--set", "duration=0.2", "--cluster", cluster,
                 "--out", str(out), "--resume") == 0
    records, bad = read_records(out)
    assert bad == 1 and len(records) == 3  # one new run, the two done ones not run again
    assert records[:2] == first
    assert records[2]["overrides"]["controller.params.kd"] == [20, 20, 20]
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [p["overrides"]["controller.params.kd"][0] for p in printed[-3:]] == [5, 10, 20]


def test_without_dask_the_cluster_option_says_what_to_install(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)
    assert sweep(SCENARIO, "--set", "duration=0.2", "--cluster", "tcp://127.0.0.1:1") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "dask[distributed]" in err[0]


def test_an_unreachable_scheduler_is_one_line(capsys, monkeypatch):
    monkeypatch.setattr("robot_control.sim.dispatch.CONNECT_TIMEOUT_S", 2)
    assert sweep(SCENARIO, "--set", "duration=0.2", "--cluster", "tcp://127.0.0.1:9") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in err[0]


def test_montecarlo_on_the_cluster_draws_and_finds_what_a_local_run_does(cluster, tmp_path,
                                                                          capsys):
    """A fixed seed: the cluster's samples (run in whatever order the workers take them) are the
    local ones, and so are the percentiles; a longer study resumed runs only the new samples."""
    study = ["montecarlo", SCENARIO, "--seed", "11", "--mass-error", "0.2", "--payload", "1",
             "--friction", "0.2,0.1", "--noise", "1e-4", "--json"]
    remote, local = tmp_path / "remote.jsonl", tmp_path / "local.jsonl"
    assert main([*study, "--samples", "3", "--cluster", cluster, "--out", str(remote)]) == 0
    assert main([*study, "--samples", "5", "--cluster", cluster, "--out", str(remote),
                 "--resume"]) == 0
    assert main([*study, "--samples", "5", "--workers", "1", "--out", str(local)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert json.loads(lines[1]) == json.loads(lines[2])  # the percentiles of the 5 samples
    remote_records, local_records = read_records(remote)[0], read_records(local)[0]
    assert len(remote_records) == 5  # 3, then the 2 the resumed study lacked
    by_sample = {r["sample"]: r for r in local_records}
    for r in remote_records:
        twin = by_sample[r["sample"]]
        assert r["key"] == twin["key"] and r["overrides"] == twin["overrides"]
        assert physics(r["summary"]) == physics(twin["summary"])


def test_a_study_stopped_with_ctrl_c_keeps_what_finished_and_resumes(cluster, tmp_path):
    out = tmp_path / "runs.jsonl"
    argv = [sys.executable, "-m", "robot_control.cli", "sweep", SCENARIO, "--set", "duration=150",
            "--set", "controller.params.kd=[6,6,6];[7,7,7];[8,8,8];[9,9,9];[10,10,10];[11,11,11]",
            "--cluster", cluster, "--out", str(out)]
    proc = subprocess.Popen(argv, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        deadline = time.monotonic() + 200
        while time.monotonic() < deadline and not read_records(out)[0]:
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    kept, _ = read_records(out)
    assert proc.returncode == 130, stderr
    assert f"stopped; the finished runs are in {out} (--resume runs the others)" in stderr
    assert 1 <= len(kept) < 6 and all(r["status"] == "ok" for r in kept)
    resumed = subprocess.run([*argv, "--resume"], env=_env(), capture_output=True, text=True,
                             timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    records, _ = read_records(out)
    assert records[:len(kept)] == kept and len(records) == 6 == len({r["key"] for r in records})


def _env() -> dict:
    """This environment with the checkout importable (the CLI in a subprocess)."""
    return os.environ | {"PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}


def test_a_worker_killed_mid_run_loses_nothing(cluster, tmp_path):
    """SIGKILL the worker process running a (500 s simulated, seconds of wall) run: the scheduler
    gives the run to a worker that lives, and the sweep ends with every run ok."""
    out = tmp_path / "runs.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "robot_control.cli", "sweep", SCENARIO, "--set", "duration=500",
         "--set", "controller.params.kd=[8,8,8];[9,9,9];[10,10,10];[11,11,11]",
         "--cluster", cluster, "--out", str(out)],
        env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    client = distributed.Client(cluster, timeout=30, set_as_default=False)
    try:
        deadline = time.monotonic() + 120
        busy = {}
        while time.monotonic() < deadline and not busy:
            busy = {w: keys for w, keys in client.processing().items() if keys}
            time.sleep(0.05)
        assert busy, "no run reached a worker"
        time.sleep(0.2)  # inside the run (seconds of wall), not at its start
        busy = {w: keys for w, keys in client.processing().items() if keys}
        pids = client.run(os.getpid)
        victim = next(iter(busy))
        assert read_records(out)[0] == []  # no run has finished yet, anywhere
        os.kill(pids[victim], signal.SIGKILL)
        stdout, stderr = proc.communicate(timeout=400)
    finally:
        client.close()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr
    records, _ = read_records(out)
    assert len(records) == 4 and all(r["status"] == "ok" for r in records)
    assert len({r["key"] for r in records}) == 4
    # killed in its first run, before any run ended: its runs were all redone elsewhere
    assert victim not in {r["worker"] for r in records}
