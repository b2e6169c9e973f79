"""The managed-node life cycle of ROS 2 (design.ros2.org "Managed nodes"), shared by both backends.

Primary states unconfigured → inactive → active → finalized; each public transition (configure,
cleanup, activate, deactivate, shutdown) passes through a transition state whose hook
(on_configure, …) returns SUCCESS, FAILURE or ERROR; ERROR (or an exception) leads to
errorprocessing, whose on_error hook returns the node to unconfigured (SUCCESS) or finalizes it.
``TRANSITION_GRAPH`` is rcl_lifecycle's default state machine with lifecycle_msgs' ids and labels,
so ``ros2 lifecycle list`` prints the same graph for our nodes as for rclcpp's and rclpy's.

- :class:`LifecycleHooks` — what both backends share: the node's hooks, exceptions mapped to
  ERROR, the "active" flag behind :class:`ManagedPublisher` (rclpy's LifecyclePublisher: it
  publishes only while the node is active), and faults.
- :class:`StateMachine` — rcl_lifecycle's state machine, for the DDS backend (with rclpy, rcl's
  own one runs and rclpy serves the lifecycle_msgs services).

A fault met while running (a diverged plant) cannot jump straight to errorprocessing in rcl's
graph. :meth:`LifecycleHooks.fault_transition` names the path that gets there on both backends:
active → deactivating → errorprocessing (inactive: cleaningup → errorprocessing), the transition's
own hook still running (it stops what the node does) and its result turned into ERROR.
"""

from __future__ import annotations

import enum
import traceback
from collections.abc import Callable
from typing import NamedTuple

# lifecycle_msgs/msg/State ids
UNKNOWN, UNCONFIGURED, INACTIVE, ACTIVE, FINALIZED = 0, 1, 2, 3, 4
CONFIGURING, CLEANINGUP, SHUTTINGDOWN, ACTIVATING, DEACTIVATING, ERRORPROCESSING = range(10, 16)
STATE_LABELS = {
    UNKNOWN: "unknown", UNCONFIGURED: "unconfigured", INACTIVE: "inactive", ACTIVE: "active",
    FINALIZED: "finalized", CONFIGURING: "configuring", CLEANINGUP: "cleaningup",
    SHUTTINGDOWN: "shuttingdown", ACTIVATING: "activating", DEACTIVATING: "deactivating",
    ERRORPROCESSING: "errorprocessing",
}

# lifecycle_msgs/msg/Transition ids of the public transitions
CONFIGURE, CLEANUP, ACTIVATE, DEACTIVATE = 1, 2, 3, 4
UNCONFIGURED_SHUTDOWN, INACTIVE_SHUTDOWN, ACTIVE_SHUTDOWN = 5, 6, 7

HOOK_NAMES = ("on_configure", "on_cleanup", "on_activate", "on_deactivate", "on_shutdown",
              "on_error")
HOOK_OF_STATE = {CONFIGURING: "on_configure", CLEANINGUP: "on_cleanup",
                 ACTIVATING: "on_activate", DEACTIVATING: "on_deactivate",
                 SHUTTINGDOWN: "on_shutdown", ERRORPROCESSING: "on_error"}


class CallbackReturn(enum.IntEnum):
    """What a transition hook returns (lifecycle_msgs/Transition TRANSITION_CALLBACK_*)."""

    SUCCESS = 97
    FAILURE = 98
    ERROR = 99

    @property
    def label(self) -> str:
        """The label of the transition it takes out of a transition state."""
        return "transition_" + self.name.lower()


class LifecycleState(NamedTuple):
    """A state as rclpy's LifecycleState has it: (label, state_id)."""

    label: str
    state_id: int


def lifecycle_state(state_id: int) -> LifecycleState:
    return LifecycleState(STATE_LABELS[state_id], state_id)


class TransitionDescription(NamedTuple):
    """One edge of the state machine: transition id and label, start and goal state ids."""

    id: int
    label: str
    start: int
    goal: int


_T = TransitionDescription
# rcl_lifecycle's default state machine (default_state_machine.c), in its order
TRANSITION_GRAPH: tuple[TransitionDescription, ...] = (
    _T(CONFIGURE, "configure", UNCONFIGURED, CONFIGURING),
    _T(10, "transition_success", CONFIGURING, INACTIVE),
    _T(11, "transition_failure", CONFIGURING, UNCONFIGURED),
    _T(12, "transition_error", CONFIGURING, ERRORPROCESSING),
    _T(CLEANUP, "cleanup", INACTIVE, CLEANINGUP),
    _T(20, "transition_success", CLEANINGUP, UNCONFIGURED),
    _T(21, "transition_failure", CLEANINGUP, INACTIVE),
    _T(22, "transition_error", CLEANINGUP, ERRORPROCESSING),
    _T(ACTIVATE, "activate", INACTIVE, ACTIVATING),
    _T(30, "transition_success", ACTIVATING, ACTIVE),
    _T(31, "transition_failure", ACTIVATING, INACTIVE),
    _T(32, "transition_error", ACTIVATING, ERRORPROCESSING),
    _T(DEACTIVATE, "deactivate", ACTIVE, DEACTIVATING),
    _T(40, "transition_success", DEACTIVATING, INACTIVE),
    _T(41, "transition_failure", DEACTIVATING, ACTIVE),
    _T(42, "transition_error", DEACTIVATING, ERRORPROCESSING),
    _T(UNCONFIGURED_SHUTDOWN, "shutdown", UNCONFIGURED, SHUTTINGDOWN),
    _T(INACTIVE_SHUTDOWN, "shutdown", INACTIVE, SHUTTINGDOWN),
    _T(ACTIVE_SHUTDOWN, "shutdown", ACTIVE, SHUTTINGDOWN),
    _T(50, "transition_success", SHUTTINGDOWN, FINALIZED),
    _T(51, "transition_failure", SHUTTINGDOWN, FINALIZED),
    _T(52, "transition_error", SHUTTINGDOWN, ERRORPROCESSING),
    _T(60, "transition_success", ERRORPROCESSING, UNCONFIGURED),
    _T(61, "transition_failure", ERRORPROCESSING, FINALIZED),
    _T(62, "transition_error", ERRORPROCESSING, FINALIZED),
)

Hook = Callable[[LifecycleState], CallbackReturn]


class LifecycleError(RuntimeError):
    """A lifecycle request that cannot be served (an unmanaged node, an unknown hook)."""


class LifecycleHooks:
    """A managed node's hooks and the state every backend derives from running them."""

    def __init__(self, logger) -> None:
        self._log = logger
        self.hooks: dict[str, Hook] = {}
        self.active = False  # managed publishers publish only while this is true
        self.fault: str | None = None  # set by a fault until errorprocessing has run

    def set(self, **hooks: Hook | None) -> None:
        """Install hooks by name (``on_configure=…``); None removes one (it then succeeds)."""
        unknown = set(hooks) - set(HOOK_NAMES)
        if unknown:
            raise LifecycleError(f"unknown lifecycle hook(s) {sorted(unknown)}; "
                                 f"use {', '.join(HOOK_NAMES)}")
        for name, hook in hooks.items():
            if hook is None:
                self.hooks.pop(name, None)
            else:
                self.hooks[name] = hook

    def run(self, transition_state: int, previous: LifecycleState) -> CallbackReturn:
        """The hook of a transition state, called with the state the transition started from.

        An exception or a result that is not a CallbackReturn counts as ERROR (logged); a fault
        raised before or during the hook makes it ERROR too. Managed publishers are enabled for
        on_activate (it may publish) and stay enabled only if the node ends up active.
        """
        name = HOOK_OF_STATE[transition_state]
        if transition_state == ACTIVATING:
            self.active = True
        hook = self.hooks.get(name)
        try:
            result = CallbackReturn.SUCCESS if hook is None else hook(previous)
        except Exception as exc:  # noqa: BLE001 - rcl's rule: an exception in a hook is ERROR
            self._log.error(f"{name} raised {exc!r}; transition_error\n{traceback.format_exc()}")
            result = CallbackReturn.ERROR
        if not isinstance(result, CallbackReturn):
            self._log.error(f"{name} returned {result!r}, not a CallbackReturn; transition_error")
            result = CallbackReturn.ERROR
        if transition_state == ERRORPROCESSING:
            self.fault = None
        elif self.fault is not None:
            result = CallbackReturn.ERROR
        self.active = ((transition_state == ACTIVATING and result == CallbackReturn.SUCCESS)
                       or (transition_state == DEACTIVATING and result == CallbackReturn.FAILURE))
        return result

    def fault_transition(self, state_id: int, reason: str) -> int | None:
        """Record a fault; the public transition that takes a node in ``state_id`` to
        errorprocessing (None: from a transition state the running hook's result becomes
        ERROR; from unconfigured or finalized nothing is running)."""
        if state_id in (UNCONFIGURED, FINALIZED, ERRORPROCESSING):
            return None
        self.fault = reason
        return {ACTIVE: DEACTIVATE, INACTIVE: CLEANUP}.get(state_id)


class ManagedPublisher:
    """A publisher that publishes only while its node is active (rclpy's LifecyclePublisher);
    a message published otherwise is dropped and counted."""

    def __init__(self, publisher, hooks: LifecycleHooks) -> None:
        self._publisher = publisher
        self._hooks = hooks
        self.dropped = 0

    @property
    def is_activated(self) -> bool:
        return self._hooks.active

    def publish(self, msg) -> None:
        if self._hooks.active:
            self._publisher.publish(msg)
        else:
            self.dropped += 1

    def __getattr__(self, name: str):  # topic_name, get_subscription_count, destroy, …
        return getattr(self._publisher, name)


Notify = Callable[[TransitionDescription, int, int], None]  # (edge, start, goal)


class StateMachine:
    """rcl_lifecycle's default state machine driving a node's hooks (the DDS backend's)."""

    def __init__(self, hooks: LifecycleHooks, notify: Notify, logger) -> None:
        self.hooks = hooks
        self.current = UNCONFIGURED
        self._notify = notify
        self._log = logger

    @property
    def state(self) -> LifecycleState:
        return lifecycle_state(self.current)

    def available_transitions(self) -> list[TransitionDescription]:
        """The edges leaving the current state (rcl's valid transitions of the state)."""
        return [t for t in TRANSITION_GRAPH if t.start == self.current]

    def transition_id(self, label: str) -> int | None:
        """The id of the current state's transition of that label (``shutdown`` → 5, 6 or 7)."""
        return next((t.id for t in self.available_transitions() if t.label == label), None)

    def change_state(self, transition_id: int) -> CallbackReturn | None:
        """Run a public transition; its hook's result, or None when the current state has no
        such transition (nothing happens, as rcl refuses it)."""
        edge = next((t for t in self.available_transitions()
                     if t.id == transition_id and t.id < 10), None)
        if edge is None:
            self._log.warn(f"no transition {transition_id} from state '{self.state.label}'; "
                           f"available: {[t.label for t in self.available_transitions()]}")
            return None
        initial = self.state
        self._take(edge)
        result = self.hooks.run(self.current, initial)
        self._take(self._outcome(result))
        if result == CallbackReturn.ERROR:
            self._take(self._outcome(self.hooks.run(self.current, initial)))
        return result

    def _outcome(self, result: CallbackReturn) -> TransitionDescription:
        return next(t for t in self.available_transitions() if t.label == result.label)

    def _take(self, edge: TransitionDescription) -> None:
        start, self.current = self.current, edge.goal
        self._notify(edge, start, edge.goal)
