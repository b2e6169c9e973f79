"""Flat arrays prepared once per model for the compiled kernels (Pinocchio's Model/Data split).

A model's packed rows and a workspace are cached on the model the first time an algorithm
runs on it. Like a Pinocchio ``Data``, the workspace is per model and not shared between
threads: give each thread its own ``model.copy()``.
"""

from __future__ import annotations

import numpy as np

from robot_control.dynamics import kernels as K

Array = np.ndarray


class KernelData:
    """The model's data array ``D`` (n × K.WORK): packed model rows, then the workspace.

    ``P`` and ``W`` are both ``D`` (the kernels read model columns < K.ROW_PACKED and work in
    the columns after them), so an algorithm is called with one array for model and workspace:
    numba's dispatcher pays several hundred instructions per array argument, more than a small
    kernel costs. The model's gravity lives in row 0 too; ``model.gravity`` is rebound to that
    view, so editing it in place reaches the kernels, and ``sync_gravity`` adopts a reassigned one.
    """

    __slots__ = ("n", "D", "P", "W", "gravity", "fext0", "zeros", "T", "square", "three_square")

    def __init__(self, model) -> None:
        n = model.nq
        D = np.zeros((n, K.WORK))
        D[:, K.PARENT] = model.parent
        D[:, K.TYPE] = model.joint_type
        D[:, K.SCREW : K.SCREW + 6] = model.screw
        D[:, K.ROT : K.ROT + 9] = model.origin_rotation.reshape(n, 9)
        D[:, K.POS : K.POS + 3] = model.origin_translation
        D[:, K.INERTIA : K.INERTIA + 36] = model.spatial_inertia.reshape(n, 36)
        # the same inertia as (m, h = m c, J about the origin) for the rigid-body products
        I6 = model.spatial_inertia
        D[:, K.MASS] = I6[:, 3, 3]
        D[:, K.FIRST_MOMENT : K.FIRST_MOMENT + 3] = np.stack(
            [I6[:, 2, 4], I6[:, 0, 5], I6[:, 1, 3]], axis=1)
        D[:, K.ROT_INERTIA : K.ROT_INERTIA + 9] = I6[:, :3, :3].reshape(n, 9)
        D[:, K.AXIS] = [axis_code(t, s) for t, s in zip(model.joint_type, model.screw)]
        self.n = n
        self.square, self.three_square = (n, n), (3, n, n)  # output shapes, built once
        self.D = self.P = self.W = D
        self.gravity = D[0, K.GRAVITY : K.GRAVITY + 3]
        self.fext0 = np.zeros((n, 6))
        self.zeros = np.zeros(n)
        self.T = np.zeros((n, 4, 4))
        self.sync_gravity(model)

    def sync_gravity(self, model) -> None:
        """Copy ``model.gravity`` into the data array and make the attribute that view."""
        g = np.asarray(model.gravity, dtype=np.float64)
        if g.shape != (3,) or not np.all(np.isfinite(g)):
            raise ValueError(f"model.gravity must be three finite numbers, got {model.gravity}")
        self.gravity[:] = g
        model.gravity = self.gravity

    def __getstate__(self):
        return self.n, self.D, self.fext0, self.zeros, self.T

    def __setstate__(self, state) -> None:
        self.n, self.D, self.fext0, self.zeros, self.T = state
        self.square, self.three_square = (self.n, self.n), (3, self.n, self.n)
        self.P = self.W = self.D
        self.gravity = self.D[0, K.GRAVITY : K.GRAVITY + 3]  # the model adopts it on next use


#: a screw component this small is a rounding of zero (a D-H quarter turn leaves cos(π/2) =
#: 6.1e-17 in the axis): 1e-15 rad of axis direction, 1e-15 m of axis position
AXIS_ROUNDING = 1e-15


def axis_code(joint_type: int, screw: Array) -> int:
    """±(a + 1) for a revolute joint about ±e_a through the body origin, ±(a + 4) about ±e_a
    through another point (the moment v ⟂ e_a not zero), else 0 (general screw).

    The kernels compute exp([S] q) for such a joint as a plane rotation (a third of the work).
    Components within AXIS_ROUNDING of zero count as zero (the kernels then turn about the exact
    axis: a difference below the rounding of the model's own numbers).
    """
    w, v = np.asarray(screw[:3], dtype=float), np.asarray(screw[3:], dtype=float)
    axes = np.flatnonzero(np.abs(w) > AXIS_ROUNDING)
    if joint_type != 0 or len(axes) != 1 or abs(w[axes[0]]) != 1.0:
        return 0
    a = int(axes[0])
    if abs(v[a]) > AXIS_ROUNDING:  # moving along the axis too: a screw motion, not a rotation
        return 0
    code = a + 4 if np.any(np.abs(v) > AXIS_ROUNDING) else a + 1
    return code * int(np.sign(w[a]))


def kernel_data(model) -> KernelData:
    """The model's packed kernel data, built on first use."""
    data = model._kernel
    if data is None:
        data = model._kernel = KernelData(model)
    elif model.gravity is not data.gravity:
        data.sync_gravity(model)
    return data


def array(x) -> Array:
    """x itself when already a 1-D ndarray (the hot path), else a 1-D float array or ValueError."""
    if type(x) is np.ndarray and x.ndim == 1:
        return x
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != 1:
        raise ValueError(f"joint-space arguments must be 1-D, got shape {a.shape}")
    return a


def not_vectors(exc: Exception) -> ValueError:
    """The ValueError for a kernel that refused to compile for its arguments (e.g. a 2-D q)."""
    return ValueError(f"joint-space arguments must be 1-D float arrays of length model.nq ({exc})")


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
