"""Safety rules against the nodes themselves (in this process, real DDS on a private domain): a light
wrist given a few N·m is held, never faulted; the plant's safety parameters are read-only while
it is active, and its overspeed stop holds the arm whatever ``safe_behaviour`` says; the
controller's trajectory topic refuses what the generator would, and a controller whose commands
the plant rejects says so on /diagnostics."""

from __future__ import annotations

import math
import os
import re
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from bus_probe import isolated_bus_env
from node_harness import Answerer, managed, shut, spin

from robot_control.bus import ParameterError
from robot_control.bus.backend import create_node
from robot_control.nodes.controller_node import ControllerNode
from robot_control.nodes.convert import TRAJECTORY_TOPIC, Messages
from robot_control.nodes.health import ERROR, OK, WARN
from robot_control.nodes.plant_node import PlantNode
from robot_control.nodes.validation import MAX_MOTION_POINTS, MAX_MOTION_S


@pytest.fixture(scope="module", autouse=True)
def isolated_bus():
    with isolated_bus_env("reliability-nodes"):
        yield


# --- item 2: never fault where a stop will do ------------------------------------------------------


def test_a_puma_wrist_given_5_nm_per_joint_is_held_not_faulted():
    node, plant = managed(PlantNode, "plant", "robot:=puma560", "rate:=200.0")
    names = list(plant.names)
    # the reported probe: a state's stamp copied into 5 N·m per joint, every state answered
    answerer = Answerer("controller", names, lambda msg: [5.0] * len(names))
    try:
        spin([node, answerer.node], 2.0, until=lambda: plant.health.faulted)
        spin([node, answerer.node], 1.0, until=lambda: plant.health.faulted)
        assert answerer.sent > 50
        assert not plant.health.faulted, plant.health.fault_reason
        assert plant.guard.limited > 0  # the runaway commands were stopped by the limiter ...
        assert plant.commanded > 0  # ... while the others applied
        trip = plant.guard.trip
        assert np.all(np.abs(plant.plant.qd) <= trip)
    finally:
        shut(answerer.node, node)


# --- item 4: safety parameters ---------------------------------------------------------------------


def test_safety_parameters_are_read_only_while_the_plant_is_active():
    node, plant = managed(PlantNode, "plant", "robot:=ddarm", "rate:=200.0")
    try:
        for name, value in (("safe_behaviour", "zero_torque"), ("overspeed_factor", 5.0),
                            ("command_timeout", 5.0), ("hold_damping", 0.0)):
            with pytest.raises(ParameterError, match="read-only while it is active"):
                node.set_parameters({name: value})
        assert plant.safety.safe_behaviour == "hold" and plant.safety.overspeed_factor == 1.2
        assert node.trigger_transition("deactivate").name == "SUCCESS"
        with pytest.raises(ParameterError, match="safe_behaviour must be one of hold, zero_torque"):
            node.set_parameters({"safe_behaviour": "coast"})
        node.set_parameters({"safe_behaviour": "zero_torque", "overspeed_factor": 1.5})
        assert plant.safety.safe_behaviour == "zero_torque"
        assert plant.safety.overspeed_factor == plant.guard.factor == 1.5
    finally:
        shut(node)


def test_an_overspeed_stop_holds_the_arm_when_the_safe_behaviour_is_zero_torque():
    # no controller: the plant applies its safe behaviour, zero torque, and the arm falls
    node, plant = managed(PlantNode, "plant", "robot:=ddarm", "rate:=200.0",
                          "safe_behaviour:=zero_torque", "initial_q:=[0.0, 0.3, 0.0]")
    fastest = [0.0]

    def watch() -> None:
        fastest[0] = max(fastest[0], float(np.max(np.abs(plant.plant.qd))))

    try:
        spin([node], 4.0, each=watch)
        assert plant.guard.stops >= 1  # it fell fast enough to trip the stop ...
        # ... which held it: never far past the trip (6 rad/s), where zero torque let it reach 11
        assert fastest[0] < 8.0, fastest[0]
        assert not plant.health.faulted
    finally:
        shut(node)


# --- item 3: every entry point validates like the generator -----------------------------------------


def motion(m: Messages, names: list[str], points: list[tuple[float, list[float]]]):
    """A JointTrajectory of (time from start, positions) points, starting on receipt."""
    msg = m.joint_trajectory(0, names, (np.array([t for t, _ in points]),
                                        np.array([q for _, q in points]),
                                        np.zeros((len(points), len(names))),
                                        np.zeros((len(points), len(names)))))
    return msg


def test_the_controllers_trajectory_topic_refuses_what_the_generator_would():
    node, ctrl = managed(ControllerNode, "controller", "robot:=ddarm", "rate:=200.0",
                         start=False)
    sender = create_node("sender", ["prog"], backend="dds")
    m = Messages(sender)
    pub = sender.create_publisher("trajectory_msgs/msg/JointTrajectory", TRAJECTORY_TOPIC,
                                  qos="transient_local")
    names = list(ctrl.names)
    q0 = [-0.1, 1.5, 1.0]
    many = [(0.01 * k, q0) for k in range(MAX_MOTION_POINTS + 1)]
    bad = {
        "limits": motion(m, names, [(0.0, q0), (2.0, [10 * 3.2, 1.5, 1.0])]),  # 10× a limit
        "speed": motion(m, names, [(0.0, q0), (0.1, [1.9, 1.5, 1.0])]),  # 2 rad in 0.1 s
        "nan": motion(m, names, [(0.0, q0), (1.0, [math.nan, 1.5, 1.0])]),
        "step": motion(m, names, [(0.0, [1.0, 1.0, 1.0])]),  # one point at t = 0
        # 5 mrad in 4 ms: within the position and velocity limits, 40× joint 1's effort limit
        "torque": motion(m, names, [(0.0, q0), (0.004, [-0.095, 1.5, 1.0])]),
        "count": motion(m, names, many),
        "duration": motion(m, names, [(0.0, q0), (MAX_MOTION_S + 10.0, q0)]),
    }
    dropped = lambda: ctrl.drops.counts["/" + TRAJECTORY_TOPIC]  # noqa: E731
    try:
        for i, (what, msg) in enumerate(bad.items()):
            pub.publish(msg)
            assert spin([node, sender], 10.0, until=lambda i=i: dropped() > i), what
        assert ctrl.schedule.sample(time.time_ns()) is None  # none of them is scheduled
        good = motion(m, names, [(0.0, q0), (2.0, [0.2, 1.2, 0.8])])
        pub.publish(good)
        assert spin([node, sender], 10.0,
                    until=lambda: ctrl.schedule.sample(time.time_ns()) is not None)
        assert dropped() == len(bad)
    finally:
        shut(sender, node)


def motion_sender():
    """A node that sends the controller motions and joint states: (node, its messages, the
    motion publisher, the joint-state publisher)."""
    sender = create_node("sender", ["prog"], backend="dds")
    traj = sender.create_publisher("trajectory_msgs/msg/JointTrajectory", TRAJECTORY_TOPIC,
                                   qos="transient_local")
    states = sender.create_publisher("sensor_msgs/msg/JointState", "/joint_states")
    return sender, Messages(sender), traj, states


def test_a_motion_received_ahead_of_its_start_is_checked_after_the_next_command():
    """Checking a motion takes about a millisecond of Python: one that starts later waits for the
    slack after the next command (it delays no tick), one that starts now is taken at once."""
    node, ctrl = managed(ControllerNode, "controller", "robot:=ddarm", "rate:=200.0")
    sender, m, traj, states = motion_sender()
    commands: list[int] = []
    sender.create_subscription("sensor_msgs/msg/JointState", "/joint_command",
                               lambda msg: commands.append(msg.header.stamp.sec))
    names, q0, zeros = list(ctrl.names), [-0.1, 1.5, 1.0], [0.0, 0.0, 0.0]
    knots = (np.array([0.0, 2.0]), np.array([q0, [0.2, 1.2, 0.8]]), np.zeros((2, 3)),
             np.zeros((2, 3)))
    try:
        assert spin([node, sender], 10.0, until=lambda: traj.get_subscription_count() > 0)
        traj.publish(m.joint_trajectory(time.time_ns() + 2_000_000_000, names, knots))
        assert spin([node, sender], 10.0, until=lambda: len(ctrl.ahead) == 1)
        spin([node, sender], 0.2)
        assert len(ctrl.schedule) == 0  # received, not yet checked: no command made room
        states.publish(m.joint_state(time.time_ns(), names, q0, zeros))
        assert spin([node, sender], 10.0, until=lambda: len(ctrl.schedule) == 1 and commands)
        assert not ctrl.ahead
        assert ctrl.schedule.sample(time.time_ns()) is None  # it starts in two seconds
        traj.publish(m.joint_trajectory(0, names, knots))  # from now on: taken on receipt
        assert spin([node, sender], 10.0,
                    until=lambda: ctrl.schedule.sample(time.time_ns()) is not None)
        assert not ctrl.ahead
    finally:
        shut(sender, node)


def test_a_motion_anchored_at_a_state_the_arm_has_since_left_starts_there():
    """The generator starts its motion at one joint state and stamps it so; an arm settling
    under a law that has just taken over (the adaptive law sags 0.04 rad) has moved on by the
    time the motion arrives. Checked against the state of its stamp, it is taken; the same
    motion stamped with a state the controller never saw is checked against the newest one
    and refused (CI's launch of the adaptive law lost its first motion so)."""
    node, ctrl = managed(ControllerNode, "controller", "robot:=ddarm", "rate:=200.0")
    sender, m, traj, states = motion_sender()
    names, q0, zeros = list(ctrl.names), [-0.1, 1.5, 1.0], [0.0, 0.0, 0.0]
    sagged = [-0.1, 1.54, 1.0]
    knots = (np.array([0.0, 2.0]), np.array([q0, [0.2, 1.2, 0.8]]), np.zeros((2, 3)),
             np.zeros((2, 3)))
    dropped = lambda: ctrl.drops.counts["/" + TRAJECTORY_TOPIC]  # noqa: E731
    try:
        assert spin([node, sender], 10.0, until=lambda: traj.get_subscription_count() > 0
                    and states.get_subscription_count() > 0)
        anchored = time.time_ns()
        states.publish(m.joint_state(anchored, names, q0, zeros))
        assert spin([node, sender], 10.0, until=lambda: ctrl.recent.at(anchored) is not None)
        states.publish(m.joint_state(anchored + 20_000_000, names, sagged, zeros))
        assert spin([node, sender], 10.0, until=lambda: ctrl.last_state is not None
                    and ctrl.last_state.q[1] > 1.53)
        traj.publish(m.joint_trajectory(anchored + 5_000_000, names, knots))  # unseen stamp
        assert spin([node, sender], 10.0, until=lambda: dropped() == 1)
        assert len(ctrl.schedule) == 0
        traj.publish(m.joint_trajectory(anchored, names, knots))
        assert spin([node, sender], 10.0, until=lambda: len(ctrl.schedule) == 1)
        assert dropped() == 1
    finally:
        shut(sender, node)


def test_gains_too_high_for_the_actuators_saturate_and_are_blamed_only_at_rest():
    """Commands beyond the effort limits are saturated at them by the controller (the plant
    never gets one to reject); "gains too high" is an ERROR only when the reference is at rest
    (nodes/saturation.py) — an arm falling behind a moving reference only saturates (WARN)."""
    node, ctrl = managed(ControllerNode, "controller", "robot:=ddarm", "rate:=200.0")
    sender = create_node("sender", ["prog"], backend="dds")
    m = Messages(sender)
    states = sender.create_publisher("sensor_msgs/msg/JointState", "/joint_states")
    commands = []
    sender.create_subscription("sensor_msgs/msg/JointState", "/joint_command",
                               lambda msg: commands.append(np.asarray(msg.effort)))
    traj = sender.create_publisher("trajectory_msgs/msg/JointTrajectory", "/" + TRAJECTORY_TOPIC,
                                   qos="transient_local")
    names = list(ctrl.names)
    limit = np.asarray(ctrl.model.effort_limit)
    q0 = np.array([-0.1, 1.5, 1.0])

    def publish_state(q) -> None:
        states.publish(m.joint_state(time.time_ns(), names, q, [0.0] * 3, [0.0] * 3))

    try:
        publish_state(q0)  # held here from now on
        assert spin([node, sender], 10.0, until=lambda: ctrl.laws.updates > 0)
        assert ctrl._status()[0] == OK
        # 0.3 rad in 0.5 s: its feedforward (~90 N·m) is within the limits, so the controller
        # takes it (a motion beyond them is refused: trajectory/feasibility.py); the arm is
        # stuck at q0 (it is heavier than the model, say), so the feedback on 0.2 rad of error
        # asks for thousands of N·m while the reference still moves
        knots = (np.array([0.0, 0.5]), np.vstack([q0, q0 + 0.3]), np.zeros((2, 3)),
                 np.zeros((2, 3)))
        start = time.time_ns() + 50_000_000
        traj.publish(m.joint_trajectory(start, names, knots))
        while time.time_ns() < start + 300_000_000:  # the reference moving, the arm stuck
            publish_state(q0)
            spin([node, sender], 0.002)
        level, message, values = ctrl._status()
        assert values["saturated_commands"] > 0
        assert level == WARN and "saturating at the effort limits" in message, message
        assert commands and np.all(np.abs(commands) <= limit + 1e-9)
        node.set_parameters({"computed_torque.kp": [1e6] * 3})  # accepted: within the law's range
        end = time.monotonic() + 1.5
        while time.monotonic() < end:  # 0.1 rad off the rest: kp e far beyond the limits
            publish_state(q0 + 0.4)
            spin([node, sender], 0.005)
        level, message, values = ctrl._status()
        assert level == ERROR and "gains too high for the actuators" in message, message
        assert values["commands_beyond_plant_limit"] == 0
        assert np.all(np.abs(commands) <= limit + 1e-9)  # the plant had nothing to reject
    finally:
        shut(sender, node)


def test_an_adaptive_law_does_not_integrate_while_its_torque_saturates():
    """Anti-windup: on a tick whose torque the controller saturates, p̂ stays where it was; on
    ticks within the limits it adapts."""
    node, ctrl = managed(ControllerNode, "controller", "robot:=ddarm", "rate:=200.0",
                         "controller:=adaptive")
    sender = create_node("sender", ["prog"], backend="dds")
    m = Messages(sender)
    states = sender.create_publisher("sensor_msgs/msg/JointState", "/joint_states")
    names = list(ctrl.names)
    q0 = np.array([-0.1, 1.5, 1.0])

    def tick(q) -> np.ndarray:
        before = ctrl.laws.saturation.count, ctrl.laws.updates
        states.publish(m.joint_state(time.time_ns(), names, q, [0.0] * 3, [0.0] * 3))
        assert spin([node, sender], 5.0, until=lambda: ctrl.laws.updates > before[1])
        return ctrl.laws.saturation.count > before[0]

    try:
        for _ in range(5):
            tick(q0)  # held here
        p_hat = ctrl.laws.law.p_hat.copy()
        saturated = [tick(q0 + 0.5) for _ in range(20)]  # far off: Kd r beyond the limits
        assert all(saturated)
        assert np.array_equal(ctrl.laws.law.p_hat, p_hat)
        within = [tick(q0 + 1e-3) for _ in range(20)]
        assert not any(within[5:])
        assert not np.array_equal(ctrl.laws.law.p_hat, p_hat)  # it adapts again
    finally:
        shut(sender, node)


# --- item 8: swaps are instant ----------------------------------------------------------------------

STORM_LAWS = ["adaptive", "passivity", "sliding_mode", "robust", "adaptive_craig", "pd_gravity",
              "computed_torque"]


def test_a_storm_of_law_swaps_is_answered_in_time_and_the_heartbeat_goes_on():
    from robot_control.bus.dds.client import BusClient
    from robot_control.bus.dds.msg import rcl_interfaces as rcl
    from robot_control.bus.dds.parameters import to_value_msg

    beats: list[float] = []
    stop = threading.Event()

    def heartbeats() -> None:
        with BusClient(discovery_s=1.0) as watcher:
            for msg in watcher.iter_topic("/diagnostics", timeout_s=30.0, discovery_s=60.0):
                if any(str(s.name).startswith("/controller:") for s in msg.status):
                    beats.append(time.monotonic())
                if stop.is_set():
                    return

    # debug level: warm_up logs "law.<name> ready in …" whenever a law is compiled or loaded
    controller = subprocess.Popen(
        [sys.executable, "-m", "robot_control.nodes.controller_node", "--ros-args",
         "--log-level", "debug", "-p", "autostart:=true", "-p", "robot:=ddarm",
         "-p", "rate:=200.0"], env=dict(os.environ), stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    try:
        with BusClient(discovery_s=1.0) as client:
            watch = threading.Thread(target=heartbeats, daemon=True)
            watch.start()
            deadline = time.monotonic() + 120
            while not beats:  # it spins (and beats) once autostart configured and activated it
                assert time.monotonic() < deadline, "the controller did not come up"
                time.sleep(0.2)
            # 20 swaps a second for 10 s, each answered within its 0.5 s deadline (each is
            # installed at the next tick; with no states here, only the last would be)
            replies, start, storm_wall = [], time.monotonic(), time.time()
            for k in range(200):
                law = STORM_LAWS[k % len(STORM_LAWS)]
                sent = time.monotonic()
                response = client._call("/controller", "set_parameters",
                                        rcl.SetParametersRequest(parameters=[rcl.Parameter(
                                            name="controller", value=to_value_msg(law))]),
                                        timeout_s=5.0)
                replies.append(time.monotonic() - sent)
                assert response.results[0].successful, response.results[0].reason
                time.sleep(max(0.0, start + 0.05 * (k + 1) - time.monotonic()))
            ended = time.monotonic()
            stop.set()
            watch.join(10.0)
    finally:
        controller.send_signal(signal.SIGINT)
        logs = controller.communicate(timeout=30)[0]
    # no law was compiled or loaded during the storm: all of them were at configure
    loaded = [(float(m[1]), m[2]) for m in re.finditer(
        r"\[DEBUG\] \[(\d+\.\d+)\] \[controller\]: (law\.\w+) ready in", logs)]
    assert {name for _, name in loaded} >= {f"law.{law}" for law in STORM_LAWS}, logs[-3000:]
    assert [name for stamp, name in loaded if stamp >= storm_wall] == [], logs[-3000:]
    assert max(replies) < 0.5, max(replies)
    during = [t for t in beats if start <= t <= ended]
    assert max(np.diff([start, *during, ended])) < 1.2  # twice a second, never silent


# --- item 1: the plant obeys its own controller only --------------------------------------------------


def test_the_plant_obeys_its_controllers_publisher_only_and_reports_others_once():
    watcher = create_node("watcher", ["prog"], backend="dds")
    rosout: list[str] = []
    watcher.create_subscription("rcl_interfaces/msg/Log", "/rosout",
                                lambda msg: rosout.append(str(msg.msg)), qos=1000)
    node, plant = managed(PlantNode, "plant", "robot:=puma560", "rate:=200.0")
    names = list(plant.names)
    controller = Answerer("controller", names, lambda msg: list(msg.effort))  # holds: τ applied
    # the reported probe: a state's stamp copied into 5 N·m per joint
    intruder = Answerer("intruder", names, lambda msg: [5.0] * len(names))
    nodes = [node, controller.node, intruder.node, watcher]
    try:
        spin(nodes, 3.0)
        assert controller.sent > 50 and intruder.sent > 50
        refusals = [line for line in rosout if line.startswith("refusing /joint_command")]
        assert len(refusals) == 1 and "from /intruder" in refusals[0], refusals  # once
        # every intruder command refused (once quarantined, undecoded), the controller's applied
        assert plant.foreign + plant.gate.ignored >= intruder.sent - 5 and plant.commanded > 50
        assert not plant.health.faulted, plant.health.fault_reason
        assert plant.guard.limited == 0  # no 5 N·m command ever reached the limiter
        status = plant._status()
        assert status[0] == WARN and "foreign" in status[1]
        assert "/intruder" in status[2]["foreign_publishers"]
    finally:
        shut(watcher, intruder.node, controller.node, node)


# --- rate:=1.0 --------------------------------------------------------------------------------------


def test_at_one_hertz_the_plant_applies_its_controllers_commands_without_falling_back():
    node, plant = managed(PlantNode, "plant", "robot:=ddarm", "rate:=1.0")
    controller = Answerer("controller", list(plant.names), lambda msg: list(msg.effort))
    fell_back = [False]

    def watch() -> None:
        fell_back[0] |= plant.in_safe_mode

    try:
        spin([node, controller.node], 3.6, each=watch)
        assert controller.sent >= 3 and plant.commanded >= 2
        assert not fell_back[0]  # a command a period old is the current one, not a lost one
    finally:
        shut(controller.node, node)
