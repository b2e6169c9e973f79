"""How the keystore's governance protects the control loop's two topics: encrypted (sros2's
default for every topic) or signed.

A governance document's topic rules apply in order, the first whose expression matches the DDS
topic name wins (DDS Security 1.1, §9.4.1.2.5). sros2 writes one rule, ``*``: data and metadata
ENCRYPT. ``sign`` puts a rule before it for ``rt…joint_command`` and ``rt…joint_states`` (any
namespace): SIGN. Their samples stay authenticated (a message authentication code per
submessage) and access-controlled — only the permissions' publishers can write them, nobody can
forge or alter one — but are no longer confidential: whoever captures the traffic reads the
joint states and torques. Every other topic, and discovery, stays encrypted. The document is
then signed again with the keystore's permissions CA, as sros2 signs it (S/MIME, text, SHA-256).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from robot_control.security import SecurityError

PROTECTIONS = ("encrypt", "sign")
LOOP_TOPICS = ("rt*joint_command", "rt*joint_states")
MARK = "<!-- robot_control: the control loop's topics signed, not encrypted -->"
RULE = """                <topic_rule>
                    <topic_expression>{topic}</topic_expression>
                    <enable_discovery_protection>true</enable_discovery_protection>
                    <enable_liveliness_protection>true</enable_liveliness_protection>
                    <enable_read_access_control>true</enable_read_access_control>
                    <enable_write_access_control>true</enable_write_access_control>
                    <metadata_protection_kind>SIGN</metadata_protection_kind>
                    <data_protection_kind>SIGN</data_protection_kind>
                </topic_rule>
"""


def loop_protection(keystore: Path) -> str:
    """``sign`` if the keystore's governance signs the loop's topics, else ``encrypt``."""
    return "sign" if MARK in governance_path(keystore).read_text() else "encrypt"


def governance_path(keystore: Path) -> Path:
    return Path(keystore) / "enclaves" / "governance.xml"


def with_loop_protection(text: str, protection: str) -> str:
    """The governance text with the loop topics' rule for ``protection`` (before sros2's ``*``)."""
    if protection not in PROTECTIONS:
        raise SecurityError(f"protection '{protection}': one of {', '.join(PROTECTIONS)}")
    text = text.replace(f"                {MARK}\n", "")  # what an earlier run put in
    for topic in LOOP_TOPICS:
        text = text.replace(RULE.format(topic=topic), "")
    if protection == "encrypt":
        return text
    opening = "<topic_access_rules>\n"
    if text.count(opening) != 1:
        raise SecurityError("the governance has not exactly one <topic_access_rules>: not "
                            "sros2's, left as it is")
    rules = "".join(RULE.format(topic=topic) for topic in LOOP_TOPICS)
    return text.replace(opening, f"{opening}                {MARK}\n{rules}")


def set_loop_protection(keystore: Path, protection: str) -> bool:
    """Rewrite the keystore's governance for ``protection`` and sign it again; False if it
    already said so."""
    xml = governance_path(keystore)
    old = xml.read_text()
    new = with_loop_protection(old, protection)
    if new == old:
        return False
    openssl = shutil.which("openssl")
    if openssl is None:
        raise SecurityError("signing the governance again needs the openssl command")
    xml.write_text(new)
    keystore = Path(keystore)
    out = subprocess.run(
        [openssl, "smime", "-sign", "-text", "-md", "sha256", "-in", str(xml),
         "-out", str(xml.with_suffix(".p7s")),
         "-signer", str(keystore / "public" / "permissions_ca.cert.pem"),
         "-inkey", str(keystore / "private" / "permissions_ca.key.pem")],
        capture_output=True, text=True, timeout=30)
    if out.returncode != 0:
        xml.write_text(old)
        raise SecurityError(f"openssl could not sign {xml}: {out.stderr.strip()}")
    return True
