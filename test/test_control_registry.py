"""The registry of control laws: built-ins, register(), and third-party entry points."""

from __future__ import annotations

import sys
import textwrap

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
from robot_control.control.registry import BUILTIN
from robot_control.model import load_robot

HUO_LAWS = {"pd", "pd_gravity", "pd_fixed_gravity", "computed_torque", "resolved_acceleration",
            "passivity", "adaptive", "adaptive_craig", "sliding_mode", "robust", "hybrid_force",
            "impedance", "load_sharing"}


def test_every_law_of_the_issue_is_built_in():
    assert HUO_LAWS <= set(available())
    for name in HUO_LAWS:
        cls = controller_class(name)
        assert issubclass(cls, Controller) and cls.name == name
        assert cls.formula.startswith("Huo C")
    assert set(BUILTIN) == HUO_LAWS


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
