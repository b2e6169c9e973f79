"""``robot-control plot`` and ``bag info``: the same series (hence the same figure) from a bag as
from the simulation it records, and from the JSON of ``simulate --out``."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import yaml
from recording_helpers import REPO

from robot_control.recording import bag
from robot_control.recording.offline import write_run
from robot_control.recording.runs import load_run
from robot_control.recording.writer import BagWriter
from robot_control.sim.report import plot_run, run_from_result
from robot_control.sim.scenario import load_scenario, resolve_scenario_path
from robot_control.sim.simulate import run

SERIES = ("position", "reference", "error", "command", "applied", "force")


def scenario(name: str, duration: float):
    doc = yaml.safe_load(resolve_scenario_path(name).read_text())
    return load_scenario({**doc, "duration": duration})


@pytest.fixture(scope="module", params=["huo_3_1_pd", "impedance_three_link_planar_surface"])
def recorded(request, tmp_path_factory):
    sc = scenario(request.param, 0.2)
    result = run(sc)
    path = tmp_path_factory.mktemp("plot") / "run"
    write_run(result, sc, path)
    return sc, result, path


def assert_same_series(a, b) -> None:
    assert a.joints == b.joints
    for name in SERIES:
        sa, sb = getattr(a, name), getattr(b, name)
        assert (sa is None) == (sb is None), name
        if sa is not None:
            np.testing.assert_allclose(sa[0], sb[0], rtol=0, atol=1e-12, err_msg=name)
            np.testing.assert_array_equal(sa[1], sb[1], err_msg=name)


def test_a_bag_gives_the_series_of_the_run_it_records(recorded):
    sc, result, path = recorded
    from_bag = load_run(path)
    assert_same_series(from_bag, run_from_result(result, sc.robot.effort_limit))
    np.testing.assert_array_equal(from_bag.effort_limit, sc.robot.effort_limit)  # from the URDF


def test_the_json_of_simulate_out_gives_the_same_series(recorded, tmp_path):
    sc, result, _ = recorded
    path = tmp_path / "result.json"
    path.write_text(json.dumps({"summary": result.summary, "series": result.series()}))
    from_json = load_run(path)
    assert_same_series(from_json, run_from_result(result))
    np.testing.assert_array_equal(from_json.effort_limit, sc.robot.effort_limit)


def test_without_controller_state_the_error_comes_from_states_and_references(tmp_path):
    sc = scenario("huo_3_1_pd", 0.1)
    result = run(sc)
    write_run(result, sc, tmp_path / "full")
    writer = BagWriter(tmp_path / "part")
    kept = ("/joint_states", "/joint_reference")
    conns = {c.topic: writer.add_topic(c.topic, c.msgtype, c.ext.offered_qos_profiles)
             for c in bag.bag_connections(tmp_path / "full") if c.topic in kept}
    for msg in bag.read_messages(tmp_path / "full", kept):
        writer.write(conns[msg.topic], msg.timestamp_ns, msg.data)
    writer.close()
    part = load_run(tmp_path / "part")
    assert part.command is None and part.effort_limit is None
    np.testing.assert_allclose(part.error[1], result.q_ref - result.q, rtol=0, atol=1e-15)


def test_plot_run_writes_an_image(recorded, tmp_path):
    _, _, path = recorded
    out = tmp_path / "run.png"
    plot_run(load_run(path), str(out))
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 20_000


def robot_control(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "robot_control.cli", *args], capture_output=True,
                          text=True, timeout=120, cwd=cwd,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})


def test_plot_and_bag_info_commands(recorded, tmp_path):
    sc, _, path = recorded
    proc = robot_control("plot", str(path), "-o", "fig.png", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "fig.png").read_bytes()[:4] == b"\x89PNG"
    info = robot_control("bag", "info", str(path), cwd=tmp_path)
    assert info.returncode == 0, info.stderr
    rows = sc.steps + 1
    assert f"Topic: /joint_states | Type: sensor_msgs/msg/JointState | Count: {rows} |" in info.stdout
    assert "Duration:          0.200000000s" in info.stdout


@pytest.mark.parametrize("make", ["missing", "no series", "not a bag"])
def test_plot_refuses_what_it_cannot_read(tmp_path, make):
    source = {"missing": tmp_path / "nowhere", "no series": tmp_path / "s.json",
              "not a bag": tmp_path / "dir"}[make]
    if make == "no series":
        source.write_text(json.dumps({"rms_error": [0.1]}))
    if make == "not a bag":
        source.mkdir()
    proc = robot_control("plot", str(source), "-o", "x.png", cwd=tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("robot-control plot: ")
    assert not (tmp_path / "x.png").exists()
