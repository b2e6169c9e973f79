"""Node parameters from tables, in the spirit of ros2_controllers' generate_parameter_library.

A table is a frozen dataclass whose fields are made by :func:`param`: each field is one
parameter (its name on the wire, type from the field's annotation, default, description,
range, choices, read-only, a value check). From the table come

- the declaration (``declare(node, Table, **given)``: every row through
  ``Node.declare_parameter`` with its ParameterDescriptor — ranges, ``additional_constraints``,
  read-only — so both bus routes serve the same descriptors);
- the validation of every later set (a refusal names the parameter and the reason; a value
  refused at start-up raises ParameterError: the node does not start);
- typed access: ``declare`` returns an instance of the table, and ``on_change`` receives a new
  instance after each accepted change;
- the documentation (robot_control.nodes.parameter_docs renders docs/parameters.md from them).

A default that depends on the robot, the scenario or the namespace is :data:`GIVEN`: the
caller passes it to ``declare`` by field name, and the row's ``default_doc`` says what it is.
A row whose name holds ``{joint}`` is one parameter per joint (generate_parameter_library's
``__map_``): its value is a tuple in the order of the ``joints`` given to ``declare``.
Constraints that depend on the node (the laws a controller offers) are GIVEN too: the caller
passes their text in ``declare(..., constraints={field: text})``, and ``constraints_doc`` says
what they are.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from robot_control.bus.parameters import (
    BOOL,
    DOUBLE,
    DOUBLE_ARRAY,
    INTEGER,
    INTEGER_ARRAY,
    STRING,
    STRING_ARRAY,
    TYPE_NAMES,
    ParameterError,
)

#: field annotation -> ROS 2 parameter type (rcl_interfaces/ParameterType)
ANNOTATION_TYPES = {
    "bool": BOOL, "int": INTEGER, "float": DOUBLE, "str": STRING,
    "tuple[int, ...]": INTEGER_ARRAY, "tuple[float, ...]": DOUBLE_ARRAY,
    "tuple[str, ...]": STRING_ARRAY,
}
#: the element type of a per-joint row's values
_ELEMENT = {INTEGER_ARRAY: INTEGER, DOUBLE_ARRAY: DOUBLE, STRING_ARRAY: STRING}
JOINT = "{joint}"
#: what a row's ``size`` may say
SIZES = ("", "joint", "joint or empty")


class _Given:
    """The marker of a default the node computes and passes to ``declare``."""

    def __repr__(self) -> str:
        return "GIVEN"


GIVEN: Any = _Given()

Check = Callable[[Any], str | None]


@dataclasses.dataclass(frozen=True)
class Row:
    """One parameter of a table (the metadata of its field)."""

    name: str  # on the wire; '' = the field's name
    default: Any
    description: str
    read_only: bool = False
    range: tuple[float, float] | None = None  # inclusive; floating_point_range / integer_range
    choices: tuple[str, ...] | None = None  # the values a string may take
    constraints: str = ""  # additional_constraints (default: the choices joined by " | ")
    check: Check | None = None  # (value) -> why it is refused ("needs …"), or None
    default_doc: str = ""  # a GIVEN default, in words (docs/parameters.md)
    locked_while_active: str = ""  # why it may change only while the node is inactive
    size: str = ""  # "joint": one value per joint; "joint or empty": that or none
    constraints_doc: str = ""  # GIVEN constraints, in words (docs/parameters.md)


def param(default: Any, description: str, *, name: str = "", read_only: bool = False,
          range: tuple[float, float] | None = None, choices: Sequence[str] | None = None,
          constraints: str = "", check: Check | None = None, default_doc: str = "",
          locked_while_active: str = "", size: str = "", constraints_doc: str = "") -> Any:
    """A table field: one parameter (see the module docstring)."""
    if default is GIVEN and not default_doc:
        raise ValueError(f"parameter {name or description!r}: a GIVEN default needs default_doc")
    if constraints is GIVEN and not constraints_doc:
        raise ValueError(f"parameter {name or description!r}: GIVEN constraints need "
                         "constraints_doc")
    if size not in SIZES:
        raise ValueError(f"parameter {name or description!r}: size must be one of {SIZES}")
    row = Row(name, default, description, read_only, None if range is None else tuple(range),
              None if choices is None else tuple(choices),
              constraints or (" | ".join(choices) if choices else ""), check, default_doc,
              locked_while_active, size, constraints_doc)
    return dataclasses.field(default=_frozen(default), metadata={"param": row})


@dataclasses.dataclass(frozen=True)
class Spec:
    """A row resolved against its field: the wire name, the type, the python attribute."""

    field: str
    name: str
    type: int  # ROS type of each declared parameter (a per-joint row: of each joint's)
    row: Row

    @property
    def per_joint(self) -> bool:
        return JOINT in self.name

    @property
    def type_name(self) -> str:
        return TYPE_NAMES[self.type]

    def descriptor_args(self) -> dict[str, Any]:
        """The keyword arguments of Node.declare_parameter that make this row's descriptor."""
        r = self.row
        out: dict[str, Any] = {"read_only": r.read_only,
                               "additional_constraints": r.constraints, "ptype": self.type}
        if r.range is not None:
            key = "integer_range" if self.type in (INTEGER, INTEGER_ARRAY) \
                else "floating_point_range"
            out[key] = r.range
        return out

    def problem(self, value: Any, joints: Sequence[str]) -> str | None:
        """Why ``value`` is refused beyond its type and range (choices, size, check), or None."""
        r = self.row
        if r.choices is not None and value not in r.choices:
            return f"{self.name} must be one of {', '.join(r.choices)}, got '{value}'"
        if r.size:
            n = len(joints)
            if len(value) != n and not (r.size == "joint or empty" and len(value) == 0):
                return (f"{self.name} has {len(value)} values, the robot has {n} joints"
                        + (" (or none)" if r.size == "joint or empty" else ""))
        if r.check is not None:
            why = r.check(value)
            if why:
                return f"{self.name} {why}"
        return None


def specs(table: type) -> list[Spec]:
    """The rows of a table, in declaration order."""
    if not dataclasses.is_dataclass(table):
        raise TypeError(f"{table!r} is not a parameter table (a dataclass of param() fields)")
    out = []
    for f in dataclasses.fields(table):
        row = f.metadata.get("param")
        if row is None:
            raise TypeError(f"{table.__name__}.{f.name} is not a param() field")
        annotation = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", "")
        if annotation not in ANNOTATION_TYPES:
            raise TypeError(f"{table.__name__}.{f.name}: unsupported annotation {annotation!r}")
        ptype = ANNOTATION_TYPES[annotation]
        name = row.name or f.name
        if JOINT in name:
            if ptype not in _ELEMENT:
                raise TypeError(f"{table.__name__}.{f.name}: a per-joint row is a tuple")
            ptype = _ELEMENT[ptype]
        out.append(Spec(f.name, name, ptype, row))
    return out


def declare(node, table: type, *, joints: Sequence[str] = (),
            on_change: Callable[[Any], None] | None = None,
            constraints: dict[str, str] | None = None, **given: Any) -> Any:
    """Declare every row of ``table`` on ``node``; the values as an instance of the table.

    ``given``: the GIVEN defaults (and any default to replace) by field name; ``constraints``:
    the text of GIVEN constraints by field name; ``joints``: the names per-joint rows and sized
    rows go by. A value the rows refuse raises ParameterError naming it. Later sets are checked
    by the same rows (and, with ``locked_while_active``, refused while the node is active);
    ``on_change(values)`` gets the new instance after an accepted change of one of them.
    """
    rows = [given_constraints(s, constraints or {}) for s in specs(table)]
    unknown = (set(given) | set(constraints or {})) - {s.field for s in rows}
    if unknown:
        raise TypeError(f"{table.__name__} has no parameter {sorted(unknown)}")
    joints = tuple(joints)
    values: dict[str, Any] = {}
    for s in rows:
        default = given.get(s.field, s.row.default)
        if default is GIVEN:
            raise TypeError(f"{table.__name__}.{s.field}: its default must be given")
        values[s.field] = _declare_row(node, s, default, joints)
    instance = table(**values)
    watched = {_wire(s, j): s for s in rows for j in (joints if s.per_joint else (None,))}
    node.add_parameter_validator(lambda changes: _refusal(node, watched, changes, joints))
    if on_change is not None:
        state = {"values": instance}

        def changed(new: dict, old: dict) -> None:
            touched = set(new) & set(watched)
            if touched:
                state["values"] = updated(state["values"], node, table, joints)
                on_change(state["values"])

        node.add_parameter_listener(changed)
    return instance


def given_constraints(s: Spec, constraints: dict[str, str]) -> Spec:
    """The row with its GIVEN constraints' text filled in (TypeError when it is not given)."""
    if s.row.constraints is not GIVEN:
        return s
    if s.field not in constraints:
        raise TypeError(f"{s.name}: its constraints must be given")
    return dataclasses.replace(s, row=dataclasses.replace(s.row,
                                                          constraints=constraints[s.field]))


def updated(values: Any, node, table: type, joints: Sequence[str] = ()) -> Any:
    """The table's values as the node holds them now."""
    fresh = {}
    for s in specs(table):
        if s.per_joint:
            fresh[s.field] = tuple(node.get_parameter(_wire(s, j)) for j in joints)
        else:
            fresh[s.field] = _frozen(node.get_parameter(s.name))
    return dataclasses.replace(values, **fresh)


def _declare_row(node, s: Spec, default: Any, joints: tuple[str, ...]) -> Any:
    """Declare one row (per joint: one parameter each); its value, checked by the row."""
    description = s.row.description.replace("{n}", str(len(joints)))
    args = s.descriptor_args()
    if s.per_joint:
        out = []
        for j in joints:
            v = node.declare_parameter(_wire(s, j), default, description.replace(JOINT, j),
                                       **args)
            _raise_problem(s, v, joints)
            out.append(v)
        return tuple(out)
    value = node.declare_parameter(s.name, list(default) if isinstance(default, tuple)
                                   else default, description, **args)
    _raise_problem(s, value, joints)
    return _frozen(value)


def _raise_problem(s: Spec, value: Any, joints: Sequence[str]) -> None:
    problem = s.problem(value, joints)
    if problem:
        raise ParameterError(problem)


def _refusal(node, watched: dict[str, Spec], changes: dict, joints: Sequence[str]) -> str | None:
    """Why a set must be refused by these rows (None: they accept it)."""
    mine = {name: watched[name] for name in changes if name in watched}
    locked = [name for name, s in mine.items() if s.row.locked_while_active]
    if locked and node.is_active:
        why = mine[locked[0]].row.locked_while_active
        return (f"{', '.join(sorted(locked))}: {why}, read-only while it is active; deactivate "
                f"the node to change it")
    for name, s in mine.items():
        problem = s.problem(changes[name], joints)
        if problem:
            return problem
    return None


def _wire(s: Spec, joint: str | None) -> str:
    return s.name if joint is None else s.name.replace(JOINT, joint)


def _frozen(value: Any) -> Any:
    """Lists become tuples (a table's values are immutable)."""
    return tuple(value) if isinstance(value, list) else value




@dataclasses.dataclass(frozen=True)
class ClockParams:
    """Every node's time source (rclpy declares it itself; the rclpy-free route from here)."""

    use_sim_time: bool = param(False, "use /clock as the node's time source")
