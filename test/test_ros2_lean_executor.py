"""LeanExecutor (bus/ros/executor.py) keeps rclpy's executor semantics: timers, subscriptions,
services and clients, guard conditions, coroutine callbacks and tasks all run; an entity made
or destroyed inside a callback is picked up or dropped; rclpy's own SingleThreadedExecutor
gives the same results on the same script."""

from __future__ import annotations

import threading
import time

import pytest
from ros2_env import private_rclpy_domain, ros2_missing, wait_for

if ros2_missing():
    pytest.skip(ros2_missing(), allow_module_level=True)

import rclpy  # noqa: E402
from rcl_interfaces.srv import GetParameters  # noqa: E402
from rclpy.callback_groups import ReentrantCallbackGroup  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.task import Future  # noqa: E402
from std_msgs.msg import Int64  # noqa: E402

from robot_control.bus.ros.executor import LeanExecutor  # noqa: E402

pytestmark = pytest.mark.ros2
MESSAGES = 100

private_domain = private_rclpy_domain("lean-executor")


@pytest.fixture
def context():
    ctx = rclpy.Context()
    rclpy.init(context=ctx)
    yield ctx
    ctx.try_shutdown()


def run_script(executor_class, context) -> dict:
    """Two nodes on one executor spun by a thread: a 1 ms timer, a topic both ways, a service
    called by the other node, a guard condition, a task awaiting a future, a coroutine timer
    callback, a subscription destroyed by its own callback and one created by a callback. What
    happened."""
    executor = executor_class(context=context)
    a = rclpy.create_node("lean_a", context=context)
    b = rclpy.create_node("lean_b", context=context, parameter_overrides=[
        rclpy.parameter.Parameter("answer", value=42)],
        automatically_declare_parameters_from_overrides=True)
    executor.add_node(a)
    executor.add_node(b)
    got = {"ticks": 0, "received": [], "once": [], "late": [], "guard": 0, "async": []}
    pub = b.create_publisher(Int64, "lean_numbers", 1000)
    a.create_subscription(Int64, "lean_numbers", lambda m: got["received"].append(m.data), 1000)

    def tick() -> None:
        got["ticks"] += 1
    a.create_timer(0.001, tick)

    once = {}

    def first_only(msg) -> None:  # destroys itself: no second call
        got["once"].append(msg.data)
        a.destroy_subscription(once["sub"])
        a.create_subscription(Int64, "lean_numbers", lambda m: got["late"].append(m.data), 1000)
    once["sub"] = a.create_subscription(Int64, "lean_numbers", first_only, 1000)

    guard = a.create_guard_condition(lambda: got.__setitem__("guard", got["guard"] + 1))
    ended = Future()

    async def waits_for_the_end() -> None:  # as an action goal's execute callback
        got["async"].append("started")
        got["async"].append(await ended)
    executor.create_task(waits_for_the_end)

    async def async_tick() -> None:  # a coroutine callback: rclpy's Task runs it
        got["async_ticks"] = got.get("async_ticks", 0) + 1
    a.create_timer(0.005, async_tick, callback_group=ReentrantCallbackGroup())
    client = a.create_client(GetParameters, "/lean_b/get_parameters")

    thread = threading.Thread(target=lambda: executor.spin(), daemon=True)
    thread.start()
    try:
        assert wait_for(lambda: pub.get_subscription_count() >= 2, 10.0)
        pub.publish(Int64(data=0))
        assert wait_for(lambda: got["once"] and got["received"], 10.0)
        assert wait_for(lambda: pub.get_subscription_count() >= 2, 10.0)  # the late one
        for k in range(1, MESSAGES):
            pub.publish(Int64(data=k))
        assert wait_for(lambda: len(got["received"]) >= MESSAGES, 10.0), len(got["received"])
        assert client.wait_for_service(timeout_sec=10.0)
        future = client.call_async(GetParameters.Request(names=["answer"]))
        assert wait_for(future.done, 10.0)
        got["answer"] = future.result().values[0].integer_value
        guard.trigger()
        assert wait_for(lambda: got["guard"] == 1, 10.0)
        assert wait_for(lambda: "started" in got["async"], 10.0)
        ended.set_result("ended")
        assert wait_for(lambda: "ended" in got["async"], 10.0), got["async"]
        ticks = got["ticks"]
        time.sleep(0.2)
        got["ticks_in_200ms"] = got["ticks"] - ticks
    finally:
        executor.shutdown()
        thread.join(10.0)
        alive = thread.is_alive()
        a.destroy_node()
        b.destroy_node()
    assert not alive, "spin did not end after shutdown()"
    return got


@pytest.mark.parametrize("executor_class", [LeanExecutor, SingleThreadedExecutor])
def test_every_kind_of_entity_runs(executor_class, context, monkeypatch):
    direct = []
    run_timer = LeanExecutor._run_timer
    monkeypatch.setattr(LeanExecutor, "_run_timer", lambda self, timer: (
        direct.append(timer.callback.__name__), run_timer(self, timer))[1])
    got = run_script(executor_class, context)
    if executor_class is LeanExecutor:  # the plain 1 ms timer ran without rclpy's handler (but
        # when a round rclpy ran for another entity found it due as well: on a loaded machine
        # more rounds do, 596 of 701 ticks ran directly in one suite run; without the direct path
        # none would)
        assert direct.count("tick") >= 0.5 * got["ticks"], (direct.count("tick"), got["ticks"])
    assert got["received"] == list(range(MESSAGES))  # in order, each once
    assert got["once"] == [0]  # destroyed by its own callback: never called again
    assert got["late"][-1] == MESSAGES - 1 and got["late"] == sorted(set(got["late"]))
    assert got["answer"] == 42
    assert got["guard"] == 1
    assert got["async"] == ["started", "ended"]
    assert got["async_ticks"] > 10
    assert got["ticks_in_200ms"] > 100, got["ticks_in_200ms"]  # a 1 ms timer keeps its rate
