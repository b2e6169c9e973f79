"""A live stack's controls on the page: the law (choices from the controller's descriptor), its
gains (sliders over the descriptors' ranges), pause/resume (the trajectory generator's
lifecycle), a FollowJointTrajectory goal (view/goals.py), and the stack's health. Every change
goes through the standard services (view/commands.py), so a refusal shows the node's own
reason."""

from __future__ import annotations

import threading

import numpy as np

from robot_control.bus.node import ServiceCallError
from robot_control.bus.parameters import DOUBLE, DOUBLE_ARRAY, STRING
from robot_control.view.commands import ParameterInfo, StackCommands
from robot_control.view.goals import GoalControls
from robot_control.view.watch import StackWatch

CONTROLLER, GENERATOR = "controller", "trajectory_generator"
LEVELS = {0: "OK", 1: "WARN", 2: "ERROR", 3: "STALE"}


class StackControls:
    """The control widgets of one namespace, filled from its nodes once it is connected."""

    def __init__(self, gui, watch: StackWatch, commands: StackCommands) -> None:
        self.gui = gui
        self.watch = watch
        self.commands = commands
        self.lock = threading.Lock()
        self.loaded = False  # descriptors read since the stack (re)connected
        with gui.add_folder("Law and gains"):
            self.law = gui.add_dropdown("law", ("…",), hint="the controller's `controller` "
                                        "parameter (its descriptor's choices)")
            self.law_by_name = gui.add_text("law by name", "", hint="any registry name; the "
                                            "controller decides")
            self.law_answer = gui.add_markdown("")
            self.gain_folder = gui.add_folder("gains")
        with gui.add_folder("Motion"):
            self.pause = gui.add_button("Pause (deactivate the generator)")
            self.resume = gui.add_button("Resume (activate the generator)")
            self.motion_state = gui.add_markdown("")
            self.goals = GoalControls(gui, lambda: watch.traces and watch.traces.joints,
                                      commands)
        self.health = gui.add_markdown("")
        self.gains: list = []
        self.law.on_update(lambda e: e.client and self._in_thread(self._set_law, self.law.value))
        self.law_by_name.on_update(lambda e: e.client and self.law_by_name.value.strip() and
                                   self._in_thread(self._set_law, self.law_by_name.value.strip()))
        self.pause.on_click(lambda e: self._in_thread(self._transition, "deactivate"))
        self.resume.on_click(lambda e: self._in_thread(self._transition, "activate"))

    @staticmethod
    def _in_thread(work, *args) -> None:
        """Service calls block: never in viser's event loop."""
        threading.Thread(target=work, args=args, daemon=True).start()

    # -- filled from the nodes
    def load(self) -> None:
        """Read the law's choices and gains and the generator's state (once per connection)."""
        with self.lock:
            try:
                info = self.commands.parameters(CONTROLLER, ["controller"])[0]
                self._fill_law(info)
                self._fill_gains(str(info.value))
                self.motion_state.content = f"generator: **{self.commands.state(GENERATOR)}**"
                self.loaded = True
            except (ServiceCallError, IndexError, KeyError) as exc:
                self.law_answer.content = f"controls not available yet: {exc}"

    def _fill_law(self, info: ParameterInfo) -> None:
        choices = tuple(info.choices) or (str(info.value),)
        self.law.options = choices
        self.law.value = str(info.value)
        self.law.hint = info.description

    def _fill_gains(self, law: str) -> None:
        for handle in self.gains:
            handle.remove()
        self.gains = []
        names = self.commands.names(CONTROLLER, law)
        infos = [p for p in self.commands.parameters(CONTROLLER, names)
                 if p.type in (DOUBLE, DOUBLE_ARRAY) and not p.read_only]
        with self.gain_folder:
            for p in infos:
                values = p.value if isinstance(p.value, list) else [p.value]
                for i, v in enumerate(values):
                    self.gains.append(self._slider(p, i, float(v)))

    def _slider(self, p: ParameterInfo, index: int, value: float):
        low, high = slider_range(p.low, p.high, value)
        label = p.name.split(".", 1)[1] + (f"[{index}]" if p.type == DOUBLE_ARRAY else "")
        slider = self.gui.add_slider(label, min=low, max=high, step=(high - low) / 200.0,
                                     initial_value=min(max(value, low), high), hint=p.description)
        slider.on_update(lambda e: e.client and self._in_thread(self._set_gain, p, index,
                                                                slider.value))
        return slider

    # -- changes
    def _set_law(self, law: str) -> None:
        try:
            ok, reason = self.commands.set(CONTROLLER, "controller", law, STRING)
        except ServiceCallError as exc:
            ok, reason = False, str(exc)
        if ok:
            self.law_answer.content = f"law: **{law}** accepted"
            self._fill_gains(law)
        else:
            self.law_answer.content = f"law **{law}** refused: {reason}"
            self.load()  # the selector shows the law that still runs

    def _set_gain(self, p: ParameterInfo, index: int, value: float) -> None:
        with self.lock:
            try:
                current = self.commands.parameters(CONTROLLER, [p.name])[0].value
                if isinstance(current, list):
                    current[index] = float(value)
                else:
                    current = float(value)
                ok, reason = self.commands.set(CONTROLLER, p.name, current, p.type)
            except (ServiceCallError, IndexError) as exc:
                ok, reason = False, str(exc)
        self.law_answer.content = f"{p.name} = {value:.4g} " + (
            "accepted" if ok else f"refused: {reason}")

    def _transition(self, label: str) -> None:
        try:
            ok = self.commands.transition(GENERATOR, label)
            state = self.commands.state(GENERATOR)
            self.motion_state.content = f"generator: **{state}**" + (
                "" if ok else f" ({label} refused)")
        except ServiceCallError as exc:
            self.motion_state.content = f"{label}: {exc}"

    # -- health
    def update_health(self) -> None:
        """Rate, p99 latency, missed deadlines, saturation and every node's diagnostics."""
        plant = self.watch.status_of("plant")
        controller = self.watch.status_of("controller")
        lines = []
        if plant is not None:
            v = plant[2]
            lines.append(f"rate **{_fmt(v.get('achieved_rate_hz'))} Hz** · p99 latency "
                         f"**{_fmt(v.get('latency_p99_us'))} µs** · missed deadlines "
                         f"**{v.get('missed_deadlines', '—')}** of "
                         f"{v.get('commanded_deadlines', '—')}")
        if controller is not None:
            lines.append(f"law **{controller[2].get('law', '—')}** · saturated commands "
                         f"**{controller[2].get('saturated_commands', '0')}**")
        for name, (level, message, _) in sorted(self.watch.health.items()):
            lines.append(f"- {LEVELS.get(level, level)} `{name}`: {message}")
        self.health.content = "\n".join(lines) or "*no diagnostics yet*"
        if traces := self.watch.traces:
            if not self.goals.positions.value and (last := traces.latest()) is not None:
                self.goals.positions.value = ", ".join(f"{v:.3f}" for v in last["q"])


def _fmt(text: str | None) -> str:
    try:
        return f"{float(text):.1f}"
    except (TypeError, ValueError):
        return "—"


def slider_range(low: float | None, high: float | None, value: float) -> tuple[float, float]:
    """A slider's span: the descriptor's range where it is one a hand can sweep, else (an open
    or astronomically wide side) up to four times the value, on its side of zero."""
    span = max(1.0, 4.0 * abs(value))
    low = low if low is not None and np.isfinite(low) and low > -1e6 else min(0.0, -span
                                                                              if value < 0 else 0.0)
    high = high if high is not None and np.isfinite(high) and high < 1e6 else max(span, low + 1.0)
    return float(low), float(high)
