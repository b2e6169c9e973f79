"""Monte Carlo robustness runs: what a sample perturbs, that it is the same sample
whoever draws it, and the statistics of a study (the cluster runs: test_sweep_cluster.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from robot_control.cli import main
from robot_control.model import load_robot
from robot_control.sim.batch import scenario_document, with_overrides
from robot_control.sim.montecarlo import Perturbation, sample_overrides, statistics
from robot_control.sim.results_file import read_records
from robot_control.sim.scenario import load_scenario

SCENARIO = "huo_3_2_computed_torque_intended"
ALL = Perturbation(mass_error=0.2, payload=1.5, friction_error=0.1, friction=(0.3, 0.2),
                   noise=(1e-4, 1e-3))


@pytest.fixture(scope="module")
def nominal():
    _, doc = scenario_document(SCENARIO)
    return doc, load_robot(doc["robot"])


def test_a_sample_is_the_same_whoever_draws_it_and_whenever(nominal):
    doc, model = nominal
    forward = [sample_overrides(doc, model, ALL, 7, k) for k in range(5)]
    backward = [sample_overrides(doc, model, ALL, 7, k) for k in reversed(range(5))][::-1]
    assert forward == backward
    assert forward[0] != forward[1]  # samples differ
    assert sample_overrides(doc, model, ALL, 8, 0) != forward[0]  # seeds differ
    # the mass draw of sample k does not depend on what else is perturbed
    only_mass = sample_overrides(doc, model, Perturbation(mass_error=0.2), 7, 3)
    assert only_mass == {"plant.inertia_scale": forward[3]["plant.inertia_scale"]}


def test_a_sample_perturbs_the_plant_within_its_bounds_and_not_the_controller(nominal):
    doc, model = nominal
    for k in range(20):
        ov = sample_overrides(doc, model, ALL, 1, k)
        assert set(ov) == {"plant.inertia_scale", "plant.payload", "plant.friction", "plant.noise"}
        assert all(0.8 <= s <= 1.2 for s in ov["plant.inertia_scale"])
        assert 0.0 <= ov["plant.payload"]["mass"] <= 1.5
        f = ov["plant.friction"]  # the DDArm has no friction: only the unmodelled part
        assert all(0 <= v <= 0.3 for v in f["viscous"]) and all(0 <= c <= 0.2 for c in f["coulomb"])
        assert f["static"] == f["coulomb"]
        assert ov["plant.noise"]["position"] == 1e-4 and ov["plant.noise"]["velocity"] == 1e-3
        sc = load_scenario(with_overrides(doc, ov))
        assert sc.controller_model.inertial_parameters() == pytest.approx(
            model.inertial_parameters(), abs=0.0)


def test_the_friction_error_scales_the_scenarios_friction(nominal):
    doc, model = nominal
    doc = with_overrides(doc, {"plant.friction": {"viscous": 2.0, "coulomb": [1.0, 0.5, 0.0]}})
    f = sample_overrides(doc, model, Perturbation(friction_error=0.25), 0, 4)["plant.friction"]
    assert all(1.5 <= v <= 2.5 for v in f["viscous"])
    ratio = np.array(f["coulomb"][:2]) / [1.0, 0.5]
    assert np.all((0.75 <= ratio) & (ratio <= 1.25)) and f["coulomb"][2] == 0.0


def test_statistics_are_the_percentiles_of_the_samples():
    records = [{"status": "ok", "saturated_periods": [k % 2, 0],
                "summary": {"joints": ["a", "b"], "max_error": [k, 10.0 * k],
                            "rms_error": [k / 2, 0.0], "max_torque": [1.0, 2.0]}}
               for k in range(101)]
    records.append({"status": "failed", "error": "FloatingPointError: plant state diverged"})
    s = statistics(records)
    assert (s["samples"], s["ok"], s["failed"]) == (102, 101, 1)
    assert s["max_error"]["p50"] == [50.0, 500.0] and s["max_error"]["p95"] == [95.0, 950.0]
    assert s["max_error"]["max"] == [100.0, 1000.0] and s["rms_error"]["p95"] == [47.5, 0.0]
    assert s["saturated_runs"] == [50, 0]
    assert s["failures"] == ["FloatingPointError: plant state diverged"]


def test_bad_options_are_one_line(capsys):
    for argv in (["--mass-error", "1.5"], ["--noise", "-1"], ["--samples", "0"]):
        args = ["montecarlo", SCENARIO, "--samples", "2", "--out", "x.jsonl", *argv]
        assert main(args) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("robot-control montecarlo: --")


def test_a_local_study_is_the_model_error_at_work(tmp_path, capsys):
    """With the nominal plant computed torque tracks to 1e-4 rad; ±30 % link masses and a
    payload the law does not know about make errors orders of magnitude larger."""
    out = tmp_path / "mc.jsonl"
    argv = ["montecarlo", SCENARIO, "--samples", "4", "--seed", "5", "--mass-error", "0.3",
            "--payload", "2", "--workers", "1", "--out", str(out), "--json",
            "--plot", str(tmp_path / "mc.png")]
    assert main(argv) == 0
    stats = json.loads(capsys.readouterr().out)
    records, _ = read_records(out)
    assert [r["sample"] for r in records] == [0, 1, 2, 3] and stats["ok"] == 4
    assert (tmp_path / "mc.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert min(stats["max_error"]["p50"]) > 1e-3
    nominal_run = main(["sweep", SCENARIO, "--workers", "1"])
    nominal_summary = json.loads(capsys.readouterr().out.splitlines()[0])["summary"]
    assert nominal_run == 0 and max(nominal_summary["max_error"]) < 1e-3
