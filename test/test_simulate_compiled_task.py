"""Task-space laws (Huo C5, C13, C14) in the compiled offline loop: the numbers of the Python loop,
to the bit, on free space and on a compliant surface; the kernels against the package's Python
kinematics and contact model."""

import copy
from pathlib import Path

import numpy as np
import pytest
import yaml
from test_simulate_compiled import PERTURBED_PLANT, assert_same_run, doc

from robot_control import dynamics as dyn
from robot_control.control import Reference, State
from robot_control.control import compiled as C
from robot_control.control import task_kernels as KT
from robot_control.control.task_space import TaskSpace
from robot_control.dynamics.packing import Data
from robot_control.model import load_robot
from robot_control.sim.environment import environment_from_config
from robot_control.sim.plant import Plant
from robot_control.sim.scenario import load_scenario
from robot_control.sim.simulate import make_controller, run

ROOT = Path(__file__).resolve().parents[1]
SERIES = ("task_error", "force_error", "q_measured", "qd_measured", "tau_command")


def bundled(name: str, duration: float) -> dict:
    """A bundled force scenario's document, shortened."""
    d = yaml.safe_load((ROOT / "config" / "scenarios" / f"{name}.yaml").read_text())
    d.pop("description", None)
    return d | {"duration": duration}


HYBRID = "hybrid_force_puma560_surface"
IMPEDANCE = "impedance_three_link_planar_surface"
PLANTS = [{}, {"integrator": "semi_implicit_euler"},
          {"integrator": "huo_2_107", "actuator_inertia": 0.05},
          # noise and disturbance mild enough for the PUMA's light wrist at physics_dt 1 ms
          {"noise": {"position": 1e-5, "velocity": 1e-4, "seed": 3},
           "disturbance": {"amplitude": 0.01, "frequency": 2.0, "seed": 5}}]


def nan_as_text(value):
    """NaN (a measured force without force feedback) as "nan", so that equal diagnostics compare equal."""
    if isinstance(value, dict):
        return {k: nan_as_text(v) for k, v in value.items()}
    return "nan" if isinstance(value, float) and value != value else value


def assert_same_task_run(a, b) -> None:
    a.diagnostics, b.diagnostics = nan_as_text(a.diagnostics), nan_as_text(b.diagnostics)
    assert_same_run(a, b)
    for key in SERIES:
        x, y = getattr(a, key), getattr(b, key)
        assert (x is None and y is None) or np.array_equal(x, y), key


def both_routes(d: dict):
    law = make_controller(load_scenario(copy.deepcopy(d)))
    assert law.compiled() is not None
    compiled = run(load_scenario(copy.deepcopy(d)))
    stepwise = run(load_scenario(copy.deepcopy(d)), compiled=False)
    return compiled, stepwise


@pytest.mark.parametrize("name", [HYBRID, IMPEDANCE])
@pytest.mark.parametrize("plant", PLANTS)
def test_force_laws_on_a_surface_equal_the_python_loop_bit_for_bit(name, plant):
    d = bundled(name, 0.3)
    d["plant"] = {**d["plant"], **plant}
    compiled, stepwise = both_routes(d)
    assert_same_task_run(compiled, stepwise)
    assert np.abs(compiled.wrench).max() > 1.0  # it did press on the surface


def test_hybrid_force_without_feedback_and_with_a_set_point_equals_the_python_loop():
    d = bundled(HYBRID, 0.3)
    d["controller"]["params"] = {k: v for k, v in d["controller"]["params"].items()
                                 if not k.startswith("force_")} | {"force_setpoint": 15.0}
    d.pop("force_reference")
    compiled, stepwise = both_routes(d)
    assert_same_task_run(compiled, stepwise)
    assert compiled.diagnostics["measured_normal_force"] == "nan"  # no force feedback


@pytest.mark.parametrize("law,params", [
    ("resolved_acceleration", {"task": "position", "kp": [100] * 3, "kd": [20] * 3}),
    ("resolved_acceleration", {"task": "pose", "kp": [100] * 6, "kd": [20] * 6}),  # 6 × 3: J⁺
    ("impedance", {"task": "position"}),
])
@pytest.mark.parametrize("plant", [{}, PERTURBED_PLANT])
def test_task_laws_on_a_joint_reference_equal_the_python_loop_bit_for_bit(law, params, plant):
    compiled, stepwise = both_routes(doc(law, params, plant))
    assert_same_task_run(compiled, stepwise)


def test_resolved_acceleration_on_a_cartesian_path_and_a_redundant_task_equals_the_python_loop():
    """Stanford arm (6 joints) on a position task: J⁺ and the null-space damping, a Cartesian path."""
    q0 = [0.3, 1.2, 0.6, 0.2, 0.4, 0.1]
    d = {"robot": "stanford_arm", "duration": 0.3, "rate": 1000, "physics_dt": 5e-4,
         "initial": {"q": q0},
         "trajectory": {"type": "cartesian", "positions": [[0.5, 0.3, 0.2]], "durations": [0.3]},
         "controller": {"type": "resolved_acceleration",
                        "params": {"task": "position", "null_damping": 5.0}},
         "plant": {"noise": {"position": 1e-5, "velocity": 1e-4, "seed": 2}}}
    start = dyn.frame_placement(load_robot("stanford_arm"), q0, None)[:3, 3]
    d["trajectory"]["positions"] = [(start + [0.02, -0.01, 0.01]).tolist()]
    compiled, stepwise = both_routes(d)
    assert_same_task_run(compiled, stepwise)
    assert np.abs(compiled.task_error[-1]).max() < np.abs(compiled.task_error).max()


TASK_LAWS = [
    ("puma560", "resolved_acceleration", {"task": "pose"}),
    ("three_link_planar", "resolved_acceleration", {"task": "pose"}),
    ("stanford_arm", "resolved_acceleration", {"task": "position", "null_damping": 2.0}),
    ("puma560", "hybrid_force", {"task": "pose", "force_kp": 1.0, "force_ki": 20.0,
                                 "force_damping": 200.0}),
    ("stanford_arm", "hybrid_force", {"task": "position", "null_damping": 1.0}),
    ("three_link_planar", "impedance", {"task": "pose"}),
    ("stanford_arm", "impedance", {"task": "position"}),
]


def random_reference(rng, model, cartesian: bool) -> Reference:
    n = model.nq
    qr, qdr, qddr = (rng.uniform(-1, 1, n) for _ in range(3))
    if not cartesian:
        return Reference(qr, qdr, qddr)
    return Reference(qr, pose=dyn.frame_placement(model, qr, None), twist=rng.uniform(-1, 1, 6),
                     accel=rng.uniform(-1, 1, 6), wrench=rng.uniform(-3, 3, 6))


@pytest.mark.parametrize("robot,law,params", TASK_LAWS)
def test_compiled_task_law_update_equals_update(robot, law, params):
    from robot_control.control import create

    model = load_robot(robot)
    python_law, spec_law = create(law), create(law)
    python_law.configure(model, params)
    spec_law.configure(model, params)
    spec = spec_law.compiled()
    rng = np.random.default_rng(4)
    n, tau = model.nq, np.empty(model.nq)
    for k in range(12):
        q, qd = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
        wrench, ref = rng.uniform(-5, 5, 6), random_reference(rng, model, k % 2 == 1)
        t = 0.001 * k
        expected = python_law.update(t, State(t, q, qd, wrench=wrench), ref)
        C.task_inputs(spec.task, ref, wrench)
        assert C.law_update(spec.kind, spec.arrays, t, q, qd, ref.q, ref.qd, ref.qdd, tau)
        assert np.array_equal(tau, expected)
    spec_law.finish_compiled(spec, 0.011, 0.010)
    assert nan_as_text(spec_law.diagnostics()) == nan_as_text(python_law.diagnostics())


def test_a_non_finite_force_integral_recovers_alike_in_both_forms():
    """The integral turned non-finite: both forms reset it (τ carries k_i∫, so the torque is the
    culprit they name) and integrate again from zero."""
    from robot_control.control import create

    model = load_robot("puma560")
    params = {"task": "pose", "force_kp": 1.0, "force_ki": 2.0}
    python_law, spec_law = create("hybrid_force"), create("hybrid_force")
    python_law.configure(model, params)
    spec_law.configure(model, params)
    spec = spec_law.compiled()
    q, tau = np.array([0.0, 0.1261, -3.0543, 0.0, -0.2134, 0.0]), np.empty(6)
    wrench = np.array([0, 0, 0, 0, 0, 5.0])  # pressed: the integral runs
    ref = Reference(q, pose=dyn.frame_placement(model, q, None))
    for k in range(4):
        t = 0.001 * k
        if k == 2:
            for law in (python_law, spec_law):
                law._k.task[KT.TK_SCALAR, KT.TS_INTEGRAL] = np.inf
        expected = python_law.update(t, State(t, q, np.zeros(6), wrench=wrench), ref)
        C.task_inputs(spec.task, ref, wrench)
        assert C.law_update(spec.kind, spec.arrays, t, q, np.zeros(6), q, np.zeros(6),
                            np.zeros(6), tau)
        assert np.array_equal(tau, expected)
    spec_law.finish_compiled(spec, 0.003, 0.002)
    assert python_law.recoveries == spec_law.recoveries == 1
    assert spec_law.last_recovery == python_law.last_recovery
    assert "t = 0.002 s" in spec_law.last_recovery
    assert spec_law.force_integral == python_law.force_integral == pytest.approx(0.001 * (10.0 - 5.0))


@pytest.mark.parametrize("robot,frame", [("puma560", None), ("stanford_arm", None),
                                         ("three_link_planar", None), ("scara", None)])
def test_frame_kinematics_match_the_python_kinematics(robot, frame):
    """T, J and J̇q̇ of the kernel against dynamics.frame_placement, jacobian, jacobian_dot_qd
    (other sums, so to rounding: 1e-12)."""
    model = load_robot(robot)
    space = TaskSpace(model, frame, "pose")
    body, X = model.frame_placement(space.frame)
    A = np.zeros(KT.task_shape(model.nq))
    A[KT.TK_FRAME : KT.TK_FRAME + 4, :4] = X
    D = Data(model).D
    rng = np.random.default_rng(7)
    T, J6 = np.empty((4, 4)), np.empty((6, model.nq))
    for _ in range(5):
        q, qd = rng.uniform(-2, 2, model.nq), rng.uniform(-2, 2, model.nq)
        KT.frame_kinematics(D, A, body, q, qd, T, J6, A[KT.TK_SIX])
        assert np.allclose(T, dyn.frame_placement(model, q, space.frame), rtol=0, atol=1e-12)
        assert np.allclose(J6, dyn.jacobian(model, q, space.frame), rtol=0, atol=1e-12)
        assert np.allclose(A[KT.TK_SIX, :6], dyn.jacobian_dot_qd(model, q, qd, space.frame),
                           rtol=0, atol=1e-11)


def test_compiled_surface_pushes_like_the_environment_model():
    """The plant's compiled contact against environment.CompliantSurface.force with J_vᵀf."""
    model = load_robot("three_link_planar")
    cfg = {"type": "compliant", "normal": [0, 1, 0], "offset": -0.3, "stiffness": 5000.0,
           "damping": 50.0, "friction": 0.1}
    plant = Plant(model, {"environment": cfg}, 1e-3)
    env = environment_from_config(cfg)
    rng = np.random.default_rng(3)
    pressed = 0
    for _ in range(20):
        q = np.array([0.510991, -1.910633, -0.171154]) + rng.uniform(-0.05, 0.05, 3)
        qd = rng.uniform(-0.5, 0.5, 3)
        tau, wrench = plant.contact(q, qd)
        T = dyn.frame_placement(plant.model, q, None)
        J = dyn.jacobian(plant.model, q, None)
        f = env.force(T[:3, 3], J[3:] @ qd)
        pressed += bool(np.any(f))
        assert np.allclose(wrench, np.concatenate([np.zeros(3), f]), rtol=1e-12, atol=1e-9)
        assert np.allclose(tau, J[3:].T @ f, rtol=1e-12, atol=1e-9)
    assert 0 < pressed < 20  # both sides of the surface were tried


@pytest.mark.parametrize("robot,normal,offset", [("three_link_planar", [0, 1, 0], -0.3),
                                                  ("puma560", [0, 0, 1], 0.3)])
def test_surface_push_as_an_external_wrench_of_the_aba_is_j_transpose_f(robot, normal, offset):
    """plant_kernels.surface_forward_dynamics (the push as F_ext inside the ABA) against τ + J_vᵀf
    through the plain ABA (contact_torque): the same q̈ and wrench to rounding."""
    from robot_control.dynamics import kernels as K
    from robot_control.sim import plant_kernels as PK

    model = load_robot(robot)
    cfg = {"type": "compliant", "normal": normal, "offset": offset, "stiffness": 2e4,
           "damping": 200.0, "friction": 0.1}
    plant = Plant(model, {"environment": cfg}, 1e-3)
    D, Cs, n = plant.data.D, plant.surface, model.nq
    rng = np.random.default_rng(4)
    pressed = 0
    for _ in range(40):
        q = rng.uniform(-1.5, 1.5, n)
        # put the tool 0 … 2 mm into the surface: shift the plane to it (C's offset)
        p = dyn.frame_placement(plant.model, q, None)[:3, 3]
        Cs[0, PK.C_OFFSET] = float(np.dot(normal, p)) + rng.uniform(-1e-3, 2e-3)
        qd, tau = rng.uniform(-1, 1, n), rng.uniform(-5, 5, n)
        total, expected, got = tau.copy(), np.empty(n), np.empty(n)
        PK.contact_torque(D, Cs, q, qd, total)
        wrench = Cs[PK.C_WRENCH, :6].copy()
        K.forward_dynamics_kernel(D, q, qd, total, None, expected)
        PK.surface_forward_dynamics(D, Cs, q, qd, tau, got)
        pressed += bool(np.any(wrench))
        assert np.allclose(Cs[PK.C_WRENCH, :6], wrench, rtol=1e-12, atol=1e-9)
        assert np.allclose(got, expected, rtol=1e-10, atol=1e-10 * np.abs(expected).max())
    assert 0 < pressed < 40  # both sides of the surface were tried


@pytest.mark.parametrize("shape", [(6, 3), (6, 2), (3, 6), (3, 4), (6, 5)])
def test_pseudo_inverse_times_is_numpys_pinv(shape):
    """QR for full rank (tall: least squares, wide: minimum norm), the SVD near rank deficiency."""
    m, n = shape
    rng = np.random.default_rng(11)
    A = np.zeros(KT.task_shape(n))
    out = np.empty(n)
    for trial in range(6):
        J = rng.uniform(-1, 1, shape)
        if trial == 1:
            J[2] = 0.0  # a zero row: still full rank when m > n … or rank m − 1 when wide
        if trial >= 4:
            J[:, 0] = J[:, 1] if m > n else J[:, 0]
            J[0] = J[1]  # rank deficient: the SVD's cut-off decides
        a = rng.uniform(-1, 1, m)
        KT.pseudo_inverse_times(A, J, a, out)
        assert np.allclose(out, np.linalg.pinv(J) @ a, rtol=1e-9, atol=1e-9), trial


@pytest.mark.parametrize("shape", [(6, 6), (6, 7), (3, 3), (6, 4), (2, 5)])
def test_jacobi_svd_reconstructs_the_matrix_with_numpys_singular_values(shape):
    """One-sided Jacobi: W = U Σ with orthogonal columns, V orthogonal, J = W Vᵀ; σ as LAPACK's."""
    from robot_control.control.svd_kernels import jacobi_svd

    rng = np.random.default_rng(5)
    m, n = shape
    for trial in range(4):
        J = rng.uniform(-1, 1, shape)
        if trial == 3:
            J[:, -1] = J[:, 0] - J[:, 1]  # rank deficient
        W, V = J.copy(), np.empty((n, n))
        jacobi_svd(W, V)
        assert np.allclose(W @ V.T, J, atol=1e-13)
        assert np.allclose(V.T @ V, np.eye(n), atol=1e-13)
        G = W.T @ W
        assert np.allclose(G - np.diag(np.diag(G)), 0.0, atol=1e-13)
        sigma = np.sort(np.sqrt(np.diag(G)))[::-1][: min(m, n)]
        assert np.allclose(sigma, np.linalg.svd(J, compute_uv=False), atol=1e-13)


@pytest.mark.parametrize("law,params", [("hybrid_force", {"task": "pose", "force_kp": 1.0}),
                                        ("impedance", {"task": "position"}),
                                        ("resolved_acceleration", {"task": "pose"})])
def test_external_model_terms_give_the_local_torque(law, params):
    """dynamics_source server: the kernel's q̈* and extra torque, M, C q̇, g pushed from outside
    (no compiled form) — the local law's torque up to the sums' rounding."""
    from robot_control.control import create
    from robot_control.control.model_terms import ExternalModelTerms

    model = load_robot("puma560")
    local, external = create(law), create(law)
    local.configure(model, params)
    terms = ExternalModelTerms(model.nq)
    external.configure(model, params, terms=terms)
    assert external.compiled() is None
    rng = np.random.default_rng(5)
    for k in range(5):
        q, qd = rng.uniform(-1, 1, 6), rng.uniform(-1, 1, 6)
        g = dyn.gravity_torques(model, q)
        terms.push(dyn.mass_matrix(model, q), dyn.bias_torques(model, q, qd) - g, g)
        ref = Reference(q + 0.01, pose=dyn.frame_placement(model, q + 0.02, None),
                        wrench=np.array([0, 0, 0, 0, 0, -5.0]))
        state = State(0.001 * k, q, qd, wrench=rng.uniform(-1, 1, 6))
        assert np.allclose(external.update(0.001 * k, state, ref),
                           local.update(0.001 * k, state, ref), rtol=1e-10, atol=1e-9)
