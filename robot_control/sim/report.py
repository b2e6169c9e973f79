"""Plots a control engineer wants from a run: q vs q_d, error, torque, and contact force."""

from __future__ import annotations

import numpy as np


def _pyplot():
    """matplotlib.pyplot on the Agg backend, or a RuntimeError saying how to install it."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:  # an optional dependency: say how to get it
        raise RuntimeError("plotting needs matplotlib: pip install 'robot_control[plot]'") from exc
    return plt


def plot_result(result, path: str) -> None:
    """Write a PNG/PDF/SVG figure of a simulation result (needs matplotlib: the ``plot`` extra)."""
    plt = _pyplot()
    s = result.summary
    n = result.q.shape[1]
    rows = 4 if result.force_error is not None else 3
    fig, axes = plt.subplots(rows, 1, figsize=(9, 2.6 * rows), sharex=True)
    t = result.t
    for j in range(n):
        (line,) = axes[0].plot(t, result.q[:, j], label=f"q{j + 1}")
        axes[0].plot(t, result.q_ref[:, j], "--", color=line.get_color(), linewidth=1)
        axes[1].plot(t, result.q_ref[:, j] - result.q[:, j], label=f"e{j + 1}")
        axes[2].plot(t, result.tau[:, j], label=f"τ{j + 1}")
    axes[0].set_ylabel("q (solid), q_d (dashed)")
    axes[1].set_ylabel("e = q_d − q")
    if result.task_error is not None:  # a Cartesian reference: show the task-space error instead
        axes[1].cla()
        for i, axis in enumerate("xyz"):
            axes[1].plot(t, result.task_error[:, i], label=f"e_{axis}")
        axes[1].set_ylabel("p_d − p [m]")
    axes[2].set_ylabel("τ")
    if result.force_error is not None:
        axes[3].plot(t, np.linalg.norm(result.wrench[:, 3:], axis=1), label="|f| contact")
        axes[3].plot(t, result.force_error, label="force error")
        axes[3].set_ylabel("N")
    for ax in axes:
        ax.grid(True, alpha=0.3)
        ax.legend(loc="upper right", fontsize=7, ncol=min(n, 6))
    axes[-1].set_xlabel("t [s]")
    fig.suptitle(f"{s['scenario']}: {s['controller']} on {s['robot']}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
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
