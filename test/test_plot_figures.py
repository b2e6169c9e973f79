"""The run figure's content, read from matplotlib's objects rather than pixels:
units on every axis per joint type, torque axes scaled to the data with the effort limits drawn,
the desired pressing force and the task-space error on force/Cartesian runs, and a bag plot's
reference and controller name when the bag recorded them."""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from matplotlib.lines import Line2D

from robot_control.model import load_robot
from robot_control.recording import bag
from robot_control.recording.offline import write_run
from robot_control.recording.runs import _prismatic, load_run
from robot_control.recording.writer import BagWriter
from robot_control.sim.report import (
    COLUMNS,
    Run,
    figure_of_run,
    run_from_result,
    scenario_context,
)
from robot_control.sim.scenario import load_scenario, resolve_scenario_path
from robot_control.sim.simulate import run


def scenario(name: str, duration: float):
    doc = yaml.safe_load(resolve_scenario_path(name).read_text())
    return load_scenario({**doc, "duration": duration})


@pytest.fixture(scope="module")
def pd_run():
    sc = scenario("huo_3_1_pd", 0.3)
    return sc, run(sc)


@pytest.fixture
def figure():
    made = []

    def make(r: Run):
        made.append(figure_of_run(r))
        return made[-1]

    yield make
    import matplotlib.pyplot as plt

    for fig in made:
        plt.close(fig)


def joint_axes(fig, n: int) -> list[list]:
    """The figure's per-joint axes, row by row (COLUMNS order)."""
    return [fig.axes[j * len(COLUMNS):(j + 1) * len(COLUMNS)] for j in range(n)]


def horizontal_lines(ax) -> dict[float, Line2D]:
    return {float(line.get_ydata()[0]): line for line in ax.get_lines()
            if len(set(np.ravel(line.get_ydata()))) == 1 and line.get_linestyle() == ":"}


def test_a_revolute_arm_has_rad_rad_per_s_and_newton_metre_axes(pd_run, figure):
    sc, result = pd_run
    fig = figure(run_from_result(result, **scenario_context(sc)))
    for j, (ax_q, ax_qd, ax_e, ax_tau) in enumerate(joint_axes(fig, 3)):
        assert ax_q.get_ylabel() == f"joint{j + 1}\nq [rad]"
        assert ax_qd.get_ylabel() == "q̇ [rad/s]" and ax_qd.has_data()
        assert ax_e.get_ylabel() == "e = q_d − q [rad]"
        assert ax_tau.get_ylabel() == "τ [N·m]"
    assert fig.axes[-1].get_xlabel() == "t [s]"
    assert fig._suptitle.get_text() == f"{sc.name}: pd on ddarm"  # scenario, law, robot
    assert [ax.get_title() for ax in fig.axes[:4]] == list(COLUMNS)


def test_a_prismatic_joint_has_metre_and_newton_axes(figure):
    model = load_robot("stanford_arm")
    prismatic = _prismatic(model, model.joint_names)
    assert prismatic == [False, False, True, False, False, False]
    t = np.linspace(0, 1, 11)
    zeros = np.zeros((11, 6))
    fig = figure(Run("stanford", list(model.joint_names), prismatic, position=(t, zeros),
                     velocity=(t, zeros), command=(t, zeros)))
    rows = joint_axes(fig, 6)
    assert [ax.get_ylabel() for ax in rows[2]] == [f"{model.joint_names[2]}\nq [m]", "q̇ [m/s]",
                                                   "e = q_d − q [m]", "τ [N]"]
    assert rows[1][3].get_ylabel() == "τ [N·m]"


def test_torque_axes_fit_the_data_and_show_the_limits_as_lines(pd_run, figure):
    sc, result = pd_run
    r = run_from_result(result, **scenario_context(sc))
    fig = figure(r)
    for j, row in enumerate(joint_axes(fig, 3)):
        ax = row[3]
        limit = float(sc.robot.effort_limit[j])
        lines = horizontal_lines(ax)
        assert set(lines) == {limit, -limit}, lines  # both limits drawn
        torques = np.concatenate([r.command[1][:, j], r.applied[1][:, j]])
        low, high = ax.get_ylim()
        assert low <= torques.min() and torques.max() <= high  # every sample in view
        peak = np.abs(torques).max()
        if limit > 1.5 * peak:  # the limit far away: the axis stays at the data
            assert high - low < 2 * 1.2 * peak + 1e-6
            assert "(off scale)" in lines[limit].get_label()
        else:
            assert low <= -limit and limit <= high
    # a limit the run comes near is in view
    near = Run("near", ["joint1"], [False], command=(np.arange(3.0), np.array([[0.0], [9.0], [-5.0]])),
               effort_limit=np.array([10.0]))
    ax = figure(near).axes[3]
    low, high = ax.get_ylim()
    assert low < -10 and high > 10 and set(horizontal_lines(ax)) == {10.0, -10.0}


def test_a_force_run_shows_the_desired_force_and_the_task_space_error(figure):
    sc = scenario("hybrid_force_puma560_surface", 0.3)
    result = run(sc)
    fig = figure(run_from_result(result, **scenario_context(sc)))
    force_ax, task_ax = fig.axes[-2], fig.axes[-1]
    assert force_ax.get_ylabel() == "contact force [N]"
    lines = {line.get_label(): line for line in force_ax.get_lines()}
    desired = lines["desired −n·f_d"]
    np.testing.assert_allclose(desired.get_ydata(), 20.0, atol=1e-9)  # f_d = (0, 0, −20), n = z
    pressing = lines["n·f (pressing)"].get_ydata()
    np.testing.assert_allclose(pressing, result.wrench[:, 5])
    np.testing.assert_allclose(desired.get_ydata() - pressing, result.force_error)
    assert task_ax.get_ylabel() == "task error p_d − p [m]"
    task = {line.get_label(): line.get_ydata() for line in task_ax.get_lines()}
    np.testing.assert_array_equal(task["e_z"], result.task_error[:, 2])


def test_a_bag_plot_takes_the_reference_and_the_controller_name_when_recorded(pd_run, tmp_path):
    sc, result = pd_run
    write_run(result, sc, tmp_path / "full")
    # what the README records live: no /joint_reference, plus the controller's heartbeat
    kept = ("/robot_description", "/joint_states", "/joint_command", "/controller/state")
    writer = BagWriter(tmp_path / "live")
    conns = {c.topic: writer.add_topic(c.topic, c.msgtype, c.ext.offered_qos_profiles)
             for c in bag.bag_connections(tmp_path / "full") if c.topic in kept}
    for msg in bag.read_messages(tmp_path / "full", kept):
        writer.write(conns[msg.topic], msg.timestamp_ns, msg.data)
    qos = conns["/joint_states"].ext.offered_qos_profiles
    diag = writer.add_topic("/diagnostics", "diagnostic_msgs/msg/DiagnosticArray", qos)
    for k, law in enumerate(("pd", "pd", "sliding_mode")):
        writer.write(diag, k * 100_000_000, heartbeat(k * 100_000_000, law))
    writer.close()
    live = load_run(tmp_path / "live")
    assert live.title.startswith("live: pd → sliding_mode on ddarm, ")
    # q_d = q + e at the controller's stamps: the reference the run tracked
    np.testing.assert_allclose(live.reference[1], result.q_ref, rtol=0, atol=1e-12)
    assert live.prismatic == [False, False, False]
    without = load_run(tmp_path / "full")  # no heartbeat recorded: no law named
    assert without.title.startswith("full: ddarm, ")


def heartbeat(stamp_ns: int, law: str) -> bytes:
    """A controller node's /diagnostics message (as nodes/health.py sends it), serialized."""
    ts = bag.typestore()
    t = ts.types
    status = t["diagnostic_msgs/msg/DiagnosticStatus"](
        level=0, name="/controller: controller", message=f"running {law}",
        hardware_id="robot_control",
        values=[t["diagnostic_msgs/msg/KeyValue"](key="law", value=law)])
    header = t["std_msgs/msg/Header"](
        stamp=t["builtin_interfaces/msg/Time"](sec=stamp_ns // 10**9, nanosec=stamp_ns % 10**9),
        frame_id="")
    msg = t["diagnostic_msgs/msg/DiagnosticArray"](header=header, status=[status])
    return bytes(ts.serialize_cdr(msg, "diagnostic_msgs/msg/DiagnosticArray"))


def namespaced_copy(source, target, namespace: str):
    """The bag at ``source`` as a stack in ``/namespace`` records it (every topic under it)."""
    writer = BagWriter(target)
    conns = {c.topic: writer.add_topic(f"/{namespace}{c.topic}", c.msgtype,
                                       c.ext.offered_qos_profiles)
             for c in bag.bag_connections(source)}
    for msg in bag.read_messages(source):
        writer.write(conns[msg.topic], msg.timestamp_ns, msg.data)
    writer.close()
    return target


def test_a_namespaced_stack_s_bag_plots_with_its_namespace(pd_run, tmp_path):
    from robot_control.bus.ros_args import RosArgsError

    sc, result = pd_run
    write_run(result, sc, tmp_path / "root")
    left = namespaced_copy(tmp_path / "root", tmp_path / "left", "left")
    plain, named = load_run(tmp_path / "root"), load_run(left, namespace="left")
    for field in ("position", "velocity", "reference", "error", "command", "applied"):
        np.testing.assert_array_equal(getattr(named, field)[1], getattr(plain, field)[1])
    assert named.prismatic == plain.prismatic == [False] * 3  # /left/robot_description read
    np.testing.assert_array_equal(named.effort_limit, plain.effort_limit)
    with pytest.raises(bag.BagError, match="holds none of /joint_states"):
        load_run(left)  # the root namespace's topics are not in it
    with pytest.raises(RosArgsError, match="invalid namespace '1left'"):
        load_run(left, namespace="1left")
