"""An offline run written as a rosbag2 directory (``simulate --record``), read back with rosbags'
own reader: every message is there, typed and stamped as the live stack's, with the run's values."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from rosbags.interfaces import QosDurability, QosReliability
from rosbags.rosbag2 import Reader
from rosbags.typesys import Stores, get_typestore

from robot_control.model import load_robot
from robot_control.recording.offline import write_run
from robot_control.sim.scenario import load_scenario, resolve_scenario_path
from robot_control.sim.simulate import reference_at, run

REPO = Path(__file__).resolve().parents[1]
TYPESTORE = get_typestore(Stores.ROS2_JAZZY)
CONTRACT_TYPES = {
    "/robot_description": "std_msgs/msg/String",
    "/joint_states": "sensor_msgs/msg/JointState",
    "/joint_reference": "trajectory_msgs/msg/JointTrajectory",
    "/joint_command": "sensor_msgs/msg/JointState",
    "/controller/state": "sensor_msgs/msg/JointState",
}


def short_scenario(name: str, duration: float, **plant):
    doc = yaml.safe_load(resolve_scenario_path(name).read_text())
    doc["duration"] = duration
    doc["plant"] = {**doc.get("plant", {}), **plant}
    return load_scenario(doc)


def read_bag(path: Path) -> dict[str, list]:
    """topic -> [(bag timestamp, decoded message)] through rosbags' reader alone."""
    out: dict[str, list] = {}
    with Reader(path) as reader:
        for conn, stamp, data in reader.messages():
            out.setdefault(conn.topic, []).append(
                (stamp, TYPESTORE.deserialize_cdr(data, conn.msgtype)))
    return out


def stamp_ns(msg) -> int:
    return msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec


@pytest.fixture(scope="module")
def pd_run(tmp_path_factory):
    # sensor noise on, so the bag must carry the sensed state, not the true one
    sc = short_scenario("huo_3_1_pd", 0.25, noise={"position": 1e-4, "velocity": 1e-3})
    result = run(sc)
    path = tmp_path_factory.mktemp("offline") / "pd"
    counts = write_run(result, sc, path)
    return sc, result, path, counts


def test_every_period_is_one_message_on_each_contract_topic(pd_run):
    sc, result, path, counts = pd_run
    rows = sc.steps + 1
    assert counts == {"/robot_description": 1, "/joint_states": rows, "/joint_reference": rows,
                      "/joint_command": rows, "/controller/state": rows}
    with Reader(path) as reader:
        assert {c.topic: c.msgtype for c in reader.connections} == CONTRACT_TYPES
        assert {c.topic: c.msgcount for c in reader.connections} == counts
        assert reader.message_count == sum(counts.values())
        for c in reader.connections:
            assert c.ext.serialization_format == "cdr"
            (qos,) = c.ext.offered_qos_profiles
            assert qos.reliability == QosReliability.RELIABLE
            latched = c.topic == "/robot_description"
            assert qos.durability == (QosDurability.TRANSIENT_LOCAL if latched
                                      else QosDurability.VOLATILE)
            assert qos.depth == (1 if latched else 10)
            assert c.digest == TYPESTORE.hash_rihs01(c.msgtype)


def test_messages_carry_the_run_stamped_in_simulated_time(pd_run):
    sc, result, path, _ = pd_run
    bag = read_bag(path)
    period = 1_000_000_000 // sc.rate
    names = sc.robot.joint_names
    assert result.q_measured is not None and not np.allclose(result.q_measured, result.q)
    for topic in ("/joint_states", "/joint_reference", "/joint_command", "/controller/state"):
        for k, (stamp, msg) in enumerate(bag[topic]):
            assert stamp == stamp_ns(msg) == k * period
    for k, (_, js) in enumerate(bag["/joint_states"]):
        assert list(js.name) == names
        np.testing.assert_array_equal(js.position, result.q_measured[k])
        np.testing.assert_array_equal(js.velocity, result.qd_measured[k])
        # effort: the torque applied over the period that ended at t_k, as the plant publishes
        np.testing.assert_array_equal(js.effort, result.tau[k - 1] if k else np.zeros(3))
    for k, (_, cmd) in enumerate(bag["/joint_command"]):
        np.testing.assert_array_equal(cmd.effort, result.tau_command[k])
        assert len(cmd.position) == 0 and list(cmd.name) == names
    for k, (_, ref_msg) in enumerate(bag["/joint_reference"]):
        ref = reference_at(sc, result.t[k], sc.q0)
        (point,) = ref_msg.points
        np.testing.assert_array_equal(point.positions, result.q_ref[k])
        np.testing.assert_array_equal(point.velocities, ref.qd)
        np.testing.assert_array_equal(point.accelerations, ref.qdd)
    for k, (_, state) in enumerate(bag["/controller/state"]):
        ref = reference_at(sc, result.t[k], sc.q0)
        np.testing.assert_array_equal(state.position, result.q_ref[k] - result.q_measured[k])
        np.testing.assert_array_equal(state.velocity, ref.qd - result.qd_measured[k])
        np.testing.assert_array_equal(state.effort, result.tau_command[k])
    (_, description), = bag["/robot_description"]
    model = load_robot(description.data)
    assert model.joint_names == names
    np.testing.assert_array_equal(model.effort_limit, sc.robot.effort_limit)


def test_a_contact_run_also_records_the_wrench(tmp_path):
    sc = short_scenario("impedance_three_link_planar_surface", 0.05)
    result = run(sc)
    counts = write_run(result, sc, tmp_path / "contact")
    assert counts["/wrench"] == sc.steps + 1
    wrenches = read_bag(tmp_path / "contact")["/wrench"]
    assert any(np.any(w) for w in result.wrench)
    for k, (_, msg) in enumerate(wrenches):
        assert msg.header.frame_id == "world"
        f, n = msg.wrench.force, msg.wrench.torque
        np.testing.assert_array_equal([n.x, n.y, n.z, f.x, f.y, f.z], result.wrench[k])


def test_a_run_without_contact_has_no_wrench_topic(pd_run):
    assert "/wrench" not in pd_run[3]


def simulate_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-m", "robot_control.cli", "simulate", *args],
                          capture_output=True, text=True, timeout=300, cwd=cwd, env=env)


def test_simulate_record_writes_the_whole_run_and_refuses_to_overwrite(tmp_path):
    proc = simulate_cli("huo_3_1_pd", "--record", "bag", "--out", "run.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    bag = read_bag(tmp_path / "bag")
    assert len(bag["/joint_states"]) == summary["steps"] + 1 == 3001
    series = json.loads((tmp_path / "run.json").read_text())["series"]
    _, last = bag["/controller/state"][-1]
    np.testing.assert_allclose(last.position, summary["final_error"], rtol=0, atol=0)
    np.testing.assert_array_equal(last.effort, series["tau_command"][-1])
    before = sorted(p.name for p in (tmp_path / "bag").iterdir())
    again = simulate_cli("huo_3_1_pd", "--record", "bag", cwd=tmp_path)
    assert again.returncode != 0 and "exists" in again.stderr and "Traceback" not in again.stderr
    assert sorted(p.name for p in (tmp_path / "bag").iterdir()) == before
