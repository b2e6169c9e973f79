"""The model is immutable and every user owns its data array (Pinocchio's Model/Data split):
a law and the plant's hold on one model never share a workspace, two threads never share one,
the model's packed rows cannot be written, gravity edits still take effect, pickling works."""

from __future__ import annotations

import pickle
import threading

import numpy as np
import pytest

from robot_control import dynamics as dyn
from robot_control.control import compiled as C
from robot_control.dynamics import kernels as K
from robot_control.dynamics.packing import Data, model_data, packed_rows
from robot_control.model import load_robot
from robot_control.sim.plant import Plant


@pytest.fixture
def model():
    return load_robot("puma560")


def _state(model, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return tuple(rng.uniform(-1.5, 1.5, model.nq) for _ in range(3))


def test_packed_rows_and_model_arrays_are_read_only(model):
    P = packed_rows(model)
    assert P is packed_rows(model)  # built once per model
    assert not P.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        P[0, K.MASS] = 1.0
    for name in ("parent", "joint_type", "screw", "origin_rotation", "origin_translation",
                 "spatial_inertia", "friction"):
        with pytest.raises(ValueError, match="read-only"):
            getattr(model, name)[0] = 0


def test_every_data_is_its_own_copy_of_the_packed_rows(model):
    a, b = Data(model), Data(model)
    assert not np.shares_memory(a.D, b.D)
    assert not np.shares_memory(a.D, packed_rows(model))
    rows = np.s_[:, : K.GRAVITY]
    assert np.array_equal(a.D[rows], packed_rows(model)[rows])
    assert np.array_equal(a.D[0, K.GRAVITY : K.GRAVITY + 3], model.gravity)
    assert np.array_equal(a.D, b.D)


def test_a_law_and_the_plants_hold_have_distinct_workspaces(model):
    """A compiled law and the plant on the same model object: neither's arrays are the other's,
    nor the calling thread's; scribbling over the plant's workspace leaves the law's torque be."""
    plant = Plant(model)
    model = plant.model  # the model the plant integrates (plant_model's copy of the nominal)
    law = C.compiled_law(C.COMPUTED_TORQUE, model, kp=np.full(model.nq, 100.0),
                         kd=np.full(model.nq, 20.0))
    arrays = [law.data, law.hat, plant.data.D, model_data(model).D]
    for i, x in enumerate(arrays):
        for y in arrays[i + 1 :]:
            assert x is y or not np.shares_memory(x, y)
    assert law.data is law.hat  # the law's own model: one array of its own for both
    q, qd, qdd = _state(model, 1)
    tau = np.empty(model.nq)
    K.inverse_dynamics_kernel(law.data, q, qd, qdd, None, tau)
    plant.data.D[:, K.ROW_PACKED :] = np.nan  # the hold's scratch, as a running hold leaves it
    again = np.empty(model.nq)
    K.inverse_dynamics_kernel(law.data, q, qd, qdd, None, again)
    assert np.array_equal(tau, again)
    assert np.array_equal(tau, dyn.inverse_dynamics(model, q, qd, qdd))


def test_adaptive_law_writes_its_estimate_into_its_own_terms(model):
    law = C.law_arrays(C.ADAPTIVE, model)
    assert not np.shares_memory(law.hat, law.data)
    assert not np.shares_memory(law.hat, model_data(model).D)


def test_threads_get_their_own_data_and_the_same_results(model):
    states = [_state(model, s) for s in range(8)]
    serial = [dyn.inverse_dynamics(model, *s) for s in states]
    mine = model_data(model)
    seen, results, errors = {}, {}, []

    def work(k: int) -> None:
        try:
            seen[k] = model_data(model)
            results[k] = [dyn.inverse_dynamics(model, *s) for s in states for _ in range(50)]
        except Exception as exc:  # noqa: BLE001 — reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors and len(results) == 2
    assert seen[0] is not seen[1] and mine not in (seen[0], seen[1])
    assert not np.shares_memory(seen[0].D, seen[1].D)
    for k in range(2):
        for i, tau in enumerate(results[k]):
            assert np.array_equal(tau, serial[i // 50])


def test_gravity_edited_in_place_or_reassigned_takes_effect(model):
    q = np.full(model.nq, 0.4)
    plant = Plant(model)
    model = plant.model  # the plant's own model: its gravity is the plant's
    g0 = dyn.gravity_torques(model, q)
    model.gravity[2] = -1.62  # in place: the Moon
    assert np.allclose(dyn.gravity_torques(model, q), g0 * 1.62 / 9.81, rtol=1e-12, atol=1e-14)
    assert np.array_equal(plant.data.D[0, K.GRAVITY : K.GRAVITY + 3], [0.0, 0.0, -1.62])
    model.gravity = [0, 0, -9.81]  # reassigned, as a list: the model keeps it as its float array
    assert np.array_equal(dyn.gravity_torques(model, q), g0)
    assert model.gravity.dtype == np.float64
    assert np.array_equal(plant.data.D[0, K.GRAVITY : K.GRAVITY + 3], model.gravity)
    assert np.array_equal(Data(model).D[0, K.GRAVITY : K.GRAVITY + 3], model.gravity)


@pytest.mark.parametrize("bad", [[0.0, 0.0], [0.0, np.nan, -9.81], "down"])
def test_bad_gravity_is_refused_by_name(model, bad):
    model.gravity = bad
    with pytest.raises(ValueError, match="model.gravity must be three finite numbers"):
        dyn.gravity_torques(model, np.zeros(model.nq))


def test_a_used_model_and_plant_pickle_and_compute_the_same(model):
    q, qd, qdd = _state(model, 3)
    tau = dyn.inverse_dynamics(model, q, qd, qdd)
    plant = Plant(model)
    plant.reset(q, qd)
    back = pickle.loads(pickle.dumps(model))
    assert np.array_equal(dyn.inverse_dynamics(back, q, qd, qdd), tau)
    assert not packed_rows(back).flags.writeable
    other = pickle.loads(pickle.dumps(plant))
    assert not np.shares_memory(other.data.D, plant.data.D)
    for p in (plant, other):
        p.step(tau, 1e-3)
    assert np.array_equal(plant.q, other.q) and np.array_equal(plant.qd, other.qd)
    data = pickle.loads(pickle.dumps(Data(model))).current(model)
    assert np.array_equal(data.D[:, : K.ROW_PACKED], Data(model).D[:, : K.ROW_PACKED])
