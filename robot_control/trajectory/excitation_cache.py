"""Optimised excitation coefficients kept between processes (trajectory.excitation).

Why: a scenario with an excitation trajectory optimises its Fourier coefficients by SLSQP every
time it is loaded — 0.25 s on a quiet machine and up to 2 s on a loaded one (OpenBLAS threads
contend) for a 20 s identification run that itself takes ~50 ms compiled. The optimum is a
deterministic function of its inputs (a seeded start, SLSQP, numpy's SVD) on a given CPU and
BLAS thread count, so it is computed once and kept as exact float64 bytes: a loaded result is
the optimised one to the bit.

The key (:func:`excitation_key`) digests everything the optimum depends on — the robot model's
kinematics, inertias, limits and parameter groups, the start posture, every optimiser setting,
the source of ``excitation.py`` and of the dynamics room (the regressor), the numpy and scipy
versions, the CPU and the BLAS thread count (:func:`numeric_environment`: both change the last
bits, and SLSQP turns those into a different optimum) — so a stale entry is never found.
Entries live in the compile cache's folder (dynamics.compile_cache.CACHE_DIR, itself one folder
per state of the kernel sources), each with a checksum over key and contents: a missing, corrupt
or unreadable entry is a miss, and an unwritable cache only means optimising again next time.
"""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
from pathlib import Path

import numpy as np
import scipy

from robot_control.dynamics import compile_cache

#: where the entries go (None: no cache, e.g. no writable cache directory)
DIRECTORY: Path | None = (None if compile_cache.CACHE_DIR is None
                          else compile_cache.CACHE_DIR / "excitation")
#: bump when the stored layout changes
FORMAT = b"excitation-coefficients-1"
DIGEST_BYTES = 32


@functools.cache
def source_digest() -> bytes:
    """SHA-256 of the code the optimum comes from: excitation.py and the dynamics room's modules."""
    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    paths = [package / "trajectory" / "excitation.py",
             *sorted((package / "dynamics").rglob("*.py"))]
    for path in paths:
        digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update(f"numpy {np.__version__} scipy {scipy.__version__}".encode())
    return digest.digest()


#: environment variables that set the BLAS libraries' thread counts
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS",
                    "MKL_NUM_THREADS")


@functools.cache
def numeric_environment() -> str:
    """What else the optimum's last bits depend on: the CPU (OpenBLAS picks its kernels by it)
    and the BLAS thread count (its env variables, else the usable CPUs; 1 and 2 threads give
    optima 1e-6 apart on the DDArm)."""
    import llvmlite.binding as ll  # numba's: already loaded

    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    threads = ",".join(f"{v}={os.environ.get(v, '')}" for v in THREAD_VARIABLES)
    return f"{ll.get_host_cpu_name()};{ll.get_host_cpu_features().flatten()};cpus={cpus};{threads}"


def _feed(digest, value) -> None:
    """Add a value to the digest unambiguously (type-tagged; dicts in key order)."""
    if isinstance(value, dict):
        digest.update(b"{")
        for k in sorted(value, key=str):
            _feed(digest, str(k))
            _feed(digest, value[k])
        digest.update(b"}")
    elif isinstance(value, list | tuple):
        digest.update(b"[")
        for item in value:
            _feed(digest, item)
        digest.update(b"]")
    elif isinstance(value, str):
        digest.update(b"s" + len(value.encode()).to_bytes(8, "little") + value.encode())
    else:  # numbers and arrays: dtype, shape and exact bytes (anything else by its repr)
        a = np.ascontiguousarray(value)
        if a.dtype.hasobject:
            digest.update(b"r" + repr(value).encode())
        else:
            digest.update(f"a{a.dtype.str}{a.shape}".encode() + a.tobytes())


def excitation_key(model, q_start: np.ndarray, settings: dict) -> bytes:
    """SHA-256 over the model, the start posture, the optimiser settings, the sources and the
    numeric environment."""
    digest = hashlib.sha256(FORMAT + source_digest() + numeric_environment().encode())
    model_terms = [model.gravity, model.parent, model.joint_type, model.screw,
                   model.origin_rotation, model.origin_translation, model.spatial_inertia,
                   model.lower, model.upper, model.velocity_limit, model.parameter_groups]
    _feed(digest, model_terms)
    _feed(digest, np.asarray(q_start, dtype=float))
    _feed(digest, settings)
    return digest.digest()


def _path(key: bytes) -> Path | None:
    return None if DIRECTORY is None else DIRECTORY / f"{key.hex()}.bin"


def load(key: bytes, size: int) -> np.ndarray | None:
    """The ``size`` coefficients stored under ``key``, or None (absent, corrupt, unreadable)."""
    path = _path(key)
    if path is None:
        return None
    try:
        blob = path.read_bytes()
    except OSError:
        return None
    payload, check = blob[:-DIGEST_BYTES], blob[-DIGEST_BYTES:]
    if len(payload) != 8 * size or hashlib.sha256(key + payload).digest() != check:
        return None
    x = np.frombuffer(payload, dtype="<f8").astype(float)
    return x if bool(np.all(np.isfinite(x))) else None


def store(key: bytes, x: np.ndarray) -> None:
    """Keep x under ``key`` (atomically: readers see the whole entry or none); errors are
    ignored — the cache only saves time."""
    path = _path(key)
    if path is None:
        return
    payload = np.ascontiguousarray(x, dtype="<f8").tobytes()
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, suffix=".tmp", delete=False) as fh:
            tmp = fh.name
            fh.write(payload + hashlib.sha256(key + payload).digest())
        os.replace(tmp, path)
        tmp = None
    except OSError:
        pass
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
