"""Every command README.md shows works as written: the commands are parsed from the
README itself (readme_commands.py), so one added later is run too; those that need ROS 2 run in
the ROS 2 suite (test_readme_examples_ros2.py), those no test can run are listed with the reason
(readme_commands.NOT_RUN), and a list entry the README no longer shows fails the test.

Each README section is one shell session in a scratch directory holding ``scripts/`` and
``.venv`` as the checkout does (readme_session.py): real processes, real files, each command on
a ROS domain of its own; the bus commands (param, lifecycle, topic, node, action, bag record) talk
to a stack started in the background; a ``--duration`` above 1 s runs 1 s; commands that run
until stopped are stopped with SIGINT once they printed their first result.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import domains
import pytest
from readme_commands import (
    LAUNCH_HELD,
    NOT_COMMANDS,
    NOT_RUN,
    readme_commands,
    sections_of,
    suites,
)
from readme_session import Endless, Session, Suite, check_section

from robot_control.sim import matrix

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
VENV = Path(sys.prefix)
COMMANDS = readme_commands()
SUITES = suites(COMMANDS)

MAIN = Suite(
    stack="robot-control launch",
    stack_ready=r"^\[launch\] control loop running",
    needs_stack=lambda text: bool(re.match(
        r"robot-control (param|lifecycle|topic|node|service|action|bag record|view(?!.*--bag))\b",
        text)),
    endless=[
        Endless(r"^robot-control launch\b(?!.*--duration)", r"^\[launch\] control loop running",
                after_stop=LAUNCH_HELD),
        Endless(r"^robot-control topic echo\b(?!.*(--once|--count))", r"^---$"),
        Endless(r"^robot-control view\b", r"^robot-control view: http"),
        Endless(r"^robot-control topic hz\b(?!.*--duration)", r"^average rate"),
        Endless(r"^robot-control bag record\b(?!.*--duration)", r"Subscribed to topic",
                settle_s=2.0, after_stop=r"^recorded \S+: [1-9]\d* messages"),
    ],
    # a stack run ends with the line saying how it ended
    checks=[(r"^(robot-control launch|bash scripts/demo\.sh)\b", LAUNCH_HELD)],
    # a bag the test records for the README's BAG and DIR (see bag_for_placeholders); a user's
    # arm: example-robot-data's Panda (the test extra)
    placeholders={"BAG": "recorded_run", "DIR": "recorded_run",
                  "/path/to/arm.urdf": str(matrix.example_arm("panda"))},
    # the README deactivates the controller; `activate` resumes (the later commands need it)
    follow_ups=[(r"(lifecycle set /controller )deactivate", r"\1activate")],
)


def test_every_readme_command_is_run_or_listed_with_a_reason():
    assert COMMANDS, "no command found in README.md"
    keys = {c.key for c in COMMANDS}
    stale = sorted(set(NOT_RUN) - keys) + sorted(NOT_COMMANDS - keys)
    assert not stale, f"listed, but README.md no longer shows them: {stale}"
    kinds = set(SUITES.values())
    assert {"main", "ros2"} <= kinds, kinds
    # the parser finds what a reader sees: the quick start's demo (run here), a wrapped inline
    # command, a multi-line quoted argument, and the commands of a `;` line
    keys = [c.key for c in COMMANDS]
    assert SUITES[COMMANDS[keys.index("bash scripts/demo.sh")]] == "main"
    assert "robot-control launch cell.launch.yaml rate:=250 --duration 3" in keys
    assert any(k.startswith("ros2 action send_goal") and k.endswith("{sec: 3}}]}}\"") for k in keys)


@pytest.fixture
def session(tmp_path):
    if not (VENV / "bin" / "robot-control").exists():
        pytest.skip(f"{VENV} has no robot-control: run the suite from the project's venv")
    (tmp_path / "scripts").symlink_to(REPO / "scripts")
    (tmp_path / ".venv").symlink_to(VENV)
    # the reader's shell after `source .venv/bin/activate`: the package comes from the venv
    env = {**os.environ, "PATH": f"{VENV / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
           "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    env.pop("PYTHONPATH", None)
    s = Session(MAIN, tmp_path, env)
    yield s
    s.close()


def bag_for_placeholders(session: Session, commands) -> list:
    """The run the README's BAG and DIR stand for, recorded when a command names one."""
    if not any(SUITES[c] == "main" and re.search(r"\b(BAG|DIR)\b", c.text) for c in commands):
        return []
    domain = domains.claim("readme-placeholder-bag")
    try:
        return [session.once("robot-control simulate huo_3_1_pd --record recorded_run", domain)]
    finally:
        domains.release(domain)


@pytest.mark.timeout(1200)
@pytest.mark.parametrize("section", sections_of(COMMANDS, SUITES, "main"))
def test_the_readme_commands_of_a_section_work_as_written(session, section):
    commands = [c for c in COMMANDS if c.section == section]
    check_section(session, section, commands, SUITES, ("main", "setup"),
                  bag_for_placeholders(session, commands))
