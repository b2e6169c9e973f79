"""Nodes composed into one process on Cyclone DDS (robot_control.bus.node.Container).

The nodes share the process's participant (as every node of a process does, dds_context), one
executor — its thread runs every callback of every node, timers included — and one
:class:`~robot_control.bus.dds.intra_process.IntraProcess` registry, so a message published by one
node reaches the others by reference, while DDS carries it only to readers in other processes.
"""

from __future__ import annotations

import threading
import traceback
from collections.abc import Sequence

from robot_control.bus.dds.context import acquire_context, release_context
from robot_control.bus.dds.executor import Executor, ExecutorView
from robot_control.bus.dds.intra_process import IntraProcess
from robot_control.bus.dds.node import DdsNode
from robot_control.bus.node import Container, Logger, restore_signals, stop_on_signals


class DdsContainer(Container):
    """See the module docstring and :class:`~robot_control.bus.node.Container`."""

    backend = "dds"

    def __init__(self, argv: Sequence[str]) -> None:
        super().__init__()
        self._argv = list(argv)
        self._context = acquire_context()
        self.executor = Executor(self._context.participant, self._report_error)
        self.intra = IntraProcess()
        self._stop = threading.Event()
        self._spinning = False
        self._log = Logger("container")

    def create_node(self, default_name: str, *, managed: bool = False) -> DdsNode:
        if self._closed:
            raise RuntimeError("the container is shut down")
        node = DdsNode(default_name, self._argv, managed=managed, container=self)
        self.nodes.append(node)
        return node

    def executor_view(self, on_error) -> ExecutorView:
        """A node's handle on the shared executor (its readers and timers, its error log)."""
        return ExecutorView(self.executor, on_error)

    def spin(self) -> None:
        restore = stop_on_signals(self.shutdown)
        self._spinning = True
        try:
            while not self._stop.is_set():
                self.executor.spin_once(None)
        finally:
            self._spinning = False
            restore_signals(restore)
            self._close()

    def shutdown(self) -> None:
        if self._stop.is_set():
            return
        self._stop.set()
        for node in self.nodes:
            node._shutdown.set()  # node.ok is False from now on
        self.executor.wake()
        if not self._spinning:
            self._close()

    @property
    def ok(self) -> bool:
        return not self._stop.is_set()

    def _release(self) -> None:
        self.executor.close()
        release_context(self._context)

    def _report_error(self, what: str, exc: BaseException) -> None:
        """Errors of the executor itself (each node's callbacks report in that node's log)."""
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        self._log.error(f"{what}: {detail}", throttle_duration_sec=1.0)
