"""REP-2011 type hashes (RIHS01) computed from the interface definitions.

The hash is SHA-256 over the JSON of the type's TypeDescription (type_description_interfaces:
the type and every type it refers to, sorted by name; each member's name, type id, capacity,
string capacity and nested type name; defaults left out), serialised as
rosidl_generator_type_description does (``json.dumps`` with separators ``", "`` and ``": "``).
``char`` is ``uint8`` there, as rosidl's ``.msg`` -> ``.idl`` step makes it.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache

from robot_control.bus.interfaces.definitions import FieldType, Struct, struct

# type_description_interfaces/msg/FieldType ids
TYPE_IDS = {"nested": 1, "int8": 2, "uint8": 3, "char": 3, "int16": 4, "uint16": 5, "int32": 6,
            "uint32": 7, "int64": 8, "uint64": 9, "float32": 10, "float64": 11, "bool": 15,
            "byte": 16, "string": 17, "wstring": 18}
BOUNDED_STRING_IDS = {"string": 21, "wstring": 22}
ARRAY_OFFSETS = {"": 0, "fixed": 48, "bounded": 96, "unbounded": 144}


def field_type_description(field_type: FieldType) -> dict[str, object]:
    """A member's FieldType message as a dict, in the message's member order."""
    if field_type.nested:
        type_id = TYPE_IDS["nested"]
    elif field_type.string_capacity:
        type_id = BOUNDED_STRING_IDS[field_type.base]
    else:
        type_id = TYPE_IDS[field_type.base]
    return {"type_id": type_id + ARRAY_OFFSETS[field_type.array],
            "capacity": field_type.capacity,
            "string_capacity": field_type.string_capacity,
            "nested_type_name": field_type.base if field_type.nested else ""}


def individual_description(definition: Struct) -> dict[str, object]:
    """The IndividualTypeDescription of one type (defaults left out, as the hash wants)."""
    return {"type_name": definition.name,
            "fields": [{"name": f.name, "type": field_type_description(f.type)}
                       for f in definition.fields]}


def referenced_types(name: str) -> list[str]:
    """Every type ``name`` refers to, directly or not, sorted by name."""
    seen: set[str] = set()
    pending = [name]
    while pending:
        for f in struct(pending.pop()).fields:
            if f.type.nested and f.type.base not in seen:
                seen.add(f.type.base)
                pending.append(f.type.base)
    seen.discard(name)
    return sorted(seen)


@cache
def type_hash(name: str) -> str:
    """The RIHS01 hash of ``pkg/kind/Type`` (e.g. ``RIHS01_a13e…`` for sensor_msgs/msg/JointState)."""
    description = {
        "type_description": individual_description(struct(name)),
        "referenced_type_descriptions": [individual_description(struct(n))
                                         for n in referenced_types(name)],
    }
    text = json.dumps(description, ensure_ascii=True, allow_nan=False, separators=(", ", ": "))
    return "RIHS01_" + hashlib.sha256(text.encode("utf-8")).hexdigest()
