"""A trajectory goal's sizes read from the C message rcl took, before rclpy converts it to Python.

rclpy's ActionServer takes a goal request in two steps: rcl takes it into the C message (the rmw
deserialises it in C: about 0.1 s for 250 000 points) and rclpy then converts that into Python
objects, one per point and per array (3–6 s for 250 000 points, the GIL held: nothing else of
the process runs). The node's size caps must apply before the second step. rclpy's
``take_goal_request(pymsg_type)`` finds the C functions that create, destroy and convert the
message as capsules on ``type(pymsg_type)`` (the rosidl_generator_py metaclass:
``_CREATE_ROS_MESSAGE``, ``_DESTROY_ROS_MESSAGE``, ``_CONVERT_TO_PY``). :class:`GoalScreen`
hands it an object whose type has the real create and destroy and its own conversion: a ctypes
callback that reads the counts the C message declares (ctypes layouts of the rosidl C structs),
asks the node (``ActionHandler.screen_goal``), and then either runs the real conversion or
returns a request holding only the goal id, remembering the reason for the server.

The layouts are those of rosidl's C structs (a sequence or string is data pointer, size,
capacity; a JointTrajectoryPoint four double sequences and a Duration). They are built from the
message's field list and checked when the server starts, against a request the real converter
wrote (:func:`goal_screen`): a layout that does not match turns screening off with a warning,
and goals are then converted first and checked after, as rclpy does.
"""

from __future__ import annotations

import ctypes
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np

from robot_control.bus.cdr_prefix import GOAL_START, DeclaredMotion, TrajectorySizes

#: screened goals remembered until the server asks (a refused one whose id was already in use
#: is dropped by rclpy before it asks: the oldest go)
REMEMBERED = 16
#: the fewest serialised bytes of an element of any other sequence of the goal (a tolerance: a
#: string's length and NUL and three doubles; a multi-DOF point: three lengths and a Duration)
MIN_ELEMENT_BYTES = 20


class _Sequence(ctypes.Structure):  # rosidl_runtime_c sequences and strings alike
    _fields_ = [("data", ctypes.c_void_p), ("size", ctypes.c_size_t),
                ("capacity", ctypes.c_size_t)]


class _Stamp(ctypes.Structure):  # builtin_interfaces Time and Duration
    _fields_ = [("sec", ctypes.c_int32), ("nanosec", ctypes.c_uint32)]


class _Header(ctypes.Structure):
    _fields_ = [("stamp", _Stamp), ("frame_id", _Sequence)]


class _Trajectory(ctypes.Structure):  # trajectory_msgs JointTrajectory and MultiDOFJointTrajectory
    _fields_ = [("header", _Header), ("joint_names", _Sequence), ("points", _Sequence)]


#: a JointTrajectoryPoint: positions, velocities, accelerations, effort, time_from_start
POINT_WORDS = 13  # 4 × (pointer, size, capacity) + a Duration, in 8-byte words
POINT_SIZES = (1, 4, 7, 10)  # the words holding the four sequences' sizes
POINT_FIELDS = {"positions": "sequence<double>", "velocities": "sequence<double>",
                "accelerations": "sequence<double>", "effort": "sequence<double>",
                "time_from_start": "builtin_interfaces/Duration"}
_FIELD_LAYOUTS = {"trajectory_msgs/JointTrajectory": _Trajectory,
                  "trajectory_msgs/MultiDOFJointTrajectory": _Trajectory,
                  "builtin_interfaces/Duration": _Stamp}


def _goal_layout(goal_class) -> type | None:
    """The ctypes layout of a goal whose first field is a JointTrajectory, or None."""
    fields = list(goal_class.get_fields_and_field_types().items())
    if not fields or fields[0] != ("trajectory", "trajectory_msgs/JointTrajectory"):
        return None
    layout = []
    for name, kind in fields:
        ctype = _Sequence if kind.startswith("sequence<") else _FIELD_LAYOUTS.get(kind)
        if ctype is None:
            return None
        layout.append((name, ctype))
    return type("GoalLayout", (ctypes.Structure,), {"_fields_": layout})


class CGoal:
    """A taken goal request's declared sizes (:class:`~robot_control.bus.cdr_prefix.DeclaredMotion`),
    read from its C message at ``address``."""

    def __init__(self, request_layout: type, address: int) -> None:
        self.request = request_layout.from_address(address)
        self.trajectory = self.request.goal.trajectory

    @property
    def goal_id(self) -> bytes:
        return bytes(self.request.goal_id)

    def trajectory_sizes(self, max_names: int) -> TrajectorySizes | None:
        names = self.trajectory.joint_names
        if names.size > max_names:
            return TrajectorySizes(names.size, 0, None)
        strings = (_Sequence * names.size).from_address(names.data) if names.size else ()
        return TrajectorySizes(names.size, max((s.size + 1 for s in strings), default=0),
                               self.trajectory.points.size)

    @property
    def nbytes(self) -> int:
        """At least the bytes its CDR serialisation takes (padding not counted)."""
        t = self.trajectory
        names = (_Sequence * t.joint_names.size).from_address(t.joint_names.data) \
            if t.joint_names.size else ()
        total = GOAL_START + 8 + 5 + t.header.frame_id.size + 4 + sum(5 + s.size for s in names)
        total += 4 + self.points_bytes()
        for name, ctype in self.request.goal._fields_[1:]:
            if ctype is _Sequence:
                total += 4 + MIN_ELEMENT_BYTES * getattr(self.request.goal, name).size
            elif ctype is _Trajectory:
                total += 21 + MIN_ELEMENT_BYTES * getattr(self.request.goal, name).points.size
        return total

    def points_bytes(self) -> int:
        """The serialised bytes of the trajectory's points: four lengths and a Duration each,
        8 bytes a value (one pass over the C points' sizes, not a Python object a point)."""
        points = self.trajectory.points
        if not points.size:
            return 0
        words = np.ctypeslib.as_array(
            (ctypes.c_uint64 * (POINT_WORDS * points.size)).from_address(points.data))
        values = int(words.reshape(points.size, POINT_WORDS)[:, POINT_SIZES].sum())
        return 24 * points.size + 8 * values


class _TakeType:
    """What rclpy's take reads its C functions from (the capsules are set per server)."""


class GoalScreen:
    """The ``pymsg_type`` a screening server passes to ``take_goal_request`` (:attr:`take_type`)
    and the reasons of the goals it refused (:meth:`reason`)."""

    def __init__(self, request_class, request_layout: type,
                 screen: Callable[[DeclaredMotion], str | None], log) -> None:
        meta = type(request_class)
        self._request_class = request_class
        self._layout = request_layout
        self._screen = screen
        self._log = log
        self._convert = _c_function(meta._CONVERT_TO_PY, ctypes.py_object, ctypes.c_void_p)
        self._refused: OrderedDict[int, tuple[object, str]] = OrderedDict()
        self.interrupted: BaseException | None = None
        self._callback = ctypes.CFUNCTYPE(ctypes.py_object, ctypes.c_void_p)(self._take)
        take = type("ScreenedTake", (_TakeType,), {
            "_CREATE_ROS_MESSAGE": meta._CREATE_ROS_MESSAGE,
            "_DESTROY_ROS_MESSAGE": meta._DESTROY_ROS_MESSAGE,
            "_CONVERT_TO_PY": _capsule(ctypes.cast(self._callback, ctypes.c_void_p).value)})
        self.take_type = take()

    def _take(self, address: int):
        """rclpy's conversion of a taken request: the real one unless its sizes refuse it.
        Never raises (rclpy would be handed NULL)."""
        try:
            goal = CGoal(self._layout, address)
            reason = self._screen(goal)
            if reason is None:
                return self._convert(address)
            return self._refusal(goal.goal_id, reason)
        except Exception as exc:  # not the sizes: the node refuses it, with the reason
            return self._refusal(bytes(self._layout.from_address(address).goal_id),
                                 f"the goal could not be read: {exc!r}")
        except BaseException as exc:  # (Ctrl-C) raised again once the take returns
            self.interrupted = exc
            return self._refusal(bytes(16), "interrupted")

    def refused_request(self, goal: DeclaredMotion, goal_id: bytes):
        """A request holding only ``goal_id`` when ``goal``'s declared sizes refuse it (the
        reason remembered for :meth:`reason`), else None (then it is taken the ordinary way)."""
        reason = self._screen(goal)
        return None if reason is None else self._refusal(goal_id, reason)

    def _refusal(self, goal_id: bytes, reason: str):
        request = self._request_class()
        request.goal_id.uuid = list(goal_id)
        self._refused[id(request.goal)] = (request.goal, reason)
        while len(self._refused) > REMEMBERED:
            self._refused.popitem(last=False)
        return request

    def reason(self, goal, forget: bool = False) -> str | None:
        """Why ``goal`` (a goal this screen returned in place of a request) was refused, or
        None for a goal converted as it came; ``forget``: the server is done with it."""
        entry = self._refused.get(id(goal))
        if entry is None or entry[0] is not goal:
            return None
        if forget:
            del self._refused[id(goal)]
        return entry[1]


def goal_screen(action_class, screen: Callable[[DeclaredMotion], str | None], log
                ) -> GoalScreen | None:
    """A GoalScreen for ``action_class``'s goal requests, or None (a warning logged) when its
    goal does not start with a JointTrajectory or the C layout read back differs from what the
    real converter wrote."""
    request_class = action_class.Impl.SendGoalService.Request
    goal_layout = _goal_layout(action_class.Goal)
    if goal_layout is None:
        return None
    layout = type("RequestLayout", (ctypes.Structure,), {
        "_fields_": [("goal_id", ctypes.c_uint8 * 16), ("goal", goal_layout)]})
    from trajectory_msgs.msg import JointTrajectoryPoint

    if JointTrajectoryPoint.get_fields_and_field_types() != POINT_FIELDS:
        log.warn("goals are converted before their sizes are checked: JointTrajectoryPoint's "
                 "fields are not the ones this package reads")
        return None
    problem = _layout_problem(request_class, layout)
    if problem is not None:
        log.warn(f"goals are converted before their sizes are checked: {problem}")
        return None
    return GoalScreen(request_class, layout, screen, log)


def _layout_problem(request_class, layout: type) -> str | None:
    """What the layout reads differently from a request the real converter wrote, or None."""
    from trajectory_msgs.msg import JointTrajectoryPoint

    request = request_class()
    request.goal_id.uuid = list(range(1, 17))
    request.goal.trajectory.header.frame_id = "base"
    request.goal.trajectory.joint_names = ["a", "bcd"]
    request.goal.trajectory.points = [
        JointTrajectoryPoint(positions=[1.0, 2.0], velocities=[3.0], effort=[4.0, 5.0, 6.0]),
        JointTrajectoryPoint(accelerations=[1.0])]
    expected = (bytes(range(1, 17)), TrajectorySizes(2, 4, 2), 8 * 7 + 24 * 2)
    try:
        with c_message(request) as address:
            goal = CGoal(layout, address)
            seen = (goal.goal_id, goal.trajectory_sizes(8), goal.points_bytes())
    except ValueError as exc:
        return str(exc)
    return None if seen == expected else f"the C layout read {seen}, not {expected}"


@contextmanager
def c_message(message) -> Iterator[int]:
    """The address of ``message`` written into its C message by rosidl's converter (destroyed
    on leaving); ValueError when the converter fails."""
    meta = type(type(message))
    if meta._CREATE_ROS_MESSAGE is None:
        meta.__import_type_support__()
    create = _c_function(meta._CREATE_ROS_MESSAGE, ctypes.c_void_p)
    destroy = _c_function(meta._DESTROY_ROS_MESSAGE, None, ctypes.c_void_p)
    convert = _c_function(meta._CONVERT_FROM_PY, ctypes.c_bool, ctypes.py_object,
                          ctypes.c_void_p)
    address = create()
    try:
        if not convert(message, address):
            raise ValueError(f"{type(message).__name__} could not be converted to C")
        yield address
    finally:
        destroy(address)


def _c_function(capsule, restype, *argtypes):
    """The C function a rosidl capsule holds, callable with the GIL held."""
    get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
        ("PyCapsule_GetPointer", ctypes.pythonapi))
    get_name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(
        ("PyCapsule_GetName", ctypes.pythonapi))
    return ctypes.PYFUNCTYPE(restype, *argtypes)(get_pointer(capsule, get_name(capsule)))


def _capsule(address: int):
    """A PyCapsule (no name, no destructor) holding ``address``."""
    new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)(
        ("PyCapsule_New", ctypes.pythonapi))
    return new(address, None, None)
