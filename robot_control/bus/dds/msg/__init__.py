"""ROS 2 interface types of the rclpy-free route, generated from their definition text.

Nothing here lists fields by hand: each type is read from its ``.msg`` / ``.srv`` / ``.action``
(robot_control.bus.interfaces, which also computes its REP-2011 hash) and turned into a Cyclone
DDS struct with rmw_cyclonedds' name and byte layout (idl.py). Use

    from robot_control.bus.dds.msg import idl_type
    JointState = idl_type("sensor_msgs/msg/JointState")
    Request = idl_type("lifecycle_msgs/srv/GetState_Request")      # starts with guid, seq
    SendGoal = idl_type("control_msgs/action/FollowJointTrajectory_SendGoal_Request")
    from robot_control.bus.dds.msg import rcl_interfaces as rcl    # a package's types by
    rcl.ParameterValue, rcl.GetParametersRequest                    # name (no underscores)

An action ``pkg/action/A`` gives ``A_Goal``, ``A_Result``, ``A_Feedback``, the protocol's
``A_SendGoal_Request`` / ``_Response`` (goal_id + goal; accepted + stamp), ``A_GetResult_Request``
/ ``_Response`` (goal_id; status + result) and ``A_FeedbackMessage`` (goal_id + feedback); their
DDS names are rmw_cyclonedds', e.g. ``control_msgs::action::dds_::FollowJointTrajectory_SendGoal_
Request_``, and the SendGoal / GetResult samples start with the request header as any service's.
The action's endpoints (``<action>/_action/send_goal``, ``…/get_result``, ``…/cancel_goal`` with
action_msgs/srv/CancelGoal; topics ``…/feedback`` and ``…/status`` with
action_msgs/msg/GoalStatusArray) are named as for any service or topic.

Adding a type: robot_control.bus.interfaces says how (drop in its definition text).
"""

from __future__ import annotations

from types import SimpleNamespace

from robot_control.bus.dds.msg.idl import class_name, dds_type_name, idl_type
from robot_control.bus.interfaces import definition_files, type_hash, wire_types

__all__ = ["class_name", "dds_type_name", "idl_type", "package", "type_hash"]


def package(name: str) -> SimpleNamespace:
    """Every wire type of one package's shipped definitions, as attributes named by
    :func:`class_name` (``rcl_interfaces`` -> ``.Log``, ``.GetParametersRequest``, …)."""
    names = [t for d in definition_files() if d.startswith(name + "/") for t in wire_types(d)]
    if not names:
        raise AttributeError(f"no interface definitions of package {name!r} are shipped")
    return SimpleNamespace(**{class_name(t): idl_type(t) for t in names})


def __getattr__(name: str) -> SimpleNamespace:
    """``from robot_control.bus.dds.msg import lifecycle_msgs as lc``: a package's types."""
    if name.startswith("__"):
        raise AttributeError(name)
    namespace = package(name)
    globals()[name] = namespace
    return namespace
