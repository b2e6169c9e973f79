"""Bad files fail fast and small. Every YAML entry point goes through
robot_control.foundation.safe_yaml (bounded size, alias expansion and nesting, UTF-8 only), and the model
algorithms have no recursion limit (a 1000-link chain loads and simulates).

Timings are measured in bench/files.py; here each refusal must come within the test's deadline
(a billion-laughs file used to run 75 s to a MemoryError)."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
import yaml
from launch_run import robot_control_command

from robot_control.bringup.runner import LaunchError, read_entities
from robot_control.bus.parameters import ParameterError, load_params_file
from robot_control.foundation import safe_yaml
from robot_control.model import ModelError, load_robot
from robot_control.model.cell import load_cell
from robot_control.model.resources import share_path
from robot_control.sim.scenario import ScenarioError, load_scenario

LAUGHS_KEY = "billion laughs"


def laughs(head: str = "", key: str = "kp") -> str:
    """A short YAML document whose `key` holds nested anchors expanding to 10⁹ numbers (and
    whose other keys are valid, so only the expansion can refuse it)."""
    levels = ["&a [1,1,1,1,1,1,1,1,1,1]"]
    levels += [f"&{c} [" + ",".join([f"*{p}"] * 10) + "]" for p, c in zip("abcdefgh", "bcdefghi")]
    return f"{head}\n{key}: [{', '.join(levels)}]\n"


SCENARIO_HEAD = "robot: ddarm\nduration: 1.0\ncontroller:\n  type: pd\n  params:\n    kd: [1, 1, 1]"


def chain_urdf(n: int) -> str:
    """An n-link serial chain (revolute joints about y, 10 cm apart)."""
    link = ('<link name="l{0}"><inertial><origin xyz="0 0 0.05"/><mass value="0.1"/>'
            '<inertia ixx="1e-3" iyy="1e-3" izz="1e-3" ixy="0" ixz="0" iyz="0"/></inertial></link>')
    joint = ('<joint name="j{0}" type="revolute"><parent link="l{1}"/><child link="l{0}"/>'
             '<origin xyz="0 0 0.1"/><axis xyz="0 1 0"/>'
             '<limit lower="-3" upper="3" effort="100" velocity="5"/></joint>')
    body = [link.format(0)] + [link.format(i) + joint.format(i, i - 1) for i in range(1, n + 1)]
    return f'<robot name="chain{n}">{"".join(body)}</robot>'


# --- the shared loader -------------------------------------------------------------------------


def test_a_billion_laughs_document_is_refused_before_it_is_built(tmp_path):
    path = tmp_path / "laughs.yaml"
    path.write_text(laughs())
    assert path.stat().st_size < 600
    with pytest.raises(safe_yaml.YamlError, match=LAUGHS_KEY) as err:
        safe_yaml.load_file(path)
    assert str(path) in str(err.value) and "\n" not in str(err.value)


def test_aliases_within_the_bound_still_load():
    assert safe_yaml.load_text("a: &x [1, 2]\nb: *x\nc: {<<: {k: 1}, j: 2}") == \
        {"a": [1, 2], "b": [1, 2], "c": {"k": 1, "j": 2}}


@pytest.mark.parametrize("text, words", [
    ("a: &x [1, *x]", "alias *x is inside itself"),
    ("a: " + "[" * 150 + "]" * 150, "nested deeper than 100 levels"),
    ("a: &x " + "[" * 60 + "]" * 60 + "\nb: " + "[" * 50 + "*x" + "]" * 50,
     "nested deeper than 100 levels (aliases expanded)"),
    ("a: [1, 2\nb: 3", "not valid YAML"),
])
def test_recursive_deep_and_invalid_documents_are_one_line(text, words):
    with pytest.raises(safe_yaml.YamlError) as err:
        safe_yaml.load_text(text, "here")
    message = str(err.value)
    assert message.startswith("here: ") and words in message and "\n" not in message


def test_large_files_and_devices_are_refused_by_size(tmp_path):
    path = tmp_path / "big.yaml"
    path.write_text("x: [" + "1.0, " * (safe_yaml.MAX_BYTES // 5) + "1.0]\n")
    with pytest.raises(safe_yaml.YamlError, match="larger than the 4 MiB"):
        safe_yaml.load_file(path)
    with pytest.raises(safe_yaml.YamlError, match="larger than the 4 MiB"):
        safe_yaml.load_file("/dev/zero")


def test_non_utf8_is_one_line_naming_the_file_and_line(tmp_path):
    path = tmp_path / "latin1.yaml"
    path.write_bytes("robot: ddarm\ndescription: café\n".encode("latin-1"))
    with pytest.raises(safe_yaml.YamlError) as err:
        safe_yaml.load_file(path)
    assert str(err.value) == f"{path}: not UTF-8 text (byte 0xe9 on line 2)"


# --- every entry point uses it -----------------------------------------------------------------


def scenario_text() -> str:
    return share_path("config", "scenarios", "huo_3_1_pd.yaml").read_text()


ENTRY_POINTS = {
    # name: (loader, its error type, a valid head for the document)
    "scenario": (load_scenario, ScenarioError, SCENARIO_HEAD),
    "D-H robot": (load_robot, ModelError, "name: bomb"),
    "cell": (load_cell, ModelError, "name: bomb"),
    "params file": (lambda p: load_params_file(str(p), "/plant"), ParameterError,
                    "/plant:\n  ros__parameters:\n    x: 1"),
    "launch file": (read_entities, LaunchError, ""),
}


@pytest.mark.timeout(30)
@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_every_yaml_entry_point_refuses_the_bomb_with_its_own_error(entry, tmp_path):
    load, error, head = ENTRY_POINTS[entry]
    path = tmp_path / "bomb.yaml"
    key = {"scenario": "    kp", "D-H robot": "links", "cell": "arms", "params file": "    kp",
           "launch file": "launch"}[entry]
    path.write_text(laughs(head, key))
    with pytest.raises(error, match=LAUGHS_KEY):
        load(path)
    path.write_bytes(b"name: \xff\n")
    with pytest.raises(error, match="not UTF-8 text"):
        load(path)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("content, words", [
    (laughs(SCENARIO_HEAD, "    kp"), LAUGHS_KEY),
    (b"robot: ddarm\ndescription: \xe9t\xe9\n", "not UTF-8 text (byte 0xe9 on line 2)"),
])
def test_simulate_refuses_a_bad_scenario_file_in_one_line(content, words, tmp_path):
    path = tmp_path / "bad.yaml"
    (path.write_bytes if isinstance(content, bytes) else path.write_text)(content)
    done = subprocess.run(robot_control_command("simulate", str(path)), capture_output=True,
                          text=True, timeout=50)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [f"robot-control simulate: {path}: " +
                                                done.stderr.split(f"{path}: ", 1)[1].strip()]
    assert words in done.stderr and "Traceback" not in done.stderr


def test_bundled_files_still_load():
    doc = safe_yaml.load_text(scenario_text())
    assert doc == yaml.safe_load(scenario_text())
    assert load_scenario("huo_3_1_pd").robot.nq == 3
    assert len(load_cell("two_puma560").arms) == 2


# --- no recursion limit in the model -----------------------------------------------------------


@pytest.fixture(scope="module")
def chain1000(tmp_path_factory):
    path = tmp_path_factory.mktemp("chain") / "chain1000.urdf"
    path.write_text(chain_urdf(1000))
    return path


def test_a_1000_link_chain_loads_in_document_order(chain1000):
    model = load_robot(chain1000)
    assert model.nq == 1000 and model.joint_names[:3] == ["j1", "j2", "j3"]
    assert model.joint_names[-1] == "j1000"
    assert [b.parent for b in model.bodies[:3]] == [-1, 0, 1]


@pytest.mark.timeout(240)
def test_a_1000_link_chain_simulates(chain1000):
    from robot_control.sim.simulate import run

    scenario = load_scenario({"robot": str(chain1000), "duration": 0.002, "rate": 1000,
                              "physics_dt": 0.001,
                              "controller": {"type": "pd", "params": {"kp": 10.0, "kd": 1.0}}})
    result = run(scenario)
    assert result.q.shape[-1] == 1000 and np.all(np.isfinite(result.q))


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_nodes_run_a_1000_link_chain(chain1000):
    """Every node loads the chain, configures and activates, and the loop closes. (Whether the
    plant then keeps 10 Hz with 1000 links is not asked here: on a loaded machine it does not; nor
    how long warming up every law the controller offers takes for 1000 joints: minutes.)"""
    from launch_run import Stack, stack_env

    # the bundled launch file, with room for a 1000-joint model's configure: the controller
    # warms up only its own law, the lifecycle manager waits long enough for it
    from robot_control.bringup.runner import resolve_launch_file

    launch = yaml.safe_load(resolve_launch_file(None).read_text())
    nodes = {e["node"]["exec"]: e["node"] for e in launch["launch"] if "node" in e}
    nodes["controller"]["param"].append({"name": "precompile_laws", "value": False})
    nodes["lifecycle_manager"]["param"].append({"name": "transition_timeout", "value": 600.0})
    launch_file = chain1000.parent / "chain.launch.yaml"
    launch_file.write_text(yaml.safe_dump(launch, sort_keys=False))
    stack = Stack(stack_env("files-chain1000"), str(launch_file), f"robot:={chain1000}",
                  "rate:=10.0", "controller:=pd", "--duration", "120", "--startup-timeout", "230")
    try:  # the loop is closed once the plant applies a command (lifecycle_manager's loop_node)
        up = stack.wait_for("stack active: dynamics_server, plant, controller, trajectory_generator",
                            240)
    finally:
        stack.stop()
    output = "\n".join(stack.lines)
    assert up, output[-4000:]
    assert "plant 'chain1000' (1000 joints)" in output
    assert "RecursionError" not in output and "Traceback" not in output, output[-4000:]


def test_a_non_utf8_or_oversized_urdf_is_one_line(tmp_path):
    from robot_control.model.urdf import MAX_URDF_BYTES

    path = tmp_path / "latin1.urdf"
    path.write_bytes(chain_urdf(2).replace('name="chain2"', 'name="chaîne"').encode("latin-1"))
    with pytest.raises(ModelError, match=r"latin1.urdf: not UTF-8 text \(byte 0xee on line 1\)"):
        load_robot(path)
    with pytest.raises(ModelError, match="larger than the 16 MiB a URDF file may be"):
        with open(path, "wb") as fh:
            fh.truncate(MAX_URDF_BYTES + 1)
        load_robot(path)


# --- model export of a deep chain --------------------------------------------------------------


def test_model_export_handles_a_1000_link_chain(chain1000, tmp_path):
    """URDF: written whole. MJCF: no RecursionError, but one line saying why no MJCF of it could
    load (MuJoCo's XML parser reads bodies at most MJ_MAX_BODY_DEPTH deep)."""
    from robot_control.model.mjcf import MJ_MAX_BODY_DEPTH

    urdf = tmp_path / "chain.urdf"
    done = subprocess.run(robot_control_command("model", "export", str(chain1000), "--format",
                                                "urdf", "-o", str(urdf)),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert load_robot(urdf).nq == 1000
    done = subprocess.run(robot_control_command("model", "export", str(chain1000), "--format",
                                                "mjcf", "-o", str(tmp_path / "chain.xml")),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and not (tmp_path / "chain.xml").exists()
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert "nest 1000 deep" in done.stderr and f"at most {MJ_MAX_BODY_DEPTH}" in done.stderr


def test_the_deepest_chain_mujoco_reads_is_exported_and_loads(tmp_path):
    from robot_control.model.mjcf import MJ_MAX_BODY_DEPTH, to_mjcf

    path = tmp_path / "deep.urdf"
    path.write_text(chain_urdf(MJ_MAX_BODY_DEPTH))  # a base link and MJ_MAX_BODY_DEPTH bodies
    xml = to_mjcf(load_robot(path), quiet=True)
    assert xml.count("<body ") == MJ_MAX_BODY_DEPTH
    mujoco = pytest.importorskip("mujoco")
    assert mujoco.MjModel.from_xml_string(xml).nbody == MJ_MAX_BODY_DEPTH + 1  # and the world
    path.write_text(chain_urdf(MJ_MAX_BODY_DEPTH + 1))
    with pytest.raises(ModelError, match="no MJCF of it would load"):
        to_mjcf(load_robot(path), quiet=True)


def test_xml_text_writes_what_elementtree_writes_at_any_depth():
    import xml.etree.ElementTree as ET

    from robot_control.model.xml_text import element_text

    root = ET.Element("a", x='1 "2" <3> & 4')
    ET.SubElement(root, "b", y="\n")
    ET.SubElement(ET.SubElement(root, "c"), "d").text = "t & u"
    reference = ET.fromstring(ET.tostring(root))
    ET.indent(reference)
    assert element_text(root) == ET.tostring(reference, encoding="unicode")
    deep = top = ET.Element("n")
    for _ in range(5000):  # far beyond the recursion limit
        deep = ET.SubElement(deep, "n")
    text = element_text(top)
    assert text.count("<n>") == 5000 and text.endswith("</n>")
