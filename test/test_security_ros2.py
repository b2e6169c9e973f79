"""SROS2 on the real thing: a keystore made by ``robot-control security init`` (sros2), the stack
started by ``ros2 launch robot_control control.launch.yaml security:=true keystore:=…`` (each node
in its enclave, Enforce), and processes on the same domain in other enclaves or none:

- a node without an enclave sees no node, topic or data; its /joint_command torques never reach
  the plant (the plant counts every command that arrives and does not answer its state: a probe
  holding the controller's own identity is counted, the plain one is not); its ``ros2 param set``
  and ``ros2 lifecycle set`` change nothing;
- the observer enclave reads the data (ros2 bag record) but is refused a /joint_command
  publisher at creation and cannot call a parameter service;
- the operator enclave swaps the law;
- an expired certificate, or one from another keystore, stops a node at start with the reason
  (and DDS Security refuses the same files without our check); ``robot-control launch`` refuses
  a keystore that lacks a node's enclave before starting anything.

The stack runs at 250 Hz (busy 2-core machine) on a private domain (keystores embed the domain).
"""

from __future__ import annotations

import datetime
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ros2_env import (
    Watched,
    bag_topics,
    dds_python,
    dds_python_missing,
    record_bag,
    ros2,
    ros2_missing,
    ros_env,
)

if ros2_missing() or dds_python_missing():
    pytest.skip(ros2_missing() or dds_python_missing(), allow_module_level=True)
if shutil.which("openssl") is None:
    pytest.skip("the openssl command is missing", allow_module_level=True)

pytestmark = pytest.mark.ros2
TEST_DIR = Path(__file__).resolve().parent
PROBE = str(TEST_DIR / "security_probe.py")
UP_S = 240.0  # a fresh install compiles its kernels on the first start; discovery is signed
OPERATOR, OBSERVER = "/robot_control/operator", "/robot_control/observer"
SECURITY_VARS = ("ROS_SECURITY_ENABLE", "ROS_SECURITY_STRATEGY", "ROS_SECURITY_KEYSTORE",
                 "ROS_SECURITY_ENCLAVE_OVERRIDE")


@pytest.fixture(scope="module")
def base_env() -> dict[str, str]:
    env = ros_env("security-ros2")
    return {k: v for k, v in env.items() if k not in SECURITY_VARS}


def robot_control(env: dict[str, str], *args: str, timeout: float = 120.0):
    """``robot-control args…`` on the project's Python, ROS 2 sourced (the rclpy route)."""
    return subprocess.run([dds_python(), "-m", "robot_control.cli", *args], env=env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def keystore(base_env, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("sros2") / "keystore"
    out = robot_control(base_env, "security", "init", str(path))
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"export ROS_SECURITY_KEYSTORE={path}" in out.stdout
    again = robot_control(base_env, "security", "init", str(path))  # idempotent
    assert again.returncode == 0, again.stderr
    check = robot_control(base_env, "security", "check", str(path), "/robot_control/controller",
                          "/robot_control/container")
    assert check.stdout.splitlines() == [
        f"{e}: ok (ROS domain {base_env['ROS_DOMAIN_ID']})"
        for e in ("/robot_control/controller", "/robot_control/container")], check.stderr
    return path


def secure(env: dict[str, str], keystore: Path, enclave: str | None = None) -> dict[str, str]:
    out = {**env, "ROS_SECURITY_ENABLE": "true", "ROS_SECURITY_STRATEGY": "Enforce",
           "ROS_SECURITY_KEYSTORE": str(keystore)}
    if enclave:
        out["ROS_SECURITY_ENCLAVE_OVERRIDE"] = enclave
    return out


def probe(env: dict[str, str], *args: str, enclave: str | None = None) -> dict:
    ros_args = ["--ros-args", "--enclave", enclave] if enclave else []
    out = subprocess.run([sys.executable, PROBE, *args, *ros_args], env=env,
                         capture_output=True, text=True, timeout=90)
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    assert out.returncode == 0 and lines, out.stdout + out.stderr
    return json.loads(lines[-1])


@pytest.fixture(scope="module")
def stack(base_env, keystore):
    with Watched(["ros2", "launch", "robot_control", "control.launch.yaml", "security:=true",
                  f"keystore:={keystore}", "rate:=250"], base_env) as launch:
        assert launch.wait_for_line(r"\[lifecycle_manager\]: stack active", UP_S), launch.output
        yield launch
        launch.stop()
    # a secure node's DDS threads must be gone before exit(): left running they used OpenSSL
    # after its atexit cleanup and the managed nodes died of SIGSEGV on every stop
    assert not re.search(r"process has died .*exit code -11", launch.output), launch.output


def plant_counts(base_env, keystore) -> dict[str, int]:
    """The plant's command counters as an observer reads them on /diagnostics."""
    status = probe(secure(base_env, keystore), "plant-status", "2.0", enclave=OBSERVER)["status"]
    assert status, "the observer heard no plant status"
    return {k: int(status[k]) for k in ("commands_applied", "commands_rejected",
                                        "commands_foreign", "commands_ignored")}


def unanswered(counts: dict[str, int]) -> int:
    """Commands that arrived at the plant without answering its state (an attacker's)."""
    return counts["commands_rejected"] + counts["commands_foreign"] + counts["commands_ignored"]


def test_a_node_without_an_enclave_sees_no_node_no_topic_no_data(stack, base_env, keystore):
    nodes = ros2(base_env, "node", "list", "--no-daemon")
    assert "/plant" not in nodes and "/controller" not in nodes, nodes
    topics = ros2(base_env, "topic", "list", "--no-daemon")
    assert "/joint_states" not in topics and "/joint_command" not in topics, topics
    assert probe(base_env, "listen", "/joint_states", "3.0") == {"received": 0}
    # the same probe in the observer enclave hears the stack: the plain one's silence is security
    assert probe(secure(base_env, keystore), "listen", "/joint_states", "3.0",
                 enclave=OBSERVER)["received"] > 50
    operator = ros2(secure(base_env, keystore, OPERATOR), "node", "list", "--no-daemon")
    assert {"/plant", "/controller", "/trajectory_generator", "/dynamics_server",
            "/lifecycle_manager"} <= set(operator.split()), operator


def test_torques_from_a_node_without_an_enclave_never_reach_the_plant(stack, base_env, keystore):
    before = plant_counts(base_env, keystore)
    attack = probe(base_env, "publish-commands", "3.0")
    assert attack["created"] and attack["sent"] > 100  # a plain publisher, sending
    after = plant_counts(base_env, keystore)
    assert unanswered(after) == unanswered(before), (before, after)
    assert after["commands_applied"] > before["commands_applied"]  # the loop ran meanwhile
    # the same torques from a process holding the controller's own identity do arrive (and are
    # refused as answering no state): the counters see an attack when one gets through
    thief = probe(secure(base_env, keystore), "publish-commands", "2.0",
                  enclave="/robot_control/controller")
    assert thief["created"], thief
    assert unanswered(plant_counts(base_env, keystore)) > unanswered(after)


def test_the_observer_reads_but_cannot_create_a_joint_command_publisher(stack, base_env,
                                                                       keystore):
    refused = probe(secure(base_env, keystore), "publish-commands", "1.0", enclave=OBSERVER)
    assert refused["created"] is False and "Failed to create publisher" in refused["error"]
    out = ros2(secure(base_env, keystore, OBSERVER), "param", "set", "/controller",
               "controller", "pd", "--no-daemon", timeout=60)
    assert "Set parameter successful" not in out, out


def test_the_observer_records_a_bag(stack, base_env, keystore, tmp_path):
    info = record_bag(secure(base_env, keystore, OBSERVER), tmp_path / "bag", ["/joint_states"])
    topics = bag_topics(info)
    assert topics["/joint_states"][1] > 50, info


def test_param_and_lifecycle_calls_without_an_enclave_change_nothing(stack, base_env, keystore):
    out = ros2(base_env, "param", "set", "/controller", "controller", "pd", "--no-daemon",
               timeout=60)
    assert "Set parameter successful" not in out, out
    out = ros2(base_env, "lifecycle", "set", "/plant", "deactivate", "--no-daemon", timeout=60)
    assert "Transitioning successful" not in out, out
    operator = secure(base_env, keystore, OPERATOR)
    law = ros2(operator, "param", "get", "/controller", "controller", "--no-daemon", timeout=60)
    assert "computed_torque" in law, law
    state = ros2(operator, "lifecycle", "get", "/plant", "--no-daemon", timeout=60)
    assert state.startswith("active"), state


def test_the_operator_swaps_the_law(stack, base_env, keystore):
    operator = secure(base_env, keystore, OPERATOR)
    out = ros2(operator, "param", "set", "/controller", "controller", "pd", "--no-daemon",
               timeout=60)
    assert "Set parameter successful" in out, out
    law = ros2(operator, "param", "get", "/controller", "controller", "--no-daemon", timeout=60)
    assert "pd" in law.split(), law
    assert stack.proc.poll() is None  # the stack runs on with the new law


def test_a_namespaced_keystore_grants_the_namespaced_names(base_env, keystore, tmp_path):
    path = tmp_path / "arm1"
    out = robot_control(base_env, "security", "init", str(path), "--namespace", "arm1")
    assert out.returncode == 0, out.stderr
    granted = (path / "enclaves" / "robot_control" / "controller" / "permissions.xml").read_text()
    for topic in ("rt/arm1/joint_command", "rr/arm1/controller/set_parametersReply",
                  "rt/rosout", "rt/clock"):  # the stack's names moved, the global ones kept
        assert f"<topic>{topic}</topic>" in granted, topic
    assert "<topic>rt/joint_command</topic>" not in granted
    again = robot_control(base_env, "security", "init", str(path))  # the root namespace's
    assert again.returncode == 2
    assert "is for the stack in namespace /arm1, not /" in again.stderr


# --- certificates ------------------------------------------------------------------------------


def expired_certificate(keystore: Path, enclave: str) -> None:
    """Replace the enclave's key and certificate with ones the keystore's identity CA signed
    for a window that ended yesterday."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    ca_key = serialization.load_pem_private_key(
        (keystore / "private" / "identity_ca.key.pem").read_bytes(), None)
    ca = x509.load_pem_x509_certificate((keystore / "public" / "identity_ca.cert.pem").read_bytes())
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.utcnow()
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, enclave)]))
            .issuer_name(ca.subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=2))
            .not_valid_after(now - datetime.timedelta(days=1))
            .sign(ca_key, hashes.SHA256()))
    directory = keystore / "enclaves" / enclave.strip("/")
    (directory / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (directory / "key.pem").write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))


def start_plant(env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(["ros2", "run", "robot_control", "plant", "--ros-args", "--enclave",
                           "/robot_control/plant"], env=env, capture_output=True, text=True,
                          timeout=120)


def bare_rclpy_node(env: dict[str, str]) -> subprocess.CompletedProcess:
    """An rclpy node in the plant's enclave with no check of ours: what DDS Security says."""
    code = ("import rclpy; rclpy.init(args=['--ros-args', '--enclave', '/robot_control/plant']);"
            "rclpy.create_node('bare'); print('created')")
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=60)


def test_an_expired_certificate_stops_the_node_at_start_with_the_reason(base_env, keystore,
                                                                        tmp_path):
    copy = tmp_path / "keystore"
    shutil.copytree(keystore, copy, symlinks=True)
    expired_certificate(copy, "/robot_control/plant")
    env = secure(base_env, copy)
    out = start_plant(env)
    assert out.returncode == 2, out.stdout + out.stderr
    assert re.search(r"\[plant\]: cannot start: enclave /robot_control/plant: certificate \S+ "
                     r"rejected: certificate has expired \(not after ", out.stderr), out.stderr
    bare = bare_rclpy_node(env)
    assert bare.returncode != 0 and "created" not in bare.stdout, bare.stdout + bare.stderr


def test_a_certificate_from_another_keystore_stops_the_node_at_start(base_env, keystore,
                                                                     tmp_path):
    other = tmp_path / "other"
    out = robot_control(base_env, "security", "init", str(other))
    assert out.returncode == 0, out.stderr
    copy = tmp_path / "keystore"
    shutil.copytree(keystore, copy, symlinks=True)
    for name in ("cert.pem", "key.pem"):
        shutil.copy(other / "enclaves" / "robot_control" / "plant" / name,
                    copy / "enclaves" / "robot_control" / "plant" / name)
    env = secure(base_env, copy)
    started = start_plant(env)
    assert started.returncode == 2, started.stdout + started.stderr
    assert "not issued by this keystore's identity CA" in started.stderr, started.stderr
    bare = bare_rclpy_node(env)
    assert bare.returncode != 0 and "created" not in bare.stdout, bare.stdout + bare.stderr


def test_robot_control_launch_refuses_a_keystore_without_a_nodes_enclave(base_env, keystore,
                                                                         tmp_path):
    copy = tmp_path / "keystore"
    shutil.copytree(keystore, copy, symlinks=True)
    shutil.rmtree(copy / "enclaves" / "robot_control" / "container")
    out = robot_control(base_env, "launch", "composed:=true", "security:=true",
                        f"keystore:={copy}", "--duration", "1")
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        f"robot-control launch: node robot_control_container cannot start securely: keystore "
        f"{copy} has no enclave /robot_control/container: robot-control security init {copy} "
        "makes the package's enclaves"], out.stderr
    assert "started" not in out.stdout
