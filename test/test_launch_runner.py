"""``robot-control launch``: reading ROS 2 YAML launch files as ros2 launch does, and running the
bundled stack as separate node processes over DDS (summary, prefixed output, Ctrl-C, failures)."""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from launch_run import Stack, check_deadlines_and_outcome, stack_env

from robot_control.bringup.runner import (
    EXECUTABLES,
    LaunchError,
    load_launch_file,
    node_command,
    node_module,
    parameter_value,
    resolve_launch_file,
    ros_arg_value,
    split_overrides,
    substitute,
)
from robot_control.bus.parameters import load_params_file
from robot_control.bus.ros_args import parse_ros_args, parse_value
from robot_control.control.registry import create
from robot_control.model import load_robot
from robot_control.model.resources import share_dir

NODES = ("dynamics_server", "trajectory_generator", "controller", "plant")  # managed nodes
PROCESSES = (*NODES, "lifecycle_manager")  # what the bundled launch file starts
STACK_RATE = 250  # Hz: four Python nodes at 1 kHz do not fit a busy 2-core test machine


# --- reading launch files ----------------------------------------------------------------------


def test_the_bundled_launch_file_declares_its_arguments_four_nodes_and_their_manager():
    plan = load_launch_file(resolve_launch_file(None))
    assert [(a.name, a.default) for a in plan.arguments] == [
        ("robot", "ddarm"), ("controller", "computed_torque"), ("rate", "1000.0"),
        ("lockstep", "false"), ("scenario", ""), ("composed", "false"), ("rqt", "false"),
        ("view", "false"), ("view_port", "8080"), ("engine", ""), ("namespace", ""),
        ("realtime_priority", "0"),
        ("security", "$(env ROS_SECURITY_ENABLE false)"),
        ("keystore", "$(env ROS_SECURITY_KEYSTORE '')")]
    assert all(a.description for a in plan.arguments)
    assert [(n.package, n.executable, n.name) for n in plan.nodes] == [
        ("robot_control", x, x) for x in PROCESSES]
    manager = plan.nodes[-1]
    assert manager.params == {
        "node_names": ["dynamics_server", "plant", "controller", "trajectory_generator"],
        "start_after_loop_closed": ["trajectory_generator"], "lockstep": False}
    share = share_dir()
    for node in plan.nodes[:-1]:
        assert node.output == "screen" and node.namespace is None
        assert node.params_files == [str(share / "config" / "stack.yaml"),
                                     str(share / "config" / "stack.ddarm.yaml")]
        # typed as launch_ros types them: strings stay strings, rate an int, lockstep a bool
        assert node.params["robot"] == "ddarm" and node.params["scenario"] == ""
        assert node.params["rate"] == 1000 and node.params["lockstep"] is False
    by_name = {n.name: n for n in plan.nodes}
    assert by_name["controller"].params["controller"] == "computed_torque"
    assert "controller" not in by_name["plant"].params
    assert "use_sim_time" not in by_name["plant"].params  # the clock source keeps wall time
    # the loop's two ends may run SCHED_FIFO; the others never need to
    assert {n.name for n in plan.nodes if "realtime_priority" in n.params} == {"plant",
                                                                                "controller"}
    assert by_name["plant"].params["realtime_priority"] == 0
    # the physics engine is the plant's alone ('': the scenario's, else internal)
    assert {n.name for n in plan.nodes if "engine" in n.params} == {"plant"}
    assert by_name["plant"].params["engine"] == ""


def test_overrides_reach_the_node_parameters_and_a_robot_without_gains_file_is_skipped(capsys):
    file, overrides = split_overrides(["controller:=adaptive", "rate:=250", "lockstep:=true",
                                       "robot:=five_bar"])
    assert file is None
    plan = load_launch_file(resolve_launch_file(file), overrides)
    by_name = {n.name: n for n in plan.nodes}
    assert by_name["controller"].params["controller"] == "adaptive"
    assert by_name["controller"].params["use_sim_time"] is True
    assert by_name["lifecycle_manager"].params["lockstep"] is True
    for node in plan.nodes[:-1]:
        assert node.params["rate"] == 250 and node.params["lockstep"] is True
        assert node.params["robot"] == "five_bar"
        assert node.params_files == [str(share_dir() / "config" / "stack.yaml")]
    assert "stack.five_bar.yaml is not a file: skipped" in capsys.readouterr().err


def test_a_robot_given_as_a_file_gets_the_common_parameter_file_and_no_warning(capsys):
    """No per-robot file for a path (ros2 launch warned "Parameter file path is not a file" for
    stack./path/arm.urdf.yaml): the launch file's robot_params names the common file instead."""
    urdf = share_dir() / "urdf" / "five_bar.urdf"
    plan = load_launch_file(resolve_launch_file(None), {"robot": str(urdf)})
    for node in plan.nodes[:-1]:
        assert node.params_files == [str(share_dir() / "config" / "stack.yaml")] * 2
    assert capsys.readouterr().err == ""


def test_composed_runs_the_five_nodes_in_one_container_process_with_the_same_parameters():
    plan = load_launch_file(resolve_launch_file(None), {"composed": "true", "lockstep": "true",
                                                        "controller": "adaptive"})
    [container] = plan.nodes
    assert (container.executable, container.name) == ("robot_control_container", None)
    # the controller first: same-process messages reach subscribers in creation order
    assert plan.members() == [(x, "/" + x) for x in ("controller", "plant", "trajectory_generator",
                                                     "dynamics_server", "lifecycle_manager")]
    assert container.params_files == [str(share_dir() / "config" / "stack.yaml"),
                                      str(share_dir() / "config" / "stack.ddarm.yaml")]
    assert container.params == {
        "robot": "ddarm", "scenario": "", "rate": 1000, "lockstep": True,
        "controller": "adaptive", "engine": "", "realtime_priority": 0,  # as the separate plant, controller
        "node_names": ["dynamics_server", "plant", "controller", "trajectory_generator"],
        "start_after_loop_closed": ["trajectory_generator"]}
    # sim time for the nodes that follow /clock, named; the plant (its source) keeps wall time
    # (each stack's own clock: /clock is read as the relative clock, /<namespace>/clock)
    assert container.ros_args == ["--enclave", "/robot_control/container", "-r", "/clock:=clock",
                                  "-p", "controller:use_sim_time:=true",
                                  "-p", "trajectory_generator:use_sim_time:=true",
                                  "-p", "dynamics_server:use_sim_time:=true"]
    command = node_command(container)
    assert command[1:8] == ["-m", "robot_control.nodes.container", "controller", "plant",
                            "trajectory_generator", "dynamics_server", "lifecycle_manager"]
    assert "__node:=" not in " ".join(command)  # it would rename every node of the process


def test_a_container_must_be_unnamed_and_compose_nodes_it_knows(tmp_path):
    for attrs, message in (({"name": "box"}, "takes no name"),
                           ({"args": "plant warp_drive"}, "unknown node")):
        path = tmp_path / "c.launch.yaml"
        path.write_text(yaml.safe_dump({"launch": [{"node": {
            "pkg": "robot_control", "exec": "robot_control_container", **attrs}}]}))
        with pytest.raises(LaunchError, match=message):
            node_module(load_launch_file(path).nodes[0])


def test_the_runner_starts_the_modules_of_the_console_scripts_ros2_launch_runs():
    setup = (Path(__file__).resolve().parent.parent / "setup.py").read_text()
    scripts = dict(re.findall(r'"(\w+) = (robot_control\.(?:nodes|view)\.\w+):main"', setup))
    assert scripts == EXECUTABLES


def test_unknown_or_malformed_arguments_are_refused():
    with pytest.raises(LaunchError, match="unknown launch argument"):
        load_launch_file(resolve_launch_file(None), {"contoller": "pd"})
    with pytest.raises(LaunchError, match="one launch file"):
        split_overrides(["a.launch.yaml", "b.launch.yaml"])
    with pytest.raises(LaunchError, match="not found"):
        resolve_launch_file("no_such.launch.yaml")


def test_the_stack_parameter_files_configure_every_law_on_the_ddarm():
    """config/stack*.yaml as the controller node reads them: every law accepts its gains."""
    config = share_dir() / "config"
    model = load_robot("ddarm")
    controller = {}
    for file in ("stack.yaml", "stack.ddarm.yaml"):
        controller.update(load_params_file(str(config / file), "/controller"))
    laws = sorted({name.split(".", 1)[0] for name in controller if "." in name})
    assert {"pd", "computed_torque", "passivity", "adaptive", "sliding_mode", "robust"} <= set(laws)
    for law in laws:
        params = {k.split(".", 1)[1]: v for k, v in controller.items() if k.startswith(law + ".")}
        create(law).configure(model, params)  # raises with the law's reason if a value is wrong
    plant = load_params_file(str(config / "stack.ddarm.yaml"), "/plant")
    assert len(plant["initial_q"]) == model.nq
    waypoints = load_params_file(str(config / "stack.ddarm.yaml"), "/trajectory_generator")
    assert len(waypoints["waypoints"]) % model.nq == 0


def test_substitutions(monkeypatch, tmp_path):
    values = {"robot": "ddarm", "var_name": "RC_TEST_VAR"}
    monkeypatch.setenv("RC_TEST_VAR", "from-env")
    monkeypatch.delenv("RC_TEST_UNSET", raising=False)
    assert substitute("$(var robot).yaml", values) == "ddarm.yaml"
    assert substitute("$(env RC_TEST_VAR)", values) == "from-env"
    assert substitute("$(env $(var var_name) fallback)", values) == "from-env"  # nested
    assert substitute("$(env RC_TEST_UNSET 'two words')", values) == "two words"
    assert substitute("[$(optenv RC_TEST_UNSET)]", values) == "[]"
    assert substitute("$(find-pkg-share robot_control)/config", values) == \
        f"{share_dir()}/config"
    launch = tmp_path / "x.launch.yaml"
    assert substitute("$(dirname)/a", values, launch) == f"{tmp_path.resolve()}/a"
    assert substitute("no substitution (here)", values) == "no substitution (here)"
    with pytest.raises(LaunchError, match="RC_TEST_UNSET"):
        substitute("$(env RC_TEST_UNSET)", values)
    with pytest.raises(LaunchError, match="no launch argument 'nope'"):
        substitute("$(var nope)", values)
    with pytest.raises(LaunchError, match="unsupported substitution"):
        substitute("$(anon x)", values)
    # eval as launch's PythonExpression: math's names by default, other modules by name
    assert substitute("$(eval 'floor(2.5) + 1')", values) == "3"
    assert substitute("$(eval \"os.path.isfile('/no/such/file')\" 'os')", values) == "False"
    with pytest.raises(LaunchError, match="eval"):
        substitute("$(eval 'nope + 1')", values)
    with pytest.raises(LaunchError, match="unterminated"):
        substitute("$(var robot", values)


def test_parameter_values_are_typed_by_yaml_rules_as_launch_ros_does():
    assert parameter_value("") == ""
    assert parameter_value("1000") == 1000 and isinstance(parameter_value("1000"), int)
    assert parameter_value("2.5") == 2.5
    assert parameter_value("false") is False
    assert parameter_value("'1000'") == "1000"  # quoted: stays a string
    assert parameter_value("ddarm") == "ddarm"
    assert parameter_value("[1.0, 2.0]") == [1.0, 2.0]
    with pytest.raises(LaunchError, match="one type"):
        parameter_value("[1, a]")
    with pytest.raises(LaunchError, match="dict"):
        parameter_value("{a: 1}")


scalars = st.one_of(st.booleans(), st.integers(-2**62, 2**62),
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=20))


@given(st.one_of(scalars, st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1),
                 st.lists(st.text(max_size=8), min_size=1), st.lists(st.booleans(), min_size=1)))
def test_a_value_passed_with_dash_p_reads_back_unchanged(value):
    text = ros_arg_value(value)
    back = parse_value(text)
    assert back == value and type(back) is type(value)


def test_node_commands_carry_the_ros_args_ros2_launch_would_pass(tmp_path):
    params = tmp_path / "p.yaml"
    params.write_text("/robot1/plant:\n  ros__parameters:\n    hold_damping: 2.0\n")
    launch = tmp_path / "test.launch.yaml"
    launch.write_text(yaml.safe_dump({"launch": [
        {"arg": {"name": "ns", "default": "robot1"}},
        {"arg": {"name": "with_server", "default": "false"}},
        {"let": {"name": "file", "value": "$(dirname)/p.yaml"}},
        {"node": {"pkg": "robot_control", "exec": "plant", "name": "plant",
                  "namespace": "$(var ns)", "output": "screen",
                  "param": [{"from": "$(var file)"},
                            {"name": "initial_q", "value": [0.1, "0.2", 0.3]},
                            {"name": "computed_torque", "param": [
                                {"name": "kp", "value": "[10.0, 20.0]"}]}],
                  "remap": [{"from": "/joint_states", "to": "/robot1/joint_states"}],
                  "ros_args": "--log-level debug"}},
        {"node": {"pkg": "robot_control", "exec": "dynamics_server", "if": "$(var with_server)"}},
        {"node": {"pkg": "robot_control", "exec": "controller", "unless": "true"}},
    ]}))
    plan = load_launch_file(launch)
    assert [n.executable for n in plan.nodes] == ["plant"]  # if / unless skipped the others
    node = plan.nodes[0]
    assert node.fqn == "/robot1/plant"
    cmd = node_command(node)
    assert cmd[:3] == [sys.executable, "-m", "robot_control.nodes.plant_node"]
    parsed = parse_ros_args(cmd[3:])  # what the node itself will read
    assert parsed.node_name == "plant" and parsed.namespace == "/robot1"
    assert parsed.params_files == [str(params)]
    assert parsed.params == {"initial_q": [0.1, 0.2, 0.3], "computed_torque.kp": [10.0, 20.0]}
    assert parsed.remaps == {"/joint_states": "/robot1/joint_states"}
    assert parsed.log_level == "debug"
    assert load_params_file(parsed.params_files[0], node.fqn) == {"hold_damping": 2.0}


@pytest.mark.parametrize("entity, message", [
    ({"include": {"file": "x.launch.yaml"}}, "'include' needs ros2 launch"),
    ({"node": {"pkg": "robot_control", "exec": "plant", "respawn": "true"}}, "respawn"),
    ({"node": {"pkg": "other_pkg", "exec": "talker"}}, "robot_control nodes only"),
    ({"node": {"pkg": "robot_control", "exec": "nope"}}, "unknown executable"),
    ({"arg": {"name": "rate", "default": 1000}}, "must be a string"),
    ({"arg": {"name": "needed"}}, "has no default"),
])
def test_what_the_runner_cannot_run_is_refused_with_a_reason(tmp_path, entity, message):
    launch = tmp_path / "bad.launch.yaml"
    launch.write_text(yaml.safe_dump({"launch": [entity]}))
    with pytest.raises(LaunchError, match=message):
        plan = load_launch_file(launch)
        for node in plan.nodes:
            node_command(node)


# --- running the stack -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def timed_run(tmp_path_factory):
    """One run of the bundled stack for 4 s of closed-loop control at STACK_RATE."""
    out = tmp_path_factory.mktemp("launch") / "summary.json"
    stack = Stack(stack_env("launch-timed"), f"rate:={STACK_RATE}", "--duration", "4",
                  "--summary", str(out))
    code = stack.finish(timeout_s=150.0)
    return code, stack, json.loads(out.read_text())


def test_a_timed_run_reports_rate_latency_commands_and_tracking_errors(timed_run):
    code, stack, summary = timed_run
    assert code == 0, "\n".join(stack.lines[-40:])
    assert summary == stack.summary()  # printed and written alike
    assert summary["stopped_by"] == "duration reached"
    assert summary["duration_s"] == pytest.approx(4.0, abs=0.5)
    assert summary["robot"] == "ddarm" and summary["controller"] == "computed_torque"
    # wall-clock rates depend on the machine's load: check the figure is a sane measurement,
    # not that this machine keeps the deadline (that is reported by the bench / the summary)
    assert 0.0 < summary["rate_hz"] <= 1.1 * STACK_RATE
    latency = summary["latency_us"]
    assert set(latency) == {"p50", "p99", "max"}
    assert 0 < latency["p50"] <= latency["p99"] <= latency["max"]
    # a missed deadline: a period whose command was not there by its deadline (of those that
    # passed while commands flowed; a tick late by whole periods passes several); the outcome
    # follows the figures: this machine's load decides whether deadlines held
    check_deadlines_and_outcome(summary, stack.final_line)
    late = [summary["plant"][f"tick_late_{k}_us"] for k in ("p50", "p99", "max")]
    assert 0 <= late[0] <= late[1] <= late[2]
    # the loop ran: commands were applied (and only ticks that applied one count)
    assert 0 < summary["commands"] <= summary["steps"]
    assert summary["commands_rejected"] == 0
    assert summary["joint_names"] == ["joint1", "joint2", "joint3"]
    for key in ("rms_error", "max_error", "final_error"):
        assert len(summary[key]) == 3 and all(math.isfinite(v) for v in summary[key])
    # ordered bring-up: the motion starts from the held, measured position once the loop is
    # closed, so there is no start-up transient to catch up on (≤ 0.2 rad)
    assert all(0 <= r <= m <= 0.2 for r, m in zip(summary["rms_error"], summary["max_error"]))
    assert max(abs(e) for e in summary["final_error"]) < 0.1
    # tracking_s is timed by the trajectory generator until it stops, duration_s by the launcher:
    # the node stops a moment after the launcher's mark
    assert 0 < summary["loop_closed_s"] < 150
    assert summary["tracking_s"] <= summary["duration_s"] + 0.2
    assert {n: s["exit"] for n, s in summary["nodes"].items()} == {n: 0 for n in PROCESSES}


@pytest.mark.parametrize("figures,lockstep,why", [
    ({"velocity_stops": 2}, False, "safety stop"),
    ({"commands_rejected": 2602, "commands": 7}, False, "commands rejected"),  # a plant that obeyed nothing
    ({"commands_rejected": 50, "commands": 900}, False, ""),  # a stranger's, while ours apply
    ({"commands_rejected": 3, "commands": 0}, False, ""),  # a few: not sustained
    ({"max_error": [0.02, 0.001]}, True, "tracking beyond the bound"),  # lockstep: 0.01
    ({"max_error": [0.02, 0.001]}, False, ""),  # real time: at least 0.2 rad
    ({"max_error": [0.3, 0.001]}, False, "tracking beyond the bound"),
])
def test_a_run_that_stopped_safely_rejected_or_lost_track_has_a_failing_verdict(figures, lockstep,
                                                                                  why):
    from robot_control.bringup.verdict import run_verdict

    summary = {"controller": "computed_torque", "velocity_stops": 0, "commands_rejected": 0,
               "commands": 1000, "max_error": [0.001, 0.001], **figures}
    verdict = run_verdict(summary, lockstep)
    assert verdict.startswith(why) if why else verdict == ""


TRACKED = {"controller": "computed_torque", "velocity_stops": 0, "commands_rejected": 0,
           "commands": 1000, "max_error": [0.001], "tracking_samples": 900, "tracking_s": 1.0,
           "node_status": {"/controller": {"tracking_samples": 900}}}


@pytest.mark.parametrize("figures,why", [
    ({}, ""),
    ({"tracking_samples": 0, "max_error": None,  # a Panda run that tracked nothing
      "node_status": {"/controller": {"tracking_samples": 0,
                                      "dropped /controller/joint_trajectory": 3,
                                      "last dropped /controller/joint_trajectory":
                                          "joint4 velocity 2.9 beyond its limit 2.175"}}},
     "no tracking samples: the controller dropped 3 trajectory message(s) on "
     "/controller/joint_trajectory (joint4 velocity 2.9 beyond its limit 2.175)"),
    ({"tracking_samples": None, "tracking_s": None, "node_status": {}},
     "no tracking samples: the trajectory generator never became active"),
    ({"tracking_samples": 0, "node_status": {"/controller": {"tracking_samples": 0}}},
     "no tracking samples: the controller tracked no motion"),
])
def test_a_run_whose_controller_tracked_nothing_fails_with_the_reason(figures, why):
    from robot_control.bringup.verdict import run_verdict

    verdict = run_verdict({**TRACKED, **figures}, False, expects_tracking=True)
    assert verdict.startswith(why) if why else verdict == ""
    # without a trajectory generator in the plan there is nothing to track
    assert run_verdict({**TRACKED, **figures}, False, expects_tracking=False) == ""


@pytest.mark.parametrize("figures,why", [
    ({"missed_deadline_ratio": 0.05, "missed_deadlines": 50}, ""),
    ({"missed_deadline_ratio": 0.10, "missed_deadlines": 100}, ""),  # "more than 10 %"
    ({"missed_deadline_ratio": 0.75, "missed_deadlines": 3000},  # a run far too slow
     "missed 75.0 % of its deadlines (3000 of 4000; more than 10 %)"),
    ({"node_status": {"/plant": {"saturation_events": 35, "safety_stop": False}}},
     "torque saturated at the effort limits (/plant: 35 steps)"),
    ({"node_status": {"/plant": {"saturation_events": 0}, "/controller": {"saturated_ticks": 4}}},
     "torque saturated at the effort limits (/controller: 4 steps)"),
    ({"missed_deadline_ratio": 0.2, "missed_deadlines": 800,
      "node_status": {"/plant": {"saturation_events": 2}}},
     "missed 20.0 % of its deadlines (800 of 4000; more than 10 %); torque saturated"),
    # part of the motion dropped while the rest was tracked (it used to end "ok")
    ({"tracking_samples": 900,
      "node_status": {"/controller": {"tracking_samples": 900,
                                      "dropped /controller/joint_trajectory": 2,
                                      "last dropped /controller/joint_trajectory":
                                          "point 0 is 1.5 rad\n off"}}},
     "the controller dropped 2 trajectory message(s) on /controller/joint_trajectory (last: "
     "point 0 is 1.5 rad off)"),
    ({"node_status": {"/trajectory_generator": {"trajectories refused": 1}}},
     "/trajectory_generator refused 1 trajectory message(s) on its topic"),
    ({"plant": {"commanded_deadlines": 4000, "commands_rejected": 7, "commands_foreign": 2,
                "commands_applied": 990, "last dropped /joint_command": "rejected: NaN"}},
     "the plant rejected 5 of the controller's commands (applied 990) (last: rejected: NaN)"),
    ({"plant": {"commanded_deadlines": 4000, "commands_rejected": 9, "commands_foreign": 9}},
     ""),  # a stranger's commands: counted, not ours
    ({"node_status": {"/trajectory_generator": {"trajectories refused": 0}}}, ""),
])
def test_a_run_that_missed_deadlines_or_saturated_is_degraded_with_the_figures(figures, why):
    from robot_control.bringup.summary import figures_line
    from robot_control.bringup.verdict import degradation

    summary = {"missed_deadline_ratio": 0.0, "missed_deadlines": 0,
               "plant": {"commanded_deadlines": 4000}, **figures}
    degraded = degradation(summary)
    assert degraded.startswith(why) if why else degraded == ""
    assert ("| saturated" in figures_line(summary)) == ("saturated" in why)


def test_every_output_line_is_prefixed_by_its_node(timed_run):
    _, stack, _ = timed_run
    output = stack.lines[: stack.lines.index("{")]
    labels = {line[1:].split("]", 1)[0] for line in output}
    assert labels == {"launch", *PROCESSES}  # each node spoke, nothing unprefixed
    assert all(re.match(r"\[[a-z_]+\] ", line) for line in output)
    assert any(line.startswith("[plant] [INFO]") for line in output)


@pytest.mark.slow  # a stack launch of its own
def test_ctrl_c_stops_every_node_process():
    stack = Stack(stack_env("launch-sigint"), f"rate:={STACK_RATE}")
    try:
        assert stack.wait_for("[launch] control loop running"), "\n".join(stack.lines[-40:])
        pids = stack.node_pids()
        assert set(pids) == set(PROCESSES)
        assert all(Path(f"/proc/{pid}").exists() for pid in pids.values())
    finally:
        code = stack.stop()
    assert code == 0, "\n".join(stack.lines[-40:])
    assert not any(Path(f"/proc/{pid}").exists() for pid in pids.values())
    summary = stack.summary()
    assert summary["stopped_by"] == "interrupted"
    assert {n: s["exit"] for n, s in summary["nodes"].items()} == {n: 0 for n in PROCESSES}


@pytest.mark.slow  # a stack launch of its own
def test_a_failing_node_stops_the_others_and_fails_the_run():
    stack = Stack(stack_env("launch-fail"), "robot:=no_such_robot", "--startup-timeout", "60")
    code = stack.finish(timeout_s=120.0)
    summary = stack.summary()
    assert code == 1
    assert summary["stopped_by"].startswith("node failed")
    assert summary["failed"] and set(summary["failed"]) <= set(PROCESSES)
    assert all(s["exit"] is not None for s in summary["nodes"].values())
    assert any("cannot start" in line for line in stack.lines)


def test_demo_help_lists_every_launch_argument():
    import argparse

    from robot_control.cli import demo

    parser = argparse.ArgumentParser(prog="robot-control demo")
    demo.add_arguments(parser)
    text = " ".join(parser.format_help().split())
    plan = load_launch_file(resolve_launch_file(None))
    assert {"robot", "controller", "rate", "composed", "realtime_priority"} <= {
        a.name for a in plan.arguments}
    for arg in plan.arguments:
        assert f"{arg.name} (default '{arg.default}')" in text


def test_the_demo_runs_composed_with_realtime_loops_unless_told_otherwise():
    from robot_control.cli.demo import demo_items

    assert demo_items(["robot:=puma560"]) == ["robot:=puma560", "composed:=true",
                                              "realtime_priority:=50"]
    assert demo_items(["composed:=false", "realtime_priority:=0"]) == ["composed:=false",
                                                                       "realtime_priority:=0"]
    plan = load_launch_file(resolve_launch_file(None), dict(
        item.split(":=") for item in demo_items([])))
    (container,) = plan.nodes  # one process, and the priority reaches its loops
    assert container.params["realtime_priority"] == 50
