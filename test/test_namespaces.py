"""Many robots on one domain: namespaced stacks on the rclpy-free route.

Real node processes and containers, real DDS on one private domain per test: two, four and
eight stacks in different namespaces (each its own law or motion) run side by side in lockstep and
each reproduces its own offline simulation bit for bit (any cross-talk — a command, a state or a
clock tick of another stack — would change the numbers); the ROS naming rules are enforced at
launch and at node start; two launches given the same namespace are refused; a parameter set on
one stack leaves the other untouched.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

import numpy as np
import pytest
import yaml
from launch_run import Stack, robot_control_command, stack_env
from stack_helpers import LOCKSTEP_SCENARIO, NODES, private_domain, states_on_the_period_grid

from robot_control.bus.parameters import node_key_matches
from robot_control.bus.ros_args import RosArgsError, check_namespace, namespace_error

# slow (scripts/test.sh --slow): namespaced stacks side by side, lockstep runs, a cell
pytestmark = pytest.mark.slow

#: the second stack: another law and another motion than LOCKSTEP_SCENARIO's
RIGHT_SCENARIO = {**LOCKSTEP_SCENARIO,
                  "trajectory": {"type": "named", "name": "huo_printed"},
                  "controller": {"type": "pd", "params": {"kp": [400, 80, 50],
                                                          "kd": [100, 20, 10]}}}
SIM_TIME_NODES = ("controller", "trajectory_generator", "dynamics_server")
#: the laws of stacks three to eight: the bundled Huo scenarios' controllers (gains, estimates,
#: the law's own model) on LOCKSTEP_SCENARIO's robot, rate and duration
MORE_LAWS = ("huo_3_2_computed_torque_intended", "huo_3_4_adaptive_intended",
             "huo_3_5_sliding_vs2_boundary_layer_intended", "huo_3_6_robust_intended",
             "huo_3_3_passivity_printed", "huo_3_2_pd_gravity_intended")


def fleet_scenarios(count: int) -> dict[str, dict]:
    """``count`` namespaced stacks' scenarios, each another law or motion: /left, /right, then
    /arm3 … with the bundled scenarios' laws, alternating the intended and the printed motion."""
    from robot_control.sim.scenario import resolve_scenario_path

    out = {"/left": LOCKSTEP_SCENARIO, "/right": RIGHT_SCENARIO}
    for i, name in enumerate(MORE_LAWS[:max(0, count - 2)], start=3):
        bundled = yaml.safe_load(resolve_scenario_path(name).read_text())
        motion = "huo_printed" if i % 2 else "huo_intended"
        out[f"/arm{i}"] = {**LOCKSTEP_SCENARIO, "controller": bundled["controller"],
                           "trajectory": {"type": "named", "name": motion}}
    return dict(list(out.items())[:count])


# --- naming rules ------------------------------------------------------------------------------


@pytest.mark.parametrize("namespace, rule", [
    ("1arm", "must not start with a digit"), ("a//b", "repeated '/'"),
    ("a b", "not ' '"), ("arm-1", "not '-'"), ("arm1/", "must not end with '/'"),
    ("/left/1", "must not start with a digit"), ("x" * 300, "at most 245")])
def test_a_namespace_that_breaks_a_ros_naming_rule_is_refused_with_the_rule(namespace, rule):
    with pytest.raises(RosArgsError, match=rule):
        check_namespace(namespace)


def test_valid_namespaces_are_made_absolute_and_the_empty_one_is_the_root():
    assert [check_namespace(n) for n in ("", "/", "arm1", "/left", "cell_2/arm_1")] == \
        ["/", "/", "/arm1", "/left", "/cell_2/arm_1"]
    assert namespace_error("/") is None and namespace_error("arm1") is not None  # not absolute


def test_params_file_keys_match_nodes_as_rclcpp_and_rclpy_do():
    """Checked against rclpy (Jazzy) by hand: `/**/plant` and `/**` reach /arm1/plant,
    `/plant` and `plant` only the root namespace's plant."""
    assert node_key_matches("/**", "/arm1/plant") and node_key_matches("/**", "/plant")
    assert node_key_matches("/**/plant", "/plant") and node_key_matches("/**/plant", "/a/b/plant")
    assert node_key_matches("plant", "/plant") and node_key_matches("/plant", "/plant")
    assert not node_key_matches("/plant", "/arm1/plant")
    assert not node_key_matches("plant", "/arm1/plant")
    assert not node_key_matches("/**/plant", "/arm1/plant2")
    assert node_key_matches("/*/plant", "/arm1/plant") and not node_key_matches("/*/plant", "/plant")


def test_a_node_executable_refuses_an_invalid_namespace_naming_the_rule():
    env = stack_env("ns-invalid")
    out = subprocess.run([sys.executable, "-m", NODES["plant"], "--ros-args", "-r", "__ns:=/1arm"],
                         env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, out.stdout + out.stderr
    assert "namespace token must not start with a digit" in out.stdout + out.stderr


@pytest.mark.parametrize("namespace", ["1arm", "a//b", "left arm"])
def test_robot_control_launch_refuses_an_invalid_namespace_before_starting_anything(namespace):
    env = stack_env("ns-invalid")
    for file in ("control.launch.yaml", "cell.launch.yaml"):
        out = subprocess.run(robot_control_command("launch", file, f"namespace:={namespace}"),
                             env=env, capture_output=True, text=True, timeout=120)
        assert out.returncode == 2, out.stdout + out.stderr
        assert f"invalid namespace '{namespace}'" in out.stderr, out.stderr
        assert "started" not in out.stdout


# --- two stacks in lockstep on one domain ------------------------------------------------------


def _lockstep_commands(layout: str, namespace: str, scenario: str) -> list[list[str]]:
    """The stack's processes: the four nodes on their own (each bringing itself up), or one
    container; every one in ``namespace`` and on its own clock (``/clock`` read as ``clock``).
    The plant waits for three readers of its states: controller, generator and this test."""
    common = ["-r", f"__ns:={namespace}", "-r", "/clock:=clock",
              "-p", f"scenario:={scenario}", "-p", "lockstep:=true"]
    if layout == "composed":
        sim_time = [a for n in SIM_TIME_NODES for a in ("-p", f"{n}:use_sim_time:=true")]
        return [[sys.executable, "-m", "robot_control.nodes.container", "--ros-args", *common,
                 *sim_time, "-p", "plant:lockstep_start_subscribers:=3"]]
    out = []
    for name in ("controller", "trajectory_generator", "dynamics_server", "plant"):
        extra = ["-p", "lockstep_start_subscribers:=3"] if name == "plant" else \
            ["-p", "use_sim_time:=true"]
        out.append([sys.executable, "-m", NODES[name], "--ros-args", *common,
                    "-p", "autostart:=true", *extra])
    return out


def _collect(client, reader, steps: int, into: dict[int, np.ndarray]) -> None:
    """Positions of a /joint_states reader by stamp until more than ``steps`` arrived."""
    for msg in client.samples(reader, timeout_s=180.0):
        into[msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec] = \
            np.asarray(msg.position, dtype=float)
        if len(into) > steps:
            return


@pytest.mark.timeout(600)
@pytest.mark.parametrize("layout, count", [("processes", 2), ("composed", 2), ("composed", 4),
                                          ("composed", 8)])
def test_namespaced_lockstep_stacks_on_one_domain_each_equal_their_offline_run(
        tmp_path, layout, count):
    from robot_control.bus.dds.client import BusClient
    from robot_control.bus.qos import QosProfile
    from robot_control.sim.simulate import run

    scenarios = fleet_scenarios(count)
    offline, files = {}, {}
    for ns, scenario in scenarios.items():
        files[ns] = tmp_path / f"{ns[1:]}.yaml"
        files[ns].write_text(yaml.safe_dump(scenario))
        offline[ns] = run(str(files[ns]))
    runs = list(offline.values())  # every pair differs: cross-talk would show
    assert all(not np.array_equal(a.q, b.q) for i, a in enumerate(runs) for b in runs[i + 1:])
    steps = offline["/left"].summary["steps"]
    assert all(r.summary["steps"] == steps for r in runs)
    env = private_domain(60 + (layout == "composed") + {2: 0, 4: 2, 8: 3}[count])
    os.environ.update({k: env[k] for k in ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE")})
    received: dict[str, dict[int, np.ndarray]] = {ns: {} for ns in scenarios}
    procs: list[subprocess.Popen] = []
    with BusClient(discovery_s=1.0) as client:
        # a history for every state: two reader threads of one process may fall behind the runs
        history = QosProfile(depth=4 * steps)
        readers = {ns: client.typed_reader(f"{ns}/joint_states", "sensor_msgs/msg/JointState",
                                           history) for ns in scenarios}
        threads = [threading.Thread(target=_collect, args=(client, readers[ns], steps,
                                                            received[ns]), daemon=True)
                   for ns in scenarios]
        for t in threads:
            t.start()
        try:
            for ns in scenarios:
                for cmd in _lockstep_commands(layout, ns, str(files[ns])):
                    procs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                                                  stderr=subprocess.STDOUT, text=True))
            for t in threads:
                t.join(120.0 + 30.0 * count)
        finally:
            for p in procs:
                if p.poll() is None:
                    p.send_signal(signal.SIGINT)
            logs = [p.communicate(timeout=60)[0] for p in procs]
    tail = "\n".join(log[-2000:] for log in logs)
    for ns in scenarios:
        assert len(received[ns]) > steps, f"{ns}: only {len(received[ns])} states\n{tail}"
        assert 0 in received[ns], (ns, sorted(received[ns])[:5], tail)
        bus = states_on_the_period_grid(received[ns], steps, scenarios[ns]["rate"])
        # the same arithmetic in the same order as alone (= offline): equal to the last bit
        assert np.array_equal(bus, offline[ns].q), (ns, np.abs(bus - offline[ns].q).max())


# --- two launches side by side -----------------------------------------------------------------


def _tool(env: dict[str, str], *args: str) -> str:
    out = subprocess.run(robot_control_command(*args), env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


@pytest.mark.timeout(600)
@pytest.mark.parametrize("composed", ["true", "false"])
def test_two_namespaced_launches_share_a_domain_and_a_third_with_a_taken_namespace_is_refused(
        composed):
    env = stack_env(f"ns-launch-{composed}")
    common = ["rate:=250", f"composed:={composed}", "--duration", "600"]
    left = Stack(env, "namespace:=left", *common)
    right = Stack(env, "namespace:=right", "controller:=pd", *common)
    try:
        for stack in (left, right):
            assert stack.wait_for("control loop running", 240.0), "\n".join(stack.lines[-40:])
        nodes = _tool(env, "node", "list").split()
        for ns in ("/left", "/right"):
            assert {f"{ns}/{n}" for n in ("controller", "plant", "trajectory_generator",
                                          "dynamics_server", "lifecycle_manager")} <= set(nodes)
        # a parameter set on one stack leaves the other one's untouched
        _tool(env, "param", "set", "/right/controller", "computed_torque.gain_design", "lqr")
        assert "lqr" in _tool(env, "param", "get", "/right/controller",
                              "computed_torque.gain_design")
        assert "direct" in _tool(env, "param", "get", "/left/controller",
                                 "computed_torque.gain_design")
        assert "pd" in _tool(env, "param", "get", "/right/controller", "controller")
        assert "computed_torque" in _tool(env, "param", "get", "/left/controller", "controller")
        # each stack's states on its own topic, its frames prefixed with its namespace
        echo = _tool(env, "topic", "echo", "/left/joint_states", "--once")
        assert "joint1" in echo, echo
        # a second stack in a namespace that runs: refused, naming the running one
        third = Stack(env, "namespace:=left", *common)
        assert third.finish(120.0) == 2, "\n".join(third.lines)
        assert any("already has node(s) named /left/" in line for line in third.lines), \
            "\n".join(third.lines)
        assert left.proc.poll() is None and right.proc.poll() is None
    finally:
        codes = left.stop(), right.stop()
    for stack, code in zip((left, right), codes, strict=True):
        summary = stack.summary()
        assert code == 0, "\n".join(stack.lines[-40:])
        assert summary["namespace"] in ("/left", "/right")
        assert summary["rate_hz"] > 0  # the monitor heard its own stack's plant


@pytest.mark.timeout(400)
def test_a_cell_runs_in_a_namespace_with_its_arms_topics_and_frames_under_it():
    """cell.launch.yaml namespace:=cell1: /cell1/cell_plant, /cell1/arm1/joint_states, frames
    cell1/world; the monitor hears the cell's own plant."""
    env = stack_env("ns-cell")
    stack = Stack(env, "cell.launch.yaml", "namespace:=cell1", "rate:=250", "--duration", "600")
    try:
        assert stack.wait_for("control loop running", 240.0), "\n".join(stack.lines[-40:])
        nodes = _tool(env, "node", "list").split()
        assert {"/cell1/cell_plant", "/cell1/cell_controller", "/cell1/lifecycle_manager"} <= \
            set(nodes), nodes
        arm = _tool(env, "topic", "echo", "/cell1/arm1/joint_states", "--once")
        assert "joint1" in arm, arm
        pose = _tool(env, "topic", "echo", "/cell1/object/pose", "--once")
        assert "frame_id: cell1/world" in pose, pose
    finally:
        code = stack.stop()
    assert code == 0, "\n".join(stack.lines[-40:])
    assert stack.summary()["namespace"] == "/cell1"
