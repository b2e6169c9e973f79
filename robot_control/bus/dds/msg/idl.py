"""Cyclone DDS types built from the interface definitions, laid out as rmw_cyclonedds lays them.

``idl_type("sensor_msgs/msg/JointState")`` returns an ``IdlStruct`` dataclass whose members are
the definition's, in order, with the CDR widths of their types (CDR carries no names or tags: the
layout *is* the order and width of the members); its DDS type name is rmw_cyclonedds'
``<pkg>::<msg|srv|action>::dds_::<Type>_``. A service's request and response (also an action's
SendGoal and GetResult) start with rmw_cyclonedds' request header ``uint64 guid; int64 seq``
(serdata.hpp), which the client fills and the server echoes. Defaults are the definition's
(``Quaternion.w`` is 1), else zero, empty or the nested type's defaults; constants are class
attributes. Sequences take Python lists: Cyclone's serialiser tests them for truth.
"""

from __future__ import annotations

import types as python_types
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from functools import cache

from cyclonedds.idl import IdlStruct
from cyclonedds.idl import types as idl

from robot_control.bus.interfaces.definitions import DefinitionError, Field, FieldType, split_name, struct

PRIMITIVE_TYPES = {"bool": bool, "byte": idl.byte, "char": idl.uint8, "float32": idl.float32,
                   "float64": idl.float64, "int8": idl.int8, "uint8": idl.uint8,
                   "int16": idl.int16, "uint16": idl.uint16, "int32": idl.int32,
                   "uint32": idl.uint32, "int64": idl.int64, "uint64": idl.uint64, "string": str}
ZEROS = {"bool": False, "string": "", "float32": 0.0, "float64": 0.0}
REQUEST_HEADER = (("guid", idl.uint64), ("seq", idl.int64))


def dds_type_name(ros_type_name: str) -> str:
    """``pkg/kind/Type`` -> rmw_cyclonedds' ``pkg::kind::dds_::Type_``."""
    package, kind, name = split_name(ros_type_name)
    return f"{package}::{kind}::dds_::{name}_"


def class_name(ros_type_name: str) -> str:
    """The Python name of a generated type: the ROS name without underscores
    (``GetParameters_Request`` -> ``GetParametersRequest``)."""
    return split_name(ros_type_name)[2].replace("_", "")


@cache
def idl_type(ros_type_name: str) -> type[IdlStruct]:
    """The Cyclone DDS struct of a ROS 2 type, built once from its definition."""
    definition = struct(ros_type_name)
    if definition.composite:
        raise DefinitionError(f"{ros_type_name} only enters type hashes; it is not put on the wire")
    annotations: dict[str, object] = {}
    namespace: dict[str, object] = dict(definition.constants)
    if definition.service:
        for name, kind in REQUEST_HEADER:
            annotations[name] = kind
            namespace[name] = 0
    for member in definition.fields:
        annotations[member.name] = _annotation(member.type)
        namespace[member.name] = _default(member)
    namespace["__annotations__"] = annotations
    namespace["__module__"] = __name__
    namespace["__doc__"] = f"{ros_type_name}, generated from its definition (see idl.py)."
    cls = python_types.new_class(class_name(ros_type_name), (IdlStruct,),
                                 {"typename": dds_type_name(ros_type_name)},
                                 lambda ns: ns.update(namespace))
    return dataclass(cls)


def _element(field_type: FieldType) -> object:
    """The IDL type of one element (the member's type without its array)."""
    if field_type.nested:
        return idl_type(field_type.base)
    if field_type.string_capacity:
        if field_type.base != "string":
            raise DefinitionError(f"{field_type.base} is not supported on this route")
        return idl.bounded_str[field_type.string_capacity]
    if field_type.base not in PRIMITIVE_TYPES:
        raise DefinitionError(f"{field_type.base} is not supported on this route")
    return PRIMITIVE_TYPES[field_type.base]


def _annotation(field_type: FieldType) -> object:
    element = _element(field_type)
    if field_type.array == "fixed":
        return idl.array[element, field_type.capacity]
    if field_type.array == "bounded":
        return idl.sequence[element, field_type.capacity]
    if field_type.array == "unbounded":
        return idl.sequence[element]
    return element


def _zero(field_type: FieldType) -> object:
    return ZEROS.get(field_type.base, 0)


def _default(member: Field) -> object:
    """The member's default: the definition's, else zero / empty / the nested type's default.
    Mutable defaults go through a factory (a dataclass needs that)."""
    field_type, value = member.type, member.default
    if field_type.array:
        if value is not None:
            return dataclass_field(default_factory=lambda: list(value))
        if field_type.array != "fixed":
            return dataclass_field(default_factory=list)
        if field_type.nested:
            nested = idl_type(field_type.base)
            return dataclass_field(default_factory=lambda: [nested() for _ in range(field_type.capacity)])
        zero = _zero(field_type)
        return dataclass_field(default_factory=lambda: [zero] * field_type.capacity)
    if field_type.nested:
        return dataclass_field(default_factory=idl_type(field_type.base))
    return _zero(field_type) if value is None else value
