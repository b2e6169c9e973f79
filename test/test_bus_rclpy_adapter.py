"""The rclpy adapter against a stand-in for the parts of rclpy's API it uses (rclpy cannot be
installed here): the store decides every change, declaring stays out of the validators, an
empty list gets a type, refusals carry the reason, and a raising callback is only logged.

The stand-in follows rclpy's documented behaviour (rclpy/node.py): on-set-parameters callbacks
run on declaration and on every set, after the descriptor checks, and their
SetParametersResult decides. On a machine with ROS 2 the real rclpy is used instead."""

from __future__ import annotations

import enum
import sys
import types
from dataclasses import dataclass, field

import pytest


class _Type(enum.IntEnum):
    NOT_SET, BOOL, INTEGER, DOUBLE, STRING = 0, 1, 2, 3, 4
    BYTE_ARRAY, BOOL_ARRAY, INTEGER_ARRAY, DOUBLE_ARRAY, STRING_ARRAY = 5, 6, 7, 8, 9


class _Parameter:
    Type = _Type

    def __init__(self, name, type_=None, value=None):
        self.name, self.value = name, value
        self.type_ = type_ if isinstance(type_, _Type) else _Type.NOT_SET


@dataclass
class _Result:
    successful: bool = False
    reason: str = ""


@dataclass
class _Msg:
    kwargs: dict = field(default_factory=dict)

    def __init__(self, **kwargs):
        self.kwargs = kwargs


class _Logger:
    def __init__(self):
        self.errors = []

    def error(self, message, **_):
        self.errors.append(message)


class _Node:
    """rclpy.node.Node reduced to what the adapter calls."""

    def __init__(self, name):
        self._name, self.params, self.callbacks, self.logger = name, {}, [], _Logger()
        self.declared, self.subscriptions = [], []
        self.declare_parameter("use_sim_time", False)

    def get_name(self):
        return self._name

    def get_namespace(self):
        return "/"

    def _callbacks(self, params):
        for callback in self.callbacks:
            result = callback(params)
            if not result.successful:
                return result
        for p in params:
            self.params[p.name] = p
        return _Result(True)

    def declare_parameter(self, name, value=None, descriptor=None, ignore_override=False):
        self.declared.append((name, value, ignore_override))
        param = _Parameter(name, value if isinstance(value, _Type) else None,
                           None if isinstance(value, _Type) else value)
        result = self._callbacks([param])
        if not result.successful:
            raise ValueError(f"declaration refused: {result.reason}")
        return param

    def get_parameter(self, name):
        return self.params[name]

    def set_parameters(self, params):
        return [self._callbacks([p]) for p in params]

    def set_parameters_atomically(self, params):
        return self._callbacks(params)

    def add_on_set_parameters_callback(self, callback):
        self.callbacks.insert(0, callback)

    def create_subscription(self, msg_type, topic, callback, qos):
        self.subscriptions.append((topic, callback))

    def get_logger(self):
        return self.logger

    def destroy_node(self):
        pass


@pytest.fixture
def rclpy_stub(monkeypatch):
    mods = {name: types.ModuleType(name) for name in (
        "rclpy", "rclpy.node", "rclpy.parameter", "rclpy.clock", "rclpy.executors", "rclpy.qos",
        "rcl_interfaces", "rcl_interfaces.msg", "std_msgs", "std_msgs.msg")}
    mods["std_msgs.msg"].String = _Msg
    rclpy = mods["rclpy"]
    rclpy.ok, rclpy.init, rclpy.try_shutdown = (lambda: True), (lambda args: None), lambda: None
    mods["rclpy.node"].Node = _Node
    mods["rclpy.parameter"].Parameter = _Parameter
    mods["rclpy.clock"].Clock = lambda clock_type: ("clock", clock_type)
    mods["rclpy.clock"].ClockType = types.SimpleNamespace(STEADY_TIME="steady")
    mods["rclpy.executors"].ExternalShutdownException = RuntimeError
    mods["rclpy.executors"].SingleThreadedExecutor = lambda: types.SimpleNamespace(
        add_node=lambda n: None, remove_node=lambda n: None)
    qos = mods["rclpy.qos"]
    qos.QoSProfile, qos.qos_profile_sensor_data = _Msg, "sensor"
    qos.DurabilityPolicy = types.SimpleNamespace(TRANSIENT_LOCAL="tl")
    qos.ReliabilityPolicy = types.SimpleNamespace(RELIABLE="rel")
    msg = mods["rcl_interfaces.msg"]
    msg.FloatingPointRange = msg.IntegerRange = msg.ParameterDescriptor = _Msg
    msg.SetParametersResult = _Result
    for name, module in mods.items():
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.delitem(sys.modules, "robot_control.bus.rclpy_backend", raising=False)
    from robot_control.bus.node import create_node

    yield lambda *args: create_node("ctl", ["prog", "--ros-args", *args], backend="rclpy")
    sys.modules.pop("robot_control.bus.rclpy_backend", None)  # bound to the stand-in: drop it


def test_overrides_are_the_stores_and_declaring_skips_validators(rclpy_stub):
    node = rclpy_stub("-p", "kp:=[50, 60]", "-p", "gain:=3")
    refused = []
    node.add_parameter_validator(lambda ch: refused.append(ch) or "never at declaration")
    assert node.declare_parameter("gain", 1.0, floating_point_range=(0, 5)) == 3.0
    assert node.declare_parameter("kp", [1.0, 1.0]) == [50.0, 60.0]
    assert node.declare_parameter("empty", []) == []
    assert refused == [] and node.backend == "rclpy"
    declared = {name: (value, ignore) for name, value, ignore in node._node.declared}
    assert declared["gain"] == (3.0, True) and declared["kp"] == ([50.0, 60.0], True)
    assert declared["empty"][0] == _Type.DOUBLE_ARRAY  # typed, then set to []
    assert node._node.params["empty"].value == []


def test_external_sets_pass_the_store_and_its_validators(rclpy_stub):
    node = rclpy_stub()
    node.declare_parameter("mode", "a")
    node.add_parameter_validator(lambda ch: "mode must be a or b"
                                 if ch.get("mode", "a") not in ("a", "b") else None)
    seen = []
    node.add_parameter_listener(lambda new, old: seen.append((new, old)))
    # what ros2 param set reaches: rclpy's set path, which runs the on-set callback
    result = node._node.set_parameters([_Parameter("mode", _Type.STRING, "c")])[0]
    assert (result.successful, result.reason) == (False, "mode must be a or b")
    assert node.get_parameter("mode") == "a" and seen == []
    assert node._node.set_parameters([_Parameter("mode", _Type.STRING, "b")])[0].successful
    assert node.get_parameter("mode") == "b" and seen == [({"mode": "b"}, {"mode": "a"})]
    from robot_control.bus.node import ParameterError

    with pytest.raises(ParameterError, match="a or b"):
        node.set_parameters({"mode": "z"})
    with pytest.raises(ParameterError, match="not declared"):
        node.set_parameters({"other": 1})


def test_a_raising_callback_is_logged_not_raised(rclpy_stub):
    node = rclpy_stub()
    node.create_subscription("std_msgs/msg/String", "chatter", lambda m: 1 / 0)
    topic, callback = node._node.subscriptions[0]
    callback("msg")
    assert topic == "chatter" and "ZeroDivisionError" in node._node.logger.errors[0]
