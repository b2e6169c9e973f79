"""One robot on the page: its 3D drawing (measured posture, the reference's ghost and the TF
frames), its plots per joint over the last seconds (and the contact force where there is one), a
readout of the latest values, and what cannot be drawn."""

from __future__ import annotations

import numpy as np

from robot_control.model.robot_model import ModelError
from robot_control.view.drawing import DrawnFrames, DrawnRobot, DrawnSkeleton
from robot_control.view.scene import RobotScene, load_scene
from robot_control.view.traces import drawn

#: points drawn per trace (the data keeps every sample)
DRAWN_POINTS = 300
COLORS = {"q": "#1f77b4", "q_d": "#ff7f0e", "error": "#d62728", "tau_cmd": "#2ca02c",
          "tau_applied": "#9467bd", "limit": "#7f7f7f", "x": "#d62728", "y": "#2ca02c",
          "z": "#1f77b4"}
#: the TF axes' length, as a fraction of the robot's size (the sum of its joint offsets): about
#: twice the radius of the sphere a link without visuals is drawn with, so they stick out of it
AXES_FRACTION = 0.25


def units(scene: RobotScene | None, joint: str) -> tuple[str, str]:
    """(position unit, effort unit) of a joint: m and N for a prismatic one, else rad and N·m."""
    kind = next((j.type for j in scene.joints if j.name == joint), "") if scene else ""
    return ("m", "N") if kind == "prismatic" else ("rad", "N·m")


class RobotPanel:
    """The scene and plot part of one robot; ``source`` has ``traces`` and ``description``."""

    def __init__(self, server, key: str, index: int, tf_frames: bool = False) -> None:
        self.server = server
        self.key = key  # scene path prefix, e.g. "/r0"
        self.offset = (0.0, 1.5 * index, 0.0)
        self.scene: RobotScene | None = None
        self.body: DrawnRobot | None = None
        self.ghost: DrawnSkeleton | None = None
        self.frames: DrawnFrames | None = None
        self.plots: dict[str, object] = {}
        self.force_plot = None
        self.joints: list[str] = []
        self.gui = server.gui
        self.problems = self.gui.add_markdown("", visible=False)
        self.readout = self.gui.add_markdown("*waiting for the controller's state…*")
        self.show_frames = self.frames_info = None
        if tf_frames:
            self.show_frames = self.gui.add_checkbox("TF frames", True, hint="axes at each "
                                                     "frame the plant publishes on /tf")
            self.show_frames.on_update(lambda _: self._frames_shown())
            self.frames_info = self.gui.add_markdown("*TF: no frames of this robot yet*")
        self.plot_folder = self.gui.add_folder("Plots (last seconds)")

    # -- the robot
    def set_description(self, description: str | None) -> None:
        """Draw the robot of a robot_description; what cannot be drawn is said, plots go on."""
        for drawn_robot in (self.body, self.ghost, self.frames):
            if drawn_robot is not None:
                drawn_robot.remove()
        self.body = self.ghost = self.frames = None
        if description is None:
            return
        try:
            self.scene = load_scene(description)
        except (ModelError, ValueError) as exc:
            self.scene = None
            self._say_problems([f"robot_description cannot be drawn: {exc}"])
            return
        self.body = DrawnRobot(self.server.scene, f"{self.key}/robot", self.scene,
                               offset=self.offset)
        self.ghost = DrawnSkeleton(self.server.scene, f"{self.key}/reference", self.scene,
                                   offset=self.offset)
        if self.show_frames is not None:
            size = AXES_FRACTION * self.scene.size
            self.frames = DrawnFrames(self.server.scene, f"{self.key}/tf", size, self.offset)
            self._frames_shown()
        self._say_problems([f"{p}; not drawn" for p in self.scene.problems])

    def _say_problems(self, lines: list[str]) -> None:
        self.problems.content = "\n".join(f"- ⚠ {line}" for line in lines)
        self.problems.visible = bool(lines)

    def pose(self, names: list[str], q, q_d) -> None:
        """Animate the body at q and the ghost at q_d (joint values by ``names``)."""
        if self.body is not None and q is not None:
            self.body.pose(_named(names, q))
        if self.ghost is not None and q_d is not None:
            self.ghost.pose(_named(names, q_d))

    def pose_frames(self, poses: dict[str, np.ndarray], root: str) -> None:
        """Draw the TF frames under the robot's root frame (poses relative to it)."""
        if self.frames is None or self.frames_info is None:
            return
        below = sorted(name for name in poses if name != root)
        self.frames_info.content = (
            f"TF: {len(below)} frames under `{root}`: {', '.join(below)}" if below
            else f"*TF: no frames under `{root}` on /tf yet*")
        if self.show_frames.value:
            self.frames.pose(poses)

    def _frames_shown(self) -> None:
        if self.frames is not None:
            self.frames.visible = bool(self.show_frames.value)

    # -- plots
    def _make_plots(self, joints: list[str]) -> None:
        for plot in self.plots.values():
            plot.remove()
        self.plots = {}
        self.joints = list(joints)
        empty = (np.zeros(2), np.zeros(2))
        with self.plot_folder:
            for j, name in enumerate(joints):
                pos, eff = units(self.scene, name)
                self.plots[f"q{j}"] = self._plot(f"{name}: q vs q_d [{pos}]", empty, [
                    ("q", COLORS["q"]), ("q_d", COLORS["q_d"])], pos)
                self.plots[f"e{j}"] = self._plot(f"{name}: error q_d − q [{pos}]", empty, [
                    ("error", COLORS["error"])], pos)
                limit = self._effort_limits().get(name, np.nan)
                bound = f", limit ±{limit:g}" if np.isfinite(limit) else ""
                self.plots[f"t{j}"] = self._plot(f"{name}: torque [{eff}]{bound}", empty, [
                    ("commanded", COLORS["tau_cmd"]), ("applied", COLORS["tau_applied"]),
                    ("+limit", COLORS["limit"]), ("−limit", COLORS["limit"])], eff)

    def _plot(self, title: str, empty, series: list[tuple[str, str]], unit: str):
        from viser import uplot

        data = (empty[0],) + tuple(empty[1] for _ in series)
        return self.gui.add_uplot(
            data=data, title=title, aspect=2.2,
            series=(uplot.Series(label="t [s]"),
                    *(uplot.Series(label=label, stroke=color, width=1.5)
                      for label, color in series)),
            scales={"x": uplot.Scale(time=False, auto=True), "y": uplot.Scale(auto=True)},
            axes=(uplot.Axis(label="t [s]"), uplot.Axis(label=unit)),
            legend=uplot.Legend(show=True))

    def update_plots(self, traces, end: float | None = None) -> None:
        """Redraw every plot from the traces' window ending at ``end`` (default: the newest)."""
        if traces is None:
            return
        if traces.joints != self.joints:
            self._make_plots(traces.joints)
        t, data = traces.window(end)
        if len(t) < 2:
            return
        limits = self._effort_limits()
        for j in range(len(self.joints)):
            def col(signal: str) -> tuple[np.ndarray, np.ndarray]:
                return drawn(t, data[signal][:, j], DRAWN_POINTS)  # noqa: B023
            td, q = col("q")
            q_d, (te, error) = col("q_d")[1], col("error")
            self._show(self.plots[f"q{j}"], (td, q, q_d))
            self._show(self.plots[f"e{j}"], (te, error))
            bound = limits.get(self.joints[j], np.nan)
            limit = np.full(len(td), bound)
            span = torque_span(bound, data["tau_cmd"][:, j], data["tau_applied"][:, j])
            self._show(self.plots[f"t{j}"], (td, col("tau_cmd")[1], col("tau_applied")[1], limit,
                                            -limit), (-span, span))

    def update_force(self, force) -> None:
        """The contact force plot (x, y, z in the world frame), made when the first force comes:
        only a stack whose plant has a contact environment publishes one."""
        if force is None:
            return
        if self.force_plot is None:
            empty = (np.zeros(2), np.zeros(2))
            with self.plot_folder:
                self.force_plot = self._plot("contact force [N] (world frame)", empty, [
                    (f"f_{c}", COLORS[c]) for c in ("x", "y", "z")], "N")
        t, data = force.window()
        if len(t) < 2:
            return
        td = drawn(t, data["force"][:, 0], DRAWN_POINTS)[0]
        self._show(self.force_plot, (td, *(drawn(t, data["force"][:, i], DRAWN_POINTS)[1]
                                           for i in range(3))))

    @staticmethod
    def _show(plot, columns: tuple[np.ndarray, ...],
              bounds: tuple[float, float] | None = None) -> None:
        """A plot's columns on a y range of ours (``bounds``, else :func:`value_range`), set
        first, so the page never draws these columns on uPlot's own range."""
        bounds = value_range(*columns[1:]) if bounds is None else bounds
        if bounds is not None and plot.scales["y"].get("range") != bounds:
            plot.scales = {**plot.scales, "y": {"auto": False, "range": bounds}}
        plot.data = _sent(*columns)

    def _effort_limits(self) -> dict[str, float]:
        if self.scene is None:
            return {}
        return {j.name: (j.effort if np.isfinite(j.effort) else np.nan) for j in self.scene.joints}

    def update_readout(self, traces, end: float | None = None) -> None:
        """The latest values per joint as a table the engineer (and a test) can read."""
        if traces is None:
            return
        t, data = traces.window(end)
        if not len(t):
            return
        rows = ["| joint | q | q_d | error | τ cmd | τ applied |", "|---|---|---|---|---|---|"]
        for j, name in enumerate(traces.joints):
            pos, eff = units(self.scene, name)
            v = [data[s][-1, j] for s in ("q", "q_d", "error", "tau_cmd", "tau_applied")]
            rows.append(f"| {name} | {_num(v[0])} {pos} | {_num(v[1])} | {_num(v[2])} | "
                        f"{_num(v[3])} {eff} | {_num(v[4])} |")
        self.readout.content = f"t = {t[-1]:.2f} s\n\n" + "\n".join(rows)


def torque_span(limit: float, *torques: np.ndarray) -> float:
    """The half-height of a torque plot: the effort limit when the torques come within a third
    of it (its lines then show how close they are), else the torques' peak with a margin (the
    limit, in the title, would squash them flat), two significant digits."""
    peak = max((float(np.nanmax(np.abs(t))) for t in torques if np.any(np.isfinite(t))),
               default=0.0)
    span = 1.05 * limit if np.isfinite(limit) and peak >= limit / 3.0 else 1.2 * peak
    span = max(span, 1e-3)
    return float(f"{span:.2g}")


def value_range(*columns: np.ndarray, floor: float = 1e-6) -> tuple[float, float] | None:
    """A plot's y range: its finite values with a margin, at least 10⁻³ of their magnitude (or
    ``floor``) wide, widened to whole powers-of-ten steps so it changes only when the traces
    move; None when nothing is finite. uPlot's own range of a trace flat to float noise (a held
    arm) has min ≈ max, where its tick loop never ends and the page fails with "Invalid array
    length" (uPlot issue 1084: the range is the caller's to make sensible)."""
    values = np.concatenate([np.asarray(c, float).ravel() for c in columns]) if columns else \
        np.empty(0)
    values = values[np.isfinite(values)]
    if not values.size:
        return None
    lo, hi = float(values.min()), float(values.max())
    mid = 0.5 * (lo + hi)
    half = max(0.55 * (hi - lo), 1e-3 * abs(mid), floor)
    step = 10.0 ** np.floor(np.log10(half))
    return float(np.floor((mid - half) / step) * step), float(np.ceil((mid + half) / step) * step)


def _sent(*columns: np.ndarray) -> tuple[np.ndarray, ...]:
    """A plot's columns as sent to the page: float32 (half the bytes of float64; a drawn point
    needs no more than its 7 digits)."""
    return tuple(np.asarray(c, np.float32) for c in columns)


def _named(names: list[str], values) -> dict[str, float]:
    return {n: float(v) for n, v in zip(names, values, strict=False) if np.isfinite(v)}


def _num(v: float) -> str:
    return "—" if not np.isfinite(v) else f"{v:+.4f}"
