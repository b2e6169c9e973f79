"""Node parameters from tables (bus/param_table.py): what a table declares and refuses, typed
values that follow accepted changes, every node declaring exactly what its tables (and so
docs/parameters.md) say — descriptors included, read back over DDS — and the page being current."""

from __future__ import annotations

import dataclasses
import importlib
import signal
import subprocess
import sys
import time

import pytest
from bus_probe import isolated_bus_env

from robot_control.bus.backend import create_node
from robot_control.bus.dds.client import BusClient
from robot_control.bus.param_table import GIVEN, JOINT, declare, given_constraints, param, specs
from robot_control.bus.parameters import DOUBLE, DOUBLE_ARRAY, STRING, ParameterError
from robot_control.nodes import parameter_docs
from robot_control.nodes.common import autostart


@pytest.fixture(scope="module", autouse=True)
def isolated_bus():
    with isolated_bus_env("node-parameters"):
        yield


@pytest.fixture
def make_node():
    nodes = []

    def make(*params: str, managed: bool = False, name: str = "tabled"):
        args = ["prog", "--ros-args"] + [a for p in params for a in ("-p", p)]
        node = create_node(name, args, managed=managed, backend="dds")
        nodes.append(node)
        return node

    yield make
    for node in nodes:
        node.shutdown()


def _even(values: tuple[float, ...]) -> str | None:
    return None if len(values) % 2 == 0 else "needs an even count"


@dataclasses.dataclass(frozen=True)
class Sample:
    """A table with one row of each kind."""

    gain: float = param(2.0, "a gain", range=(0.0, 10.0))
    mode: str = param("a", "a mode", choices=("a", "b"))
    count: int = param(GIVEN, "a count", read_only=True, range=(0, 9), default_doc="given")
    pairs: tuple[float, ...] = param((), "pairs of {n}", check=_even)
    start: tuple[float, ...] = param(GIVEN, "one per joint", size="joint", default_doc="zeros")
    tolerance: tuple[float, ...] = param(0.5, "tolerance of {joint}", name="tol.{joint}.goal",
                                         range=(0.0, 1.0))
    timeout: float = param(1.0, "locked", range=(0.0, 5.0), locked_while_active="a drive setting")


JOINTS = ("j1", "j2")


def test_a_table_declares_its_rows_with_their_descriptors_and_returns_typed_values(make_node):
    node = make_node("gain:=3", "tol.j2.goal:=0.25")
    got = declare(node, Sample, joints=JOINTS, count=4, start=[0.0, 1.0])
    assert got == Sample(3.0, "a", 4, (), (0.0, 1.0), (0.5, 0.25), 1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        got.gain = 1.0
    d = node.describe_parameter("mode")
    assert (d.type, d.additional_constraints, d.read_only) == (STRING, "a | b", False)
    d = node.describe_parameter("count")
    assert (d.integer_range, d.read_only, d.floating_point_range) == ((0, 9, 0), True, None)
    assert node.describe_parameter("gain").floating_point_range == (0.0, 10.0, 0.0)
    assert node.describe_parameter("pairs").type == DOUBLE_ARRAY  # from the annotation
    assert node.describe_parameter("pairs").description == "pairs of 2"
    d = node.describe_parameter("tol.j1.goal")
    assert (d.type, d.description) == (DOUBLE, "tolerance of j1")


def test_every_set_is_checked_by_the_rows_and_a_refusal_names_the_parameter(make_node):
    node = make_node()
    seen = []
    got = declare(node, Sample, joints=JOINTS, count=1, start=[0.0, 0.0], on_change=seen.append)
    for change, reason in (({"mode": "c"}, "mode must be one of a, b, got 'c'"),
                           ({"pairs": [1.0]}, "pairs needs an even count"),
                           ({"start": [1.0]}, "start has 1 values, the robot has 2 joints"),
                           ({"gain": 11.0}, "'gain': 11.0 is outside"),
                           ({"count": 2}, "'count' is read-only")):
        with pytest.raises(ParameterError, match=reason):
            node.set_parameters(change)
    assert seen == [] and node.get_parameter("mode") == "a"
    node.set_parameters({"mode": "b", "tol.j1.goal": 0.75})
    assert seen == [dataclasses.replace(got, mode="b", tolerance=(0.75, 0.5))]


def test_a_locked_row_changes_only_while_the_node_is_inactive(make_node):
    node = make_node(managed=True)
    seen = []
    declare(node, Sample, joints=JOINTS, count=1, start=[0.0, 0.0], on_change=seen.append)
    for transition in ("configure", "activate"):
        assert node.trigger_transition(transition).name == "SUCCESS"
    with pytest.raises(ParameterError, match="timeout: a drive setting, read-only while it is "
                                             "active"):
        node.set_parameters({"timeout": 2.0})
    node.set_parameters({"gain": 4.0})  # an unlocked row still changes
    assert node.trigger_transition("deactivate").name == "SUCCESS"
    node.set_parameters({"timeout": 2.0})
    assert (seen[-1].timeout, seen[-1].gain) == (2.0, 4.0)


@pytest.mark.parametrize("override, refused", [("mode:=z", "mode must be one of a, b"),
                                               ("start:=[1.0]", "start has 1 values"),
                                               ("count:=12", "12 is outside")])
def test_a_refused_value_at_start_stops_the_declaration(make_node, override, refused):
    node = make_node(override)
    with pytest.raises(ParameterError, match=refused):
        declare(node, Sample, joints=JOINTS, count=1, start=[0.0, 0.0])


def test_a_table_needs_its_given_defaults_and_only_known_fields(make_node):
    node = make_node()
    with pytest.raises(TypeError, match="count: its default must be given"):
        declare(node, Sample, joints=JOINTS, start=[0.0, 0.0])
    with pytest.raises(TypeError, match="no parameter"):
        declare(node, Sample, joints=JOINTS, count=1, start=[0.0, 0.0], colour="red")
    with pytest.raises(ValueError, match="needs default_doc"):
        param(GIVEN, "undocumented")
    with pytest.raises(ValueError, match="need constraints_doc"):
        param("a", "undocumented choices", constraints=GIVEN)


@dataclasses.dataclass(frozen=True)
class Chosen:
    law: str = param("pd", "a law", constraints=GIVEN, constraints_doc="the laws offered")


def test_given_constraints_reach_the_descriptor_and_must_be_given(make_node):
    node = make_node()
    with pytest.raises(TypeError, match="law: its constraints must be given"):
        declare(node, Chosen)
    declare(node, Chosen, constraints={"law": "one of: pd, computed_torque"})
    assert node._store.descriptors["law"].additional_constraints == "one of: pd, computed_torque"


# --- every node: its tables are what it declares ------------------------------------------------

#: how each node is started for the comparison (lockstep: the plant's lockstep-only row too)
NODE_ARGS = {"plant": ["lockstep:=true"], "cell_plant": ["lockstep:=true"]}


def expected_rows(executable: str, joints: list[str],
                  constraints: dict[str, str] | None = None) -> dict[str, tuple]:
    """wire name -> (type, description, read_only, constraints, fp range, int range);
    ``constraints``: the GIVEN ones by field."""
    out = {}
    for table in parameter_docs.node_tables(executable):
        for s in specs(table):
            s = given_constraints(s, constraints or {})
            args = s.descriptor_args()
            fp = args.get("floating_point_range")
            ir = args.get("integer_range")
            for joint in (joints if JOINT in s.name else [None]):
                name = s.name if joint is None else s.name.replace(JOINT, joint)
                text = s.row.description.replace("{n}", str(len(joints)))
                out[name] = (s.type, text if joint is None else text.replace(JOINT, joint),
                             s.row.read_only, s.row.constraints,
                             None if fp is None else (*map(float, fp), 0.0),
                             None if ir is None else (*map(int, ir), 0))
    return out


@pytest.mark.timeout(300)
@pytest.mark.parametrize("executable", list(parameter_docs.NODES))
def test_a_running_node_declares_exactly_its_tables(executable):
    module, logic = parameter_docs.NODES[executable]
    name = executable.replace("cell_", "")
    managed = executable != "lifecycle_manager"
    args = ["prog", "--ros-args"] + [a for p in NODE_ARGS.get(executable, [])
                                     for a in ("-p", p)]
    node = create_node(name, args, managed=managed, backend="dds")
    try:
        logic_object = getattr(importlib.import_module(module), logic)(node)
        if managed:
            assert autostart(node)  # declares autostart (false: no transition)
        model = getattr(logic_object, "model", None)
        joints = list(model.joint_names) if model is not None else []
        offered = list(getattr(getattr(logic_object, "laws", None), "specs", ()))
        expected = expected_rows(executable, joints,
                                 {"controller": "one of: " + ", ".join(offered)})
        declared = {n: d for n, d in node._store.descriptors.items() if n != "use_sim_time"}
        if executable in parameter_docs.LAW_HOSTS:  # and each law's gains, from its ParamSpec
            declared = {n: d for n, d in declared.items() if "." not in n
                        or n.split(".")[0] not in offered}
        assert sorted(declared) == sorted(expected)
        for n, d in declared.items():
            got = (d.type, d.description, d.read_only, d.additional_constraints,
                   d.floating_point_range, d.integer_range)
            assert got == expected[n], n
    finally:
        node.shutdown()


@pytest.mark.timeout(300)
def test_a_plant_process_serves_its_tables_descriptors_on_the_wire():
    """As `robot-control param describe` reads them: the DescribeParameters service of a plant
    process on the rclpy-free route (the rclpy route: test_ros2_rclpy_backend.py)."""
    plant = subprocess.Popen([sys.executable, "-m", "robot_control.nodes.plant_node", "--ros-args",
                              "-p", "lockstep:=true", "-p", "robot:=puma560"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        from robot_control.model.arm import load_arm

        expected = expected_rows("plant", list(load_arm("puma560").joint_names))
        with BusClient(discovery_s=1.0) as client:
            names = []
            deadline = time.monotonic() + 120
            while not names:
                assert time.monotonic() < deadline and plant.poll() is None, "no plant"
                try:
                    names = client.param_list("/plant")
                except Exception:  # not up yet
                    time.sleep(0.5)
            assert sorted(set(names) - {"use_sim_time"}) == sorted(expected)
            for n in expected:
                d = client.param_describe("/plant", n)
                assert (d.type, d.description, d.read_only, d.additional_constraints,
                        d.floating_point_range, d.integer_range) == expected[n], n
            ok, reason = client.param_set("/plant", "safe_behaviour", "coast")
            assert not ok and reason.startswith("safe_behaviour must be one of hold, zero_torque")
    finally:
        plant.send_signal(signal.SIGINT)
        plant.communicate(timeout=30)


def test_docs_parameters_md_is_current():
    """docs/parameters.md is what the tables render (regenerate: the command below)."""
    result = subprocess.run([sys.executable, "-m", "robot_control.nodes.parameter_docs",
                             "--check"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    text = parameter_docs.DOC.read_text(encoding="utf-8")
    for executable in parameter_docs.NODES:
        assert f"\n## {executable}\n" in text
    assert "| `constraints.<joint>.goal` | double | `0.01` |" in text
