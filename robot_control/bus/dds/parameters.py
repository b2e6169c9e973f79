"""The standard ROS 2 parameter services of a node and /parameter_events, served from its
ParameterStore exactly as rclpy's ParameterService answers them.

``<node>/get_parameters``, ``set_parameters``, ``set_parameters_atomically``,
``list_parameters``, ``describe_parameters`` and ``get_parameter_types`` carry the
rcl_interfaces request/response types; the store's checks and the node's validators decide
``successful`` and ``reason``. Conversions between Python values and rcl_interfaces messages
live here too, for the client side of the same services.
"""

from __future__ import annotations

from collections.abc import Callable

from robot_control.bus import parameters
from robot_control.bus.dds import config as dds_config
from robot_control.bus.dds.context import delete_entity
from robot_control.bus.dds.messages import time_from_seconds
from robot_control.bus.dds.msg import rcl_interfaces as rcl
from robot_control.bus.dds.services import ServiceServer
from robot_control.bus.parameters import Descriptor, ParameterError, ParameterStore

_VALUE_FIELD = {
    parameters.BOOL: "bool_value",
    parameters.INTEGER: "integer_value",
    parameters.DOUBLE: "double_value",
    parameters.STRING: "string_value",
    parameters.BYTE_ARRAY: "byte_array_value",
    parameters.BOOL_ARRAY: "bool_array_value",
    parameters.INTEGER_ARRAY: "integer_array_value",
    parameters.DOUBLE_ARRAY: "double_array_value",
    parameters.STRING_ARRAY: "string_array_value",
}

PARAMETER_SERVICES = {
    "get_parameters": "rcl_interfaces/srv/GetParameters",
    "set_parameters": "rcl_interfaces/srv/SetParameters",
    "set_parameters_atomically": "rcl_interfaces/srv/SetParametersAtomically",
    "list_parameters": "rcl_interfaces/srv/ListParameters",
    "describe_parameters": "rcl_interfaces/srv/DescribeParameters",
    "get_parameter_types": "rcl_interfaces/srv/GetParameterTypes",
}


# --- conversions -------------------------------------------------------------------------------


def to_value_msg(value: object, ptype: int | None = None) -> rcl.ParameterValue:
    """rcl_interfaces/ParameterValue of a Python value (ptype: the declared type, if known)."""
    ptype = parameters.type_of(value) if ptype is None else ptype
    msg = rcl.ParameterValue(type=ptype)
    if ptype == parameters.NOT_SET or value is None:
        return rcl.ParameterValue(type=parameters.NOT_SET)
    if ptype == parameters.BYTE_ARRAY:
        value = list(bytes(value))
    elif isinstance(value, list | tuple):
        value = list(value)
    setattr(msg, _VALUE_FIELD[ptype], value)
    return msg


def from_value_msg(msg: rcl.ParameterValue) -> object:
    """The Python value a ParameterValue carries (None when NOT_SET)."""
    if msg.type == parameters.NOT_SET:
        return None
    if msg.type not in _VALUE_FIELD:
        raise ParameterError(f"unknown parameter type {msg.type}")
    value = getattr(msg, _VALUE_FIELD[msg.type])
    if msg.type == parameters.BYTE_ARRAY:
        return bytes(value)
    return list(value) if isinstance(value, list | tuple) else value


def to_descriptor_msg(d: Descriptor) -> rcl.ParameterDescriptor:
    """rcl_interfaces/ParameterDescriptor of a store descriptor (ranges, read-only, …)."""
    fp = [rcl.FloatingPointRange(*(float(v) for v in d.floating_point_range))
          ] if d.floating_point_range else []
    ir = [rcl.IntegerRange(*(int(v) for v in d.integer_range))] if d.integer_range else []
    return rcl.ParameterDescriptor(
        name=d.name, type=d.type, description=d.description,
        additional_constraints=d.additional_constraints, read_only=d.read_only,
        dynamic_typing=d.dynamic_typing, floating_point_range=fp, integer_range=ir)


def from_descriptor_msg(msg: rcl.ParameterDescriptor) -> Descriptor:
    fp = msg.floating_point_range[0] if msg.floating_point_range else None
    ir = msg.integer_range[0] if msg.integer_range else None
    return Descriptor(
        name=msg.name, type=msg.type, description=msg.description,
        additional_constraints=msg.additional_constraints, read_only=msg.read_only,
        dynamic_typing=msg.dynamic_typing,
        floating_point_range=(fp.from_value, fp.to_value, fp.step) if fp else None,
        integer_range=(ir.from_value, ir.to_value, ir.step) if ir else None)


def list_result(store: ParameterStore, prefixes: list[str], depth: int) -> rcl.ListParametersResult:
    """rclpy's Node.list_parameters: names under the prefixes and depth, and their prefixes."""
    names = store.list(list(prefixes), int(depth))
    found: list[str] = []
    for name in names:
        if "." in name:
            prefix = name.rsplit(".", 1)[0]
            if prefix not in found:
                found.append(prefix)
    return rcl.ListParametersResult(names=names, prefixes=found)


# --- the server --------------------------------------------------------------------------------


class ParameterServer:
    """The six parameter services of one node plus its /parameter_events publisher."""

    def __init__(self, context, executor, node_key: int, node_fqn: str, store: ParameterStore,
                 now: Callable[[], float]):
        self._store = store
        self._fqn = node_fqn
        self._now = now
        self._context = context
        self._node_key = node_key
        self.events_writer = context.writer(
            "rt/parameter_events", "rcl_interfaces/msg/ParameterEvent", dds_config.PARAMETER_EVENTS)
        context.associate(node_key, writer=self.events_writer)
        handlers = {
            "get_parameters": self._get,
            "set_parameters": self._set,
            "set_parameters_atomically": self._set_atomically,
            "list_parameters": self._list,
            "describe_parameters": self._describe,
            "get_parameter_types": self._types,
        }
        self.servers = [
            ServiceServer(context, executor, node_key, PARAMETER_SERVICES[name],
                          f"{node_fqn.rstrip('/')}/{name}", handler, dds_config.PARAMETERS)
            for name, handler in handlers.items()
        ]

    # each handler mirrors rclpy.parameter_service.ParameterService
    def _get(self, request) -> rcl.GetParametersResponse:
        if any(name not in self._store.values for name in request.names):
            return rcl.GetParametersResponse(values=[])
        return rcl.GetParametersResponse(values=[
            to_value_msg(self._store.values[n], self._store.descriptors[n].type)
            for n in request.names])

    def _set(self, request) -> rcl.SetParametersResponse:
        return rcl.SetParametersResponse(results=[
            self._apply([p]) for p in request.parameters])

    def _set_atomically(self, request) -> rcl.SetParametersAtomicallyResponse:
        return rcl.SetParametersAtomicallyResponse(result=self._apply(list(request.parameters)))

    def _apply(self, params: list[rcl.Parameter]) -> rcl.SetParametersResult:
        try:
            self._store.set({p.name: from_value_msg(p.value) for p in params})
        except ParameterError as exc:
            return rcl.SetParametersResult(successful=False, reason=str(exc))
        return rcl.SetParametersResult(successful=True, reason="")

    def _list(self, request) -> rcl.ListParametersResponse:
        return rcl.ListParametersResponse(
            result=list_result(self._store, request.prefixes, request.depth))

    def _describe(self, request) -> rcl.DescribeParametersResponse:
        if any(name not in self._store.descriptors for name in request.names):
            return rcl.DescribeParametersResponse(descriptors=[])
        return rcl.DescribeParametersResponse(descriptors=[
            to_descriptor_msg(self._store.descriptors[n]) for n in request.names])

    def _types(self, request) -> rcl.GetParameterTypesResponse:
        if any(name not in self._store.descriptors for name in request.names):
            return rcl.GetParameterTypesResponse(types=[])
        return rcl.GetParameterTypesResponse(types=[
            self._store.descriptors[n].type for n in request.names])

    def publish_event(self, new: dict[str, object] | None = None,
                      changed: dict[str, object] | None = None) -> None:
        """rcl_interfaces/ParameterEvent on /parameter_events, as rclpy sends on declare and set."""

        def params(values: dict[str, object] | None) -> list[rcl.Parameter]:
            return [rcl.Parameter(name=n, value=to_value_msg(v, self._store.descriptors[n].type))
                    for n, v in (values or {}).items()]

        self.events_writer.write(rcl.ParameterEvent(
            stamp=time_from_seconds(self._now()), node=self._fqn,
            new_parameters=params(new), changed_parameters=params(changed)))

    def destroy(self) -> None:
        for server in self.servers:
            server.destroy()
        self._context.dissociate(self._node_key, writer=self.events_writer)
        delete_entity(self.events_writer)
