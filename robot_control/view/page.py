"""The page: one folder per robot (a live namespace or a recording) with its connection state,
controls and plots, the robots side by side in one 3D scene, refreshed by one loop."""

from __future__ import annotations

import sys
import threading
import time

from robot_control.view.frames import robot_root_frame
from robot_control.view.panel import RobotPanel

#: how often the page is refreshed: the 3D postures; plots (5 Hz), readouts (3 Hz) and health
#: (2 Hz) every few of these — a plot redraw costs the browser more than a posture
#: (docs/view.md, "Cost")
FRAME_S = 1.0 / 30.0
PLOT_EVERY, TEXT_EVERY, HEALTH_EVERY = 6, 10, 15
RELOAD_S = 3.0  # a stack's controls that could not be read are read again this often


class LiveRobot:
    """A namespace of the bus on the page: connection, drawing, plots and controls."""

    def __init__(self, server, index: int, watch, commands) -> None:
        from robot_control.view.controls import StackControls

        self.watch = watch
        self.server = server
        with server.gui.add_folder(f"Robot {watch.label}"):
            self.connection = server.gui.add_markdown(f"**disconnected**: waiting for the stack "
                                                      f"in {watch.label}")
            self.panel = RobotPanel(server, f"/r{index}", index, tf_frames=watch.tf is not None)
            self.controls = StackControls(server.gui, watch, commands)
        self.was_connected = False
        self.load_tried = -RELOAD_S

    def refresh(self, frame: int) -> None:
        w = self.watch
        connected = w.connected
        if connected != self.was_connected:
            self.was_connected = connected
            self.connection.content = f"**connected** to the stack in {w.label}" if connected \
                else (f"**disconnected**: no message from the stack in {w.label} for "
                      f"{time.monotonic() - w.last_heard:.0f} s; waiting for it to return")
            if connected:
                self.controls.loaded = False
        if connected and not self.controls.loaded and not self.controls.lock.locked() \
                and time.monotonic() - self.load_tried > RELOAD_S:
            self.load_tried = time.monotonic()
            threading.Thread(target=self.controls.load, daemon=True).start()
        if w.description_changed.is_set():
            w.description_changed.clear()
            self.panel.set_description(w.description)
        # the postures of one refresh go out as one batch (held only while they are set, so
        # the batches before and after it are sent meanwhile): the page moves them together
        with self.server.atomic():
            if w.measured is not None:
                self.panel.pose(w.measured[0], w.measured[1], None)
            if w.traces is not None and w.reference is not None:
                self.panel.pose(w.traces.joints, None, w.reference)
            if w.tf is not None and self.panel.scene is not None:
                root = robot_root_frame(w.namespace, self.panel.scene.root)
                self.panel.pose_frames(w.tf.poses_under(root), root)
        if frame % PLOT_EVERY == 0:
            self.panel.update_plots(w.traces)
            self.panel.update_force(w.force)
        if frame % TEXT_EVERY == 0:
            self.panel.update_readout(w.traces)
        if frame % HEALTH_EVERY == 0:
            self.controls.update_health()


class ReplayedRobot:
    """A recording on the page: the same drawing and plots, at the time the slider says."""

    def __init__(self, server, index: int, recording) -> None:
        self.recording = recording
        with server.gui.add_folder(f"Recording {recording.label}"):
            server.gui.add_markdown(f"**replay** of {recording.title}")
            self.time = server.gui.add_slider("time [s]", min=0.0,
                                              max=max(recording.duration, 1e-3),
                                              step=max(recording.duration, 1e-3) / 1000.0,
                                              initial_value=recording.duration)
            self.playing = server.gui.add_checkbox("play", False)
            self.panel = RobotPanel(server, f"/r{index}", index)
        self.panel.set_description(recording.description)
        self.shown: float | None = None
        self.last_wall = time.monotonic()

    def refresh(self, frame: int) -> None:
        now = time.monotonic()
        if self.playing.value:  # advance in real time, stop at the end
            t = min(self.time.value + (now - self.last_wall), self.recording.duration)
            self.time.value = t
            self.playing.value = t < self.recording.duration
        self.last_wall = now
        t = float(self.time.value)
        if t == self.shown:
            return
        self.shown = t
        q, q_d = self.recording.posture(t)
        joints = self.recording.traces.joints
        self.panel.pose(joints, q, q_d)
        self.panel.update_plots(self.recording.traces, end=t)
        self.panel.update_readout(self.recording.traces, end=t)


def run_page(server, robots: list, stop: threading.Event, each_frame=None) -> None:
    """Refresh every robot on the page until ``stop`` is set (and call ``each_frame``)."""
    frame = 0
    next_at = time.monotonic()
    said: set[str] = set()
    while not stop.is_set():
        for robot in robots:
            try:
                robot.refresh(frame)
            except Exception as exc:  # a bad message or description must not end the page
                line = f"robot-control view: {type(exc).__name__}: {exc}"
                if line not in said:
                    said.add(line)
                    print(line, file=sys.stderr, flush=True)
        if each_frame is not None:
            each_frame()
        frame += 1
        next_at += FRAME_S
        stop.wait(max(0.0, next_at - time.monotonic()))
        next_at = max(next_at, time.monotonic() - FRAME_S)
