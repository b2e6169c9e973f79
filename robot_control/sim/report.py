"""The figure a control engineer wants from a run, offline or live: per joint, q against q_d, the
tracking error e = q_d − q and the torques against the effort limits; the contact force (and the
task-space error of Cartesian runs) when there is one.

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
    position: Series | None = None  # q
    reference: Series | None = None  # q_d
    error: Series | None = None  # e = q_d − q
    command: Series | None = None  # τ the law asked for
    applied: Series | None = None  # τ the plant applied
    effort_limit: Array | None = None
    force: Series | None = None  # contact force f (x, y, z)
    task_error: Series | None = None  # p_d − p of a Cartesian reference (x, y, z)


def run_from_series(summary: dict, series: dict, effort_limit: Array | None = None) -> Run:
    """A Run of an offline simulation from its summary and series (``Result.series()``, also
    as ``simulate --out`` saves them); the applied τ is shifted to the period ending at each t_k,
    as the plant publishes it."""
    a = {key: np.asarray(value, dtype=float) for key, value in series.items()}
    t, q, q_ref, tau = a["t"], a["q"], a["q_ref"], a["tau"]
    wrench = a.get("wrench")
    touching = "force_error" in a or (wrench is not None and bool(np.any(wrench)))
    return Run(
        title=f"{summary['scenario']}: {summary['controller']} on {summary['robot']}",
        joints=list(summary["joints"]),
        position=(t, q), reference=(t, q_ref), error=(t, q_ref - q),
        command=(t, a["tau_command"]) if "tau_command" in a else None,
        applied=(t, np.vstack([np.zeros_like(tau[:1]), tau[:-1]])),
        effort_limit=effort_limit,
        force=(t, wrench[:, 3:]) if touching else None,
        task_error=(t, a["task_error"]) if "task_error" in a else None,
    )


def run_from_result(result, effort_limit: Array | None = None) -> Run:
    """A Run of an offline simulation Result."""
    return run_from_series(result.summary, result.series(), effort_limit)


def plot_result(result, path: str, effort_limit: Array | None = None) -> None:
    """Write the figure of a simulation Result (PNG, PDF or SVG)."""
    plot_run(run_from_result(result, effort_limit), path)


def _pyplot():
    """matplotlib.pyplot on the Agg backend, or a RuntimeError saying how to install it."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:  # an optional dependency: say how to get it
        raise RuntimeError("plotting needs matplotlib: pip install 'robot_control[plot]'") from exc
    return plt


def _joint_rows(axes, run: Run) -> None:
    """Row j: q_j and q_d,j | e_j | τ_j commanded and applied, with ±limit."""
    for j, name in enumerate(run.joints):
        ax_q, ax_e, ax_tau = axes[j]
        if run.position is not None:
            ax_q.plot(run.position[0], run.position[1][:, j], label="q")
        if run.reference is not None:
            ax_q.plot(run.reference[0], run.reference[1][:, j], "--", linewidth=1, label="q_d")
        if run.error is not None:
            ax_e.plot(run.error[0], run.error[1][:, j], color="tab:red", label="e")
        if run.command is not None:
            ax_tau.plot(run.command[0], run.command[1][:, j], label="τ commanded")
        if run.applied is not None:
            ax_tau.plot(run.applied[0], run.applied[1][:, j], linewidth=1, label="τ applied")
        if run.effort_limit is not None and run.effort_limit[j] < NO_LIMIT:
            for sign in (1, -1):
                ax_tau.axhline(sign * run.effort_limit[j], color="k", linestyle=":",
                               linewidth=1, label="effort limit" if sign > 0 else None)
        ax_q.set_ylabel(f"{name}\nq [rad | m]")
        ax_e.set_ylabel("e = q_d − q")
        ax_tau.set_ylabel("τ [N·m | N]")


def _vector_row(ax, series: Series, label: str, unit: str, norm: bool) -> None:
    t, v = series
    if norm:
        ax.plot(t, np.linalg.norm(v, axis=1), color="k", label=f"|{label}|")
    for i, axis in enumerate("xyz"):
        ax.plot(t, v[:, i], linewidth=1, label=f"{label}_{axis}")
    ax.set_ylabel(unit)


def plot_run(run: Run, path: str) -> None:
    """Write the figure of a Run (PNG, PDF or SVG; matplotlib's headless Agg backend)."""
    plt = _pyplot()
    n = len(run.joints)
    extra = [s for s in ((run.force, "f", "contact force [N]", True),
                         (run.task_error, "e", "p_d − p [m]", False)) if s[0] is not None]
    rows = n + len(extra)
    fig = plt.figure(figsize=(13, 2.2 * rows + 0.8))
    grid = fig.add_gridspec(rows, 3)
    first = fig.add_subplot(grid[0, 0])
    axes = [[first if (j, c) == (0, 0) else fig.add_subplot(grid[j, c], sharex=first)
             for c in range(3)] for j in range(n)]
    _joint_rows(axes, run)
    all_axes = [ax for row in axes for ax in row]
    for i, (series, label, unit, norm) in enumerate(extra):
        ax = fig.add_subplot(grid[n + i, :], sharex=first)
        _vector_row(ax, series, label, unit, norm)
        all_axes.append(ax)
    for ax in all_axes:
        ax.grid(True, alpha=0.3)
        if ax.has_data():
            ax.legend(loc="upper right", fontsize=7)
    for c in range(3):
        axes[0][c].set_title(("position and reference", "tracking error",
                              "torque and effort limits")[c], fontsize=10)
    for ax in all_axes[-1:] if extra else axes[-1]:
        ax.set_xlabel("t [s]")
    fig.suptitle(run.title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


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
