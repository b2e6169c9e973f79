"""The cell stack under ``ros2 launch`` (launch_pytest, the installed package's cell.launch.yaml,
rclpy nodes), in lockstep: ``ros2 lifecycle`` sees the two managed nodes brought up, ``ros2
topic`` sees the cell's topics with their standard types, and the run's first second equals the
offline run of the bundled scenario to the bit, as the rclpy-free route does (test_cell_stack.py,
the whole scenario)."""

from __future__ import annotations

import importlib
import threading

import pytest
from ros2_env import ros2, ros2_missing, wait_for

if ros2_missing():
    pytest.skip(ros2_missing(), allow_module_level=True)

import domains  # noqa: E402
import launch_pytest  # noqa: E402
from cell_helpers import SCENARIO, TOPICS, check_equals_offline  # noqa: E402
from launch.actions import RegisterEventHandler  # noqa: E402
from launch.event_handlers import OnProcessExit  # noqa: E402
from launch_helpers import Observer, check_managed_and_active, cli_env, stack_launch  # noqa: E402

import launch  # noqa: E402

pytestmark = pytest.mark.ros2
DOMAIN = domains.claim("launch-cell")
NODES = {"/cell_plant", "/cell_controller"}
#: the first second of the scenario (the bring-up, the contact, the start of the slide): the
#: rclpy-free route checks all of it (test_cell_stack.py); rclpy nodes take longer per step
DURATION_S = 1.0
EXITS: dict[str, int] = {}  # node process name -> exit code, as launch saw them end


def _message_class(ros_type: str):
    package, kind, name = ros_type.split("/")
    return getattr(importlib.import_module(f"{package}.{kind}"), name)


@pytest.fixture(scope="module")
def observer():
    """Subscribes to the cell's topics before the launch (deep queues: lockstep publishes as fast
    as the loop turns); the plant waits for its /joint_states reader (below)."""
    node = Observer(DOMAIN)
    node.samples = {topic: {} for topic in TOPICS}
    node.lock = threading.Lock()

    def keep(topic: str, msg) -> None:
        with node.lock:
            node.samples[topic][msg.header.stamp.sec * 1_000_000_000
                                + msg.header.stamp.nanosec] = msg

    for topic, ros_type in TOPICS.items():
        node.node.create_subscription(_message_class(ros_type), topic,
                                      lambda msg, topic=topic: keep(topic, msg), 10_000)
    yield node
    node.close()


@launch_pytest.fixture(scope="module")
def cell_stack(observer):
    record_exit = RegisterEventHandler(OnProcessExit(
        on_exit=lambda event, _context: EXITS.update({event.action.name: event.returncode})))
    # the plant starts once the cell controller and this test's reader are subscribed
    return launch.LaunchDescription([
        record_exit,
        *stack_launch(DOMAIN, "cell.launch.yaml", lockstep="true", start_subscribers="2"),
        launch_pytest.actions.ReadyToTest(),
    ])


@pytest.fixture(scope="module")
def run(observer):
    """The offline run of the scenario, once every state of it has come over the bus."""
    from robot_control.sim.cell_simulate import load_cell_scenario, run_cell

    sc = load_cell_scenario(SCENARIO)
    sc.duration = DURATION_S
    offline = run_cell(sc)
    period = 1_000_000_000 // int(sc.rate)
    stamps = [k * period for k in range(offline.summary["steps"] + 1)]

    def have_all() -> bool:
        with observer.lock:
            return all(all(s in got for s in stamps) for got in observer.samples.values())

    assert wait_for(have_all, 240.0), {t: len(s) for t, s in observer.samples.items()}
    return sc, offline


@pytest.mark.launch(fixture=cell_stack)
def test_ros2_lifecycle_and_topic_see_the_cell_stack(run):
    env = cli_env(DOMAIN)
    check_managed_and_active(env, NODES)
    topics = ros2(env, "topic", "list", "-t", "--no-daemon")
    for topic, ros_type in TOPICS.items():
        assert f"{topic} [{ros_type}]" in topics, topics


@pytest.mark.launch(fixture=cell_stack)
def test_lockstep_cell_launch_equals_the_offline_run(run, observer):
    sc, offline = run
    with observer.lock:
        samples = {topic: dict(got) for topic, got in observer.samples.items()}
    check_equals_offline(samples, sc, offline)


@pytest.mark.launch(fixture=cell_stack, shutdown=True)
def test_every_cell_node_exits_cleanly_when_launch_stops():
    """launch_pytest stops the launch after the tests: SIGINT to each node, as Ctrl-C does."""
    assert sorted(name.rsplit("-", 1)[0] for name in EXITS) == [
        "cell_controller", "cell_plant", "lifecycle_manager"], EXITS
    assert set(EXITS.values()) == {0}, EXITS
