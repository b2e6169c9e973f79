"""A goal request read as the bytes its client sent, from rmw_cyclonedds' reader, before the rmw
decodes it.

rclpy's take of a service request has rcl take it, and rmw_cyclonedds decodes the whole request
into the C message there with the GIL held (rclpy releases the GIL only around rcl_wait): about
0.1 s for a 250 000-point goal on a quiet machine, more under load, while nothing else of the
process runs. Cyclone DDS keeps a received sample serialised until it is taken (rmw_cyclonedds'
serdata holds the bytes), and libddsc's C API reads it without decoding: ``dds_readcdr`` (a
reference to the first waiting sample), ``ddsi_serdata_size``, ``ddsi_serdata_to_ser``.
:class:`RawGoalRequests` finds the server's request reader (the DDS topic
``rq<action>/_action/send_goalRequest`` in the library's entity tree), reads the first waiting
request's size and first bytes (:meth:`RawGoalRequests.peek`), takes a refused one away
undecoded (``dds_takecdr``: the rmw never sees it) and answers it through rcl
(``rcl_action_send_goal_response``, with the request id rmw_cyclonedds makes: the client's guid
from the request header, then the request writer's instance handle, and the sequence number).
ctypes' calls into a CDLL release the GIL. Only on rmw_cyclonedds (:func:`raw_goal_requests`
says None elsewhere; goals are then screened from the C message, bus/ros/goal_screen.py).
"""

from __future__ import annotations

import ctypes
import struct
from collections.abc import Callable
from dataclasses import dataclass

from robot_control.bus.cdr_prefix import GOAL_START, TrajectorySizes, request_header_bytes
from robot_control.bus.cdr_prefix import trajectory_sizes as cdr_trajectory_sizes

#: the bytes of a request read for its sizes (the goal id, the trajectory's header and up to
#: 64 names of 1 kB); a request whose names run past them is screened from the C message
HEAD_BYTES = 65536
#: libddsc's pseudo handle of the library itself, the root of its entity tree
DDS_CYCLONEDDS_HANDLE = 0x7FFF0000 + 256
DDS_ANY_STATE = 0x7F  # any sample, view and instance state
#: how deep the entity tree is walked: domains, participants, subscribers, readers (not the
#: readers' conditions)
TREE_DEPTH = 4
CHILDREN = 4096


class SampleInfo(ctypes.Structure):  # dds_sample_info_t (Cyclone DDS 0.10)
    _fields_ = [("sample_state", ctypes.c_int), ("view_state", ctypes.c_int),
                ("instance_state", ctypes.c_int), ("valid_data", ctypes.c_bool),
                ("source_timestamp", ctypes.c_int64), ("instance_handle", ctypes.c_uint64),
                ("publication_handle", ctypes.c_uint64),
                ("disposed_generation_count", ctypes.c_uint32),
                ("no_writers_generation_count", ctypes.c_uint32),
                ("sample_rank", ctypes.c_uint32), ("generation_rank", ctypes.c_uint32),
                ("absolute_generation_rank", ctypes.c_uint32)]


class RequestId(ctypes.Structure):  # rmw_request_id_t
    _fields_ = [("writer_guid", ctypes.c_int8 * 16), ("sequence_number", ctypes.c_int64)]


class _Libraries:
    """The C functions used, from the libraries rclpy's rmw_cyclonedds already loaded."""

    def __init__(self) -> None:
        dds = ctypes.CDLL("libddsc.so.0")
        action = ctypes.CDLL("librcl_action.so")
        entity, ptr, size = ctypes.c_int32, ctypes.c_void_p, ctypes.c_size_t
        self.get_children = _declare(dds.dds_get_children, entity, entity, ptr, size)
        self.get_topic = _declare(dds.dds_get_topic, entity, entity)
        self.get_subscriber = _declare(dds.dds_get_subscriber, entity, entity)
        self.get_name = _declare(dds.dds_get_name, ctypes.c_int32, entity, ctypes.c_char_p, size)
        info = ctypes.POINTER(SampleInfo)
        self.readcdr = _declare(dds.dds_readcdr, ctypes.c_int32, entity,
                                ctypes.POINTER(ptr), ctypes.c_uint32, info, ctypes.c_uint32)
        self.takecdr = _declare(dds.dds_takecdr, ctypes.c_int32, entity,
                                ctypes.POINTER(ptr), ctypes.c_uint32, info, ctypes.c_uint32)
        self.serdata_size = _declare(dds.ddsi_serdata_size, ctypes.c_uint32, ptr)
        self.serdata_to_ser = _declare(dds.ddsi_serdata_to_ser, None, ptr, size, size, ptr)
        self.serdata_unref = _declare(dds.ddsi_serdata_unref, None, ptr)
        self.send_goal_response = _declare(action.rcl_action_send_goal_response, ctypes.c_int,
                                           ptr, ctypes.POINTER(RequestId), ptr)
        self.action_name = _declare(action.rcl_action_server_get_action_name, ctypes.c_char_p,
                                    ptr)


def _declare(function, restype, *argtypes):
    function.restype = restype
    function.argtypes = argtypes
    return function


@dataclass
class RawRequest:
    """A waiting goal request, read and not taken: its size, first bytes and sender; it holds
    a reference to the sample until :meth:`RawGoalRequests.take` or :meth:`release`."""

    serdata: int
    nbytes: int
    head: bytes
    publication_handle: int

    def trajectory_sizes(self, max_names: int) -> TrajectorySizes | None:
        """The sizes the goal's trajectory declares (DeclaredMotion), None past the head."""
        return cdr_trajectory_sizes(self.head, GOAL_START, max_names)

    def request_id(self) -> RequestId | None:
        """The rmw_request_id_t rmw_cyclonedds gives this request, or None (no header)."""
        header = request_header_bytes(self.head)
        if header is None:
            return None
        guid, sequence, _ = header
        request_id = RequestId()
        ctypes.memmove(request_id.writer_guid, struct.pack("=QQ", guid, self.publication_handle),
                       16)
        request_id.sequence_number = sequence
        return request_id

    @property
    def goal_id(self) -> bytes:
        header = request_header_bytes(self.head)
        return bytes(16) if header is None else header[2]


class RawGoalRequests:
    """The serialised goal requests waiting at one action server's DDS reader."""

    def __init__(self, libraries: _Libraries, reader: int) -> None:
        self._c = libraries
        self._reader = reader
        self._buffer = ctypes.create_string_buffer(HEAD_BYTES)

    def peek(self) -> RawRequest | None:
        """The first waiting request, read undecoded (it stays waiting), or None (none, or not
        a request with data: the rmw's take deals with it)."""
        serdata, info = ctypes.c_void_p(), SampleInfo()
        if self._c.readcdr(self._reader, ctypes.byref(serdata), 1, ctypes.byref(info),
                           DDS_ANY_STATE) != 1:
            return None
        if not info.valid_data:
            self._c.serdata_unref(serdata)
            return None
        size = self._c.serdata_size(serdata)
        head = min(size, HEAD_BYTES)
        self._c.serdata_to_ser(serdata, 0, head, self._buffer)
        return RawRequest(serdata.value, size, self._buffer.raw[:head], info.publication_handle)

    def release(self, request: RawRequest) -> None:
        """Drop the reference :meth:`peek` took (the request stays for the rmw's take)."""
        self._c.serdata_unref(ctypes.c_void_p(request.serdata))

    def take(self, request: RawRequest) -> bool:
        """Take ``request`` away undecoded (False: the first waiting one is no longer it, and
        nothing was taken); its reference is dropped either way."""
        serdata, info = ctypes.c_void_p(), SampleInfo()
        try:
            if self._c.readcdr(self._reader, ctypes.byref(serdata), 1, ctypes.byref(info),
                               DDS_ANY_STATE) != 1:
                return False
            self._c.serdata_unref(serdata)
            if serdata.value != request.serdata:
                return False
            taken = self._c.takecdr(self._reader, ctypes.byref(serdata), 1, ctypes.byref(info),
                                    DDS_ANY_STATE)
            if taken == 1:
                self._c.serdata_unref(serdata)
            return taken == 1
        finally:
            self.release(request)

    def respond(self, server_pointer: int, request_id: RequestId, response) -> bool:
        """Send ``response`` (a C SendGoal response's address) to a request taken here."""
        return self._c.send_goal_response(server_pointer, ctypes.byref(request_id),
                                          response) == 0


def raw_goal_requests(server_pointer: int, resolve_service_name: Callable[[str], str]
                      ) -> RawGoalRequests | None:
    """The raw reader of the goal requests of the rcl action server at ``server_pointer``
    (rclpy's ``ActionServer.pointer``; its node's ``resolve_service_name``), or None: not
    rmw_cyclonedds, no libddsc, or not exactly one such reader in this process."""
    from rclpy.utilities import get_rmw_implementation_identifier

    if get_rmw_implementation_identifier() != "rmw_cyclonedds_cpp":
        return None
    try:
        libraries = _Libraries()
    except (OSError, AttributeError):
        return None
    name = libraries.action_name(server_pointer)
    if not name:
        return None
    # rcl_action names the service so and rcl resolves it as a service; rmw_cyclonedds'
    # request topic is "rq" + that + "Request"
    service = resolve_service_name(f"{name.decode()}/_action/send_goal")
    wanted = f"rq{service}Request".encode()
    readers = [e for e in _entities(libraries, DDS_CYCLONEDDS_HANDLE, TREE_DEPTH)
               if _topic_name(libraries, e) == wanted and libraries.get_subscriber(e) > 0]
    return RawGoalRequests(libraries, readers[0]) if len(readers) == 1 else None


def _entities(c: _Libraries, root: int, depth: int) -> list[int]:
    """The entities under ``root``, ``depth`` levels down at most."""
    if depth == 0:
        return []
    children = (ctypes.c_int32 * CHILDREN)()
    count = c.get_children(root, children, CHILDREN)
    found: list[int] = []
    for child in children[:max(0, min(count, CHILDREN))]:
        found.append(child)
        found.extend(_entities(c, child, depth - 1))
    return found


def _topic_name(c: _Libraries, entity: int) -> bytes | None:
    topic = c.get_topic(entity)
    if topic <= 0:
        return None
    name = ctypes.create_string_buffer(512)
    return name.value if c.get_name(topic, name, len(name)) >= 0 else None
