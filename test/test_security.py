"""SROS2 without a ROS 2: the launch files put every node in its enclave and turn security on and
enforced only with ``security:=true``; every enclave a launch file names is one the shipped
policy grants; the checks refuse a secure start that could not be secure (the rclpy-free route, a
permissive strategy, no keystore) in one line; the rclpy-free node and tools refuse
ROS_SECURITY_ENABLE=true for real; ``security init`` without ROS 2 says so in one line.
Keystores themselves are made by sros2, so what needs one is in test_security_ros2.py.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from robot_control.bringup.runner import load_launch_file, node_command, resolve_launch_file
from robot_control.bringup.security_check import check_plan
from robot_control.model.resources import share_path
from robot_control.security import DDS_ROUTE_REFUSAL, SecurityError, requested
from robot_control.security.artifacts import (
    normalise_namespace,
    policy_dir,
    policy_enclaves,
    policy_for_namespace,
)
from robot_control.security.keystore import (
    check_enclave,
    check_permissions_window,
    check_process,
    enclave_from_args,
)

ROOT = Path(__file__).resolve().parents[1]
NO_SECURITY = {k: v for k, v in os.environ.items() if not k.startswith("ROS_SECURITY")}


@pytest.fixture(autouse=True)
def _no_security_in_environment(monkeypatch):
    """The launch arguments default to the environment's ROS_SECURITY_*: start from none."""
    for key in [k for k in os.environ if k.startswith("ROS_SECURITY")]:
        monkeypatch.delenv(key)


def _enclaves(plan) -> dict[str, str]:
    return {node.label: enclave_from_args(node_command(node), {}) for node in plan.nodes}


@pytest.mark.parametrize("file, composed", [("control.launch.yaml", "false"),
                                            ("control.launch.yaml", "true"),
                                            ("cell.launch.yaml", None)])
def test_every_node_runs_in_its_own_enclave_which_the_policy_grants(file, composed):
    overrides = {} if composed is None else {"composed": composed}
    plan = load_launch_file(resolve_launch_file(file), overrides)
    granted = set(policy_enclaves(policy_dir() / "policy.xml"))
    enclaves = _enclaves(plan)
    for node in plan.nodes:
        expected = ("/robot_control/container" if node.executable == "robot_control_container"
                    else f"/robot_control/{node.executable}")
        assert enclaves[node.label] == expected
        assert expected in granted, f"{file}: {node.label}'s enclave is not in policy.xml"
    # one enclave per process: no two processes of a stack share an identity
    assert len(set(enclaves.values())) == len(plan.nodes)


def test_security_is_off_unless_asked_and_on_and_enforced_with_the_keystore_when_asked():
    path = resolve_launch_file(None)
    plain = load_launch_file(path)
    assert plain.values["security"] == "false"
    assert all(node.env == {"ROS_SECURITY_ENABLE": "false"} for node in plain.nodes)
    secure = load_launch_file(path, {"security": "true", "keystore": "/ks"})
    assert all(node.env == {"ROS_SECURITY_ENABLE": "true", "ROS_SECURITY_STRATEGY": "Enforce",
                            "ROS_SECURITY_KEYSTORE": "/ks"} for node in secure.nodes)
    with pytest.raises(ValueError, match="not valid"):
        load_launch_file(path, {"security": "yes"})


def test_the_arguments_default_to_the_environment_a_user_exported(monkeypatch):
    monkeypatch.setenv("ROS_SECURITY_ENABLE", "true")
    monkeypatch.setenv("ROS_SECURITY_KEYSTORE", "/exported")
    plan = load_launch_file(resolve_launch_file("cell.launch.yaml"))
    assert (plan.values["security"], plan.values["keystore"]) == ("true", "/exported")
    assert all(requested(n.env) for n in plan.nodes)


def test_the_launch_refuses_a_secure_plan_it_cannot_run_securely(tmp_path):
    plan = load_launch_file(resolve_launch_file(None), {"security": "true",
                                                        "keystore": str(tmp_path)})
    with pytest.raises(SecurityError, match=re.escape(DDS_ROUTE_REFUSAL)):
        check_plan(plan, NO_SECURITY, backend="dds")
    with pytest.raises(SecurityError, match=r"^node dynamics_server cannot start securely: .* "
                                            r"is not an SROS2 keystore"):
        check_plan(plan, NO_SECURITY, backend="rclpy")
    assert check_plan(load_launch_file(resolve_launch_file(None)), NO_SECURITY, "dds") is None


@pytest.mark.parametrize("env, reason", [
    ({"ROS_SECURITY_ENABLE": "true", "ROS_SECURITY_STRATEGY": "Enforce"}, "no keystore"),
    ({"ROS_SECURITY_ENABLE": "true", "ROS_SECURITY_STRATEGY": "Permissive",
      "ROS_SECURITY_KEYSTORE": "/ks"}, "needs ROS_SECURITY_STRATEGY=Enforce"),
    ({"ROS_SECURITY_ENABLE": "true", "ROS_SECURITY_STRATEGY": "Enforce",
      "ROS_SECURITY_KEYSTORE": "/nonexistent"}, "is not an SROS2 keystore"),
])
def test_a_secure_start_that_would_not_be_secure_is_refused_with_the_reason(env, reason):
    with pytest.raises(SecurityError, match=reason):
        check_process(["x", "--ros-args", "--enclave", "/robot_control/plant"], env)
    check_process([], {"ROS_SECURITY_ENABLE": "True"})  # rcl enables only on exactly "true"
    with pytest.raises(SecurityError, match="names no enclave"):
        check_process(["x"], {**env, "ROS_SECURITY_KEYSTORE": "/ks"})


def test_the_enclave_is_the_one_rcl_would_use():
    argv = ["n", "--ros-args", "-e", "/a", "--", "--enclave", "/not_ros", "--ros-args",
            "--enclave", "/b"]
    assert enclave_from_args(argv, {}) == "/b"
    assert enclave_from_args(["n"], {}) == "/"
    assert enclave_from_args(argv, {"ROS_SECURITY_ENCLAVE_OVERRIDE": "/o"}) == "/o"


def test_an_expired_permissions_document_is_refused():
    from datetime import datetime, timezone

    doc = "<not_before>2020-01-01T00:00:00</not_before><not_after>2021-01-01T00:00:00</not_after>"
    with pytest.raises(SecurityError, match="permissions expired on 2021-01-01"):
        check_permissions_window(doc, "/e")
    check_permissions_window(doc, "/e", now=datetime(2020, 6, 1, tzinfo=timezone.utc))


def test_a_keystore_without_the_enclave_is_named_in_the_refusal(tmp_path):
    (tmp_path / "enclaves" / "robot_control" / "plant").mkdir(parents=True)
    with pytest.raises(SecurityError, match="has no enclave /robot_control/controller"):
        check_enclave(tmp_path, "/robot_control/controller", 0)
    with pytest.raises(SecurityError, match="lacks identity_ca.cert.pem, cert.pem"):
        check_enclave(tmp_path, "/robot_control/plant", 0)


def test_a_namespaced_policy_moves_every_profile_and_keeps_the_global_names(tmp_path):
    assert normalise_namespace("arm1/") == "/arm1" and normalise_namespace("") == "/"
    with pytest.raises(SecurityError, match="not a valid ROS namespace"):
        normalise_namespace("1arm")
    policy = policy_for_namespace(policy_dir(), "/arm1", tmp_path)
    profiles = list((tmp_path / "profiles").glob("*.xml"))
    assert len(profiles) == len(policy_enclaves(policy)) - 1  # the container reuses five
    for profile in profiles:
        text = profile.read_text()
        assert 'ns="/arm1"' in text and 'ns="/"' not in text
    # the shipped files are untouched
    assert 'ns="/"' in (share_path("config", "security", "profiles", "plant.xml")).read_text()


def test_the_rclpy_free_node_refuses_to_run_secure_without_security():
    env = {**NO_SECURITY, "ROBOT_CONTROL_BUS": "dds", "ROS_SECURITY_ENABLE": "true",
           "ROS_SECURITY_STRATEGY": "Enforce", "ROS_SECURITY_KEYSTORE": "/ks"}
    out = subprocess.run([sys.executable, "-m", "robot_control.nodes.plant_node"], env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert lines == [f"[ERROR] [plant]: cannot start: {DDS_ROUTE_REFUSAL}"], out.stderr
    tool = subprocess.run([sys.executable, "-m", "robot_control.cli", "topic", "list"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert tool.returncode != 0 and DDS_ROUTE_REFUSAL in tool.stderr


def test_security_init_without_ros2_says_so_in_one_line(tmp_path):
    env = {**NO_SECURITY, "PATH": os.path.dirname(sys.executable)}
    out = subprocess.run([sys.executable, "-m", "robot_control.cli", "security", "init",
                          str(tmp_path / "ks")], env=env, capture_output=True, text=True,
                         timeout=60, cwd=ROOT)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        "robot-control security: a keystore is made with ROS 2's sros2, and the ros2 command is "
        "not on PATH: source /opt/ros/<distro>/setup.bash"]
    assert not (tmp_path / "ks").exists()
