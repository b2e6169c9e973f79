"""numba's inliner copies an inlined callee's variable scope once per copy, not once per block.

Every ``inline="always"`` call site makes numba copy the callee's IR (``InlineWorker.inline_ir``,
twice: one copy to splice in, one kept unmutated) with one ``copy.deepcopy`` per block. Each
block refers to the function's one scope, which holds every variable of the function, so each
block's deepcopy copied the whole scope again: the copies cost O(blocks × variables), and in the
articulated-body algorithm's helpers they were most of a compile (numba 0.68: the plant's RK4
hold, 4.4 of the ABA's 8.7 s of CPU in ``inline_inlinables``). :func:`install` gives the inliner's
copy the scope copied once, shared by the blocks of that one copy (as the original shares one
scope); everything else in a block is still copied per block, as numba does. The IR the inliner
splices in is the same: the compiled code is identical (test/test_inline_copy.py compares the
LLVM IR of kernels compiled with and without it).

It replaces the ``copy`` module that ``numba.core.inline_closurecall`` uses (only
``copy_ir`` calls it there) with :data:`SCOPE_SHARING_COPY`, whose ``deepcopy`` recognises a
block copied by ``copy_ir`` from the caller's frame (its ``kernel_copy``, the IR being built);
anything else goes to ``copy.deepcopy`` unchanged. A numba whose inliner differs keeps its own
path (``install`` returns False).
"""

from __future__ import annotations

import copy
import sys
import weakref

import numba.core.inline_closurecall as inline_closurecall
from numba.core import ir


class ScopeSharingCopy:
    """Stand-in for the ``copy`` module in numba's inliner: a block copied by ``copy_ir`` gets
    the scope copied once per ``copy_ir`` call; every other object is copied as ``copy`` does."""

    def __init__(self) -> None:
        # the IR copy_ir is building (weak), the scope copied for it (source id, copy)
        self._target: weakref.ref | None = None
        self._scope_id = 0
        self._scope_copy: ir.Scope | None = None

    def deepcopy(self, x, memo=None):
        """copy.deepcopy, with the scope of a block copied once per copy_ir call."""
        if memo is not None or not isinstance(x, ir.Block):
            return copy.deepcopy(x, memo)
        target = sys._getframe(1).f_locals.get("kernel_copy")
        if target is None:
            return copy.deepcopy(x)
        if (self._target is None or self._target() is not target
                or self._scope_id != id(x.scope)):
            self._target = weakref.ref(target)
            self._scope_id = id(x.scope)
            self._scope_copy = copy.deepcopy(x.scope)
        return copy.deepcopy(x, {id(x.scope): self._scope_copy})

    def __getattr__(self, name: str):
        return getattr(copy, name)


SCOPE_SHARING_COPY = ScopeSharingCopy()


def _copy_ir_code():
    """The code object of ``inline_ir``'s nested ``copy_ir`` (None if numba has none)."""
    for const in inline_closurecall.InlineWorker.inline_ir.__code__.co_consts:
        if getattr(const, "co_name", None) == "copy_ir":
            return const
    return None


def install() -> bool:
    """Use :data:`SCOPE_SHARING_COPY` in numba's inliner, if its ``copy_ir`` is the one this
    module knows (copies each block with ``copy.deepcopy`` into ``kernel_copy``)."""
    code = _copy_ir_code()
    if inline_closurecall.copy is SCOPE_SHARING_COPY:
        return True
    if (code is None or inline_closurecall.copy is not copy or "kernel_copy" not in code.co_varnames
            or "deepcopy" not in code.co_names):
        return False
    inline_closurecall.copy = SCOPE_SHARING_COPY
    return True


def uninstall() -> None:
    """numba's own copy again (the comparison in the tests)."""
    inline_closurecall.copy = copy
