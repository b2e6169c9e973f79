"""Same-process delivery for the nodes of one container (rclcpp's intra-process communication).

Nodes composed into one process (a :class:`~robot_control.bus.dds.container.DdsContainer`) share
one executor and one :class:`IntraProcess` registry. A message one of them publishes reaches the
others' subscriptions of that topic by reference — no serialisation, no DDS — queued in the
subscription's keep-last buffer (its QoS depth) and handed to its callback by the shared executor
in publish order, after the publishing callback has returned (never inside ``publish``).

DDS still carries the topic for everyone outside the process (``ros2 topic echo``, rqt, bags,
another stack): the publisher's writer ignores readers of its own participant (Cyclone's
IgnoreLocal QoS, as rmw_cyclonedds sets for rclcpp's intra-process subscriptions), so its matched
subscriptions are exactly the remote ones, and it writes a sample only while one is matched.
Transient-local topics (latched /robot_description) stay on DDS: a late same-process subscriber
must still get the last sample, which only the DDS history keeps.

A published message belongs to the bus from then on: its publisher must not change it, and a
subscriber must not either (the others hold the same object), as with rclcpp's
``publish(std::unique_ptr)``.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(eq=False)
class LocalSubscription:
    """One subscription's same-process buffer (keep last ``depth``) and callback."""

    topic: str
    handler: Callable[[object], None]
    depth: int
    executor: object  # the shared Executor that runs the callback (its ``post``)
    label: str
    on_error: Callable[[str, BaseException], None] | None = None
    urgent: bool = False  # delivered as soon as the callback that published it returns
    queue: deque = field(default_factory=deque)
    closed: bool = False

    def __post_init__(self) -> None:
        self.queue = deque(maxlen=self.depth)

    def deliver(self, msg: object) -> None:
        """Queue msg (the oldest is dropped when the buffer is full) and tell the executor."""
        self.queue.append(msg)
        self.executor.post(self)


class IntraProcess:
    """The container's topics: which same-process subscriptions and publishers each has."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subscriptions: dict[str, list[LocalSubscription]] = {}
        self._publishers: dict[str, list[tuple[str, bytes]]] = {}

    def subscriptions(self, topic: str) -> list[LocalSubscription]:
        """The live list of a topic's same-process subscriptions (publishers keep a reference:
        a subscription made later is in it too)."""
        with self._lock:
            return self._subscriptions.setdefault(topic, [])

    def subscribe(self, topic: str, handler: Callable[[object], None], depth: int, executor,
                  label: str, on_error=None, urgent: bool = False) -> LocalSubscription:
        sub = LocalSubscription(topic, handler, depth, executor, label, on_error, urgent)
        with self._lock:
            self._subscriptions.setdefault(topic, []).append(sub)
        return sub

    def unsubscribe(self, sub: LocalSubscription) -> None:
        sub.closed = True
        with self._lock:
            subs = self._subscriptions.get(sub.topic, [])
            if sub in subs:
                subs.remove(sub)

    def add_publisher(self, topic: str, node: str, gid: bytes) -> None:
        """A publisher of ``node`` (fully qualified name) whose writer has ``gid``."""
        with self._lock:
            self._publishers.setdefault(topic, []).append((node, gid))

    def remove_publisher(self, topic: str, gid: bytes) -> None:
        with self._lock:
            self._publishers[topic] = [p for p in self._publishers.get(topic, []) if p[1] != gid]

    def publishers(self, topic: str) -> list[tuple[str, bytes]]:
        """(node, writer GID) of the topic's same-process publishers."""
        with self._lock:
            return list(self._publishers.get(topic, []))

    def publisher_count(self, topic: str) -> int:
        with self._lock:
            return len(self._publishers.get(topic, []))
