"""Every YAML the package reads goes through this one loader, bounded so a bad file fails fast.

``yaml.safe_load`` builds aliases as shared objects, so a 569-byte file of nested anchors (the
"billion laughs") loads in microseconds and then takes minutes and gigabytes in whatever walks
it (``np.asarray``, a copy, a validation); a deep ``[[[…]]]`` raises RecursionError; a non-UTF-8
file raises UnicodeDecodeError. Here the text is first read as an event stream (libyaml when
PyYAML has it), which costs no recursion and builds nothing, and refused when

- the file holds more than ``MAX_BYTES`` (4 MiB; a scenario is a few kB, a 1000-link URDF in a
  parameter file about 0.5 MB),
- it is not UTF-8 text,
- its nodes, every alias counted as a full copy of what it names, number more than
  ``MAX_NODES`` (100 000, about a second to load on a busy machine), or collections nest, aliases
  expanded, deeper than ``MAX_DEPTH`` (100); an alias to a collection that contains it (a
  recursive document) is refused too.

Only then is it loaded (safe types only). Each refusal is one line naming the file.
``read_text`` (size-bounded, UTF-8 only) also reads the URDF files.
"""

from __future__ import annotations

from pathlib import Path

import yaml

__all__ = ["MAX_BYTES", "MAX_DEPTH", "MAX_NODES", "YamlError", "load_file", "load_text", "read_text"]

MAX_BYTES = 4 * 1024 * 1024
MAX_NODES = 100_000
MAX_DEPTH = 100

# libyaml's parser when PyYAML was built with it (fast), else the pure-Python one
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class YamlError(ValueError):
    """A YAML file or text that cannot be read: too large, not UTF-8, invalid, or too large once its
    aliases are expanded."""


def read_text(path: str | Path, max_bytes: int = MAX_BYTES, error: type[Exception] = YamlError,
              kind: str = "YAML") -> str:
    """A UTF-8 text file of at most max_bytes, or ``error`` (one line naming the file)."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            data = fh.read(max_bytes + 1)  # bounded even for /dev/zero or a pipe
    except OSError as exc:
        raise error(f"{path}: cannot read ({exc.strerror})") from exc
    if len(data) > max_bytes:
        raise error(f"{path}: larger than the {max_bytes >> 20} MiB a {kind} file may be")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise error(f"{path}: not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line})") from None


def load_file(path: str | Path, error: type[Exception] = YamlError) -> object:
    """The document in a YAML file, or ``error`` (one line naming the file) if it is refused."""
    return load_text(read_text(path, MAX_BYTES, error), str(path), error)


def load_text(text: str, where: str = "YAML text", error: type[Exception] = YamlError) -> object:
    """The document in a YAML string (a command-line value, a message field), bounded as files."""
    if len(text) > MAX_BYTES:
        raise error(f"{where}: longer than the {MAX_BYTES >> 20} MiB a YAML text may be")
    try:
        _check_expansion(text)
        return yaml.load(text, Loader=_LOADER)
    except _Refused as exc:
        raise error(f"{where}: {exc}") from None
    except yaml.YAMLError as exc:
        raise error(f"{where}: not valid YAML ({_one_line(exc)})") from None


class _Refused(Exception):
    pass


def _check_expansion(text: str) -> None:
    """_Refused if the document, aliases expanded, has more than MAX_NODES nodes or nests deeper
    than MAX_DEPTH. One pass over the parser's events: each anchor's expanded (size, depth) is
    known when its node ends, and an alias adds that much where it stands."""
    anchors: dict[str, tuple[int, int]] = {}
    open_: list[list] = []  # per open collection: [anchor, expanded size, depth below it]
    nodes = 0

    def add(size: int, depth: int) -> None:
        nonlocal nodes
        nodes += size
        if nodes > MAX_NODES:
            raise _Refused(f"more than {MAX_NODES:,} nodes once aliases are expanded "
                           "(nested anchors: a 'billion laughs' document?)")
        if len(open_) + depth > MAX_DEPTH:
            raise _Refused(f"nested deeper than {MAX_DEPTH} levels (aliases expanded)")
        if open_:
            open_[-1][1] += size
            open_[-1][2] = max(open_[-1][2], depth)

    for event in yaml.parse(text, Loader=_LOADER):
        if isinstance(event, yaml.ScalarEvent):
            add(1, 0)
            if event.anchor:
                anchors[event.anchor] = (1, 0)
        elif isinstance(event, yaml.AliasEvent):
            if event.anchor not in anchors:
                which = "inside itself" if any(o[0] == event.anchor for o in open_) else "undefined"
                raise _Refused(f"alias *{event.anchor} is {which} (line {event.start_mark.line + 1})")
            add(*anchors[event.anchor])
        elif isinstance(event, yaml.CollectionStartEvent):
            add(1, 1)  # counts the collection itself and checks its depth
            open_.append([event.anchor, 0, 0])
        elif isinstance(event, yaml.CollectionEndEvent):
            anchor, size, depth = open_.pop()
            if anchor:
                anchors[anchor] = (size + 1, depth + 1)
            if open_:  # its children were counted already; only the depth goes up
                open_[-1][1] += size
                open_[-1][2] = max(open_[-1][2], depth + 1)


def _one_line(exc: yaml.YAMLError) -> str:
    """PyYAML's message (problem and where) on one line."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return f"{problem} at line {mark.line + 1}, column {mark.column + 1}" if mark else problem
