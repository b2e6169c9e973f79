"""Make a keystore for robot_control: ``ros2 security create_keystore`` (once) and
``ros2 security generate_artifacts`` with the shipped policy, for the root namespace or one
stack's namespace. Both sros2 verbs keep what exists (a CA, an enclave's key and certificate) and
rewrite the signed permissions, so running it again is harmless.

sros2 runs in the ROS 2 distribution's Python (it needs rclpy, lxml, cryptography), so it is
called through the ``ros2`` command, not imported.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from robot_control.security import ENCLAVE_ROOT, SecurityError
from robot_control.security.keystore import domain_id, keystore_domains

POLICY_DIR = ("config", "security")
#: sros2's keystore layout: what create_keystore leaves behind
#: which namespace's stack a keystore's permissions are for (one keystore per namespaced stack:
#: the enclave names are the same in every namespace)
NAMESPACE_FILE = "robot_control_namespace"
KEYSTORE_FILES = ("public/identity_ca.cert.pem", "public/permissions_ca.cert.pem",
                  "private/identity_ca.key.pem", "private/permissions_ca.key.pem",
                  "enclaves/governance.p7s")


def policy_dir() -> Path:
    """The shipped policy: policy.xml, its profiles/ and common/ parts."""
    from robot_control.model.resources import share_path

    return share_path(*POLICY_DIR)


def normalise_namespace(namespace: str) -> str:
    """``arm1``, ``/arm1/`` -> ``/arm1``; ``''`` or ``/`` -> ``/``; SecurityError for a name ROS
    would refuse (letters, digits, underscores; tokens not starting with a digit)."""
    ns = "/" + namespace.strip().strip("/")
    if ns != "/" and not re.fullmatch(r"(/[A-Za-z_][A-Za-z0-9_]*)+", ns):
        raise SecurityError(f"'{namespace}' is not a valid ROS namespace")
    return ns


def policy_for_namespace(source: Path, namespace: str, target: Path) -> Path:
    """A copy of the policy in ``target`` whose profiles live in ``namespace`` (relative and
    ``~`` names resolve there; /rosout, /parameter_events, /clock, /tf stay global); the
    policy.xml to give sros2."""
    shutil.copytree(source, target, dirs_exist_ok=True)
    if namespace == "/":
        return target / "policy.xml"
    for profile in (target / "profiles").glob("*.xml"):
        text = profile.read_text()
        changed = re.sub(r'(<profile\b[^>]*\bns=)"/"', rf'\1"{namespace}"', text)
        if changed == text:
            raise SecurityError(f"{profile}: no <profile ns=\"/\"> to move into {namespace}")
        profile.write_text(changed)
    return target / "policy.xml"


def policy_enclaves(policy: Path) -> list[str]:
    """The enclave paths a policy file declares (in its order)."""
    return re.findall(r'<enclave\s+path="([^"]+)"', policy.read_text())


def is_keystore(path: Path) -> bool:
    return all((path / f).exists() for f in KEYSTORE_FILES)


def _ros2(args: list[str], env: Mapping[str, str]) -> str:
    """Run ``ros2 args…``; its output, or SecurityError with the last line of what went wrong."""
    exe = shutil.which("ros2", path=env.get("PATH"))
    if exe is None:
        raise SecurityError("a keystore is made with ROS 2's sros2, and the ros2 command is not "
                            "on PATH: source /opt/ros/<distro>/setup.bash")
    out = subprocess.run([exe, *args], env=dict(env), capture_output=True, text=True,
                         timeout=120)
    text = (out.stdout + out.stderr).strip()
    if out.returncode != 0 or "Traceback" in text:
        last = text.splitlines()[-1] if text else f"exit code {out.returncode}"
        if "invalid choice: 'security'" in text:
            last = "this ROS 2 has no sros2 (ros2 security): install ros-<distro>-sros2"
        raise SecurityError(f"ros2 {' '.join(args[:2])} failed: {last}")
    return text


def init_keystore(keystore: Path, namespace: str, env: Mapping[str, str]) -> list[str]:
    """Create (or complete) a keystore with every enclave of the shipped policy for a stack in
    ``namespace`` on the environment's ROS domain; the enclaves it holds for it."""
    namespace = normalise_namespace(namespace)
    domain = domain_id(env)
    keystore = keystore.resolve()
    if is_keystore(keystore):
        made_for = keystore_domains(keystore)
        if made_for and domain not in made_for:
            raise SecurityError(f"keystore {keystore} was made for ROS domain "
                                f"{', '.join(map(str, sorted(made_for)))}, not {domain} (the "
                                "governance is signed with its domain): use another directory "
                                f"or ROS_DOMAIN_ID={min(made_for)}")
        marker = keystore / NAMESPACE_FILE
        if marker.is_file() and marker.read_text().strip() != namespace:
            raise SecurityError(f"keystore {keystore} is for the stack in namespace "
                                f"{marker.read_text().strip()}, not {namespace}: give each "
                                "namespaced stack its own keystore")
    elif keystore.exists() and any(keystore.iterdir()):
        raise SecurityError(f"{keystore} exists and is not an SROS2 keystore: give a new or an "
                            "empty directory")
    else:
        _ros2(["security", "create_keystore", str(keystore)], env)
    with tempfile.TemporaryDirectory(prefix="robot_control_policy_") as tmp:
        policy = policy_for_namespace(policy_dir(), namespace, Path(tmp))
        _ros2(["security", "generate_artifacts", "-k", str(keystore), "-p", str(policy)], env)
        enclaves = policy_enclaves(policy)
    (keystore / NAMESPACE_FILE).write_text(namespace + "\n")
    missing = [e for e in enclaves if not (keystore / "enclaves" / e.strip("/") /
                                           "permissions.p7s").is_file()]
    if missing:
        raise SecurityError(f"sros2 left no permissions for {', '.join(missing)} in {keystore}")
    return enclaves


def environment_lines(keystore: Path, env: Mapping[str, str]) -> list[str]:
    """The shell lines that run nodes (and the operator's tools) with this keystore."""
    return [f"export ROS_DOMAIN_ID={domain_id(env)}",
            f"export ROS_SECURITY_KEYSTORE={keystore.resolve()}",
            "export ROS_SECURITY_ENABLE=true",
            "export ROS_SECURITY_STRATEGY=Enforce",
            f"# ros2 CLI as the operator: ROS_SECURITY_ENCLAVE_OVERRIDE={ENCLAVE_ROOT}/operator "
            "ros2 param set /controller controller pd",
            f"# rqt / ros2 bag as an observer: ROS_SECURITY_ENCLAVE_OVERRIDE={ENCLAVE_ROOT}/observer "
            "ros2 bag record -s mcap /joint_states"]
