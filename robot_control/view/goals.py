"""A FollowJointTrajectory goal from the page, followed to its end: the positions and duration
typed, the goal sent to the trajectory generator, then its answer (accepted, with its id, or
rejected) and its end (succeeded; aborted or canceled with the generator's error_string); a goal
in flight can be cancelled. The last few goals stay listed, newest first, so a goal preempted by
a newer one shows how it ended too."""

from __future__ import annotations

import threading

from robot_control.bus.node import ServiceCallError
from robot_control.trajectory import jtc_goal
from robot_control.view.commands import GoalEnd, StackCommands

#: FollowJointTrajectory error codes by number (control_msgs)
ERROR_NAMES = {getattr(jtc_goal, n): n for n in (
    "SUCCESSFUL", "INVALID_GOAL", "INVALID_JOINTS", "OLD_HEADER_TIMESTAMP",
    "PATH_TOLERANCE_VIOLATED", "GOAL_TOLERANCE_VIOLATED")}
SHOWN_GOALS = 4  # goals listed on the page, newest first


def goal_label(goal_id: bytes) -> str:
    """A goal's id as the page shows it: its first 8 hex digits (uuid's first group)."""
    return goal_id.hex()[:8]


def end_text(end: GoalEnd) -> str:
    """One line of a goal's end: its status, with the error code's name when it is not
    SUCCESSFUL and the generator's reason when it gave one."""
    text = f"**{end.status}**"
    if end.error_code != jtc_goal.SUCCESSFUL:
        text += f" ({ERROR_NAMES.get(end.error_code, end.error_code)})"
    if end.error_string and end.error_string != end.status:
        text += f": {end.error_string}"
    return text


class GoalControls:
    """The goal widgets of one namespace and the goals sent from them."""

    def __init__(self, gui, joints, commands: StackCommands) -> None:
        self.joints = joints  # () → the stack's joint names (None until its traces arrive)
        self.commands = commands
        self.positions = gui.add_text("goal positions", "", hint="one per joint, e.g. 0.1, 0.5, 0")
        self.duration = gui.add_number("goal duration [s]", 2.0, min=0.1, max=60.0, step=0.1)
        self.send = gui.add_button("Send goal (FollowJointTrajectory)")
        self.cancel = gui.add_button("Cancel goal", disabled=True)
        self.answer = gui.add_markdown("")
        self.lock = threading.Lock()
        self.lines: dict[bytes, str] = {}  # goal id → its line, oldest first
        self.running: bytes | None = None  # the goal in flight (the newest accepted)
        self.send.on_click(lambda e: _in_thread(self._send))
        self.cancel.on_click(lambda e: _in_thread(self._cancel))

    def _send(self) -> None:
        joints = self.joints()
        try:
            positions = [float(v) for v in self.positions.value.replace(",", " ").split()]
            if joints is None or len(positions) != len(joints):
                raise ValueError(f"give {0 if joints is None else len(joints)} positions, one "
                                 f"per joint")
            duration = float(self.duration.value)
            goal_id, accepted = self.commands.send_goal(joints, positions, duration)
        except (ValueError, ServiceCallError) as exc:
            self._show(b"", f"goal not sent: {exc}")
            return
        if not accepted:  # our generator accepts every goal and aborts a bad one with a reason
            self._show(goal_id, "**rejected** (the generator gives no reason with a rejection; "
                       "see its log on /rosout)")
            return
        self._show(goal_id, "accepted, running", running=True)
        try:
            end = self.commands.goal_end(goal_id, duration)
            self._show(goal_id, end_text(end))
        except ServiceCallError as exc:
            self._show(goal_id, f"accepted; its result did not come: {exc}")
        with self.lock:
            if self.running == goal_id:
                self.running = None
                self.cancel.disabled = True

    def _cancel(self) -> None:
        with self.lock:
            goal_id = self.running
        if goal_id is None:
            return
        try:
            if not self.commands.cancel_goal(goal_id):
                self._show(goal_id, "cancel refused (the goal has ended)")
        except ServiceCallError as exc:
            self._show(goal_id, f"cancel not sent: {exc}")

    def _show(self, goal_id: bytes, text: str, running: bool = False) -> None:
        """Set one goal's line (b'': a goal that was not sent) and redraw the list."""
        with self.lock:
            if not goal_id:  # a goal not sent is the newest line; a sent one keeps its place
                self.lines.pop(goal_id, None)
            self.lines[goal_id] = text
            while len(self.lines) > SHOWN_GOALS:
                del self.lines[next(iter(self.lines))]
            if running:
                self.running = goal_id
                self.cancel.disabled = False
            self.answer.content = "\n".join(
                f"- goal `{goal_label(k)}`: {line}" if k else f"- {line}"
                for k, line in reversed(self.lines.items()))


def _in_thread(work, *args) -> None:
    """Service calls block (a goal's result for its whole duration): never in viser's loop."""
    threading.Thread(target=work, args=args, daemon=True).start()
