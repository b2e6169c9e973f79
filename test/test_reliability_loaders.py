"""Robot files and scenarios that cannot be what they claim are refused
by name (never loaded with joints left out or zeros filled in), and a scenario cannot ask for an
absurd run."""

from __future__ import annotations

import math
import subprocess

import pytest
import yaml
from launch_run import robot_control_command
from model_samples import dh_link

from robot_control.model import ModelError, load_robot, load_urdf
from robot_control.model.dh import load_dh_yaml
from robot_control.model.resources import share_path
from robot_control.sim.scenario import MAX_STEPS, ScenarioError, load_scenario

LINK = ('<link name="{0}"><inertial><mass value="1"/>'
        '<inertia ixx="0.1" iyy="0.1" izz="0.1"/></inertial></link>')
JOINT = ('<joint name="{0}" type="revolute"><parent link="{1}"/><child link="{2}"/>'
         '<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="10" velocity="2"/></joint>')


def urdf(links: list[str], joints: list[tuple[str, str, str]]) -> str:
    body = [LINK.format(n) for n in ["base", *links]] + [JOINT.format(*j) for j in joints]
    return f'<robot name="r">{"".join(body)}</robot>'


def test_a_chain_loads():
    model = load_urdf(urdf(["a", "b"], [("j1", "base", "a"), ("j2", "a", "b")]))
    assert model.joint_names == ["j1", "j2"]


def test_a_joint_that_is_its_own_parent_is_refused_by_name():
    text = urdf(["a", "b"], [("j1", "base", "a"), ("j2", "a", "b"), ("loop", "b", "b")])
    with pytest.raises(ModelError, match="joint 'loop': link 'b' is its own parent"):
        load_urdf(text)


def test_a_disconnected_cycle_is_refused_naming_its_joints():
    # base - a is the robot; c <-> d is a two-link cycle hanging nowhere, e hangs below it
    text = urdf(["a", "c", "d", "e"], [("j1", "base", "a"), ("cd", "c", "d"), ("dc", "d", "c"),
                                       ("de", "d", "e")])
    with pytest.raises(ModelError) as err:
        load_urdf(text)
    message = str(err.value)
    assert "form a cycle" in message and "'cd'" in message and "'dc'" in message
    assert "'de' not connected to the root link 'base'" in message


def table(**changes) -> dict:
    """A two-link D-H table whose second row has ``changes`` (None deletes the key)."""
    row = dh_link(name="fore", joint="elbow", a=1.0, velocity=2.0, effort=10.0)
    for key, value in changes.items():
        if value is None:
            del row[key]
        else:
            row[key] = value
    return {"name": "t", "links": [dh_link(name="upper", joint="shoulder", a=1.0), row]}


@pytest.mark.parametrize("key", ["a", "alpha", "d", "theta", "com", "inertia", "mass",
                                 "velocity", "effort"])
def test_every_dh_column_is_required_and_named(key):
    with pytest.raises(ModelError, match=f"link 'fore' \\(joint 'elbow'\\): missing key '{key}'"):
        load_dh_yaml(table(**{key: None}))


def test_no_effort_limit_must_be_said_explicitly():
    with pytest.raises(ModelError, match="says so with .inf"):
        load_dh_yaml(table(effort=None))
    model = load_dh_yaml(table(effort=math.inf))
    assert model.effort_limit[1] == math.inf and model.velocity_limit[1] == 2.0


def test_an_explicit_infinite_effort_reads_from_a_file(tmp_path):
    path = tmp_path / "ideal.yaml"
    text = yaml.safe_dump(table(effort=None)).replace("velocity: 2.0",
                                                     "velocity: 2.0\n  effort: .inf")
    path.write_text(text)
    assert load_robot(path).effort_limit[1] == math.inf


def scenario(**changes) -> dict:
    with open(share_path("config", "scenarios", "huo_3_1_pd.yaml")) as fh:
        doc = yaml.safe_load(fh)
    doc.update(changes)
    return doc


@pytest.mark.parametrize("key, value, words", [
    ("rate", [500], "rate must be a number, got [500]"),
    ("duration", "three", "duration must be a number, got 'three'"),
    ("duration", True, "duration must be a number"),
    ("physics_dt", float("nan"), "physics_dt must be finite"),
    ("rate", 1e6, "rate must be in (0, 10000] Hz"),
    ("duration", 1e12, f"at most {MAX_STEPS} control periods"),
])
def test_scenario_values_are_checked_with_the_key_named(key, value, words):
    with pytest.raises(ScenarioError) as err:
        load_scenario(scenario(**{key: value}))
    assert words in str(err.value)


def test_scientific_notation_yaml_reads_as_text_is_still_a_number():
    assert load_scenario(scenario(physics_dt="1e-3", rate=1000)).physics_dt == 1e-3


def test_simulate_refuses_an_absurd_duration_in_one_line(tmp_path):
    path = tmp_path / "long.yaml"
    path.write_text(yaml.safe_dump(scenario(duration=1e12)))
    done = subprocess.run(robot_control_command("simulate", str(path)), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and "control periods" in done.stderr
