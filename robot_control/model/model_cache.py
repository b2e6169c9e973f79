"""Robot models loaded from files, kept between processes (a fresh process's model load).

Building a RobotModel from its file — parsing the YAML or URDF, the D-H products, checking every
inertia, the parameter groups beside it — costs a fresh process a few milliseconds, as much as
the compiled loop of a short simulation. :func:`cached_load` keeps the built model as a pickle in
the user cache directory (``compile_cache.user_cache_dir()/models``), keyed by everything the
model is built from: the file's path and contents, its parameter-group files' contents, and the
loading code's paths, sizes and stamps (the model room, spatial.py, safe_yaml.py,
dynamics/parameters.py). Any change builds and stores it anew; a cache that cannot be read or
written is no error, the model is built as without it; ``ROBOT_CONTROL_MODEL_CACHE=0`` turns it
off. Entries older than PRUNE_DAYS go when one is written. Only what this user wrote is read
(the directory is the user's, like numba's cache beside it).
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from robot_control.model.robot_model import RobotModel

_PACKAGE = Path(__file__).resolve().parent.parent
#: the modules a model file's RobotModel is built by (their stamps are part of the key)
_LOADING_CODE = ("model/*.py", "spatial.py", "safe_yaml.py", "dynamics/parameters.py")
#: entries written longer ago than this are removed when one is written
PRUNE_DAYS = 14


def _stamps(paths: Iterable[Path]) -> str:
    parts = []
    for path in paths:
        try:
            st = path.stat()
            parts.append(f"{path}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            parts.append(f"{path}:-")
    return ";".join(parts)


def _contents(paths: Iterable[Path]) -> str:
    """The files' contents digested (a stamp can stay the same over a quick rewrite)."""
    digest = hashlib.sha1()
    for path in paths:
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(b"-")
        digest.update(f"|{path}|".encode())
    return digest.hexdigest()


def cache_key(path: Path, companions: Iterable[Path], variant: str = "") -> str:
    """Digest of the model file and the files loaded with it (contents), of the loading code
    (path, size, stamp) and of ``variant``."""
    code = sorted(p for pattern in _LOADING_CODE for p in _PACKAGE.glob(pattern))
    text = "|".join((str(path.resolve()), _contents([path, *companions]), _stamps(code),
                     sys.version, np.__version__, str(pickle.HIGHEST_PROTOCOL), variant))
    return hashlib.sha1(text.encode()).hexdigest()[:20]


def _folder() -> Path:
    from robot_control.dynamics.compile_cache import user_cache_dir

    return user_cache_dir() / "models"


def cached_load(path: Path, companions: Iterable[Path], build: Callable[[], RobotModel],
                variant: str = "") -> RobotModel:
    """``build()``'s model of the file ``path`` (and ``companions``, e.g. its parameter groups;
    ``variant``: how it is built, e.g. the joints an arm model holds), from the cache when it
    holds this state of them, else built and stored."""
    if os.environ.get("ROBOT_CONTROL_MODEL_CACHE", "1") == "0":
        return build()
    try:
        key = cache_key(path, list(companions), variant)
        entry = _folder() / f"{path.stem}-{key}.pickle"
    except OSError:
        return build()
    try:
        with open(entry, "rb") as fh:
            model = pickle.load(fh)
        if isinstance(model, RobotModel):
            return model
    except Exception:  # noqa: BLE001 — absent, unreadable or from another version: build it
        pass
    model = build()
    _store(entry, model)
    return model


def _store(entry: Path, model: RobotModel) -> None:
    """Write the pickle whole or not at all (a process may be loading it meanwhile); a cache that
    cannot be written is no error."""
    tmp = None
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("wb", dir=entry.parent, delete=False) as fh:
            tmp = fh.name
            pickle.dump(model, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, entry)
    except Exception:  # noqa: BLE001
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        return
    cutoff = time.time() - PRUNE_DAYS * 86400
    for old in entry.parent.glob("*.pickle"):  # entries of files and code long gone
        try:
            if old.stat().st_mtime < cutoff:
                old.unlink()
        except OSError:
            continue
