"""Same-process delivery for the rclpy container: what one of its nodes publishes to another is
taken and handed to the subscriber right after the publishing callback, and the idle work the
callbacks left (Node.when_idle) runs once that chain is through."""

from __future__ import annotations

from collections.abc import Callable

from robot_control.bus.ros.executor import run_subscription


class SameProcessChain:
    """The subscriptions of a container's nodes on the topics its nodes just published, taken
    from directly after each callback until nothing new was sent.

    rclpy's executor rebuilds its wait set over every entity of every node for each callback it
    runs (hundreds of µs with five nodes' services and QoS event handlers), so a message from
    one node to another would wait a whole round. Cyclone DDS delivers to readers of the same
    participant inside the write, so the message is there to take when publish returns; taking
    it here (rclpy's own take, so a subscription never gets a message twice) runs the next link
    of a chain at once. Only the topics published since the last delivery are tried (a take
    costs µs; trying every subscription after every spin cost a 1 kHz stack a fifth of its
    period); a remote publisher's message is the executor's, as any other.
    """

    #: rounds of deliveries after one callback (a chain longer than this waits for the
    #: executor, so timers are never starved)
    MAX_ROUNDS = 8

    def __init__(self) -> None:
        self._subs: list = []
        self._by_topic: dict[str, list] | None = {}
        self._sent: dict[str, None] = {}  # topics published since the last delivery, in order
        self._deferred: list[Callable[[], None]] = []  # nodes' idle work (Node.when_idle)

    def defer(self, work: Callable[[], None]) -> None:
        """Run ``work`` once the chain this callback started is through."""
        self._deferred.append(work)

    def sent(self, topic: str) -> None:
        """A node of the container published on ``topic``."""
        self._sent[topic] = None

    def subscribed(self, sub) -> None:
        self._subs.append(sub)
        self._by_topic = None

    def unsubscribed(self, sub) -> None:
        if sub in self._subs:
            self._subs.remove(sub)
        self._by_topic = None

    def run(self) -> None:
        """Hand what the container's nodes sent each other to its subscribers' callbacks, then
        run the idle work they left."""
        self._deliver()
        work, self._deferred = self._deferred, []
        for w in work:
            w()

    def _subscribers(self) -> dict[str, list]:
        if self._by_topic is None:  # (a callback may subscribe or unsubscribe)
            self._by_topic = {}
            for sub in self._subs:
                self._by_topic.setdefault(sub.topic_name, []).append(sub)
        return self._by_topic

    def _deliver(self) -> None:
        for _ in range(self.MAX_ROUNDS):
            if not self._sent:
                return
            topics, self._sent = self._sent, {}
            for topic in topics:
                for sub in self._subscribers().get(topic, ()):
                    if run_subscription(sub):
                        self._sent[topic] = None  # one message a round: there may be more


class ChainPublisher:
    """An rclpy publisher of a container's node that tells the chain what it sent."""

    def __init__(self, publisher, chain: SameProcessChain) -> None:
        self._publisher = publisher
        self._chain = chain
        self._topic = publisher.topic_name

    def publish(self, msg) -> None:
        self._publisher.publish(msg)
        self._chain.sent(self._topic)

    def __getattr__(self, name: str):  # topic_name, get_subscription_count, destroy, …
        return getattr(self._publisher, name)
