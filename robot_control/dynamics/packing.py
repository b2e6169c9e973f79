"""Flat arrays prepared once per model for the compiled kernels (Pinocchio's Model/Data split).

A model's packed rows and a workspace are cached on the model the first time an algorithm
runs on it. Like a Pinocchio ``Data``, the workspace is per model and not shared between
threads: give each thread its own ``model.copy()``.
"""

from __future__ import annotations

import numpy as np

from robot_control.dynamics import kernels as K
from robot_control.dynamics import kernels_world as KW

Array = np.ndarray


class KernelData:
    """Packed model rows ``P`` (n × 56), a workspace ``W`` and a zero external-wrench array."""

    __slots__ = ("n", "P", "W", "fext0", "zeros", "T")

    def __init__(self, model) -> None:
        n = model.nq
        P = np.zeros((n, KW.ROW_WORLD))
        P[:, K.PARENT] = model.parent
        P[:, K.TYPE] = model.joint_type
        P[:, K.SCREW : K.SCREW + 6] = model.screw
        P[:, K.ROT : K.ROT + 9] = model.origin_rotation.reshape(n, 9)
        P[:, K.POS : K.POS + 3] = model.origin_translation
        P[:, K.INERTIA : K.INERTIA + 36] = model.spatial_inertia.reshape(n, 36)
        # the same inertia as (m, h = m c, J about the origin) for the base-coordinate kernels
        I6 = model.spatial_inertia
        P[:, KW.MASS] = I6[:, 3, 3]
        P[:, KW.FIRST_MOMENT : KW.FIRST_MOMENT + 3] = np.stack(
            [I6[:, 2, 4], I6[:, 0, 5], I6[:, 1, 3]], axis=1)
        P[:, KW.ROT_INERTIA : KW.ROT_INERTIA + 9] = I6[:, :3, :3].reshape(n, 9)
        self.n = n
        self.P = P
        self.W = np.zeros((n, K.WORK))
        self.fext0 = np.zeros((n, 6))
        self.zeros = np.zeros(n)
        self.T = np.zeros((n, 4, 4))


def kernel_data(model) -> KernelData:
    """The model's packed kernel data, built on first use."""
    data = model._kernel
    if data is None:
        data = model._kernel = KernelData(model)
    return data


def array(x) -> Array:
    """x itself when already a 1-D ndarray (the hot path), else a 1-D float array or ValueError."""
    if type(x) is np.ndarray and x.ndim == 1:
        return x
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != 1:
        raise ValueError(f"joint-space arguments must be 1-D, got shape {a.shape}")
    return a


def vector(x, n: int, what: str) -> Array:
    """x as a float array of length n, or a ValueError naming the argument."""
    a = np.asarray(x, dtype=np.float64)
    if a.shape != (n,):
        raise ValueError(f"{what} must have length {n}, got shape {a.shape}")
    return a


def wrenches(f_ext, data: KernelData) -> Array:
    """External wrenches as an (n_bodies, 6) float array, zeros when None."""
    if f_ext is None:
        return data.fext0
    a = np.asarray(f_ext, dtype=np.float64)
    if a.shape != (data.n, 6):
        raise ValueError(f"f_ext must have shape ({data.n}, 6), got {a.shape}")
    return a
