"""The README's ROS 2 commands work as written: ``ros2 launch``, the ``ros2`` CLI in a
second terminal, the workspace build with ``colcon build``, SROS2 (``robot-control security
init``, ``security:=true``) and ``ros2 action send_goal``, parsed from README.md like the rest
(test_readme_examples.py runs the commands without ROS 2, and lists those no test can run).

Each README section is one shell session (readme_session.py) with ``$HOME`` in a scratch
directory (``~/ros2_ws``, ``~/robot_keystore``) and the warm compile cache of the suite; the
README's ``/path/to/robot_control`` is a copy of this checkout, its ``ROS_DOMAIN_ID=42`` a domain
claimed for the test. A section's first ``ros2 launch`` is the stack its later commands talk to
("in a second terminal"), run again in the background; every launch is stopped with SIGINT once
the stack is active, and must then exit 0.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import domains
import pytest
from readme_commands import LAUNCH_HELD, readme_commands, sections_of, suites
from readme_session import Endless, Session, Suite, check_section
from ros2_env import ROSBAG2_STOP_CRASH, dds_python, dds_python_missing, ros2_missing, stop_daemon

pytestmark = [pytest.mark.ros2, pytest.mark.slow, pytest.mark.skipif(
    bool(ros2_missing() or dds_python_missing()),
    reason=str(ros2_missing() or dds_python_missing()))]

REPO = Path(__file__).resolve().parent.parent
COMMANDS = readme_commands()
SUITES = suites(COMMANDS)
ENV = r"^(?:\w+=\S*\s+)*"  # variable assignments before a command (ROS_SECURITY_ENCLAVE_OVERRIDE=…)
ACTIVE = r"stack active: "  # the lifecycle manager's line once every node is active
CTRL_C = (0, 2)  # ros2cli's verbs return signal.SIGINT (2) when Ctrl-C ends them


def ros2_suite(checkout: Path, domain: int) -> Suite:
    return Suite(
        stack="ros2 launch robot_control control.launch.yaml",
        stack_ready=ACTIVE,
        needs_stack=lambda text: bool(re.match(
            ENV + r"(ros2|robot-control) (node|lifecycle|topic|param|service|action|bag record)\b",
            text)),
        endless=[
            Endless(ENV + r"ros2 launch\b", ACTIVE),
            Endless(ENV + r"robot-control launch\b(?!.*--duration)", ACTIVE,
                    after_stop=LAUNCH_HELD),
            # settle: a latched topic (/rosout) delivers its kept lines in one burst; a Ctrl-C
            # landing while rclpy converts one of them becomes pybind11's "Unable to convert call
            # argument to Python object" and exit 1 (rclpy's take, not the stack)
            Endless(ENV + r"ros2 topic echo\b(?!.*--once)", r"^---$", settle_s=1.5,
                    stopped_codes=CTRL_C),
            Endless(ENV + r"ros2 topic hz\b", r"average rate", stopped_codes=CTRL_C),
            Endless(ENV + r"ros2 bag record\b", r"Subscribed to topic|Recording\.\.\.",
                    settle_s=2.0, stopped_codes=CTRL_C, upstream_crash=ROSBAG2_STOP_CRASH),
        ],
        checks=[(ENV + r"robot-control launch\b", LAUNCH_HELD),
                (ENV + r"ros2 action send_goal\b", r"SUCCEEDED")],
        placeholders={"/path/to/robot_control": str(checkout),
                      "ROS_DOMAIN_ID=42": f"ROS_DOMAIN_ID={domain}"},
        follow_ups=[(r"(lifecycle set /controller )deactivate", r"\1activate")],
        section_stack=ENV + r"ros2 launch robot_control control\.launch\.yaml",
    )


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    """This checkout as a reader's clone holds it (its .git: the README clones it into the
    workspace; no venv, no build output)."""
    copy = tmp_path_factory.mktemp("clone") / "robot_control"
    shutil.copytree(REPO, copy, symlinks=True, ignore=shutil.ignore_patterns(
        ".venv*", "build", "install", "log", "*.egg-info", "__pycache__"))
    return copy


@pytest.fixture
def session(tmp_path, checkout):
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "scripts").symlink_to(REPO / "scripts")
    venv = Path(dds_python()).parent.parent
    (tmp_path / ".venv").symlink_to(venv)
    env = {**os.environ, "HOME": str(home), "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST",
           "PATH": f"{os.environ.get('PATH', '')}{os.pathsep}{venv / 'bin'}",  # robot-control
           "XDG_CACHE_HOME": os.environ.get("XDG_CACHE_HOME", str(Path.home() / ".cache"))}
    domain = domains.claim("readme-ros2-secure")
    s = Session(ros2_suite(checkout, domain), tmp_path, env)
    yield s
    s.close()
    for used in s.used_domains | {domain}:  # ros2 commands start a daemon per domain
        stop_daemon({**env, "ROS_DOMAIN_ID": str(used)})
    domains.release(domain)


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("section", sections_of(COMMANDS, SUITES, "ros2"))
def test_the_readme_ros2_commands_of_a_section_work_as_written(session, section):
    check_section(session, section, [c for c in COMMANDS if c.section == section], SUITES,
                  ("ros2", "ros2 setup", "setup"))
