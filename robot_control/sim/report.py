"""The figure a control engineer wants from a run, offline or live: per joint, q against q_d, q̇,
the tracking error e = q_d − q and the torques against the effort limits, each axis in the
joint's units (rad, rad/s, N·m; m, m/s, N for a prismatic joint); the contact force against the
desired pressing force, and the task-space error of Cartesian runs, when there are.

A :class:`Run` holds the time series, each with its own time base (live topics are not
synchronous); :func:`run_from_result` makes one from an offline Result, and
``robot_control.recording.runs`` from a bag or a saved result, so every source gives the same
figure.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

Array = np.ndarray
Series = tuple[Array, Array]  # (t [s], values: one row per sample)

# limits at or above this are "none" (URDF export writes an infinite limit as 1e9)
NO_LIMIT = 1e9


@dataclass
class Run:
    """Time series of one run, any of them possibly absent (None)."""

    title: str
    joints: list[str]
    prismatic: list[bool] | None = None  # per joint (units m, m/s, N); None: not known
    position: Series | None = None  # q
    velocity: Series | None = None  # q̇
    reference: Series | None = None  # q_d
    error: Series | None = None  # e = q_d − q
    command: Series | None = None  # τ the law asked for
    applied: Series | None = None  # τ the plant applied
    effort_limit: Array | None = None
    force: Series | None = None  # contact force f (x, y, z)
    normal_force: Series | None = None  # the pressing force along the surface normal, n·f
    desired_force: Series | None = None  # its desired value, −n·f_d
    task_error: Series | None = None  # p_d − p of a Cartesian reference (x, y, z)


def run_from_series(summary: dict, series: dict, effort_limit: Array | None = None,
                    prismatic: list[bool] | None = None, normal: Array | None = None) -> Run:
    """A Run of an offline simulation from its summary and series (``Result.series()``, also
    as ``simulate --out`` saves them); the applied τ is shifted to the period ending at each t_k,
    as the plant publishes it. With the surface's unit ``normal``, the pressing force n·f and
    its desired value n·f + force_error (simulate.finish: force_error = −n·f_d − n·f)."""
    a = {key: np.asarray(value, dtype=float) for key, value in series.items()}
    t, q, q_ref, tau = a["t"], a["q"], a["q_ref"], a["tau"]
    wrench = a.get("wrench")
    touching = "force_error" in a or (wrench is not None and bool(np.any(wrench)))
    pressing = wrench[:, 3:] @ np.asarray(normal, dtype=float) if (
        touching and normal is not None) else None
    title = f"{summary['scenario']}: {summary['controller']} on {summary['robot']}"
    if "error_reference" in summary:  # a Cartesian run: q_d is the posture it started from
        title += f"\n({summary['error_reference']})"
    return Run(
        title=title,
        joints=list(summary["joints"]), prismatic=prismatic,
        position=(t, q), velocity=(t, a["qd"]) if "qd" in a else None,
        reference=(t, q_ref), error=(t, q_ref - q),
        command=(t, a["tau_command"]) if "tau_command" in a else None,
        applied=(t, np.vstack([np.zeros_like(tau[:1]), tau[:-1]])),
        effort_limit=effort_limit,
        force=(t, wrench[:, 3:]) if touching else None,
        normal_force=(t, pressing) if pressing is not None else None,
        desired_force=(t, pressing + a["force_error"]) if (
            pressing is not None and "force_error" in a) else None,
        task_error=(t, a["task_error"]) if "task_error" in a else None,
    )


def run_from_result(result, effort_limit: Array | None = None,
                    prismatic: list[bool] | None = None, normal: Array | None = None) -> Run:
    """A Run of an offline simulation Result."""
    return run_from_series(result.summary, result.series(), effort_limit, prismatic, normal)


def scenario_context(scenario) -> dict:
    """What a scenario tells the figure beyond the Result: the robot's effort limits, which
    joints are prismatic, the unit normal of the contact surface (None in free space)."""
    from robot_control.model.robot_model import PRISMATIC

    robot = scenario.robot
    environment = (scenario.plant or {}).get("environment")
    normal = None
    if environment:
        n = np.asarray(environment.get("normal", (0.0, 0.0, 1.0)), dtype=float)
        normal = n / np.linalg.norm(n)
    return {"effort_limit": robot.effort_limit,
            "prismatic": [int(c) == PRISMATIC for c in robot.joint_type], "normal": normal}


def plot_result(result, path: str, effort_limit: Array | None = None,
                prismatic: list[bool] | None = None, normal: Array | None = None) -> None:
    """Write the figure of a simulation Result (PNG, PDF or SVG)."""
    plot_run(run_from_result(result, effort_limit, prismatic, normal), path)


def _pyplot():
    """matplotlib.pyplot on the Agg backend, or a RuntimeError saying how to install it."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:  # an optional dependency: say how to get it
        raise RuntimeError("plotting needs matplotlib: pip install 'robot_control[plot]'") from exc
    return plt


def _units(run: Run, j: int) -> tuple[str, str, str]:
    """(position, velocity, effort) units of joint j: rad, rad/s, N·m or m, m/s, N."""
    if run.prismatic is None:
        return "rad | m", "rad/s | m/s", "N·m | N"
    return ("m", "m/s", "N") if run.prismatic[j] else ("rad", "rad/s", "N·m")


def _limit_lines(ax, limit: float, unit: str, values: list[Array]) -> None:
    """±limit as dotted lines, the axis scaled to the data: a limit far beyond what the run
    used (more than 1.5× its peak) stays out of view, its value in the legend."""
    peak = max((float(np.nanmax(np.abs(v))) for v in values if v.size), default=0.0)
    low = min((float(np.nanmin(v)) for v in values if v.size), default=-1.0)
    high = max((float(np.nanmax(v)) for v in values if v.size), default=1.0)
    shown = limit <= 1.5 * peak
    for sign in (1, -1):
        ax.axhline(sign * limit, color="k", linestyle=":", linewidth=1,
                   label=(f"effort limit ±{limit:g} {unit}" + ("" if shown else " (off scale)"))
                   if sign > 0 else None)
    if shown:
        low, high = min(low, -limit), max(high, limit)
    pad = 0.08 * max(high - low, 1e-9)
    ax.set_ylim(low - pad, high + pad)


def _joint_rows(axes, run: Run) -> None:
    """Row j: q_j and q_d,j | q̇_j | e_j | τ_j commanded and applied, with ±limit."""
    for j, name in enumerate(run.joints):
        ax_q, ax_qd, ax_e, ax_tau = axes[j]
        unit_q, unit_qd, unit_tau = _units(run, j)
        if run.position is not None:
            ax_q.plot(run.position[0], run.position[1][:, j], label="q")
        if run.reference is not None:
            ax_q.plot(run.reference[0], run.reference[1][:, j], "--", linewidth=1, label="q_d")
        if run.velocity is not None:
            ax_qd.plot(run.velocity[0], run.velocity[1][:, j], color="tab:green", label="q̇")
        if run.error is not None:
            ax_e.plot(run.error[0], run.error[1][:, j], color="tab:red", label="e")
        torques = []
        if run.command is not None:
            ax_tau.plot(run.command[0], run.command[1][:, j], label="τ commanded")
            torques.append(run.command[1][:, j])
        if run.applied is not None:
            ax_tau.plot(run.applied[0], run.applied[1][:, j], linewidth=1, label="τ applied")
            torques.append(run.applied[1][:, j])
        if run.effort_limit is not None and run.effort_limit[j] < NO_LIMIT:
            _limit_lines(ax_tau, float(run.effort_limit[j]), unit_tau, torques)
        ax_q.set_ylabel(f"{name}\nq [{unit_q}]")
        ax_qd.set_ylabel(f"q̇ [{unit_qd}]")
        ax_e.set_ylabel(f"e = q_d − q [{unit_q}]")
        ax_tau.set_ylabel(f"τ [{unit_tau}]")


def _force_row(ax, run: Run) -> None:
    """The contact force: its components and magnitude, the pressing force along the normal
    against its desired value."""
    t, f = run.force
    ax.plot(t, np.linalg.norm(f, axis=1), color="k", label="|f|")
    for i, axis in enumerate("xyz"):
        ax.plot(t, f[:, i], linewidth=1, label=f"f_{axis}")
    if run.normal_force is not None:
        ax.plot(*run.normal_force, color="tab:purple", label="n·f (pressing)")
    if run.desired_force is not None:
        ax.plot(*run.desired_force, "--", color="tab:purple", label="desired −n·f_d")
    ax.set_ylabel("contact force [N]")


def _task_row(ax, run: Run) -> None:
    """The task-space position error p_d − p of a Cartesian reference, and its norm."""
    t, e = run.task_error
    ax.plot(t, np.linalg.norm(e, axis=1), color="k", label="|p_d − p|")
    for i, axis in enumerate("xyz"):
        ax.plot(t, e[:, i], linewidth=1, label=f"e_{axis}")
    ax.set_ylabel("task error p_d − p [m]")


COLUMNS = ("position and reference", "velocity", "tracking error", "torque and effort limits")


def figure_of_run(run: Run):
    """The matplotlib Figure of a Run (the caller closes it): a row per joint (COLUMNS), then
    the contact force and the task-space error when the run has them."""
    plt = _pyplot()
    n = len(run.joints)
    extra = [draw for draw, series in ((_force_row, run.force), (_task_row, run.task_error))
             if series is not None]
    rows = n + len(extra)
    fig = plt.figure(figsize=(16, 2.2 * rows + 0.8))
    grid = fig.add_gridspec(rows, len(COLUMNS))
    first = fig.add_subplot(grid[0, 0])
    axes = [[first if (j, c) == (0, 0) else fig.add_subplot(grid[j, c], sharex=first)
             for c in range(len(COLUMNS))] for j in range(n)]
    _joint_rows(axes, run)
    all_axes = [ax for row in axes for ax in row]
    for i, draw in enumerate(extra):
        ax = fig.add_subplot(grid[n + i, :], sharex=first)
        draw(ax, run)
        all_axes.append(ax)
    for ax in all_axes:
        ax.grid(True, alpha=0.3)
        if ax.has_data():
            ax.legend(loc="upper right", fontsize=7)
    for c, title in enumerate(COLUMNS):
        axes[0][c].set_title(title, fontsize=10)
    for ax in all_axes[-1:] if extra else axes[-1]:
        ax.set_xlabel("t [s]")
    fig.suptitle(run.title)
    height = 2.2 * rows + 0.8
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.4 / height))  # the title above the column titles
    return fig


def plot_run(run: Run, path: str) -> None:
    """Write the figure of a Run (PNG, PDF or SVG; matplotlib's headless Agg backend)."""
    fig = figure_of_run(run)
    fig.savefig(path, dpi=100)
    _pyplot().close(fig)


def plot_cell_result(result, path: str) -> None:
    """Figure of a cell run (Huo §3.13): pose error of E, normal force, each arm's share, torques."""
    plt = _pyplot()
    s = result.summary
    fig, axes = plt.subplots(4, 1, figsize=(9, 10.4), sharex=True)
    t = result.t
    for i, axis in enumerate("xyz"):
        axes[0].plot(t, 1e3 * result.pose_error[:, i], label=f"e_{axis} [mm]")
        axes[0].plot(t, 1e3 * result.pose_error[:, 3 + i], ":", label=f"e_ω{axis} [mrad]")
    axes[0].set_ylabel("E: desired − actual")
    axes[1].plot(t, result.contact_force, label="λ_E (table on E)")
    axes[1].plot(t, result.desired_force, "--", label="f_nᵈ")
    axes[1].set_ylabel("normal force [N]")
    for i, (arm, share) in enumerate(s["force_shares"].items()):
        (line,) = axes[2].plot(t, result.arm_forces[:, i], label=f"{arm}: p_i")
        axes[2].plot(t, share["prescribed_fraction"] * result.desired_force, "--",
                     color=line.get_color(), label=f"{arm}: W's share")
    axes[2].set_ylabel("arm's pressing share [N]")
    axes[3].plot(t, result.tau)
    axes[3].set_ylabel("τ [N·m] (all joints)")
    for ax in axes:
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="upper right", fontsize=7, ncol=3)
    axes[-1].set_xlabel("t [s]")
    fig.suptitle(f"{s['scenario']}: {s['controller']} on cell {s['cell']}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
