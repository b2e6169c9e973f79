"""Same-process delivery for the rclpy container: what one of its nodes publishes to another is
taken and handed to the subscriber right after the publishing callback, and the idle work the
callbacks left (Node.when_idle) runs once that chain is through."""

from __future__ import annotations

from collections.abc import Callable

from rclpy.exceptions import InvalidHandle
from rclpy.subscription import Subscription


class SameProcessChain:
    """The subscriptions of a container's nodes on topics another of its nodes publishes, taken
    from directly after each callback until nothing new is there.

    rclpy's executor rebuilds its wait set over every entity of every node for each callback it
    runs (hundreds of µs with five nodes' services and QoS event handlers), so a message from
    one node to another would wait a whole round. Cyclone DDS delivers to readers of the same
    participant inside the write, so the message is there to take when publish returns; taking
    it here (rclpy's own take, so a subscription never gets a message twice) runs the next link
    of a chain at once. Remote publishers' messages on those topics are taken the same way.
    """

    #: rounds over the hot subscriptions after one callback (a chain longer than this waits for
    #: the executor, so timers are never starved)
    MAX_ROUNDS = 8

    def __init__(self) -> None:
        self._topics: set[str] = set()
        self._subs: list = []
        self._hot: list | None = []
        self._deferred: list[Callable[[], None]] = []  # nodes' idle work (Node.when_idle)

    def defer(self, work: Callable[[], None]) -> None:
        """Run ``work`` once the chain this callback started is through."""
        self._deferred.append(work)

    def published(self, topic: str) -> None:
        self._topics.add(topic)
        self._hot = None

    def subscribed(self, sub) -> None:
        self._subs.append(sub)
        self._hot = None

    def unsubscribed(self, sub) -> None:
        if sub in self._subs:
            self._subs.remove(sub)
        self._hot = None

    def run(self) -> None:
        """Hand what the container's nodes sent each other to its subscribers' callbacks, then
        run the idle work they left."""
        self._deliver()
        work, self._deferred = self._deferred, []
        for w in work:
            w()

    def _deliver(self) -> None:
        for _ in range(self.MAX_ROUNDS):
            if self._hot is None:  # (a callback may subscribe or unsubscribe)
                self._hot = [s for s in self._subs if s.topic_name in self._topics]
            delivered = False
            for sub in self._hot:
                try:
                    with sub.handle:
                        taken = sub.handle.take_message(sub.msg_type, sub.raw)
                except InvalidHandle:  # destroyed by an earlier callback of this round
                    continue
                if taken is not None:
                    delivered = True
                    if sub._callback_type == Subscription.CallbackType.WithMessageInfo:
                        sub.callback(*taken)
                    else:
                        sub.callback(taken[0])
            if not delivered:
                return
