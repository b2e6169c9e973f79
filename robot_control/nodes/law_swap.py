"""Which law a controller node runs, and the swap to another: one owner, an explicit state machine.

:class:`LawSwap` alone holds the current law (``law``, ``name``), the law being made for a swap
and the take-over the current law owes at its next tick. Each law is made (configured) once per
swap, by the parameter validation that accepts it (nodes/law_host.py); a worker thread only
compiles it, while the current law keeps the loop, and it takes over at the first tick after.

Phases (:class:`Phase`) and transitions; ``swap(law, name)`` is a new ``controller`` value (or
new parameters of the law being made), ``tick()`` the start of each control period:

=========  ==============================  =========  ==========================================
from       event                           to         what happens
=========  ==============================  =========  ==========================================
EMPTY      ``select(name)``                EMPTY      the name ``install`` will be given (a
                                                      parameter change while unconfigured)
EMPTY      ``install(law, name)``          RUNNING    configure: the law is current, unchecked
RUNNING    ``swap(law, name)``, another    MAKING     a worker compiles ``law``
RUNNING    ``swap(_, name)``, the current  RUNNING    nothing to do
MAKING     worker done, latest swap        READY      ``law`` waits for the next tick
MAKING     worker done, an older swap      MAKING     its law is dropped
MAKING     worker failed (compile error)   RUNNING    logged, ``failed`` says why; the current
                                                      law keeps the loop
MAKING     ``swap(law', name')``, a third  MAKING     the older worker's law will be dropped
MAKING     ``swap(_, name)``, the current  RUNNING    the worker's law will be dropped
READY      ``swap(...)``                   as MAKING  the made law is dropped
READY      ``tick()``                      RUNNING    the made law is current; take-over SWAP
any        ``install(law, name)``          RUNNING    (re)configure: any swap is dropped
any        ``clear()``                     EMPTY      cleanup: no law, any swap is dropped
=========  ==============================  =========  ==========================================

Take-overs (:class:`Takeover`), what the current law owes at its next tick (``tick()`` returns
and forgets it): ACTIVATE after ``activate()`` (an activation) or ``stalled()`` (the loop stood
still; an owed one is kept), SWAP when a made law becomes current, GAINS after ``gains()`` (its
parameters changed; an owed ACTIVATE or SWAP is kept).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from enum import Enum


class Phase(Enum):
    """Where the swap machine is."""

    EMPTY = "empty"  # no law (unconfigured, cleaned up)
    RUNNING = "running"  # the current law drives; no swap under way
    MAKING = "making"  # a worker compiles the next law; the current one drives
    READY = "ready"  # the next law is compiled; it takes over at the next tick


class Takeover(Enum):
    """How the current law starts at its next tick (LawHost.update)."""

    ACTIVATE = "activate"  # from the torque the plant applies (lockstep: as configured)
    SWAP = "swap"  # a new law: reset from the torque applied
    GAINS = "gains"  # new parameters: continue from the torque applied, state kept


class LawSwap:
    """The one owner of the current law and of the swap to the next (module doc: the table)."""

    def __init__(self, log, name: str, compile_law: Callable[[object, str], None]) -> None:
        self.log = log
        self.compile_law = compile_law  # (law, name): compile its update (a worker thread)
        self.phase = Phase.EMPTY
        self.law = None
        self.name = name
        self.next_name: str | None = None  # MAKING, READY: the law being made
        self.takeover: Takeover | None = None
        self.checked = False  # the current law was checked against the first state
        self.failed = ""  # why the last swap failed ('' if none did)
        self._incoming = None  # READY: the made law
        self._seq = 0  # the latest swap: an older worker's law is dropped
        self._lock = threading.Lock()
        self._worker: threading.Thread | None = None

    @property
    def selected(self) -> str:
        """The law the ``controller`` parameter names: the one running or the one being made."""
        return self.next_name or self.name

    def select(self, name: str) -> None:
        """EMPTY: the law ``install`` will make."""
        if self.phase is not Phase.EMPTY:
            raise RuntimeError(f"select({name}) while {self.phase.value}: swap instead")
        self.name = name

    def install(self, law, name: str) -> None:
        """Configure: ``law`` is current (to be checked at its first state); a swap is dropped."""
        with self._lock:
            self._seq += 1
            self.law, self.name, self.phase = law, name, Phase.RUNNING
            self.next_name, self._incoming, self.takeover = None, None, None
            self.checked = False

    def clear(self) -> None:
        """Cleanup: no law; a swap under way is dropped."""
        with self._lock:
            self._seq += 1
            self.name = self.selected
            self.law, self.phase, self.next_name, self._incoming = None, Phase.EMPTY, None, None
            self.takeover = None

    def swap(self, law, name: str) -> None:
        """Make ``law`` (configured, called ``name``) the next law: a worker compiles it and it
        takes over at the first tick after; to the current law's name: cancel the swap."""
        with self._lock:
            if self.phase is Phase.EMPTY:
                raise RuntimeError(f"swap to {name} before a law is installed: select it")
            self._seq += 1
            self._incoming = None
            if name == self.name:
                self.phase, self.next_name = Phase.RUNNING, None
                return
            self.phase, self.next_name, self.failed = Phase.MAKING, name, ""
            seq = self._seq
        self._worker = threading.Thread(target=self._make, args=(seq, law, name),
                                        name=f"swap to {name}", daemon=True)
        self._worker.start()

    def _make(self, seq: int, law, name: str) -> None:
        """The worker: compile ``law`` before it takes over, not in its first tick."""
        try:
            self.compile_law(law, name)
        except Exception as exc:  # noqa: BLE001 - any compile failure abandons the swap, logged
            with self._lock:
                if seq == self._seq:
                    self.phase, self.next_name = Phase.RUNNING, None
                    self.failed = f"swap to {name} failed: {exc}"
            self.log.error(f"swap to {name} abandoned: {exc}")
            return
        with self._lock:
            if seq == self._seq:
                self.phase, self._incoming = Phase.READY, law

    def wait(self, timeout: float) -> bool:
        """Wait until no worker runs (at most ``timeout`` s); False if one still does."""
        worker = self._worker
        if worker is not None:
            worker.join(timeout)
            return not worker.is_alive()
        return True

    def activate(self) -> None:
        """An activation: the current law takes over from the plant at its next tick."""
        self.takeover = Takeover.ACTIVATE

    def stalled(self) -> None:
        """The loop stood still: take over as after an activation, unless one is owed already."""
        self.takeover = self.takeover or Takeover.ACTIVATE

    def gains(self) -> None:
        """The current law's parameters changed: continue from the torque applied."""
        self.takeover = self.takeover or Takeover.GAINS

    def tick(self) -> Takeover | None:
        """Start of a control period: a READY law becomes current; the take-over owed (forgotten)."""
        with self._lock:
            if self.phase is Phase.READY:
                self.log.info(f"controller swapped: {self.name} → {self.next_name}")
                self.law, self.name, self.takeover = self._incoming, self.next_name, Takeover.SWAP
                self.phase, self.next_name, self._incoming = Phase.RUNNING, None, None
            owed, self.takeover = self.takeover, None
        return owed
