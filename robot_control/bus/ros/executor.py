"""A single-threaded rclpy executor that keeps its wait set's plan between waits.

rclpy's SingleThreadedExecutor rebuilds its wait set from every entity of every node before each
wait (callback-group filters, a handle context per entity, a new WaitSet, a ready scan over
every entity) and runs each callback as a Task coroutine. With the parameter and lifecycle
services of five nodes (about a hundred entities) that is about 0.4 ms of interpreter time per
wait: a 1 kHz composed stack spent its whole period in its executor (870 Hz kept, 30 % of the
deadlines missed).

:class:`LeanExecutor` waits on the same entities, but keeps the list between waits — rebuilt
when rclpy says an entity or a node came or went (it calls ``wake()``, ``add_node``,
``remove_node`` then) — and holds the entities' handles while the list lives, so what a
callback destroys is destroyed once the list is dropped (rclpy's handles defer destruction
while in use, as its own wait does for one wait). Ready timers and subscriptions with plain
callbacks run directly, as rclpy's handler would run them (callback group entered and left,
the message taken by rclpy's own take); a timer due within ``BUSY_WAIT_S`` is waited for by
spinning and runs without a wait. Anything else that is ready — a service request, a client's
response, an action server, a guard condition, a coroutine callback — goes to rclpy's own
``spin_once``, which finds it ready again (level-triggered; a node's guard condition is marked
as rclpy marks it), and the tasks rclpy keeps (coroutines awaiting a future) are resumed before
each wait, as rclpy resumes them.

Entities are created and destroyed from the spinning thread (callbacks, or before and after
spinning), as everywhere in robot_control.
"""

from __future__ import annotations

import inspect
import threading
import time
from dataclasses import dataclass, field

from rclpy.clock import ClockType
from rclpy.exceptions import InvalidHandle
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.subscription import Subscription
from rclpy.utilities import timeout_sec_to_nsec

BUSY_WAIT_S = 150e-6  # a timer due sooner than this is waited for by spinning, not in a wait set


@dataclass
class _Plan:
    """What a wait waits on, which of it runs directly, and the handles held meanwhile."""

    subscriptions: list = field(default_factory=list)
    timers: list = field(default_factory=list)
    clients: list = field(default_factory=list)
    services: list = field(default_factory=list)
    guards: list = field(default_factory=list)  # nodes' guard conditions
    waitables: list = field(default_factory=list)
    direct_subscriptions: dict = field(default_factory=dict)  # handle pointer -> subscription
    direct_timers: dict = field(default_factory=dict)  # handle pointer -> timer
    #: the handles each wait adds, by kind (rclpy's ``handle`` properties cost a call each)
    adds: list = field(default_factory=list)  # (WaitSet.add_… method name, handles)
    due_timers: list = field(default_factory=list)  # (timer, its handle) of direct_timers
    held: list = field(default_factory=list)  # entered handles and waitables, to exit
    wait_set: object = None

    def release(self) -> None:
        held, self.held = self.held, []
        for handle in reversed(held):
            handle.__exit__(None, None, None)


def _direct(entity) -> bool:
    """Whether ``entity``'s callback is a plain function (a coroutine needs rclpy's Task)."""
    callback = entity.callback
    return callback is not None and not inspect.iscoroutinefunction(callback)


def _hold(entities: list, held: list) -> list:
    """The entities whose handles could be entered (entered now, appended to ``held``)."""
    live = []
    for entity in entities:
        try:
            entity.handle.__enter__()
        except InvalidHandle:  # destroyed already
            continue
        held.append(entity.handle)
        live.append(entity)
    return live


def run_subscription(sub) -> bool:
    """Take one message of ``sub`` and run its callback as rclpy's handler would (callback group
    entered and left, rclpy's own take): False when there was none or ``sub`` is destroyed."""
    group = sub.callback_group
    if not group.beginning_execution(sub):
        return False
    try:
        try:
            with sub.handle:
                taken = sub.handle.take_message(sub.msg_type, sub.raw)
        except InvalidHandle:  # destroyed by an earlier callback of this round
            return False
        if taken is None:
            return False
        if sub._callback_type is Subscription.CallbackType.MessageOnly:
            sub.callback(taken[0])
        else:
            sub.callback(*taken)
        return True
    finally:
        group.ending_execution(sub)


class LeanExecutor(SingleThreadedExecutor):
    """rclpy's SingleThreadedExecutor with the wait set's plan kept between waits and ready
    timers and subscriptions run directly (module docstring)."""

    def __init__(self, *, context=None) -> None:
        super().__init__(context=context)
        self._version = 0
        self._plan: _Plan | None = None
        self._plan_version = -1
        self._spinner: int | None = None  # the thread inside spin_once

    # -- what invalidates the plan
    def wake(self) -> None:
        self._version += 1
        super().wake()

    def add_node(self, node) -> bool:
        self._version += 1
        return super().add_node(node)

    def remove_node(self, node) -> None:
        self._version += 1
        super().remove_node(node)
        self._release_if_not_waiting()

    def shutdown(self, timeout_sec: float | None = None) -> bool:
        done = super().shutdown(timeout_sec)
        self._release_if_not_waiting()
        return done

    def _release_if_not_waiting(self) -> None:
        """Drop the plan (its handles) now unless another thread is in spin_once; that one
        drops it at its next spin."""
        if self._spinner in (None, threading.get_ident()) and self._plan is not None:
            self._plan.release()
            self._plan = None

    def _current_plan(self) -> _Plan:
        if self._plan is None or self._plan_version != self._version:
            if self._plan is not None:
                self._plan.release()
            self._plan_version = self._version
            self._plan = self._make_plan()
        return self._plan

    def _make_plan(self) -> _Plan:
        plan = _Plan()
        for node in self.get_nodes():
            plan.subscriptions.extend(node.subscriptions)
            plan.timers.extend(node.timers)
            plan.clients.extend(node.clients)
            plan.services.extend(node.services)
            plan.guards.extend(node.guards)
            plan.waitables.extend(node.waitables)
        held = plan.held
        plan.subscriptions = _hold(plan.subscriptions, held)
        plan.timers = _hold(plan.timers, held)
        plan.clients = _hold(plan.clients, held)
        plan.services = _hold(plan.services, held)
        plan.guards = _hold(plan.guards, held)
        _hold([self._guard, self._sigint_gc], held)
        self._context.handle.__enter__()
        held.append(self._context.handle)
        counts = [len(plan.subscriptions), len(plan.guards) + 2, len(plan.timers),
                  len(plan.clients), len(plan.services), 0]
        for waitable in plan.waitables:
            waitable.__enter__()
            held.append(waitable)
            n = waitable.get_num_entities()
            counts = [counts[0] + n.num_subscriptions, counts[1] + n.num_guard_conditions,
                      counts[2] + n.num_timers, counts[3] + n.num_clients,
                      counts[4] + n.num_services, counts[5] + n.num_events]
        plan.direct_subscriptions = {s.handle.pointer: s for s in plan.subscriptions if _direct(s)}
        plan.direct_timers = {t.handle.pointer: t for t in plan.timers if _direct(t)}
        plan.due_timers = [(t, t.handle) for t in plan.direct_timers.values()]
        plan.adds = [
            ("add_subscription", [e.handle for e in plan.subscriptions]),
            ("add_client", [e.handle for e in plan.clients]),
            ("add_service", [e.handle for e in plan.services]),
            ("add_timer", [e.handle for e in plan.timers]),
            ("add_guard_condition", [e.handle for e in plan.guards]
             + [self._guard.handle, self._sigint_gc.handle])]
        plan.wait_set = _rclpy.WaitSet(*counts, self._context.handle)
        return plan

    # -- spinning
    def spin_once(self, timeout_sec: float | None = None) -> None:
        self._spinner = threading.get_ident()
        try:
            if self._is_shutdown:
                self._release_if_not_waiting()
                return
            if self._tasks:
                self._resume_tasks()
            plan = self._current_plan()
            due_s = self._run_due_timer(plan)
            if due_s is not None:
                self._wait_and_run(plan, timeout_sec, due_s)
        finally:
            self._spinner = None

    def _resume_tasks(self) -> None:
        """Resume the tasks rclpy keeps (coroutines: an action goal awaiting its end), as its
        own wait loop does before each wait; a task's exception ends the spin, as in rclpy."""
        with self._tasks_lock:
            tasks = list(self._tasks)
        for task, _entity, _node in reversed(tasks):
            if not task.executing() and not task.done():
                task()
                if task.exception() is not None:
                    raise task.exception()
        with self._tasks_lock:
            self._tasks = [t for t in self._tasks if not t[0].done()]

    def _run_due_timer(self, plan: _Plan) -> float | None:
        """Run the plain timer due first if it is due (a steady-clock one: due within
        BUSY_WAIT_S, spinning until it is). None if it ran, else the seconds until it is due
        (inf without one)."""
        first, first_ns = None, None
        for timer, handle in plan.due_timers:
            ns = handle.time_until_next_call()  # (held: no context needed)
            if ns is not None and (first_ns is None or ns < first_ns):
                first, first_ns = timer, ns
        if first is None:
            return float("inf")
        margin = BUSY_WAIT_S * 1e9 if first.clock.clock_type == ClockType.STEADY_TIME else 0
        if first_ns > margin:
            return first_ns * 1e-9
        if first_ns > 0:
            end = time.monotonic() + first_ns * 1e-9
            while time.monotonic() < end:
                pass
        self._run_timer(first)
        return None

    def _run_timer(self, timer) -> None:
        group = timer.callback_group
        if not group.beginning_execution(timer):
            return
        try:
            if not timer.handle.is_timer_ready():  # cancelled (an rcl quirk rclpy avoids too)
                return
            timer.handle.call_timer()
            timer.callback()
        finally:
            group.ending_execution(timer)

    def _wait_and_run(self, plan: _Plan, timeout_sec: float | None, due_s: float) -> None:
        """Wait up to timeout_sec, and no later than BUSY_WAIT_S before the first plain timer
        is due (``due_s``), for anything; run the ready plain timers and subscriptions and hand
        the rest to rclpy."""
        wake_at = None if due_s == float("inf") else time.monotonic() + due_s - BUSY_WAIT_S
        ws = plan.wait_set
        ws.clear_entities()
        for method, handles in plan.adds:
            add = getattr(ws, method)
            for handle in handles:
                add(handle)
        for waitable in plan.waitables:
            waitable.add_to_wait_set(ws)
        if wake_at is not None:  # (from now: filling the wait set took time)
            wake = max(0.0, wake_at - time.monotonic())
            timeout_sec = wake if timeout_sec is None or timeout_sec < 0 else \
                min(timeout_sec, wake)
        ws.wait(timeout_sec_to_nsec(timeout_sec))
        if self._is_shutdown:
            return
        if not self._context.ok():
            raise ExternalShutdownException()
        guards_ready = ws.get_ready_entities("guard_condition")
        rest = bool(ws.get_ready_entities("client") or ws.get_ready_entities("service"))
        rest = rest or any(w.is_ready(ws) for w in plan.waitables)
        for gc in plan.guards:  # as rclpy marks them: its spin retriggers and runs them
            if gc.handle.pointer in guards_ready:
                gc._executor_triggered = True
                rest = True
        version = self._version
        for pointer in ws.get_ready_entities("timer"):
            timer = plan.direct_timers.get(pointer)
            if timer is None:
                rest = True
            elif self._version == version:  # (a callback may have destroyed it)
                self._run_timer(timer)
        for pointer in ws.get_ready_entities("subscription"):
            sub = plan.direct_subscriptions.get(pointer)
            if sub is None:
                rest = True
            elif self._version == version:
                run_subscription(sub)
        if rest:
            super().spin_once(0)
