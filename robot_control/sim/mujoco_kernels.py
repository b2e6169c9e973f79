"""MuJoCo's step called from compiled code: the hold of ``engine: mujoco`` without Python.

``mj_step`` is MuJoCo's C function (libmujoco, shipped in the ``mujoco`` wheel and already loaded
by its bindings); numba calls it by symbol name (``types.ExternalFunction``, resolved when the
compiled code is linked, so the code caches across processes as any kernel). The MjModel and
MjData are passed by address (``_address`` of the bindings' objects) and the MjData arrays the
hold reads and writes (qpos, qvel, qacc, qfrc_applied) by the address of their numpy views:
MuJoCo allocates them once with the MjData, so the addresses hold for the plant's life.

x86-64 and AArch64 pass a pointer and a 64-bit integer in the same register, so ``mj_step`` is
declared on two intp arguments. ``load_library`` must run before code that calls it is compiled
or loaded from the cache (MujocoPlant does, when it is built).
"""

from __future__ import annotations

import glob
import os

from numba import njit, types
from numba.extending import intrinsic

#: void mj_step(const mjModel* m, mjData* d)
mj_step = types.ExternalFunction("mj_step", types.void(types.intp, types.intp))
_LOADED: list[str] = []


def load_library(mujoco) -> None:
    """Make libmujoco's symbols visible to numba's linker (once per process)."""
    if _LOADED:
        return
    import llvmlite.binding as llvm

    found = sorted(glob.glob(os.path.join(os.path.dirname(mujoco.__file__), "libmujoco.so*"))
                   + glob.glob(os.path.join(os.path.dirname(mujoco.__file__), "libmujoco*.dylib"))
                   + glob.glob(os.path.join(os.path.dirname(mujoco.__file__), "mujoco*.dll")))
    if not found:
        raise RuntimeError(f"no libmujoco next to {mujoco.__file__}: the compiled MuJoCo step "
                           "needs the wheel's shared library")
    llvm.load_library_permanently(found[0])
    _LOADED.append(found[0])


@intrinsic
def _doubles(typingctx, address):
    """The float64 pointer at an integer address (LLVM inttoptr)."""
    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(types.CPointer(types.float64)))

    return types.CPointer(types.float64)(types.intp), codegen


@njit(cache=True)
def hold_mujoco(model, data, qpos, qvel, qacc, qfrc, dt, t, steps, q, qd, qdd, tau):
    """τ into qfrc_applied, ``steps`` mj_step calls (MuJoCo's own integrator), then q, q̇, q̈ out
    of MjData; returns the new time, advanced by repeated addition of dt as MuJoCo's d->time."""
    n = q.shape[0]
    frc = _doubles(qfrc)  # raw pointers, indexed (a carray would load numba's array module)
    for i in range(n):
        frc[i] = tau[i]
    for _ in range(steps):
        mj_step(model, data)
        t += dt
    pos, vel, acc = _doubles(qpos), _doubles(qvel), _doubles(qacc)
    for i in range(n):
        q[i] = pos[i]
        qd[i] = vel[i]
        qdd[i] = acc[i]
    return t
