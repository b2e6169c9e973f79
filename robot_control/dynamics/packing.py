"""The model's packed rows (immutable) and each user's data array (Pinocchio's Model/Data split).

The model's packed rows (``packed_rows``: n × K.ROW_PACKED, read-only, built once per model) are
the model as the compiled kernels read it. A :class:`Data` is one user's data array: its own copy
of those rows, then its own workspace columns, so a kernel call still passes one array (numba's
dispatcher pays several hundred instructions per array argument, more than a small kernel costs)
and no two users ever write one workspace. Whatever keeps arrays across calls owns a Data: a
compiled law (``control.compiled.law_arrays``), the plant and its hold (``sim.plant.Plant.data``),
a cell plant, a load-sharing law. The functions of robot_control.dynamics that take a model use
the calling thread's Data of it (``model_data``), so two threads never share one either.

Gravity is the model's one setting that may change: ``model.gravity`` is the model's own array
(not a view into any Data). A Data copies it into its row 0 when made and again whenever it is
stale (``Data.current``: the attribute reassigned, or its values edited in place); the dynamics
functions check at every call and the plant at every step, so editing or reassigning
``model.gravity`` takes effect at their next call. A compiled law keeps the gravity it was built
with (build it again for another).
"""

from __future__ import annotations

import numpy as np

from robot_control.dynamics import kernels as K

Array = np.ndarray


def pack(model) -> Array:
    """The model's packed rows (n × K.ROW_PACKED, read-only; gravity's columns zero: a Data's)."""
    n = model.nq
    P = np.zeros((n, K.ROW_PACKED))
    P[:, K.PARENT] = model.parent
    P[:, K.TYPE] = model.joint_type
    P[:, K.SCREW : K.SCREW + 6] = model.screw
    P[:, K.ROT : K.ROT + 9] = model.origin_rotation.reshape(n, 9)
    P[:, K.POS : K.POS + 3] = model.origin_translation
    P[:, K.INERTIA : K.INERTIA + 36] = model.spatial_inertia.reshape(n, 36)
    # the same inertia as (m, h = m c, J about the origin) for the rigid-body products
    I6 = model.spatial_inertia
    P[:, K.MASS] = I6[:, 3, 3]
    P[:, K.FIRST_MOMENT : K.FIRST_MOMENT + 3] = np.stack(
        [I6[:, 2, 4], I6[:, 0, 5], I6[:, 1, 3]], axis=1)
    P[:, K.ROT_INERTIA : K.ROT_INERTIA + 9] = I6[:, :3, :3].reshape(n, 9)
    P[:, K.AXIS] = [axis_code(t, s) for t, s in zip(model.joint_type, model.screw)]
    P.setflags(write=False)
    return P


def packed_rows(model) -> Array:
    """The model's packed rows, built on first use (``pack``)."""
    P = model._packed
    if P is None:
        P = model._packed = pack(model)
    return P


class Data:
    """One user's data array ``D`` (n × K.WORK): a copy of the model's packed rows, then its own
    workspace (``P`` and ``W`` are both ``D``: the kernels read model columns < K.ROW_PACKED and
    work in the columns after them), with its own copy of the model's gravity in row 0."""

    __slots__ = ("n", "D", "P", "W", "gravity", "source", "seen", "own", "fext0", "zeros", "T",
                 "square", "three_square", "work")

    def __init__(self, model) -> None:
        n = model.nq
        D = np.zeros((n, K.WORK))
        D[:, : K.ROW_PACKED] = packed_rows(model)
        self.n = n
        self._arrays(D)
        self.fext0 = np.zeros((n, 6))
        self.zeros = np.zeros(n)
        self.T = np.zeros((n, 4, 4))
        self.work: dict = {}  # an algorithm's further workspaces by name (``workspace``)
        self.sync_gravity(model)

    def _arrays(self, D: Array) -> None:
        self.square, self.three_square = (self.n, self.n), (3, self.n, self.n)  # output shapes
        self.D = self.P = self.W = D
        self.gravity = D[0, K.GRAVITY : K.GRAVITY + 3]
        self.own = memoryview(self.gravity)
        self.source = self.seen = None  # no model's gravity copied yet

    def sync_gravity(self, model) -> None:
        """Copy ``model.gravity`` into this data's row 0 (a list or ints become the model's float
        array), or a ValueError naming it."""
        g = model.gravity
        if not (type(g) is np.ndarray and g.dtype == np.float64 and g.shape == (3,)
                and g.flags.c_contiguous):
            try:
                g = np.array(g, dtype=np.float64)
            except (TypeError, ValueError):
                g = None
            if g is None or g.shape != (3,):
                raise ValueError(f"model.gravity must be three finite numbers, got {model.gravity}")
            model.gravity = g
        if not np.all(np.isfinite(g)):
            raise ValueError(f"model.gravity must be three finite numbers, got {model.gravity}")
        self.gravity[:] = g
        self.source, self.seen = g, memoryview(g)

    def current(self, model) -> Data:
        """This data with the model's gravity as it is now (reassigned or edited in place)."""
        if self.source is not model.gravity or self.seen != self.own:
            self.sync_gravity(model)
        return self

    def __getstate__(self):
        return self.n, self.D, self.fext0, self.zeros, self.T

    def __setstate__(self, state) -> None:
        self.n, D, self.fext0, self.zeros, self.T = state
        self._arrays(D)  # the model's gravity is copied again at first use (``current``)
        self.work = {}


def workspace(data: Data, name: str, make):
    """The workspace ``name`` of an algorithm in ``data``, ``make()`` on first use."""
    w = data.work.get(name)
    if w is None:
        w = data.work[name] = make()
    return w


def model_data(model) -> Data:
    """The calling thread's Data of ``model``, current with its gravity (made on first use): the
    one the functions of robot_control.dynamics use.

    The hottest wrappers (rigid_body.py, derivatives.world_pass) repeat its first lines inline:
    calling it instead cost 60–160 ns more per call (8–14 % of inverse_dynamics, gravity_torques
    and mass_matrix on the PUMA 560; quiet machine, 2026-11-29).
    """
    try:
        d = model._local.data
    except AttributeError:
        d = model._local.data = Data(model)
    if d.source is not model.gravity or d.seen != d.own:
        d.sync_gravity(model)
    return d


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


def wrenches(f_ext, data: Data) -> Array:
    """External wrenches as an (n_bodies, 6) float array, zeros when None."""
    if f_ext is None:
        return data.fext0
    a = np.asarray(f_ext, dtype=np.float64)
    if a.shape != (data.n, 6):
        raise ValueError(f"f_ext must have shape ({data.n}, 6), got {a.shape}")
    return a
