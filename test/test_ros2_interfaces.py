"""The shipped interface definitions against a ROS 2 installation (robot_control.bus.interfaces):
the same text, and every REP-2011 hash in the installation's ``share/<pkg>/<kind>/<Type>.json``
(messages, services with their request, response and event, actions with their protocol types)
computed from that text."""

import json
import os
from pathlib import Path

import pytest

from robot_control.bus.interfaces import definition_files, type_hash
from robot_control.bus.interfaces.definitions import DEFINITIONS

pytestmark = pytest.mark.ros2


def installed(package: str, kind: str, filename: str) -> Path:
    """A file of an installed package, searched along $AMENT_PREFIX_PATH as ament does."""
    for prefix in os.environ.get("AMENT_PREFIX_PATH", "/opt/ros/jazzy").split(os.pathsep):
        path = Path(prefix) / "share" / package / kind / filename
        if path.is_file():
            return path
    pytest.fail(f"no {package}/{kind}/{filename} in the ROS 2 installation")


@pytest.mark.parametrize("name", definition_files())
def test_every_hash_of_a_shipped_definition_equals_the_installations(name):
    package, kind, stem = name.split("/")
    entries = json.loads(installed(package, kind, f"{stem}.json").read_text())["type_hashes"]
    assert entries
    for entry in entries:
        assert type_hash(entry["type_name"]) == entry["hash_string"], entry["type_name"]


@pytest.mark.parametrize("name", definition_files())
def test_every_shipped_definition_is_the_installations_text(name):
    package, kind, stem = name.split("/")
    ours = (DEFINITIONS / package / kind / f"{stem}.{kind}").read_text()
    assert ours == installed(package, kind, f"{stem}.{kind}").read_text()
