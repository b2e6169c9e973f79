"""The registry of control laws: built-ins, register(), and third-party entry points; the laws'
own declarations are the one source of the registry, setup.py's entry points, the matrix and
docs/laws.md."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from robot_control.control import (
    GROUP,
    Controller,
    Reference,
    State,
    UnknownControllerError,
    available,
    controller_class,
    create,
    register,
    unregister,
)
from robot_control.control.registry import builtin, target
from robot_control.model import load_robot
from robot_control.sim import matrix

ROOT = Path(__file__).resolve().parents[1]

HUO_LAWS = {"pd", "pd_gravity", "pd_fixed_gravity", "computed_torque", "resolved_acceleration",
            "passivity", "adaptive", "adaptive_craig", "sliding_mode", "robust", "hybrid_force",
            "impedance", "load_sharing"}


def test_every_law_of_the_issue_is_built_in():
    assert HUO_LAWS <= set(available())
    for name in HUO_LAWS:
        cls = controller_class(name)
        assert issubclass(cls, Controller) and cls.name == name
        assert cls.formula.startswith("Huo C")
    assert set(builtin()) == HUO_LAWS


def test_unknown_name_lists_what_exists():
    with pytest.raises(UnknownControllerError) as info:
        create("telepathy")
    assert "telepathy" in str(info.value) and "computed_torque" in str(info.value)


class _Damper(Controller):
    """τ = −b q̇ (a law defined in a test)."""

    name = "damper"
    formula = "test"

    def compute(self, t, state, reference):
        return -2.0 * state.qd


def test_register_adds_and_overrides_then_unregister_restores():
    register("damper", _Damper)
    try:
        assert "damper" in available()
        law = create("damper")
        law.configure(load_robot("one_axis"))
        assert np.allclose(law.update(0.0, State(0.0, np.zeros(1), np.ones(1)),
                                      Reference(np.zeros(1))), [-2.0])
        register("pd", _Damper)  # a registered law takes precedence over a built-in
        assert controller_class("pd") is _Damper
    finally:
        unregister("damper")
        unregister("pd")
    assert "damper" not in available()
    assert controller_class("pd").__name__ == "PD"
    with pytest.raises(TypeError):
        register("bad", dict)


PLUGIN = '''
import numpy as np
from robot_control.control import Controller, ParamSpec


class Brake(Controller):
    """A third-party law: τ = −c q̇."""

    name = "brake"
    formula = "plug-in"
    PARAMETERS = (ParamSpec("c", "double", 3.0, "damping", lower=0.0, strict=True),)

    def compute(self, t, state, reference):
        return -self.params["c"] * np.asarray(state.qd)


class NotALaw:
    pass
'''


@pytest.fixture
def plugin_on_path(tmp_path, monkeypatch):
    """A module and its dist-info (entry_points.txt) on sys.path, as `pip install` would leave."""
    (tmp_path / "rc_plugin_laws.py").write_text(PLUGIN)
    info = tmp_path / "rc_plugin_laws-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: rc-plugin-laws\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(f"""\
        [{GROUP}]
        brake = rc_plugin_laws:Brake
        not_a_law = rc_plugin_laws:NotALaw
        broken = rc_plugin_laws_missing:Law
        """))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    sys.modules.pop("rc_plugin_laws", None)


def test_third_party_law_is_found_through_its_entry_point(plugin_on_path, monkeypatch):
    assert {"brake", "not_a_law", "broken"} <= set(available())
    law = create("brake")
    assert type(law).__module__ == "rc_plugin_laws"
    law.configure(load_robot("one_axis"), {"c": 5.0})
    tau = law.update(0.0, State(0.0, np.zeros(1), np.array([0.5])), Reference(np.zeros(1)))
    assert np.allclose(tau, [-2.5])
    with pytest.raises(TypeError, match="not a Controller"):
        create("not_a_law")
    with pytest.raises(ImportError, match="broken"):
        create("broken")
    monkeypatch.undo()  # the distribution leaves sys.path: its laws leave the registry
    assert "brake" not in available()


def test_setup_py_advertises_exactly_the_built_in_laws():
    tree = ast.parse((ROOT / "setup.py").read_text())
    declared = next(ast.literal_eval(kw.value)[GROUP] for node in ast.walk(tree)
                    if isinstance(node, ast.Call) for kw in node.keywords
                    if kw.arg == "entry_points")
    lines = {f"{name} = {target(cls)}" for name, cls in builtin().items()}
    assert not lines - set(declared), f"add to setup.py's {GROUP}: {sorted(lines - set(declared))}"
    assert not set(declared) - lines, f"setup.py's {GROUP} names no built-in law: " \
        f"{sorted(set(declared) - lines)}"


def test_docs_laws_table_is_current():
    from robot_control.cli.laws import markdown

    text = (ROOT / "docs" / "laws.md").read_text()
    table = text.split("<!-- BEGIN LAWS -->\n", 1)[1].split("\n<!-- END LAWS -->", 1)[0]
    assert table == markdown(builtin()), "regenerate: robot-control laws --update docs/laws.md"


def test_the_matrix_is_the_laws_own_declarations():
    rows = matrix.joint_laws()
    assert [r.label for r in rows] == [label for cls in builtin().values()
                                       for label, _, _ in cls.matrix_rows()]
    for row in rows:
        cls = builtin()[row.law]
        assert row.family in {f for _, _, f in cls.matrix_rows()}
        create(row.law)  # every row names a law the registry makes
    assert {"hybrid_force", "load_sharing"}.isdisjoint({r.law for r in rows})


def damper_source() -> str:
    """The law file docs/laws.md "Add a law" shows."""
    text = (ROOT / "docs" / "laws.md").read_text().split("## Add a law", 1)[1]
    block = re.search(r"```python\n(.*?)\n *```", text, re.S).group(1)
    return textwrap.dedent(block)


def test_adding_a_law_is_adding_its_file_and_an_entry_point_line(tmp_path, monkeypatch):
    """docs/laws.md's example law, installed as another package would be (its module and a
    dist-info naming it), is in the registry, the matrix and ``robot-control laws``, and runs."""
    package = tmp_path / "rc_damper_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "damper.py").write_text(damper_source())
    info = tmp_path / "rc_damper_pkg-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: rc-damper-pkg\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{GROUP}]\ndamper = rc_damper_pkg.damper:Damper\n")
    assert "damper" not in available()
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert "damper" in available()
        law = create("damper")
        law.configure(load_robot("one_axis"), {"b": [2.0]})
        tau = law.update(0.0, State(0.0, np.zeros(1), np.array([0.5])), Reference(np.zeros(1)))
        assert np.allclose(tau, [-1.0])
        row = matrix.law_row("damper")
        assert row.law == "damper" and row.family.name == "pd" and row.bound == 0.4
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
        out = subprocess.run([sys.executable, "-m", "robot_control.cli", "laws"], env=env,
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        listed = {line.split()[0]: line for line in out.stdout.splitlines()}
        assert "rc_damper_pkg.damper:Damper" in listed["damper"]
        assert set(listed) == set(available())
    finally:
        sys.modules.pop("rc_damper_pkg.damper", None)
        sys.modules.pop("rc_damper_pkg", None)
    monkeypatch.undo()
    assert "damper" not in available() and "damper" not in {r.law for r in matrix.joint_laws()}
