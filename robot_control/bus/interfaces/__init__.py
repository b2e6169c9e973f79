"""ROS 2 interface definitions and their REP-2011 type hashes, transport-neutral.

The ``.msg`` / ``.srv`` / ``.action`` texts this package uses ship in
``robot_control/data/interfaces/<pkg>/<msg|srv|action>/``, copied unchanged from ROS 2 Jazzy;
definitions.py reads them into rosidl's view of a type (members, types, defaults, constants;
services' and actions' derived types), hashing.py computes RIHS01 hashes from that. The
rclpy-free route builds its wire types from them (robot_control.bus.dds.msg); on rclpy, ROS 2's
own generated types are used.

**Adding a type** (a message, service or action, e.g. for a new topic or an action server):

1. Copy its definition, unchanged, from a ROS 2 Jazzy installation
   (``/opt/ros/jazzy/share/<pkg>/<msg|srv|action>/<Type>.<ext>``) to
   ``robot_control/data/interfaces/<pkg>/<msg|srv|action>/``, with every type it refers to that
   is not there yet (``struct()`` names a missing one).
2. ``robot_control.bus.dds.msg.idl_type("<pkg>/<kind>/<Type>")`` now builds it (a service's
   ``_Request`` / ``_Response``, an action's ``_Goal``, ``_SendGoal_Request``, …).
3. For nodes (``node.msg(…)``, publishers, subscriptions) and ``robot-control topic`` to find it
   by name, add its name to ``MESSAGE_TYPES`` (a service to ``SERVICES``) in
   robot_control.bus.dds.messages.
4. The ROS suite (test_ros2_interfaces.py) checks its text and hashes against the installation;
   add a sample to test/data/cdr_golden.yaml only if a hand-written layout is being replaced.
"""

from robot_control.bus.interfaces.definitions import (
    DefinitionError,
    Field,
    FieldType,
    Struct,
    definition_files,
    split_name,
    struct,
    wire_types,
)
from robot_control.bus.interfaces.hashing import type_hash

__all__ = ["DefinitionError", "Field", "FieldType", "Struct", "definition_files", "split_name",
           "struct", "type_hash", "wire_types"]
