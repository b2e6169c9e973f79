"""``robot-control security init KEYSTORE [--namespace NS]``: a keystore holding every enclave of
the package's policy (config/security/policy.xml), made with sros2 for the ROS domain of the
environment; it prints the environment to run the stack with. Running it again keeps the CA and
the enclaves' keys and renews the signed permissions. ``robot-control security check KEYSTORE
ENCLAVE…`` tells whether a node in each enclave would start (the check every node makes).

Exit status: 0; 2 with one line on stderr when it cannot (no ROS 2 or sros2, a keystore for
another domain or namespace, an enclave that would be refused).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from robot_control.security import SecurityError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="security_command", required=True)
    init = sub.add_parser("init", help="make (or renew) a keystore with the package's policy")
    init.add_argument("keystore", help="keystore directory (created if missing)")
    init.add_argument("--namespace", default="/",
                      help="namespace of the stack the permissions are for (default /)")
    check = sub.add_parser("check", help="would a node in each enclave start securely?")
    check.add_argument("keystore", help="keystore directory")
    check.add_argument("enclaves", nargs="+", metavar="ENCLAVE",
                       help="enclave paths, e.g. /robot_control/controller")


def run(args: argparse.Namespace) -> int:
    try:
        if args.security_command == "init":
            return _init(Path(args.keystore), args.namespace)
        return _check(Path(args.keystore), args.enclaves)
    except SecurityError as exc:
        print(f"robot-control security: {exc}", file=sys.stderr)
        return 2


def _init(keystore: Path, namespace: str) -> int:
    from robot_control.security.artifacts import environment_lines, init_keystore

    enclaves = init_keystore(keystore, namespace, os.environ)
    print(f"keystore {keystore.resolve()}: {len(enclaves)} enclaves ({', '.join(enclaves)})")
    print("run the stack with:  ros2 launch robot_control control.launch.yaml security:=true "
          f"keystore:={keystore.resolve()}")
    print("environment for nodes and tools started by hand:")
    for line in environment_lines(keystore, os.environ):
        print(f"  {line}")
    return 0


def _check(keystore: Path, enclaves: list[str]) -> int:
    from robot_control.security.keystore import check_enclave, domain_id

    domain = domain_id(os.environ)
    for enclave in enclaves:
        check_enclave(keystore, enclave, domain)
        print(f"{enclave}: ok (ROS domain {domain})")
    return 0
