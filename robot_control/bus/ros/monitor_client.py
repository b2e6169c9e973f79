"""The launch monitor's bus client on rclpy, for a secure stack: a plain Cyclone DDS participant
(the rclpy-free :class:`~robot_control.bus.dds.client.BusClient`) is not admitted to a domain under
DDS Security, so ``robot-control launch security:=true`` watches its stack through an rclpy node
of its own context in the observer enclave (subscribe only, config/security/profiles/observer.xml).

It offers what :class:`~robot_control.bringup.summary.StackMonitor` and the runner's name check
use of a BusClient: ``typed_reader``/``samples``, ``node_list``, ``graph.settle``,
``context.domain_id`` and ``close``.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rosidl_runtime_py.utilities import get_message

from robot_control.security import OBSERVER_ENCLAVE

NODE_NAME = "_robot_control_launch_monitor"  # leading '_': hidden from ros2 node list


@contextmanager
def _environment(extra: Mapping[str, str]):
    """os.environ with ``extra`` while rcl reads its security options (at init), then as before."""
    saved = {k: os.environ.get(k) for k in extra}
    os.environ.update(extra)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


class _Graph:
    def settle(self, min_s: float, max_s: float) -> None:
        """rclpy keeps its graph current itself: waiting min_s lets discovery run."""
        time.sleep(min_s)


class _Context:
    def __init__(self, domain_id: int) -> None:
        self.domain_id = domain_id


class RclpyBusClient:
    """An rclpy node in its own context and enclave, spun by a thread; readers are queues."""

    def __init__(self, env: Mapping[str, str], enclave: str = OBSERVER_ENCLAVE) -> None:
        self._rcl_context = rclpy.Context()
        domain = int(env.get("ROS_DOMAIN_ID", "0") or 0)
        with _environment({k: v for k, v in env.items() if k.startswith("ROS_")}):
            rclpy.init(args=["--ros-args", "--enclave", enclave], context=self._rcl_context,
                       domain_id=domain)
            # no parameter or type-description services: the observer enclave serves nothing
            self.node = rclpy.create_node(
                NODE_NAME, context=self._rcl_context, start_parameter_services=False,
                enable_rosout=False,
                parameter_overrides=[Parameter("start_type_description_service", value=False)])
        self.context = _Context(domain)
        self.graph = _Graph()
        self._subscriptions: dict[int, object] = {}  # id(queue) -> its subscription
        self._executor = SingleThreadedExecutor(context=self._rcl_context)
        self._executor.add_node(self.node)
        self._thread = threading.Thread(target=self._executor.spin, daemon=True,
                                        name="rclpy monitor")
        self._thread.start()

    def typed_reader(self, topic: str, ros_type: str, profile) -> queue.SimpleQueue:
        """A subscription with the profile's reliability, durability and depth; its queue."""
        received: queue.SimpleQueue = queue.SimpleQueue()
        qos = QoSProfile(
            depth=profile.depth,
            reliability=ReliabilityPolicy.RELIABLE if profile.reliable
            else ReliabilityPolicy.BEST_EFFORT,
            durability=DurabilityPolicy.TRANSIENT_LOCAL if profile.transient_local
            else DurabilityPolicy.VOLATILE)
        self._subscriptions[id(received)] = self.node.create_subscription(
            get_message(ros_type), topic, received.put, qos)
        return received

    def samples(self, reader: queue.SimpleQueue, stop: threading.Event) -> Iterator[object]:
        """Messages of a reader as they come, until ``stop`` is set; the subscription is
        destroyed at the end (as the rclpy-free client deletes its reader)."""
        try:
            while not stop.is_set():
                try:
                    yield reader.get(timeout=0.1)
                except queue.Empty:
                    continue
        finally:
            subscription = self._subscriptions.pop(id(reader), None)
            if subscription is not None:
                # destroyed on the spin thread, between two waits: from this thread it could go
                # while the executor adds its event handlers to a wait set, and the spin thread
                # would die of InvalidHandle (rclpy), leaving the monitor deaf
                self._executor.create_task(self.node.destroy_subscription, subscription)

    def node_list(self) -> list[str]:
        """Fully qualified names of the nodes on the domain (as often as nodes have them),
        this monitor's own node left out."""
        return [f"{ns.rstrip('/')}/{name}"
                for name, ns in self.node.get_node_names_and_namespaces()
                if name != NODE_NAME]

    def close(self) -> None:
        self._executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self._rcl_context)
        self._thread.join(5.0)

    def __enter__(self) -> RclpyBusClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
