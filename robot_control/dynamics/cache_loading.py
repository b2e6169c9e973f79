"""Loading numba's cached machine code in milliseconds (a fresh process's fixed cost).

A cached kernel is stored as its object code plus the LLVM bitcode other kernels would link
against. numba's own load (``FunctionCache.load_overload``) then, in every fresh process:

- refreshes the target context: imports and installs every typing and lowering registry
  (~0.1–0.2 s), which loading machine code does not need;
- compiles the runtime's own LLVM library (``rtsys.initialize``, ~20 ms), although code loaded
  from a cache only ever calls the runtime's C helpers (numba copies the reference-counting
  functions into each library);
- parses the linking bitcode and walks every function in it (7 ms for a joint-space offline loop,
  36 ms for a task-space one), which only a later compile that calls the kernel needs;
- before the first one, imports numba's extensions (entry points), which belongs with imports.

:func:`install` replaces those steps where the cached object is ELF: the loaded object's own
symbol table says what it defines (the executable's entry points) and what it needs (the
runtime's library only if it names one of its symbols), and the bitcode is parsed when another
library first links against it. Anything else (another object format, a numba whose internals
differ) takes numba's own path.
"""

from __future__ import annotations

import struct

import numba.core.caching
import numba.core.codegen
import numba.core.entrypoints
from llvmlite import binding as llvm
from numba.core.runtime import _nrt_python, rtsys

Library = numba.core.codegen.JITCodeLibrary
_unserialize = Library._unserialize.__func__
_module_for_linking = Library._get_module_for_linking


def elf_symbols(object_code: bytes) -> tuple[set[str], set[str]] | None:
    """(defined, undefined) symbol names of an ELF64 little-endian object; None for another
    format."""
    if object_code[:6] != b"\x7fELF\x02\x01":
        return None
    sections = {s.name(): s.data() for s in llvm.ObjectFileRef.from_data(object_code).sections()}
    symtab, strtab = sections.get(b".symtab"), sections.get(b".strtab")
    if symtab is None or strtab is None:
        return None
    defined: set[str] = set()
    undefined: set[str] = set()
    # Elf64_Sym: st_name, st_info, st_other, st_shndx (0: undefined), st_value, st_size
    for st_name, _info, _other, shndx, _value, _size in struct.iter_unpack("<IBBHQQ", symtab):
        if st_name:
            name = strtab[st_name : strtab.index(b"\0", st_name)].decode()
            (undefined if shndx == 0 else defined).add(name)
    return defined, undefined


def runtime_helper_symbols() -> dict[str, int]:
    """The runtime's C helpers by linker name, as ``rtsys.initialize`` registers them."""
    return {(name if name.startswith("_") else "NRT_" + name): address
            for name, address in _nrt_python.c_helpers.items()}


def needs_runtime_library(undefined: set[str]) -> bool:
    """Whether code needing ``undefined`` links against the runtime's compiled library
    (numba.core.runtime.nrtdynmod, e.g. its stub for unresolved recursive calls), not only
    against its C helpers."""
    helpers = runtime_helper_symbols()
    return any(name.startswith(("NRT_", "nrt_", ".numba.unresolved$")) and name not in helpers
               for name in undefined)


def prepare_runtime(undefined: set[str] | None) -> None:
    """Make the runtime symbols that code needing ``undefined`` calls known to the JIT linker
    (None: unknown, so the whole runtime)."""
    if undefined is None or needs_runtime_library(undefined):
        from numba.core.registry import cpu_target

        rtsys.initialize(cpu_target.target_context)
        return
    for name, address in runtime_helper_symbols().items():
        llvm.add_symbol(name, address)


def unserialize(cls, codegen, state):
    """``JITCodeLibrary._unserialize`` of a cached ELF object without parsing its linking
    bitcode: the object's symbol table tells the engine what it defines."""
    name, kind, data = state
    symbols = elf_symbols(data[0]) if kind == "object" else None
    prepare_runtime(None if symbols is None else symbols[1])
    if symbols is None:
        return _unserialize(cls, codegen, state)
    object_code, linking_bitcode = data
    self = codegen.create_library(name)
    self.enable_object_caching()
    self._set_compiled_object(object_code)
    self._linking_bitcode = linking_bitcode
    self._finalize_final_module()
    codegen._engine._defined_symbols |= symbols[0]
    return self


def module_for_linking(self):
    """``_get_module_for_linking``, parsing a cached library's bitcode when first linked."""
    bitcode = getattr(self, "_linking_bitcode", None)
    if bitcode is not None and self._shared_module is None:
        self._shared_module = llvm.parse_bitcode(bitcode)
        self._linking_bitcode = None
    return _module_for_linking(self)


def load_overload(self, sig, target_context):
    """``FunctionCache.load_overload`` without the context refresh (a compile still refreshes
    the context and initialises the runtime itself, in numba.core.compiler)."""
    with self._guard_against_spurious_io_errors():
        return self._load_overload(sig, target_context)
    return None  # the guard swallowed an I/O error: compile instead


def install() -> bool:
    """Load numba's cache this way in this process, if numba's internals are the ones this was
    written against (else leave numba alone). True when installed."""
    cache, engine = numba.core.caching.FunctionCache, numba.core.codegen.JitEngine
    if not (hasattr(cache, "_load_overload") and hasattr(cache, "_guard_against_spurious_io_errors")
            and hasattr(Library, "_set_compiled_object") and hasattr(engine, "_load_defined_symbols")
            and hasattr(_nrt_python, "c_helpers")):
        return False
    cache.load_overload = load_overload
    Library._unserialize = classmethod(unserialize)
    Library._get_module_for_linking = module_for_linking
    # numba imports its extensions (a scan of every installed package's entry points, 2–20 ms)
    # at the first kernel call; here it happens with the imports instead, once either way
    numba.core.entrypoints.init_all()
    return True
