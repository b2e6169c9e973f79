"""ROS 2 services over plain Cyclone DDS, as rmw_cyclonedds carries them.

A service ``/a/srv`` is two topics: requests on ``rq/a/srvRequest`` and replies on
``rr/a/srvReply``. Every sample starts with rmw's request header (uint64 guid, int64 seq): the
client puts its request writer's instance handle and a sequence number there, the server
echoes both in the reply, and the client keeps only replies carrying its own guid. The reader
and writer of one client (or server) carry the same ``clientid=…;`` (``serviceid=…;``) in
USER_DATA, which lets a server check, before replying, that the client's reply reader is
already matched — otherwise a volatile reply would be lost (rmw_send_response does the same).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable

from cyclonedds.core import InstanceState, Policy, ReadCondition, SampleState, ViewState, WaitSet
from cyclonedds.internal import InvalidSample

from robot_control.bus.dds import config as dds_config
from robot_control.bus.dds.config import QosProfile
from robot_control.bus.dds.context import delete_entity
from robot_control.bus.dds.messages import SERVICE_TYPES, dds_topic_name

REPLY_MATCH_TIMEOUT_S = 1.0  # how long a server holds a reply for a client not yet matched
REPLY_RETRY_S = 0.005


class ServiceError(RuntimeError):
    """A service call that could not be completed (no server, timeout)."""


def user_data_value(qos, key: str) -> str | None:
    """The value of ``key`` in an endpoint's ``key=value;`` USER_DATA (rmw's encoding); None when
    the endpoint has no USER_DATA (Cyclone then gives None for the policy) or no such key."""
    try:
        policy = qos[Policy.Userdata]
    except (KeyError, TypeError):
        return None
    data = getattr(policy, "data", None)
    if not data:
        return None
    for item in data.decode("utf-8", "replace").split(";"):
        name, sep, value = item.partition("=")
        if sep and name == key:
            return value
    return None


def service_topics(service: str) -> tuple[str, str]:
    """(request topic, reply topic) of a fully qualified service name."""
    return dds_topic_name(service, "request"), dds_topic_name(service, "reply")


class ServiceServer:
    """Answers one service: handler(request) -> response, in the node's executor thread (a
    handler that returns None answers later with ``respond``)."""

    def __init__(self, context, executor, node_key: int, srv_type: str, service: str,
                 handler: Callable[[object], object],
                 profile: QosProfile = dds_config.SERVICES_DEFAULT):
        self.service = service
        self.srv_type = srv_type
        self._context = context
        self._executor = executor
        self._node_key = node_key
        self._handler = handler
        self._pending: list[tuple[float, object, str | None]] = []
        self._retry_timer = None
        rq, rr = service_topics(service)
        ident = f"serviceid={context.client_service_id()};"
        self.reader = context.reader(rq, srv_type + "_Request", profile, ident)
        self.writer = context.writer(rr, srv_type + "_Response", profile, ident)
        context.associate(node_key, reader=self.reader, writer=self.writer)
        self._key = executor.add_reader(self.reader, self._on_request, f"service {service}")

    def set_screen(self, screen) -> None:
        """screen(serialised request, its sample info): False if it must not be decoded."""
        self._executor.set_screen(self._key, screen)

    def _on_request(self, request) -> None:
        response = self._handler(request)
        if response is not None:  # None: the handler answers later, through respond()
            self.respond(request, response)

    def respond(self, request, response) -> None:
        """Send ``response`` to the client of ``request``."""
        response.guid, response.seq = request.guid, request.seq
        client = self._client_id(request.sample_info.publication_handle)
        if client is None or self._client_reader_matched(client):
            self.writer.write(response)
            return
        self._pending.append((time.monotonic() + REPLY_MATCH_TIMEOUT_S, response, client))
        if self._retry_timer is None:
            self._retry_timer = self._executor.create_timer(REPLY_RETRY_S, self._retry)

    def _client_id(self, publication_handle: int) -> str | None:
        """The clientid of the request's writer; None when it has none (not an rmw client)."""
        try:
            endpoint = self.reader.get_matched_publication_data(publication_handle)
        except Exception:
            return None
        return None if endpoint is None else user_data_value(endpoint.qos, "clientid")

    def _client_reader_matched(self, client: str) -> bool:
        for handle in self.writer.get_matched_subscriptions():
            endpoint = self.writer.get_matched_subscription_data(handle)
            if endpoint is not None and user_data_value(endpoint.qos, "clientid") == client:
                return True
        return False

    def _retry(self) -> None:
        now = time.monotonic()
        keep = []
        for deadline, response, client in self._pending:
            if self._client_reader_matched(client):
                self.writer.write(response)
            elif now < deadline:
                keep.append((deadline, response, client))
        self._pending = keep
        if not keep and self._retry_timer is not None:
            self._retry_timer.cancel()
            self._retry_timer = None

    def destroy(self) -> None:
        self._executor.remove_reader(self._key)
        if self._retry_timer is not None:
            self._retry_timer.cancel()
        self._context.dissociate(self._node_key, reader=self.reader, writer=self.writer)
        delete_entity(self.reader)
        delete_entity(self.writer)


class ServiceClient:
    """Calls one service synchronously from the caller's thread (for tools, not node callbacks)."""

    _sequence = itertools.count(1)

    def __init__(self, context, srv_type: str, service: str,
                 profile: QosProfile = dds_config.SERVICES_DEFAULT):
        if srv_type not in SERVICE_TYPES:
            raise KeyError(f"unknown service type {srv_type!r}; known: {sorted(SERVICE_TYPES)}")
        self.service = service
        self.request_type, self.response_type = SERVICE_TYPES[srv_type]
        rq, rr = service_topics(service)
        ident = f"clientid={context.client_service_id()};"
        self.writer = context.writer(rq, srv_type + "_Request", profile, ident)
        self.reader = context.reader(rr, srv_type + "_Response", profile, ident)
        self._guid = self.writer.instance_handle & 0xFFFF_FFFF_FFFF_FFFF  # uint64 on the wire
        self._condition = ReadCondition(
            self.reader, SampleState.Any | ViewState.Any | InstanceState.Any)
        self._waitset = WaitSet(context.participant)
        self._waitset.attach(self._condition)

    def service_is_ready(self) -> bool:
        """A server's request reader and reply writer are both matched (rmw's fallback test)."""
        return bool(self.writer.get_matched_subscriptions()) and \
            bool(self.reader.get_matched_publications())

    def wait_for_service(self, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while not self.service_is_ready():
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
        return True

    def call(self, request, timeout_s: float = 5.0):
        """Send request (fields set, header filled here) and wait for its reply."""
        if not self.wait_for_service(timeout_s):
            raise ServiceError(f"service {self.service} is not available")
        request.guid = self._guid
        request.seq = next(self._sequence)
        self.writer.write(request)
        deadline = time.monotonic() + timeout_s
        while True:
            for sample in self.reader.take(N=16, condition=self._condition):
                if isinstance(sample, InvalidSample):
                    continue
                if sample.guid == request.guid and sample.seq == request.seq:
                    return sample
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ServiceError(f"no reply from {self.service} within {timeout_s} s")
            self._waitset.wait(int(min(remaining, 0.1) * 1e9))

    def destroy(self) -> None:
        self._waitset.detach(self._condition)
        delete_entity(self.writer)
        delete_entity(self.reader)
