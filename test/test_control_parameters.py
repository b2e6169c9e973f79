"""Parameter declaration and validation of the control laws, and the model-terms seam."""

from __future__ import annotations

import numpy as np
import pytest

from robot_control import dynamics as dyn
from robot_control.control import (
    ConfigurationError,
    ExternalModelTerms,
    LocalModelTerms,
    ParameterError,
    ParamSpec,
    Reference,
    State,
    available,
    create,
    estimated_model,
)
from robot_control.model import load_robot

DDARM_Q0 = np.array([-0.1, 1.5, 1.0])


@pytest.fixture(scope="module")
def planar():
    return load_robot("two_axis_planar")


#: the cell law drives the arms of a bundled cell (two PUMA 560s) at a grasping posture
CELL = "two_puma560"
CELL_Q0 = np.tile([0.0, 0.1261, -3.0543, 0.0, -0.2134, 0.0], 2)


def _robot_for(name, ddarm, planar):
    if name == "load_sharing":
        from robot_control.model.cell import arms_model, load_cell

        return arms_model(load_cell(CELL))
    # task-space laws need a regular position Jacobian; the DDArm's wrist centre has none
    return planar if name in ("resolved_acceleration", "hybrid_force", "impedance") else ddarm


def _configure(name, model, params=None):
    law = create(name)
    base = {}
    if name == "sliding_mode":  # the model-free scheme has no default bound p̄ to fall back on
        from robot_control.dynamics.regressor import parameter_basis

        base = {"scheme": "vs3", "parameter_bound": np.ones(parameter_basis(model, "base").size)}
    if name == "load_sharing":
        base = {"cell": CELL}
    law.configure(model, {**base, **(params or {})})
    return law


@pytest.mark.parametrize("name", available())
def test_every_law_declares_described_parameters_and_runs_on_defaults(name, ddarm, planar):
    model = _robot_for(name, ddarm, planar)
    law = create(name)
    specs = law.declared_parameters()
    names = [s.name for s in specs]
    assert len(names) == len(set(names))
    assert "bumpless_time_constant" in names
    for spec in specs:
        assert isinstance(spec, ParamSpec) and spec.description
        assert spec.type in ("double", "double_array", "string", "bool", "integer")
    defaults = law.default_parameters(model.nq)
    assert set(defaults) == set(names)
    for spec in specs:
        if spec.per_joint:
            assert len(defaults[spec.name]) == model.nq
        if spec.size == "state":
            assert len(defaults[spec.name]) == 2 * model.nq
    law = _configure(name, model)
    assert set(law.get_parameters()) == set(names)
    q = DDARM_Q0[: model.nq] if model is ddarm else np.array([-0.6, 1.6])
    if name == "load_sharing":
        q = CELL_Q0
    state = State(0.0, q, np.zeros(model.nq), wrench=np.zeros(6))
    tau = law.update(0.0, state, Reference(q + 0.01))
    assert tau.shape == (model.nq,) and np.all(np.isfinite(tau))
    assert law.diagnostics()["controller"] == name


def test_per_joint_spec_expands_its_scalar_default():
    spec = ParamSpec("kp", "double_array", 7.0, "gain", lower=0.0, strict=True, size="joint")
    assert spec.per_joint
    assert np.array_equal(spec.default_value(4), np.full(4, 7.0))
    assert np.array_equal(spec.validate(3.0, 2), [3.0, 3.0])  # one number: every joint


@pytest.mark.parametrize(
    ("name", "params", "parameter", "reason"),
    [
        ("pd", {"kp": [1.0, 2.0]}, "kp", "wrong length 2: expected 3"),
        ("pd", {"kd": [10.0, -1.0, 10.0]}, "kd", "must be positive"),
        ("pd", {"kp": [10.0, 0.0, 10.0]}, "kp", "must be positive"),
        ("pd", {"gain": 1.0}, "gain", "unknown parameter"),
        ("pd", {"kp": "fast"}, "kp", "expected a list of numbers"),
        ("pd", {"kp": [1.0, float("nan"), 1.0]}, "kp", "finite"),
        ("computed_torque", {"gain_design": "magic"}, "gain_design", "not one of"),
        ("computed_torque", {"gain_design": "lqr", "lqr_r": [1.0, 0.0, 1.0]}, "lqr_r",
         "must be positive"),
        ("computed_torque", {"gain_design": "pole_placement", "poles_real": [-1, 2, -1, -1, -1, -1]},
         "poles_real", "negative real parts"),
        ("computed_torque", {"gain_design": "pole_placement",
                             "poles_imag": [1.0, 1.0, 0, 0, 0, 0]}, "poles_real", "conjugate"),
        ("computed_torque", {"poles_real": [-1.0] * 4}, "poles_real", "expected 6"),
        ("passivity", {"lambda": [1.0, -2.0, 1.0]}, "lambda", "must be positive"),
        ("robust", {"alpha": 1.0}, "alpha", "must be < 1"),
        ("robust", {"epsilon": 0.0}, "epsilon", "must be positive"),
        ("robust", {"lyapunov_q": [1.0] * 3}, "lyapunov_q", "expected 6"),
        ("adaptive", {"adaptation_gain": [1.0, 2.0]}, "adaptation_gain", "wrong length 2"),
        ("adaptive", {"adaptation_gain": [-1.0]}, "adaptation_gain", "non-negative"),
        ("adaptive", {"initial_estimate": [1.0] * 4}, "initial_estimate", "one per parameter"),
        ("adaptive", {"parameter_basis": "nonsense"}, "parameter_basis", "unknown basis"),
        ("sliding_mode", {"scheme": "vs4"}, "scheme", "not one of"),
        ("sliding_mode", {"scheme": "vs3"}, "parameter_bound", "vs3 needs"),
        ("sliding_mode", {"boundary_layer": [0.1, -0.1, 0.1]}, "boundary_layer", "non-negative"),
        ("hybrid_force", {"plane_normal": [0.0, 0.0]}, "plane_normal", "expected 3"),
        ("hybrid_force", {"plane_normal": [0.0, 0.0, 0.0]}, "plane_normal", "non-zero"),
        ("hybrid_force", {"frame": "no_such_frame"}, "frame", "no_such_frame"),
        ("hybrid_force", {"kp": [1.0] * 6}, "kp", "expected 3 (one per task coordinate)"),
        ("impedance", {"task": "pose", "stiffness": [1.0] * 3}, "stiffness", "expected 6"),
        ("impedance", {"inertia": 0.0}, "inertia", "must be positive"),
        ("resolved_acceleration", {"task": "orientation"}, "task", "not one of"),
        ("pd", {"bumpless_time_constant": -0.1}, "bumpless_time_constant", "non-negative"),
    ],
)
def test_invalid_parameters_are_refused_with_a_reason(name, params, parameter, reason, ddarm,
                                                      planar):
    model = _robot_for(name, ddarm, planar)
    with pytest.raises(ParameterError) as info:
        create(name).configure(model, params)
    assert info.value.parameter == parameter
    assert reason in str(info.value)
    assert str(info.value).startswith(parameter)


def test_set_parameters_is_atomic(ddarm):
    law = create("computed_torque")
    law.configure(ddarm, {"kp": [50.0] * 3, "kd": [10.0] * 3})
    before = law.get_parameters()
    kp_before = law.cfg.kp.copy()
    with pytest.raises(ParameterError) as info:
        law.set_parameters({"kp": [80.0] * 3, "kd": [10.0, 10.0]})  # kp fine, kd too short
    assert info.value.parameter == "kd"
    assert law.get_parameters() == before
    assert np.array_equal(law.cfg.kp, kp_before)
    law.set_parameters({"kp": [80.0] * 3})
    assert np.array_equal(law.cfg.kp, [80.0] * 3)
    assert law.get_parameters()["kd"] == [10.0] * 3


def test_gain_design_change_recomputes_gains_and_keeps_running(ddarm):
    law = create("computed_torque")
    law.configure(ddarm)
    law.set_parameters({"gain_design": "lqr", "lqr_q1": [400.0] * 3, "lqr_q2": [0.0] * 3,
                        "lqr_r": [1.0] * 3})
    assert np.allclose(law.cfg.kp, 20.0)
    assert np.allclose(law.cfg.kd, np.sqrt(40.0))  # √((q₂ + 2√(q₁r))/r)


def test_update_before_configure_is_an_error():
    with pytest.raises(RuntimeError, match="before configure"):
        create("pd").update(0.0, State(0.0, np.zeros(1), np.zeros(1)), Reference(np.zeros(1)))


def test_a_state_of_the_wrong_size_is_refused(ddarm):
    law = create("pd")
    law.configure(ddarm)
    with pytest.raises(ValueError, match="length 3"):
        law.update(0.0, State(0.0, np.zeros(2), np.zeros(2)), Reference(np.zeros(3)))


# ------------------------------------------------------------------ model terms seam
def test_server_terms_give_the_same_computed_torque_as_the_local_model(ddarm):
    q, qd = DDARM_Q0, np.array([0.3, -0.2, 0.5])
    ref = Reference(q + [0.05, -0.02, 0.03], qd + 0.1, np.array([1.0, -2.0, 0.5]))
    local = create("computed_torque")
    local.configure(ddarm)
    server = ExternalModelTerms(3)
    remote = create("computed_torque")
    remote.configure(ddarm, terms=server)
    with pytest.raises(RuntimeError, match="no dynamics terms"):
        remote.update(0.0, State(0.0, q, qd), ref)
    c = dyn.bias_torques(ddarm, q, qd) - dyn.gravity_torques(ddarm, q)
    server.push(dyn.mass_matrix(ddarm, q), c, dyn.gravity_torques(ddarm, q), stamp=0.0)
    remote.reset()
    tau_remote = remote.update(0.0, State(0.0, q, qd), ref)
    tau_local = local.update(0.0, State(0.0, q, qd), ref)
    assert np.allclose(tau_remote, tau_local, atol=1e-10)


def test_a_law_needing_the_coriolis_matrix_refuses_a_source_without_it(ddarm):
    with pytest.raises(ConfigurationError, match="coriolis_matrix"):
        create("passivity").configure(ddarm, terms=ExternalModelTerms(3))
    with pytest.raises(ConfigurationError, match="4 joints"):
        create("pd_gravity").configure(ddarm, terms=ExternalModelTerms(4))
    q, qd = DDARM_Q0, np.array([0.3, -0.2, 0.5])
    server = ExternalModelTerms(3, with_coriolis_matrix=True)
    C = dyn.coriolis_matrix(ddarm, q, qd)
    server.push(dyn.mass_matrix(ddarm, q), C @ qd, dyn.gravity_torques(ddarm, q), C)
    law = create("passivity")
    law.configure(ddarm, terms=server)
    ref = Reference(q + 0.1, qd * 0.5, np.ones(3))
    local = create("passivity")
    local.configure(ddarm)
    assert np.allclose(law.update(0.0, State(0.0, q, qd), ref),
                       local.update(0.0, State(0.0, q, qd), ref), atol=1e-10)


def test_local_terms_reference_torque_is_m_qddr_plus_c_qdr_plus_g(ddarm):
    """The O(n) recursion behind LocalModelTerms equals Huo 3-67's M q̈_r + C(q, q̇)q̇_r + g."""
    rng = np.random.default_rng(3)
    q, qd, qd_r, qdd_r = rng.normal(size=(4, 3))
    expected = (dyn.mass_matrix(ddarm, q) @ qdd_r + dyn.coriolis_matrix(ddarm, q, qd) @ qd_r
                + dyn.gravity_torques(ddarm, q))
    assert np.allclose(LocalModelTerms(ddarm).reference_torque(q, qd, qd_r, qdd_r), expected,
                       atol=1e-10)


def test_estimated_model_has_the_dynamics_of_its_parameter_vector(ddarm):
    from robot_control.dynamics.regressor import parameter_basis, regressor_in_basis

    basis = parameter_basis(ddarm, "base")
    p = basis.parameters(ddarm.inertial_parameters()) * np.linspace(0.7, 1.3, basis.size)
    hat = estimated_model(ddarm, basis, p)
    rng = np.random.default_rng(4)
    for q, qd, qdd in rng.normal(size=(5, 3, 3)):
        assert np.allclose(dyn.inverse_dynamics(hat, q, qd, qdd),
                           regressor_in_basis(ddarm, basis, q, qd, qdd) @ p, atol=1e-9)
    with pytest.raises(ValueError, match="length"):
        estimated_model(ddarm, "base", p[:-1])
