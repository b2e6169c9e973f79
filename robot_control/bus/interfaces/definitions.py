"""ROS 2 interface definitions (``.msg``, ``.srv``, ``.action``) read from their text.

The texts ship in ``robot_control/data/interfaces/<pkg>/<msg|srv|action>/<Type>.<ext>``, copied
unchanged from a ROS 2 Jazzy installation. ``struct("pkg/msg/Type")`` parses one into a
:class:`Struct` — the type as rosidl sees it (REP-2011's TypeDescription: members in order,
their types, defaults and constants) — from which the wire types (idl.py) and the type hashes
(hashing.py) are derived.

Grammar (rosidl_adapter's ``.msg`` parser): one member or constant per line, ``#`` starts a
comment (outside quotes); ``TYPE NAME [DEFAULT]`` is a member, ``TYPE NAME=VALUE`` a constant;
TYPE is a primitive, ``string<=N``, ``pkg/Type`` or ``Type`` (same package), optionally followed
by ``[]``, ``[N]`` or ``[<=N]``. A ``.srv`` has two sections separated by ``---`` (request,
response), an ``.action`` three (goal, result, feedback). A struct without members gets rosidl's
placeholder ``uint8 structure_needs_at_least_one_member``.

The names a ``.srv`` or ``.action`` defines follow rosidl: ``pkg/srv/S_Request``, ``S_Response``,
``S_Event`` and ``S`` itself; ``pkg/action/A_Goal``, ``A_Result``, ``A_Feedback``, the action
protocol's ``A_SendGoal`` and ``A_GetResult`` services (with their ``_Request``, ``_Response``
and ``_Event``), ``A_FeedbackMessage`` and ``A`` itself.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

DEFINITIONS = Path(__file__).resolve().parents[2] / "data" / "interfaces"
KINDS = {"msg": "msg", "srv": "srv", "action": "action"}  # kind -> file extension
PRIMITIVES = frozenset({"bool", "byte", "char", "float32", "float64", "int8", "uint8", "int16",
                        "uint16", "int32", "uint32", "int64", "uint64", "string", "wstring"})
PLACEHOLDER = "structure_needs_at_least_one_member"
_NAME = re.compile(r"[a-z][a-z0-9_]*$")
_CONSTANT = re.compile(r"[A-Z][A-Z0-9_]*$")
_TYPE = re.compile(
    r"(?P<base>[A-Za-z][\w/]*)(<=(?P<strcap>\d+))?(?P<array>\[(?P<bound><=)?(?P<size>\d*)\])?$")


class DefinitionError(ValueError):
    """An interface definition that is missing or does not parse."""


@dataclass(frozen=True)
class FieldType:
    """A member's type: a primitive or a nested ``pkg/kind/Type``, maybe in an array.

    ``array`` is "" (single value), "fixed" (``[N]``), "bounded" (``[<=N]``) or "unbounded"
    (``[]``); ``capacity`` is N; ``string_capacity`` the N of ``string<=N``."""

    base: str
    array: str = ""
    capacity: int = 0
    string_capacity: int = 0

    @property
    def nested(self) -> bool:
        return self.base not in PRIMITIVES


@dataclass(frozen=True)
class Field:
    name: str
    type: FieldType
    default: object = None  # the .msg default (a Python value), None when it has none


@dataclass(frozen=True)
class Struct:
    """One ROS 2 type: ``name`` is ``pkg/kind/Type``; ``service`` marks a service's request or
    response (the wire adds rmw's request header to those); ``composite`` a type that only
    enters type hashes (a service or action itself, a service's event message)."""

    name: str
    fields: tuple[Field, ...]
    constants: dict[str, object] = field(default_factory=dict)
    service: bool = False
    composite: bool = False


def split_name(name: str) -> tuple[str, str, str]:
    """``pkg/kind/Type`` -> (pkg, kind, Type), checking the kind."""
    parts = name.split("/")
    if len(parts) != 3 or parts[1] not in KINDS or not all(parts):
        raise DefinitionError(f"not a ROS 2 type name (pkg/msg|srv|action/Type): {name!r}")
    return parts[0], parts[1], parts[2]


@cache
def struct(name: str) -> Struct:
    """The type named ``pkg/kind/Type`` (for services and actions also their parts, e.g.
    ``pkg/srv/S_Request`` or ``pkg/action/A_SendGoal_Request``), parsed from its definition."""
    package, kind, type_name = split_name(name)
    stem = type_name if kind == "msg" else type_name.split("_", 1)[0]
    structs = _file_structs(package, kind, stem)
    if name not in structs:
        raise DefinitionError(f"{package}/{kind}/{stem}.{KINDS[kind]} defines no {name}")
    return structs[name]


@cache
def definition_files() -> tuple[str, ...]:
    """The names of every shipped definition (``pkg/kind/Type``), sorted."""
    return tuple(sorted(f"{p.parent.parent.name}/{p.parent.name}/{p.stem}"
                  for p in DEFINITIONS.glob("*/*/*") if p.suffix[1:] in KINDS.values()))


def wire_types(definition: str) -> list[str]:
    """The types a definition puts on the wire: a message itself, a service's request and
    response, an action's goal, result, feedback and protocol types."""
    package, kind, stem = split_name(definition)
    if kind == "msg":
        return [definition]
    if kind == "srv":
        return [f"{definition}_Request", f"{definition}_Response"]
    return [f"{definition}_{part}" for part in (
        "Goal", "Result", "Feedback", "SendGoal_Request", "SendGoal_Response",
        "GetResult_Request", "GetResult_Response", "FeedbackMessage")]


@cache
def _file_structs(package: str, kind: str, stem: str) -> dict[str, Struct]:
    path = DEFINITIONS / package / kind / f"{stem}.{KINDS[kind]}"
    if not path.is_file():
        raise DefinitionError(f"no definition of {package}/{kind}/{stem}: {path} is missing "
                              "(see robot_control.bus.interfaces on adding a type)")
    sections = _sections(path.read_text())
    prefix = f"{package}/{kind}/{stem}"
    parse = lambda i, name, service=False: _parse(sections[i], package, name, path, service)
    if kind == "msg":
        _expect(sections, 1, path)
        return {prefix: parse(0, prefix)}
    if kind == "srv":
        _expect(sections, 2, path)
        return _service(prefix, parse(0, f"{prefix}_Request", True),
                        parse(1, f"{prefix}_Response", True))
    _expect(sections, 3, path)
    return _action(package, stem, parse(0, f"{prefix}_Goal"), parse(1, f"{prefix}_Result"),
                   parse(2, f"{prefix}_Feedback"))


def _service(prefix: str, request: Struct, response: Struct) -> dict[str, Struct]:
    """A service's request and response, its event message and the service type itself
    (rosidl_generator_type_description: the event and the composite only enter hashes)."""
    event = Struct(f"{prefix}_Event", (
        Field("info", FieldType("service_msgs/msg/ServiceEventInfo")),
        Field("request", FieldType(request.name, "bounded", 1)),
        Field("response", FieldType(response.name, "bounded", 1)),
    ), composite=True)
    service = Struct(prefix, (Field("request_message", FieldType(request.name)),
                              Field("response_message", FieldType(response.name)),
                              Field("event_message", FieldType(event.name))), composite=True)
    return {s.name: s for s in (request, response, event, service)}


def _action(package: str, stem: str, goal: Struct, result: Struct,
            feedback: Struct) -> dict[str, Struct]:
    """An action's goal, result and feedback plus the action protocol's types (rosidl's
    action.idl: SendGoal and GetResult services, FeedbackMessage) and the action type itself."""
    prefix = f"{package}/action/{stem}"
    uuid = Field("goal_id", FieldType("unique_identifier_msgs/msg/UUID"))
    send_goal = _service(
        f"{prefix}_SendGoal",
        Struct(f"{prefix}_SendGoal_Request", (uuid, Field("goal", FieldType(goal.name))),
               service=True),
        Struct(f"{prefix}_SendGoal_Response", (
            Field("accepted", FieldType("bool")),
            Field("stamp", FieldType("builtin_interfaces/msg/Time"))), service=True))
    get_result = _service(
        f"{prefix}_GetResult",
        Struct(f"{prefix}_GetResult_Request", (uuid,), service=True),
        Struct(f"{prefix}_GetResult_Response", (
            Field("status", FieldType("int8")),
            Field("result", FieldType(result.name))), service=True))
    message = Struct(f"{prefix}_FeedbackMessage",
                     (uuid, Field("feedback", FieldType(feedback.name))))
    action = Struct(prefix, (
        Field("goal", FieldType(goal.name)), Field("result", FieldType(result.name)),
        Field("feedback", FieldType(feedback.name)),
        Field("send_goal_service", FieldType(f"{prefix}_SendGoal")),
        Field("get_result_service", FieldType(f"{prefix}_GetResult")),
        Field("feedback_message", FieldType(message.name))), composite=True)
    return {s.name: s for s in (goal, result, feedback, message, action)} | send_goal | get_result


def _expect(sections: list[list[tuple[int, str]]], count: int, path: Path) -> None:
    if len(sections) != count:
        raise DefinitionError(f"{path}: {count} section(s) expected, found {len(sections)}")


def _sections(text: str) -> list[list[tuple[int, str]]]:
    """The definition's sections (split at ``---``) as (line number, line without comment)."""
    sections: list[list[tuple[int, str]]] = [[]]
    for number, raw in enumerate(text.splitlines(), 1):
        line = _strip_comment(raw).strip()
        if line == "---":
            sections.append([])
        elif line:
            sections[-1].append((number, line))
    return sections


def _strip_comment(line: str) -> str:
    """The line up to a ``#`` that is not inside a quoted string."""
    quote = None
    for i, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#":
            return line[:i]
    return line


def _parse(lines: list[tuple[int, str]], package: str, name: str, path: Path,
           service: bool) -> Struct:
    fields: list[Field] = []
    constants: dict[str, object] = {}
    for number, line in lines:
        where = f"{path}:{number}"
        type_text, _, rest = line.partition(" ")
        rest = rest.strip()
        field_type = _field_type(type_text, package, where)
        if "=" in rest and _CONSTANT.match(rest.partition("=")[0].strip()):
            constant, _, value = rest.partition("=")
            constants[constant.strip()] = _value(field_type, value.strip(), where)
            continue
        member, _, default = rest.partition(" ")
        if not _NAME.match(member):
            raise DefinitionError(f"{where}: bad member name {member!r}")
        value = _value(field_type, default.strip(), where) if default.strip() else None
        fields.append(Field(member, field_type, value))
    if not fields:
        fields.append(Field(PLACEHOLDER, FieldType("uint8")))
    return Struct(name, tuple(fields), constants, service)


def _field_type(text: str, package: str, where: str) -> FieldType:
    match = _TYPE.match(text)
    if not match:
        raise DefinitionError(f"{where}: cannot read the type {text!r}")
    base, size = match["base"], match["size"]
    if base not in PRIMITIVES:
        parts = base.split("/")
        if len(parts) == 1:
            base = f"{package}/msg/{base}"
        elif len(parts) == 2:
            base = f"{parts[0]}/msg/{parts[1]}"
        else:
            raise DefinitionError(f"{where}: bad type name {base!r}")
    if match["strcap"] and base not in ("string", "wstring"):
        raise DefinitionError(f"{where}: only strings take an upper bound, not {text!r}")
    array = "" if match["array"] is None else ("bounded" if match["bound"] else
                                               "fixed" if size else "unbounded")
    if array in ("bounded", "fixed") and not size:
        raise DefinitionError(f"{where}: array bound missing in {text!r}")
    return FieldType(base, array, int(size or 0), int(match["strcap"] or 0))


def _value(field_type: FieldType, text: str, where: str) -> object:
    """A default or constant value as Python (a list for arrays)."""
    if field_type.nested:
        raise DefinitionError(f"{where}: a nested type takes no default or constant value")
    if field_type.array:
        items = _literal(text, where)
        if not isinstance(items, (list, tuple)):
            raise DefinitionError(f"{where}: an array default is a [list], not {text!r}")
        return [_scalar(field_type.base, repr(item) if not isinstance(item, str) else item, where)
                for item in items]
    return _scalar(field_type.base, text, where)


def _scalar(base: str, text: str, where: str) -> object:
    if base in ("string", "wstring"):
        if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
            return _literal(text, where)
        return text
    if base == "bool":
        if text.lower() in ("true", "1"):
            return True
        if text.lower() in ("false", "0"):
            return False
        raise DefinitionError(f"{where}: {text!r} is not a bool")
    value = _literal(text, where)
    if base.startswith("float"):
        return float(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise DefinitionError(f"{where}: {text!r} is not an integer ({base})")
    return value


def _literal(text: str, where: str) -> object:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError) as exc:
        raise DefinitionError(f"{where}: cannot read the value {text!r}") from exc
