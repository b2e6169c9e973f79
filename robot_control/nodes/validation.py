"""What every node checks before a message touches its state, and how it reports what it drops.

A joint vector is usable when it has one value per joint of the model (in the model's order, or
named in any order), every value is finite, and its magnitude is plausible: at most
``IMPLAUSIBLE_FACTOR`` times the joint's limit (its position range, velocity or effort limit) or,
where the model sets no limit, a fixed ceiling far beyond any real manipulator. Anything else is
not a measurement or a command but garbage, and is dropped: counted per topic and reason, logged
at most once a second per topic, never applied. The node keeps its last good value.

A publisher that sends nothing but garbage (a flood of invalid commands) is put in quarantine by
:class:`SenderGate`: while it lasts, the DDS backend drops that publisher's samples before paying
for their decoding, so the flood cannot crowd out a valid publisher on the same topic.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from robot_control.bus.cdr_prefix import DeclaredMotion
from robot_control.foundation.log_text import bounded, names_text
from robot_control.model.robot_model import IMPLAUSIBLE_FACTOR
from robot_control.sim.clock import NS

Array = np.ndarray

#: ceilings where the model sets no limit (continuous joints, no velocity or effort limit)
UNLIMITED_POSITION = 1e4  # rad or m: ~1600 turns
UNLIMITED_VELOCITY = 1e4  # rad/s or m/s
UNLIMITED_EFFORT = 1e9  # N·m or N
UNLIMITED_ACCELERATION = 1e6  # rad/s² or m/s², references only
#: ceiling on wrenches (N, N·m) and on model terms (M entries, torques)
UNLIMITED_WRENCH = 1e9
#: the most points a motion message may have (a goal, the controller's trajectory topic): 100 s
#: of an excitation at the generator's 0.01 s knots; rebuilding and checking one costs ~0.2 ms a
#: point, so a larger one is refused before any of that work
MAX_MOTION_POINTS = 10_000
#: the longest motion accepted, s
MAX_MOTION_S = 24 * 3600.0


#: a joint name longer than this (bytes, with its NUL) is not a joint name
MAX_NAME_BYTES = 256


def motion_bytes_cap(n: int, max_points: int) -> int:
    """The most bytes a serialised motion of at most ``max_points`` points for ``n`` joints
    needs: per point q, q̇, q̈ (and the sequences' lengths, its time), the names, a path and a
    goal tolerance per joint (a FollowJointTrajectory goal), headers."""
    return max_points * (24 * n + 32) + (3 * n + 1) * (MAX_NAME_BYTES + 40) + 4096


def refuse_sizes(motion: DeclaredMotion, n: int, max_points: int) -> str | None:
    """Why a motion message is refused before it is decoded — more names than joints, a name
    too long, more points than ``max_points``, more bytes than such a motion needs — or None.
    Cheap whatever it holds: it reads the counts the message declares, not its elements."""
    sizes = motion.trajectory_sizes(n)
    if sizes is not None:
        if sizes.names > n:
            return f"{sizes.names} joint names for an arm of {n} joints"
        if sizes.longest_name > MAX_NAME_BYTES:
            return f"a joint name of {sizes.longest_name} bytes (at most {MAX_NAME_BYTES})"
        if sizes.points > max_points:
            return f"{sizes.points} points exceed the cap of {max_points}"
    cap = motion_bytes_cap(n, max_points)
    if motion.nbytes > cap:
        return (f"{motion.nbytes} bytes: a motion of at most {max_points} points for {n} joints "
                f"needs at most {cap}")
    return None


class Rejected(ValueError):
    """A message that must not be used; the text says why (it goes into the node's log)."""


@dataclass(frozen=True)
class Plausible:
    """The largest magnitude each joint's position, velocity and effort may plausibly have."""

    position: Array
    velocity: Array
    effort: Array

    @classmethod
    def of(cls, model) -> Plausible:
        """IMPLAUSIBLE_FACTOR × the model's limits (the fixed ceilings where it sets none)."""
        reach = np.maximum(np.abs(model.lower), np.abs(model.upper))
        reach = np.where(np.isfinite(reach), IMPLAUSIBLE_FACTOR * np.maximum(reach, 1.0),
                         UNLIMITED_POSITION)
        return cls(position=reach,
                   velocity=_bound(model.velocity_limit, UNLIMITED_VELOCITY),
                   effort=_bound(model.effort_limit, UNLIMITED_EFFORT))


def _bound(limit: Array, unlimited: float) -> Array:
    limit = np.asarray(limit, dtype=float)
    return np.where(np.isfinite(limit), np.minimum(IMPLAUSIBLE_FACTOR * limit, unlimited),
                    unlimited)


def check_values(values: Array, bound: Array | float, what: str) -> Array:
    """``values`` if every one is finite and |v| ≤ bound, else Rejected naming the first culprit."""
    if np.all(np.abs(values) <= bound):  # False for NaN and ±inf as well
        return values
    bad = ~(np.abs(values) <= bound)
    i = int(np.flatnonzero(bad)[0])
    v = float(values[i])
    limit = float(np.broadcast_to(bound, values.shape)[i])
    if not np.isfinite(v):
        raise Rejected(f"{what}[{i}] is {v}")
    raise Rejected(f"{what}[{i}] = {v:.3g} is implausible (|value| > {limit:.3g})")


class JointVectors:
    """Reads joint vectors of one model out of messages, in the model's joint order."""

    def __init__(self, model) -> None:
        self.names = list(model.joint_names)
        self.n = len(self.names)
        self.bounds = Plausible.of(model)
        #: per kind of value, the bound of each joint as plain floats (checked element-wise)
        self.limits = {"position": self.bounds.position.tolist(),
                       "velocity": self.bounds.velocity.tolist(),
                       "effort": self.bounds.effort.tolist(),
                       "acceleration": [UNLIMITED_ACCELERATION] * self.n}

    def order(self, names: Sequence[str]) -> Array | None:
        """Positions in the message of the model's joints (None: already in model order)."""
        names = list(names)
        if not names or names == self.names:
            return None
        if len(names) != self.n or sorted(names) != sorted(self.names):
            raise Rejected(f"joint names {names_text(names)} are not the model's "
                           f"{names_text(self.names)}")
        return np.array([names.index(j) for j in self.names])

    def vector(self, values, order: Array | None, kind: str) -> Array:
        """One joint vector of a kind (position, velocity, effort, acceleration): n values,
        reordered to the model's order, finite and plausible."""
        if len(values) != self.n:
            raise Rejected(f"{len(values)} {kind} values for {self.n} joints")
        items = [float(v) for v in values]
        if order is not None:
            items = [items[i] for i in order]
        limits = self.limits[kind]
        # element-wise in Python: for a handful of joints much cheaper than numpy's calls;
        # a NaN fails every comparison, so this refuses NaN and ±inf as well
        if all(-b <= v <= b for v, b in zip(items, limits)):
            return np.array(items)
        return check_values(np.array(items), np.array(limits), kind)  # raises, naming why

    def state(self, msg) -> tuple[Array, Array]:
        """(q, q̇) of a sensor_msgs/JointState."""
        order = self.order(msg.name)
        return (self.vector(msg.position, order, "position"),
                self.vector(msg.velocity, order, "velocity"))

    def measured(self, msg) -> tuple[Array, Array, Array | None]:
        """(q, q̇, τ or None when the state reports no effort) of a sensor_msgs/JointState."""
        order = self.order(msg.name)
        return (self.vector(msg.position, order, "position"),
                self.vector(msg.velocity, order, "velocity"),
                self.optional(msg.effort, order, "effort"))

    def effort(self, msg) -> Array:
        """τ of a sensor_msgs/JointState command."""
        return self.vector(msg.effort, self.order(msg.name), "effort")

    def optional(self, values, order: Array | None, kind: str) -> Array | None:
        """Like :meth:`vector`, but an empty field means "not given" (None)."""
        return None if len(values) == 0 else self.vector(values, order, kind)

    def points(self, msg) -> tuple[Array, Array, Array | None, Array | None]:
        """(times from start in s (k,), q (k, n), q̇, q̈) of a trajectory_msgs/JointTrajectory in
        the model's joint order. q̇ (q̈) is None if no point gives one, else (k, n) with NaN rows
        where a point leaves it out (JointTrajectory then picks it by its via-point rules)."""
        order = self.order(msg.joint_names)
        if not msg.points:
            raise Rejected("a trajectory needs at least one point")
        if len(msg.points) > MAX_MOTION_POINTS:
            raise Rejected(f"{len(msg.points)} points: at most {MAX_MOTION_POINTS} are accepted")
        q = [self.optional(p.positions, order, "position") for p in msg.points]
        if any(p is None for p in q):
            raise Rejected("every point needs positions")
        nan = np.full(self.n, np.nan)
        rates = []
        for kind, field in (("velocity", "velocities"), ("acceleration", "accelerations")):
            rows = [self.optional(getattr(p, field), order, kind) for p in msg.points]
            rates.append(None if all(r is None for r in rows) else
                         np.array([nan if r is None else r for r in rows]))
        times = np.array([(p.time_from_start.sec * NS + p.time_from_start.nanosec) / NS
                          for p in msg.points])
        return times, np.array(q), rates[0], rates[1]


def check_motion(motion, model):
    """A motion (JointTrajectory) about to run: at most MAX_MOTION_S long and within the model's
    position and velocity limits everywhere between its knots (LimitChecks.validate, the
    trajectory generator's check); Rejected listing what it breaks."""
    if not motion.duration <= MAX_MOTION_S:
        raise Rejected(f"it lasts {motion.duration:g} s: at most {MAX_MOTION_S:g} s are accepted")
    try:
        motion.validate(model.lower, model.upper, model.velocity_limit)
    except ValueError as exc:
        raise Rejected(str(exc)) from None
    return motion


def check_wrench(wrench6: Array, what: str = "wrench") -> Array:
    """A 6-vector (n, f) that is finite and plausible."""
    return check_values(np.asarray(wrench6, dtype=float), UNLIMITED_WRENCH, what)


def check_terms(ns: int, M: Array, c: Array, g: Array, C: Array, n: int):
    """/dynamics/terms as read by convert.read_terms, for n joints, finite and plausible."""
    if g.shape != (n,):
        raise Rejected(f"model terms for {g.size} joints, the model has {n}")
    for value, what in ((M, "mass_matrix"), (c, "coriolis_torque"), (g, "gravity_torque"),
                        (C, "coriolis_matrix")):
        check_values(np.ravel(value), UNLIMITED_WRENCH, what)
    return ns, M, c, g, C


#: the longest reason a drop carries on /diagnostics (a status is sent twice a second)
REASON_CHARS = 200


class DropLog:
    """Counts what a node drops, per topic and reason, and logs it at most once a second a topic."""

    def __init__(self, logger, period_s: float = 1.0) -> None:
        self.log = logger
        self.period_s = period_s
        self.counts: Counter[str] = Counter()
        self._last: dict[str, float] = {}
        self._since: Counter[str] = Counter()
        self.last_reason: dict[str, str] = {}  # topic -> why its last message was dropped

    def drop(self, topic: str, reason: str) -> None:
        """Count one dropped message and log it unless the topic was logged within the period."""
        self.counts[topic] += 1
        self._since[topic] += 1
        self.last_reason[topic] = reason[:REASON_CHARS]
        now = time.monotonic()
        if now - self._last.get(topic, -np.inf) >= self.period_s:
            more = self._since[topic] - 1
            extra = f" (+{more} more since the last report)" if more > 0 else ""
            self.log.warn(f"dropped {bounded(topic, 200)}: {bounded(reason)}{extra}; "
                          f"{self.counts[topic]} so far")
            self._last[topic] = now
            self._since[topic] = 0

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def diagnostics(self) -> dict[str, int]:
        """Key/values for /diagnostics: ``dropped <topic>`` counts, and ``last dropped <topic>``
        the reason of the last one (what ``robot-control launch`` quotes when nothing was
        tracked)."""
        out: dict[str, int | str] = {}
        for topic, count in sorted(self.counts.items()):
            out[f"dropped {topic}"] = count
            out[f"last dropped {topic}"] = self.last_reason[topic]
        return out


class SenderGate:
    """Quarantine for publishers that send only unusable messages.

    ``strikes`` rejected messages in a row (none accepted in between) quarantine a publisher for
    ``quarantine_s``; after that one more rejected message renews it, an accepted one clears it.
    ``admit(sender)`` is asked before a sample is decoded; a sample it refuses is counted in
    ``ignored``. Senders are whatever id the bus gives (the DDS publication handle).
    """

    def __init__(self, logger, topic: str, strikes: int = 50, quarantine_s: float = 1.0) -> None:
        self.log = logger
        self.topic = topic
        self.strikes = strikes
        self.quarantine_s = quarantine_s
        self.ignored = 0
        self._bad_in_row: Counter[object] = Counter()
        self._until: dict[object, float] = {}

    def admit(self, sender: object) -> bool:
        until = self._until.get(sender)
        if until is None:
            return True
        if time.monotonic() < until:
            self.ignored += 1
            return False
        del self._until[sender]
        self._bad_in_row[sender] = self.strikes - 1  # on probation: one more and it is back
        return True

    def rejected(self, sender: object) -> None:
        if sender is None:
            return
        self._bad_in_row[sender] += 1
        if self._bad_in_row[sender] >= self.strikes and sender not in self._until:
            self._until[sender] = time.monotonic() + self.quarantine_s
            self.log.warn(f"{self.topic}: publisher {sender} sent {self._bad_in_row[sender]} "
                          f"unusable messages in a row: ignoring it for {self.quarantine_s:g} s",
                          throttle_duration_sec=1.0)

    def accepted(self, sender: object) -> None:
        if sender is not None:
            self._bad_in_row.pop(sender, None)
            self._until.pop(sender, None)

    @property
    def quarantined(self) -> int:
        now = time.monotonic()
        return sum(1 for t in self._until.values() if t > now)


def sender_of(msg) -> object:
    """The id of the publisher a message came from, where the bus says (DDS backend), else None."""
    info = getattr(msg, "sample_info", None)
    return None if info is None else info.publication_handle
