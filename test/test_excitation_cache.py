"""Optimised excitations kept between processes: the same bits, a key that sees every input, and a
cache that is only ever a shortcut (absent, corrupt or unwritable: optimise again)."""

import numpy as np
import pytest

from robot_control.model import load_robot
from robot_control.sim.plant_config import parse_plant_config, plant_model
from robot_control.trajectory import excitation, excitation_cache
from robot_control.trajectory.excitation import optimise_excitation

Q0 = [-0.1, 1.5, 1.0]
#: a small problem (the bundled scenario's has 60 samples, 5 harmonics, 20 iterations)
OPTIONS = {"period": 2.0, "harmonics": 3, "basis": "huo_p", "samples": 20, "maxiter": 2}


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    folder = tmp_path / "excitation"
    monkeypatch.setattr(excitation_cache, "DIRECTORY", folder)
    return folder


def same(a, b) -> bool:
    return all(np.array_equal(getattr(a, k), getattr(b, k)) for k in ("a", "b", "q0", "table"))


def refuse_to_optimise(monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("optimised although the cache holds the result")

    monkeypatch.setattr(excitation, "optimal_coefficients", fail)


def test_a_cached_excitation_is_the_optimised_one_to_the_bit(cache_dir, monkeypatch):
    model = load_robot("ddarm")
    optimised = optimise_excitation(model, Q0, **OPTIONS, cycles=2, cache=False)
    assert not cache_dir.exists()
    first = optimise_excitation(model, Q0, **OPTIONS, cycles=2)  # optimises and stores
    assert same(first, optimised) and first.cycles == 2 and len(list(cache_dir.iterdir())) == 1
    refuse_to_optimise(monkeypatch)
    again = optimise_excitation(load_robot("ddarm"), np.array(Q0), **OPTIONS, cycles=2)
    assert same(again, optimised) and again.duration == 4.0


def test_a_corrupt_or_unwritable_cache_falls_back_to_optimising(cache_dir, tmp_path, monkeypatch):
    model = load_robot("ddarm")
    optimised = optimise_excitation(model, Q0, **OPTIONS, cache=False)
    optimise_excitation(model, Q0, **OPTIONS)
    (entry,) = cache_dir.iterdir()
    blob = entry.read_bytes()
    for bad in (blob[:-1], blob[:8] + bytes([blob[8] ^ 1]) + blob[9:], b""):
        entry.write_bytes(bad)
        assert same(optimise_excitation(model, Q0, **OPTIONS), optimised)
        assert entry.read_bytes() == blob  # rewritten whole
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    monkeypatch.setattr(excitation_cache, "DIRECTORY", blocker / "excitation")
    assert same(optimise_excitation(model, Q0, **OPTIONS), optimised)
    monkeypatch.setattr(excitation_cache, "DIRECTORY", None)  # no cache directory at all
    assert same(optimise_excitation(model, Q0, **OPTIONS), optimised)


def test_the_key_changes_with_everything_the_optimum_depends_on(monkeypatch):
    model = load_robot("ddarm")
    settings = {"period": 10.0, "harmonics": 5, "basis": "huo_p", "velocity_scale": 0.5,
                "max_acceleration": 3.0, "margin": 0.05, "samples": 60, "seed": 0, "maxiter": 20}
    key = excitation_cache.excitation_key(model, np.array(Q0), settings)
    assert excitation_cache.excitation_key(load_robot("ddarm"), np.array(Q0), dict(settings)) == key
    loaded = plant_model(model, parse_plant_config({"payload": {"mass": 0.5}}, model))
    others = [excitation_cache.excitation_key(loaded, np.array(Q0), settings),
              excitation_cache.excitation_key(model, np.array(Q0) + [0, 0, 1e-12], settings)]
    for name, value in (("period", 10.5), ("harmonics", 4), ("basis", "base"),
                        ("velocity_scale", 0.4), ("max_acceleration", [3.0, 3.0, 2.0]),
                        ("margin", 0.1), ("samples", 61), ("seed", 1), ("maxiter", 19)):
        others.append(excitation_cache.excitation_key(model, np.array(Q0),
                                                      settings | {name: value}))
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "7")  # BLAS threads change the last bits
    excitation_cache.numeric_environment.cache_clear()
    others.append(excitation_cache.excitation_key(model, np.array(Q0), settings))
    monkeypatch.setattr(excitation_cache, "source_digest", lambda: b"an edited excitation.py")
    others.append(excitation_cache.excitation_key(model, np.array(Q0), settings))
    excitation_cache.numeric_environment.cache_clear()
    assert len(set(others)) == len(others) and key not in others
