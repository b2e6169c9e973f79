"""Which /joint_command publishers a plant obeys: the controller node of its own stack.

A command is applied only if the publisher that sent it belongs to the node the plant's
``command_source`` parameter names (default: the ``controller`` of the plant's namespace). The
sample's publisher GID (its DDS writer GUID: the publication handle resolved by the reader on
the rclpy-free route, MessageInfo's ``publisher_gid`` on rclpy) is matched against the writers the
ROS graph says that node owns (ros_discovery_info; rclpy's get_publishers_info_by_topic). The
first participant seen with that node is pinned: a second node taking the controller's name
later is refused. Where the sample carries no GID (rclpy on Jazzy, whose MessageInfo has none
yet), commands apply only while every publisher matched on the topic is the controller's.
A writer the graph cannot name yet (its node's discovery data trails its samples: seconds with
DDS Security's authenticated discovery) is refused but asked about again, never written off: it
is obeyed once the graph names it the controller's. Such an undecided writer is no stranger
yet: its refusals earn it no quarantine (validation.SenderGate), which would mute the plant's own
controller for a second whenever the graph trails its first commands by the gate's strikes
(50 ms at 1 kHz; seen on a loaded CI machine as a plant that held still through the motion).
A lockstep plant sends its first state only once the graph names the controller's writer
(:meth:`CommandSource.ready`), so its first command is obeyed.

This is defence in depth against mistakes (a second stack on the domain, a ``ros2 topic pub``,
a bag replayed into a live stack, a probe copying stamps from /joint_states), not security: any
participant can announce a node of the controller's name or forge the graph. Access control is
SROS2's. A refused publisher is reported once as an error (on /rosout) and listed on /diagnostics
(``foreign_publishers``); its samples are counted as foreign.
"""

from __future__ import annotations

import json
import time

#: a writer the graph names no node for yet (its discovery data can trail its first samples) is
#: refused quietly for this long, s; reported after that
GRACE_S = 1.0
#: the graph is asked again at most this often while unknown writers send, s
REFRESH_S = 0.1
PREFIX = 12  # bytes of a GUID that name its participant
UNNAMED = "a publisher the ROS graph names no node for"


def resolve_node(name: str, namespace: str) -> str:
    """A node name relative to the plant's namespace, made fully qualified."""
    return name if name.startswith("/") else f"{namespace.rstrip('/')}/{name}"


class CommandSource:
    """Decides per sample whether its publisher is the controller's (see the module doc)."""

    def __init__(self, node, controller: str) -> None:
        self.node = node
        self.log = node.get_logger()
        self.controller = controller  # fully qualified; "" obeys every publisher
        self.subscription = None  # set once the subscription exists
        self.trusted: set[bytes] = set()
        self.participant: bytes | None = None  # the pinned controller's GUID prefix
        self.refused: dict[bytes, str] = {}  # GID -> who it is (reported once)
        self.first_seen: dict[bytes, float] = {}
        self.next_refresh = 0.0
        self.matched = -1  # publishers matched when the graph last agreed (no-GID mode)
        self.sole = False  # ... and all of them were the controller's

    def admits(self, gid: bytes | None) -> bool:
        """True if the sample's publisher is the controller's."""
        if not self.controller:
            return True
        if gid is None:
            return self._only_controller()
        if gid in self.trusted:
            return True
        if self.refused.get(gid, UNNAMED) == UNNAMED and time.monotonic() >= self.next_refresh:
            self._refresh()
            if gid in self.trusted:
                return True
            self._unknown(gid)
        return False

    def undecided(self, gid: bytes | None) -> bool:
        """A refused writer the graph names no node for yet, within its grace (not a stranger
        yet: it may be the controller's whose discovery data trails its samples)."""
        return bool(self.controller) and gid is not None and gid not in self.trusted and \
            gid not in self.refused

    def ready(self) -> bool:
        """A publisher this plant obeys is matched and named by the graph (with ``''``: any
        publisher is matched)."""
        if not self.controller:
            return self.subscription.get_publisher_count() > 0
        return self._refresh()

    def _publishers(self) -> list[tuple[str | None, bytes]]:
        self.next_refresh = time.monotonic() + REFRESH_S
        return self.node.publishers_of(self.subscription)

    def _refresh(self) -> bool:
        """Trust the pinned controller's writers, report every other named publisher once; True
        if one of the controller's is matched."""
        matched = False
        for owner, gid in self._publishers():
            if owner == self.controller and self.participant in (None, gid[:PREFIX]):
                self.participant = gid[:PREFIX]
                self.trusted.add(gid)
                matched = True
                if self.refused.pop(gid, None) is not None:
                    self.log.info(f"obeying /joint_command from {owner} (publisher {gid.hex()}) "
                                  "from now: the graph names it late")
            elif owner is not None and self.refused.get(gid, UNNAMED) == UNNAMED:
                twin = " (a second node of that name)" if owner == self.controller else ""
                self._report(gid, f"{owner}{twin}")
        return matched

    def _unknown(self, gid: bytes) -> None:
        """A writer the graph names no node for: report it once past GRACE_S."""
        first = self.first_seen.setdefault(gid, time.monotonic())
        if time.monotonic() - first > GRACE_S and gid not in self.refused:
            self._report(gid, UNNAMED)

    def _only_controller(self) -> bool:
        """No GID with the sample: every matched publisher must be the controller's."""
        count = self.subscription.get_publisher_count()
        if count != self.matched and time.monotonic() >= self.next_refresh:
            publishers = self._publishers()
            unnamed = [gid for owner, gid in publishers if owner is None]
            if len(publishers) == count and not unnamed:  # the graph has caught up
                self.matched = count
                self.sole = all(owner == self.controller for owner, _ in publishers)
                for owner, gid in publishers:
                    if owner != self.controller and self.refused.get(gid, UNNAMED) == UNNAMED:
                        self._report(gid, owner)
            else:  # asked again at the next sample past REFRESH_S
                self.matched, self.sole = -1, False
                for gid in unnamed:
                    self._unknown(gid)
        return self.sole and count == self.matched

    def _report(self, gid: bytes, who: str) -> None:
        self.refused[gid] = who
        self.log.error(f"refusing /joint_command from {who} (publisher {gid.hex()}): this plant "
                       f"obeys {self.controller} only")

    def diagnostics(self) -> dict[str, str]:
        """``foreign_publishers``: who was refused, as a JSON list."""
        if not self.refused:
            return {}
        return {"foreign_publishers": json.dumps([f"{who} ({gid.hex()})"
                                                  for gid, who in self.refused.items()])}
