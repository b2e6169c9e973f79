"""Robot models kept between processes (model/model_cache.py): the cached model is the built one,
and any change to its files is seen."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from robot_control.model import load_robot
from robot_control.model.loader import _bundled_file
from robot_control.model.robot_model import ModelError

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty user cache directory of this test's own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("ROBOT_CONTROL_MODEL_CACHE", raising=False)
    return tmp_path / "cache" / "robot_control" / "models"


def same_model(a, b) -> None:
    assert a.name == b.name and a.joint_names == b.joint_names
    for attr in ("screw", "spatial_inertia", "gravity", "lower", "upper", "effort_limit"):
        np.testing.assert_array_equal(getattr(a, attr), getattr(b, attr))
    assert a.parameter_groups.keys() == b.parameter_groups.keys()


@pytest.mark.parametrize("name", ["puma560", "ddarm", "three_link_planar"])
def test_cached_model_is_the_built_one(cache, monkeypatch, name):
    first = load_robot(name)  # built and stored
    assert len(list(cache.glob("*.pickle"))) == 1
    second = load_robot(name)  # from the cache
    assert second is not first
    monkeypatch.setenv("ROBOT_CONTROL_MODEL_CACHE", "0")
    built = load_robot(name)
    same_model(second, built)
    same_model(first, built)


def test_a_changed_file_is_built_again(cache, tmp_path):
    path = tmp_path / "arm.yaml"
    shutil.copy(_bundled_file("puma560"), path)
    before = load_robot(path)
    text = path.read_text().replace("mass: 17.4", "mass: 17.5")  # same size: a stamp may not move
    path.write_text(text)
    after = load_robot(path)
    assert after.bodies[1].inertia.mass == 17.5 and before.bodies[1].inertia.mass == 17.4
    path.write_text(text.replace("links:", "links: 3\nx:"))  # now invalid: the error, not a cache hit
    with pytest.raises(ModelError):
        load_robot(path)


def test_a_broken_or_unwritable_cache_is_no_error(cache, tmp_path):
    load_robot("puma560")
    (entry,) = cache.glob("*.pickle")
    entry.write_bytes(b"not a pickle")
    same_model(load_robot("puma560"), load_robot("puma560"))  # rebuilt and rewritten
    shutil.rmtree(cache)
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text("a file where the folder would be")
    load_robot("puma560")
