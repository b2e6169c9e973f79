"""Node parameters as ROS 2 defines them: typed, described, ranged, validated on every set.

Both backends use this store: the rclpy adapter mirrors it into rclpy's parameters, the DDS
backend serves it through the standard rcl_interfaces parameter services.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from robot_control.foundation.safe_yaml import load_file

# rcl_interfaces/msg/ParameterType constants
NOT_SET, BOOL, INTEGER, DOUBLE, STRING = 0, 1, 2, 3, 4
BYTE_ARRAY, BOOL_ARRAY, INTEGER_ARRAY, DOUBLE_ARRAY, STRING_ARRAY = 5, 6, 7, 8, 9
TYPE_NAMES = {
    NOT_SET: "not set", BOOL: "bool", INTEGER: "integer", DOUBLE: "double", STRING: "string",
    BYTE_ARRAY: "byte array", BOOL_ARRAY: "bool array", INTEGER_ARRAY: "integer array",
    DOUBLE_ARRAY: "double array", STRING_ARRAY: "string array",
}


class ParameterError(ValueError):
    """A parameter operation refused, with the reason ROS 2 would report."""


@dataclass
class Descriptor:
    """rcl_interfaces/ParameterDescriptor: type, description, constraints, ranges, read-only."""

    name: str
    type: int
    description: str = ""
    additional_constraints: str = ""
    read_only: bool = False
    dynamic_typing: bool = False
    floating_point_range: tuple[float, float, float] | None = None  # (from, to, step)
    integer_range: tuple[int, int, int] | None = None


def type_of(value: object) -> int:
    """The ROS 2 parameter type of a Python value."""
    if value is None:
        return NOT_SET
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, int):
        return INTEGER
    if isinstance(value, float):
        return DOUBLE
    if isinstance(value, str):
        return STRING
    if isinstance(value, bytes):
        return BYTE_ARRAY
    if isinstance(value, list | tuple):
        items = list(value)
        if not items:
            return DOUBLE_ARRAY  # an empty YAML list: the only array type our nodes declare
        if all(isinstance(v, bool) for v in items):
            return BOOL_ARRAY
        if all(isinstance(v, int) and not isinstance(v, bool) for v in items):
            return INTEGER_ARRAY
        if all(isinstance(v, int | float) and not isinstance(v, bool) for v in items):
            return DOUBLE_ARRAY
        if all(isinstance(v, str) for v in items):
            return STRING_ARRAY
    raise ParameterError(f"unsupported parameter value {value!r}")


EMPTY_LIST_TYPES = (BOOL_ARRAY, INTEGER_ARRAY, DOUBLE_ARRAY, STRING_ARRAY)


def coerce(value: object, ptype: int, name: str) -> object:
    """Convert value to the declared type where ROS 2 would accept it (integer → double)."""
    vtype = type_of(value)
    if vtype == ptype:
        return list(value) if isinstance(value, tuple) else value
    if isinstance(value, list | tuple) and not value and ptype in EMPTY_LIST_TYPES:
        return []  # ``-p names:=[]``: an empty list has no element type of its own
    if ptype == DOUBLE and vtype == INTEGER:
        return float(value)
    if ptype == DOUBLE_ARRAY and vtype == INTEGER_ARRAY:
        return [float(v) for v in value]
    raise ParameterError(
        f"parameter '{name}' has type {TYPE_NAMES[ptype]}, cannot set a {TYPE_NAMES[vtype]} value"
    )


#: a number in YAML 1.2's core schema; YAML 1.1 (PyYAML, launch_ros) reads "1e9" as a string
_FLOAT_TEXT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?|[-+]?\.(inf|Inf|INF)"
                         r"|\.(nan|NaN|NAN)")


def number_text(value: object, ptype: int) -> object:
    """An override given as text (``-p rate:=1e9`` through a launch file) for a double
    parameter: the number YAML 1.2 reads in it, so the range check, not the type, decides."""
    if ptype == DOUBLE and isinstance(value, str) and _FLOAT_TEXT.fullmatch(value.strip()):
        return float(value.strip().lower().replace(".inf", "inf").replace(".nan", "nan"))
    return value


def _check_range(d: Descriptor, value: object) -> None:
    values = value if isinstance(value, list) else [value]
    if d.floating_point_range and d.type in (DOUBLE, DOUBLE_ARRAY):
        lo, hi, _ = d.floating_point_range
        for v in values:
            if not (lo <= v <= hi) or math.isnan(v):
                raise ParameterError(f"parameter '{d.name}': {v} is outside [{lo}, {hi}]")
    if d.integer_range and d.type in (INTEGER, INTEGER_ARRAY):
        lo, hi, _ = d.integer_range
        for v in values:
            if not lo <= v <= hi:
                raise ParameterError(f"parameter '{d.name}': {v} is outside [{lo}, {hi}]")


Validator = Callable[[dict[str, object]], str | None]


@dataclass
class ParameterStore:
    """Declared parameters of one node and the callbacks that may refuse a change."""

    node_name: str
    values: dict[str, object] = field(default_factory=dict)
    descriptors: dict[str, Descriptor] = field(default_factory=dict)
    overrides: dict[str, object] = field(default_factory=dict)
    validators: list[Validator] = field(default_factory=list)
    listeners: list[Callable[[dict[str, object], dict[str, object]], None]] = field(
        default_factory=list)

    def declare(self, name: str, default: object, description: str = "", *,
                read_only: bool = False, floating_point_range=None, integer_range=None,
                additional_constraints: str = "", ptype: int | None = None) -> object:
        """Declare with a default; a launch/command-line override wins if it is valid."""
        if name in self.descriptors:
            raise ParameterError(f"parameter '{name}' is already declared")
        d = Descriptor(name, ptype if ptype is not None else type_of(default), description,
                       additional_constraints, read_only,
                       floating_point_range=floating_point_range, integer_range=integer_range)
        value = coerce(default, d.type, name) if default is not None else None
        if name in self.overrides:
            value = coerce(number_text(self.overrides[name], d.type), d.type, name)
        if value is not None:
            _check_range(d, value)
        self.descriptors[name] = d
        self.values[name] = value
        return value

    def get(self, name: str) -> object:
        if name not in self.values:
            raise ParameterError(f"parameter '{name}' is not declared")
        return self.values[name]

    def set(self, changes: dict[str, object]) -> None:
        """Set several parameters atomically: all are checked and validated, or nothing changes."""
        new: dict[str, object] = {}
        for name, value in changes.items():
            d = self.descriptors.get(name)
            if d is None:
                raise ParameterError(f"parameter '{name}' is not declared")
            if d.read_only:
                raise ParameterError(f"parameter '{name}' is read-only")
            v = coerce(value, d.type, name)
            _check_range(d, v)
            new[name] = v
        for validate in self.validators:
            reason = validate(new)
            if reason:
                raise ParameterError(reason)
        old = {k: self.values[k] for k in new}
        self.values.update(new)
        for listener in self.listeners:
            listener(new, old)

    def list(self, prefixes: list[str] | None = None, depth: int = 0) -> list[str]:
        """Names, filtered like rcl_interfaces/ListParameters (prefixes, depth 0 = unlimited)."""
        names = sorted(self.values)
        if prefixes:
            names = [n for n in names if any(n == p or n.startswith(p + ".") for p in prefixes)]
        if depth:
            names = [n for n in names if n.count(".") < depth]
        return names


def load_params_file(path: str, node_fqn: str) -> dict[str, object]:
    """``ros__parameters`` for a node from a params file: the entries whose key matches its fully
    qualified name as rclcpp/rclpy match them (:func:`node_key_matches`)."""
    doc = load_file(path, ParameterError) or {}
    if not isinstance(doc, dict):
        raise ParameterError(f"{path}: expected a mapping of node names to ros__parameters")
    out: dict[str, object] = {}
    for key, body in doc.items():
        if not isinstance(body, dict) or "ros__parameters" not in body:
            raise ParameterError(f"{path}: entry '{key}' has no 'ros__parameters'")
        if node_key_matches(str(key), node_fqn):
            out.update(_flatten(body["ros__parameters"] or {}))
    return out


def node_key_matches(key: str, node_fqn: str) -> bool:
    """Whether a params file's node key names the node: rcl_yaml_param_parser makes a key
    absolute (``plant`` is ``/plant``, the node ``plant`` in the root namespace only), and rclcpp
    and rclpy read ``*`` as one name token and ``**`` as any number of tokens (``/**`` every node,
    ``/**/plant`` the node ``plant`` in any namespace; rclcpp PR 1280)."""
    absolute = key if key.startswith("/") else "/" + key
    pattern = re.escape(absolute).replace(r"/\*\*", "(/[^/]+)*").replace(r"\*", "[^/]+")
    return re.fullmatch(pattern, node_fqn) is not None


def _flatten(tree: dict, prefix: str = "") -> dict[str, object]:
    """Nested YAML mappings become dotted names, as ROS 2 does."""
    out: dict[str, object] = {}
    for k, v in tree.items():
        name = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten(v, name + "."))
        else:
            out[name] = v
    return out
