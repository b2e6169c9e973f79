"""The DDS backend's executor: one thread runs every callback of a node, like rclpy's
SingleThreadedExecutor.

Readers are attached to one Cyclone WaitSet through ReadConditions, each under a small integer
key, so a wake-up says directly which readers have data (no per-reader polling, no per-sample
Python listeners running on Cyclone's threads). A GuardCondition wakes the wait for shutdown or
when another thread adds work. Timers are wall-clock and precise: the executor sleeps in the
WaitSet until ~150 µs before a timer is due and then busy-waits (still dispatching any data that
arrives), because a sleeping thread on a loaded VM may wake milliseconds late.

Samples are taken in batches as serialised data and decoded one by one, so a sample that fails to
decode is the only one lost. A reader may have a sender filter, asked with each sample's
publication handle before it is decoded: a node can stop paying for the samples of a publisher it
no longer listens to (a flood). A reader whose samples woke the executor only to be filtered out
is muted: detached from the wait, it is polled on every spin instead, and re-armed as soon as it
delivers a sample again, so a flood of filtered samples costs a poll per spin rather than a
wake-up per sample. One dispatch handles at most ``MAX_DRAIN`` samples of a reader, so a flooded
reader cannot starve the timers.

Several nodes may share one executor (a container, dds_container.py): each registers through an
:class:`ExecutorView`, which remembers what its node added so that node can leave alone, and
reports its callbacks' errors in its node's log. Same-process messages (intra_process.py) are
posted to the executor and delivered in publish order before it waits again; an urgent
subscription's (``Node.create_subscription(urgent=True)``: the plant's command) right after the
callback that published it, ahead of the rest of its round.

Work a callback leaves for after its result went out (``call_when_idle``: a controller's status
messages and garbage collection once its command is sent, a plant's /tf once its state is) runs
when the same-process messages are all handled — after the rest of the control chain, whose
latency it would otherwise add to — and at the latest after one more round of them, so a chain
that never pauses (lockstep) cannot starve it.
"""

from __future__ import annotations

import ctypes as ct
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from cyclonedds.core import (
    DDSException,
    GuardCondition,
    InstanceState,
    ReadCondition,
    SampleState,
    ViewState,
)
from cyclonedds.core import WaitSet as _CycloneWaitSet
from cyclonedds.sub import ddspy_take

BUSY_WAIT_S = 150e-6  # sleep until this long before a timer is due, then spin
MAX_BLOCK_S = 0.1  # bound on one blocking wait, so Python signal handlers run promptly
TAKE_BATCH = 32  # samples taken (still serialised) per call
MAX_DRAIN = 256  # samples of one reader handled per dispatch; the rest wait for the next one
_GUARD_KEY = 1
_ANY_STATE = SampleState.Any | ViewState.Any | InstanceState.Any

ErrorHandler = Callable[[str, BaseException], None]


@dataclass(eq=False)
class Timer:
    """A periodic wall-clock timer; ``next_call`` is on time.perf_counter()'s scale."""

    period: float
    callback: Callable[[], None]
    next_call: float
    cancelled: bool = False
    on_error: ErrorHandler | None = None  # the owning node's (a shared executor's otherwise)

    def cancel(self) -> None:
        self.cancelled = True

    def reset(self) -> None:
        """Restart the period from now (rclpy's Timer.reset)."""
        self.cancelled = False
        self.next_call = time.perf_counter() + self.period

    def time_until_next_call(self) -> int | None:
        """Nanoseconds until the next call (rclpy's Timer.time_until_next_call); None if
        cancelled."""
        return None if self.cancelled else round((self.next_call - time.perf_counter()) * 1e9)

    def advance(self, now: float) -> None:
        """Schedule the next call on the period grid, skipping calls already missed (as rcl)."""
        self.next_call += self.period
        if self.next_call <= now:
            self.next_call += self.period * (math.floor((now - self.next_call) / self.period) + 1)


SenderFilter = Callable[[int], bool]  # publication handle -> decode this sample?


@dataclass(eq=False)
class _Entry:
    reader: object
    condition: ReadCondition
    handler: Callable[[object], None]
    label: str
    key: int
    admit: SenderFilter | None = None
    #: screen(data, info) on the serialised sample: False if it must not be decoded (the screen
    #: has dealt with it: a size beyond a cap, refused before paying for its decoding)
    screen: Callable[[bytes, object], bool] | None = None
    muted: bool = False  # detached from the wait while its samples are all filtered out
    on_error: ErrorHandler | None = None  # the owning node's (a shared executor's otherwise)


@dataclass
class _Stats:
    """Counters a test or a diagnostics publisher can read."""

    callback_errors: int = 0
    take_errors: int = 0
    invalid_samples: int = 0
    filtered_samples: int = 0
    screened_samples: int = 0  # refused undecoded by a reader's screen
    timer_calls: dict[int, int] = field(default_factory=dict)


class Executor:
    """Waits on a node's readers and timers and runs their callbacks in the calling thread."""

    def __init__(self, participant, on_error: ErrorHandler):
        self._participant = participant
        self._on_error = on_error
        self._waitset = _CycloneWaitSet(participant)
        self._guard = GuardCondition(participant)
        self._attach(self._guard, _GUARD_KEY)
        self._entries: dict[int, _Entry] = {}
        self._next_key = _GUARD_KEY + 1
        self._timers: list[Timer] = []
        self._lock = threading.Lock()
        self._triggered = (ct.c_void_p * 8)()
        self._ready: deque = deque()  # same-process subscriptions with a message, in post order
        self._urgent: deque = deque()  # urgent ones posted by the callback running now
        self._in_urgent = False
        self._idle: deque = deque()  # (work, on_error) for when the chain is through
        self._thread: int | None = None  # the thread that spins
        self.stats = _Stats()

    # -- C entry points of Cyclone's WaitSet: attach under our own key, get keys back from wait
    def _attach(self, entity, key: int) -> None:
        ret = self._waitset._waitset_attach(self._waitset._ref, entity._ref, key)
        if ret < 0:
            raise RuntimeError(f"cannot attach {entity!r} to the executor's waitset ({ret})")

    def _detach(self, entity) -> None:
        self._waitset._waitset_detach(self._waitset._ref, entity._ref)

    def _wait(self, timeout_s: float) -> list[int]:
        """Block up to timeout_s; the keys of the conditions that triggered."""
        n_slots = len(self._entries) + 1
        if len(self._triggered) < n_slots:
            self._triggered = (ct.c_void_p * (2 * n_slots))()
        timeout_ns = max(0, int(timeout_s * 1e9))
        n = self._waitset._waitset_wait(self._waitset._ref, self._triggered,
                                        len(self._triggered), timeout_ns)
        if n < 0:
            raise RuntimeError(f"waitset wait failed ({n})")
        return [self._triggered[i] for i in range(min(n, len(self._triggered)))]

    # -- registration (any thread)
    def add_reader(self, reader, handler: Callable[[object], None], label: str,
                   on_error: ErrorHandler | None = None) -> int:
        """Run handler(sample) in the executor for every valid sample the reader receives."""
        with self._lock:
            key = self._next_key
            self._next_key += 1
            entry = _Entry(reader, ReadCondition(reader, _ANY_STATE), handler, label, key,
                           on_error=on_error)
            self._entries[key] = entry
            self._attach(entry.condition, key)
        self.wake()
        return key

    def set_sender_filter(self, key: int, admit: SenderFilter | None) -> None:
        """Decode a sample of this reader only if admit(its publication handle) is true."""
        entry = self._entries.get(key)
        if entry is not None:
            entry.admit = admit

    def set_screen(self, key: int, screen: Callable[[bytes, object], bool] | None) -> None:
        """Decode a sample of this reader only if screen(its bytes, its info) is true."""
        entry = self._entries.get(key)
        if entry is not None:
            entry.screen = screen

    def remove_reader(self, key: int) -> None:
        with self._lock:
            entry = self._entries.pop(key, None)
            if entry is not None and not entry.muted:
                self._detach(entry.condition)

    def create_timer(self, period_s: float, callback: Callable[[], None],
                     on_error: ErrorHandler | None = None) -> Timer:
        if not period_s > 0:
            raise ValueError(f"timer period must be positive, got {period_s}")
        timer = Timer(float(period_s), callback, time.perf_counter() + period_s,
                      on_error=on_error)
        with self._lock:
            self._timers.append(timer)
        self.wake()
        return timer

    def wake(self) -> None:
        """Make a blocked spin_once return (shutdown, new work)."""
        self._guard.set(True)

    def post(self, subscription) -> None:
        """A same-process message waits in ``subscription`` (intra_process.LocalSubscription):
        deliver it in turn — an urgent subscription's right after the callback that posted it —;
        a post from another thread wakes the wait."""
        if threading.get_ident() != self._thread:
            self._ready.append(subscription)
            self.wake()
        elif subscription.urgent and not self._in_urgent:
            self._urgent.append(subscription)
        else:
            self._ready.append(subscription)

    def call_when_idle(self, work: Callable[[], None],
                       on_error: ErrorHandler | None = None) -> None:
        """Run ``work`` once the same-process messages posted so far are handled (at the latest
        after one more round of them)."""
        self._idle.append((work, on_error))
        if threading.get_ident() != self._thread:
            self.wake()

    def _run_ready(self) -> None:
        """One round of same-process messages, then the idle work that waited a round, or all
        of it if no message is left."""
        aged = len(self._idle)
        self._run_local()
        idle = self._idle
        for _ in range(len(idle) if not self._ready else aged):
            work, on_error = idle.popleft()
            try:
                work()
            except Exception as exc:
                self.stats.callback_errors += 1
                self._report(on_error, "idle work raised", exc)

    def _run_local(self) -> None:
        """Deliver the same-process messages posted so far (those their callbacks post wait for
        the next round, so a chain of callbacks cannot starve the timers), each callback's
        urgent ones right after it: a plant's command, which closes the loop, does not wait
        for the other nodes' handling of the state it answers."""
        if self._urgent:  # posted by a timer's or a DDS reader's callback
            self._run_urgent()
        ready = self._ready
        for _ in range(len(ready)):
            self._deliver(ready.popleft())
            if self._urgent:
                self._run_urgent()

    def _run_urgent(self) -> None:
        """The urgent messages the last callback posted (what theirs post waits for the round)."""
        self._in_urgent = True
        try:
            while self._urgent:
                self._deliver(self._urgent.popleft())
        finally:
            self._in_urgent = False

    def _deliver(self, sub) -> None:
        if sub.closed or not sub.queue:
            return  # unsubscribed, or a message the keep-last buffer has dropped
        msg = sub.queue.popleft()
        try:
            sub.handler(msg)
        except Exception as exc:
            self.stats.callback_errors += 1
            self._report(sub.on_error, f"callback for {sub.label} raised", exc)

    def _report(self, on_error: ErrorHandler | None, what: str, exc: BaseException) -> None:
        (on_error or self._on_error)(what, exc)

    # -- dispatch (executor thread)
    def _next_timer(self) -> Timer | None:
        live = [t for t in self._timers if not t.cancelled]
        if len(live) != len(self._timers):
            with self._lock:
                self._timers = [t for t in self._timers if not t.cancelled]
        return min(live, key=lambda t: t.next_call) if live else None

    def _dispatch(self, keys: list[int]) -> None:
        for key in sorted(keys):  # creation order: /clock (made first) before the data it stamps
            if key == _GUARD_KEY:
                self._guard.take()
                continue
            entry = self._entries.get(key)
            if entry is not None:
                self._drain(entry)

    def _drain(self, entry: _Entry) -> None:
        handled = delivered = 0
        while handled < MAX_DRAIN:
            raw = ddspy_take(entry.condition.reader._ref, entry.condition.mask, TAKE_BATCH)
            if isinstance(raw, int):  # the reader itself is unusable (deleted): stop
                self._report(entry.on_error, f"cannot take from {entry.label}",
                             DDSException(raw))
                return
            for data, info in raw:
                delivered += self._handle(entry, data, info)
            handled += len(raw)
            if len(raw) < TAKE_BATCH:
                break
        # (more may be waiting: the read condition stays triggered, so the next wait returns it)
        if delivered and entry.muted:
            entry.muted = False
            self._attach(entry.condition, entry.key)
        elif handled and not delivered and entry.admit is not None and not entry.muted:
            entry.muted = True
            self._detach(entry.condition)

    def _poll_muted(self) -> None:
        for entry in [e for e in self._entries.values() if e.muted]:
            self._drain(entry)

    def _handle(self, entry: _Entry, data: bytes, info) -> bool:
        """Decode one taken sample and run the reader's handler on it; True if it was run."""
        if not info.valid_data:  # disposal / unregistration notice
            self.stats.invalid_samples += 1
            return False
        if entry.admit is not None and not entry.admit(info.publication_handle):
            self.stats.filtered_samples += 1
            return False
        if entry.screen is not None:
            try:
                if not entry.screen(data, info):
                    self.stats.screened_samples += 1
                    return True  # handled: dealt with undecoded
            except Exception as exc:
                self.stats.callback_errors += 1
                self._report(entry.on_error, f"screening a sample of {entry.label} raised", exc)
                return True
        try:
            sample = entry.reader._topic.data_type.deserialize(data)
        except Exception as exc:  # this sample does not deserialise: drop it, go on
            self.stats.take_errors += 1
            self._report(entry.on_error, f"dropped undecodable data on {entry.label}", exc)
            return False
        sample.sample_info = info
        try:
            entry.handler(sample)
        except Exception as exc:
            self.stats.callback_errors += 1
            self._report(entry.on_error, f"callback for {entry.label} raised", exc)
        return True

    def _fire(self, timer: Timer) -> None:
        timer.advance(time.perf_counter())
        self.stats.timer_calls[id(timer)] = self.stats.timer_calls.get(id(timer), 0) + 1
        try:
            timer.callback()
        except Exception as exc:
            self.stats.callback_errors += 1
            self._report(timer.on_error, "timer callback raised", exc)

    def spin_once(self, timeout_s: float | None = None) -> None:
        """Run whatever is ready (data, a due timer), waiting up to timeout_s for something."""
        self._thread = threading.get_ident()
        self._poll_muted()
        self._run_ready()
        now = time.perf_counter()
        limit = now + (MAX_BLOCK_S if timeout_s is None else min(timeout_s, MAX_BLOCK_S))
        timer = self._next_timer()
        if timer is not None and timer.next_call <= now:
            self._dispatch(self._wait(0.0))
            self._fire(timer)
            return
        if self._ready or self._urgent or self._idle:
            limit = now  # same-process messages or idle work are waiting: do not block
        due = timer is not None and timer.next_call <= limit
        wake_at = timer.next_call - BUSY_WAIT_S if due else limit
        keys = self._wait(wake_at - now)
        if keys:
            self._dispatch(keys)
            return
        if not due:
            return
        # The busy-wait: poll (non-blocking) for data until the timer is due, then fire it.
        while time.perf_counter() < timer.next_call:
            keys = self._wait(0.0)
            if keys:
                self._dispatch(keys)
            self._run_ready()
        if not timer.cancelled:
            self._poll_muted()
            self._fire(timer)

    def close(self) -> None:
        with self._lock:
            for entry in self._entries.values():
                if not entry.muted:
                    self._detach(entry.condition)
            self._entries.clear()
            self._timers.clear()
            self._ready.clear()
            self._urgent.clear()
            self._idle.clear()


class ExecutorView:
    """One node's handle on an executor it shares with the other nodes of its process: what the
    node adds through it (readers, timers) is remembered, so ``close`` removes exactly that, and
    its callbacks' errors go to the node's own handler."""

    def __init__(self, executor: Executor, on_error: ErrorHandler) -> None:
        self.executor = executor
        self._on_error = on_error
        self._keys: set[int] = set()
        self._timers: list[Timer] = []

    @property
    def stats(self) -> _Stats:
        return self.executor.stats

    def add_reader(self, reader, handler: Callable[[object], None], label: str) -> int:
        key = self.executor.add_reader(reader, handler, label, on_error=self._on_error)
        self._keys.add(key)
        return key

    def set_screen(self, key: int, screen: Callable[[bytes, object], bool] | None) -> None:
        self.executor.set_screen(key, screen)

    def remove_reader(self, key: int) -> None:
        self._keys.discard(key)
        self.executor.remove_reader(key)

    def set_sender_filter(self, key: int, admit: SenderFilter | None) -> None:
        self.executor.set_sender_filter(key, admit)

    def create_timer(self, period_s: float, callback: Callable[[], None]) -> Timer:
        timer = self.executor.create_timer(period_s, callback, on_error=self._on_error)
        self._timers = [t for t in self._timers if not t.cancelled] + [timer]
        return timer

    def wake(self) -> None:
        self.executor.wake()

    def call_when_idle(self, work: Callable[[], None]) -> None:
        self.executor.call_when_idle(work, on_error=self._on_error)

    def spin_once(self, timeout_s: float | None = None) -> None:
        self.executor.spin_once(timeout_s)

    def close(self) -> None:
        """Take this node's readers and timers off the shared executor."""
        for key in list(self._keys):
            self.remove_reader(key)
        for timer in self._timers:
            timer.cancel()
        self._timers.clear()
