"""Is this process's enclave in the keystore, and will DDS Security accept it? The checks a node
makes before a secure start and the launcher makes for every node before starting any, so a
missing, expired or foreign certificate is reported in one line that names the file and the
reason, instead of a participant that fails deep inside the RMW.

The layout is SROS2's (sros2/keystore): ``KEYSTORE/enclaves/<enclave>/`` holds the six files the
DDS Security plugins load (OMG DDS Security 1.1 §9.3.1, §9.4.1): the identity CA, the enclave's
certificate and key, the permissions CA, and the signed governance and permissions documents.
The certificate chain and the S/MIME signatures are verified with the ``openssl`` command, as the
plugins verify them; without it only the files' presence is checked (DDS still verifies them).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path

from robot_control.security import (
    DDS_ROUTE_REFUSAL,
    KEYSTORE_ENV,
    OVERRIDE_ENV,
    STRATEGY_ENV,
    SecurityError,
    requested,
)

ENCLAVE_FILES = ("identity_ca.cert.pem", "cert.pem", "key.pem", "permissions_ca.cert.pem",
                 "governance.p7s", "permissions.p7s")


def enclave_dir(keystore: str | Path, enclave: str) -> Path:
    """Where SROS2 keeps an enclave's files: ``KEYSTORE/enclaves/<enclave without its '/'>``."""
    return Path(keystore) / "enclaves" / enclave.strip("/")


def enclave_from_args(argv: Sequence[str], env: Mapping[str, str]) -> str:
    """The enclave rcl gives this process: ROS_SECURITY_ENCLAVE_OVERRIDE, else the last
    ``--enclave``/``-e`` of a ``--ros-args`` section, else ``/`` (rcl's default)."""
    if env.get(OVERRIDE_ENV):
        return env[OVERRIDE_ENV]
    enclave, inside = "/", False
    for i, arg in enumerate(argv):
        if arg == "--ros-args":
            inside = True
        elif arg == "--":
            inside = False
        elif inside and arg in ("-e", "--enclave") and i + 1 < len(argv):
            enclave = argv[i + 1]
    return enclave


def xml_domain_ids(text: str) -> set[int]:
    """The ``<id>`` domain ids of a governance or permissions document."""
    return {int(m) for m in re.findall(r"<id>\s*(\d+)\s*</id>", text)}


def keystore_domains(keystore: str | Path) -> set[int]:
    """The domain ids the keystore's governance document was made for (empty if it has none)."""
    path = Path(keystore) / "enclaves" / "governance.xml"
    return xml_domain_ids(path.read_text()) if path.is_file() else set()


def _openssl(*args: str) -> tuple[bool, str]:
    """Run ``openssl args…``: (succeeded, its output), or (True, '') when there is no openssl."""
    exe = shutil.which("openssl")
    if exe is None:
        return True, ""
    out = subprocess.run([exe, *args], capture_output=True, text=True, timeout=20)
    return out.returncode == 0, (out.stdout + out.stderr).strip()


def _openssl_reason(output: str) -> str:
    """The reason in openssl's verify output (``error 10 at 0 depth lookup: certificate has
    expired`` -> ``certificate has expired``)."""
    found = re.findall(r"error \d+ at \d+ depth lookup: ([^\n]+)", output)
    if found:
        return found[0].strip()
    lines = [ln for ln in output.splitlines() if ln.strip()]
    return lines[-1] if lines else "verification failed"


def _not_after(cert: Path) -> str:
    ok, out = _openssl("x509", "-in", str(cert), "-noout", "-enddate")
    return out.removeprefix("notAfter=") if ok else "?"


def check_certificate(directory: Path, enclave: str) -> None:
    """The enclave's certificate is valid now and issued by the keystore's identity CA."""
    cert = directory / "cert.pem"
    ok, out = _openssl("verify", "-CAfile", str(directory / "identity_ca.cert.pem"), str(cert))
    if not ok:
        reason = _openssl_reason(out)
        if "expired" in reason:
            reason += f" (not after {_not_after(cert)})"
        elif "not yet valid" in reason:
            reason += " (its validity starts later: check the clock)"
        elif "issuer" in reason or "signature" in reason:
            reason += " (it was not issued by this keystore's identity CA)"
        raise SecurityError(f"enclave {enclave}: certificate {cert} rejected: {reason}")
    ok, out = _openssl("x509", "-in", str(cert), "-noout", "-subject", "-nameopt", "RFC2253")
    if ok and out and f"CN={enclave}" not in out:
        raise SecurityError(f"enclave {enclave}: certificate {cert} is for '{out}', not "
                            f"CN={enclave}")


def check_signed(directory: Path, name: str, enclave: str) -> str:
    """A signed document (governance or permissions) verified against the keystore's
    permissions CA; the XML text that was signed."""
    path = directory / f"{name}.p7s"
    ok, out = _openssl("smime", "-verify", "-in", str(path), "-CAfile",
                       str(directory / "permissions_ca.cert.pem"))
    if not ok:
        raise SecurityError(f"enclave {enclave}: {path} is not signed by this keystore's "
                            f"permissions CA: {_openssl_reason(out)}")
    # the signed content (after its MIME header), not the .xml beside it, which nothing verifies
    start = out.find("<")
    return out[start:] if start >= 0 else ""


def check_permissions_window(text: str, enclave: str, now: datetime | None = None) -> None:
    """The permissions grant's validity window holds ``now`` (DDS checks it at every start)."""
    now = now or datetime.now(timezone.utc)
    for tag, later in (("not_before", False), ("not_after", True)):
        found = re.search(rf"<{tag}>([^<]+)</{tag}>", text)
        if found is None:
            continue
        when = datetime.fromisoformat(found.group(1).strip())
        when = when if when.tzinfo else when.replace(tzinfo=timezone.utc)
        if (now > when) if later else (now < when):
            state = "expired on" if later else "valid only from"
            raise SecurityError(f"enclave {enclave}: its permissions {state} {when:%Y-%m-%d %H:%M} "
                                "UTC: run robot-control security init again")


def check_enclave(keystore: str | Path, enclave: str, domain_id: int) -> None:
    """SecurityError (one line, the reason) unless the keystore holds a usable enclave for a
    participant on ``domain_id``."""
    keystore = Path(keystore)
    if not (keystore / "enclaves").is_dir():
        raise SecurityError(f"{keystore} is not an SROS2 keystore (no enclaves/ directory): make "
                            f"one with robot-control security init {keystore}")
    directory = enclave_dir(keystore, enclave)
    if not directory.is_dir():
        raise SecurityError(f"keystore {keystore} has no enclave {enclave}: robot-control "
                            f"security init {keystore} makes the package's enclaves")
    missing = [f for f in ENCLAVE_FILES if not (directory / f).is_file()]
    if missing:
        raise SecurityError(f"enclave {enclave} in {keystore} lacks {', '.join(missing)}")
    check_certificate(directory, enclave)
    check_signed(directory, "governance", enclave)
    permissions = check_signed(directory, "permissions", enclave)
    domains = xml_domain_ids(permissions)
    if domains and domain_id not in domains:
        raise SecurityError(f"enclave {enclave} in {keystore} is for ROS domain "
                            f"{', '.join(map(str, sorted(domains)))}, not {domain_id}: make the "
                            f"keystore with ROS_DOMAIN_ID={domain_id}")
    check_permissions_window(permissions, enclave)


def check_process(argv: Sequence[str], env: Mapping[str, str] | None = None,
                  backend: str = "rclpy") -> None:
    """The check before a process's first participant: nothing without ROS_SECURITY_ENABLE=true;
    with it, refuse the rclpy-free route, an unenforced strategy's silent fallback, and an
    enclave the keystore cannot back (SecurityError, one line)."""
    env = os.environ if env is None else env
    if not requested(env):
        return
    if backend != "rclpy":
        raise SecurityError(DDS_ROUTE_REFUSAL)
    keystore = env.get(KEYSTORE_ENV, "")
    if not keystore:
        raise SecurityError(f"ROS_SECURITY_ENABLE=true but no keystore: give keystore:=DIR (or "
                            f"set {KEYSTORE_ENV}); robot-control security init DIR makes one")
    enclave = enclave_from_args(argv, env)
    if enclave == "/":
        raise SecurityError("ROS_SECURITY_ENABLE=true but this process names no enclave: start it "
                            "with --ros-args --enclave /robot_control/<node> (the launch files do) "
                            f"or set {OVERRIDE_ENV}")
    if env.get(STRATEGY_ENV, "") != "Enforce":
        # Permissive would start this node WITHOUT security if its files were missing
        raise SecurityError(f"ROS_SECURITY_ENABLE=true needs {STRATEGY_ENV}=Enforce (got "
                            f"'{env.get(STRATEGY_ENV, '')}'): robot_control never runs a node "
                            "unsecured when security was asked for")
    check_enclave(keystore, enclave, domain_id(env))


def domain_id(env: Mapping[str, str]) -> int:
    """ROS_DOMAIN_ID as rcl reads it (unset or empty: 0); SecurityError if it is no number."""
    text = env.get("ROS_DOMAIN_ID", "").strip()
    if text and not text.isdigit():
        raise SecurityError(f"ROS_DOMAIN_ID={text!r} is not a non-negative integer")
    return int(text) if text else 0
