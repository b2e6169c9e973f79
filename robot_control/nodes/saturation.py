"""A controller's commands beyond the actuators' effort limits: saturated, counted, judged.

The controller saturates a torque beyond a joint's effort limit at the limit itself (the plant
would saturate it too, and reject one beyond ten times it — validation.IMPLAUSIBLE_FACTOR — and
hold instead); a law that integrates holds its integrators still meanwhile (anti-windup by
conditional integration, LawHost.update). A transient saturation — a motion the arm cannot make
as fast as asked, a disturbance — is counted and reported (WARN on /diagnostics while it lasts);
the goal it spoils is aborted by its tolerances (nodes/follow_joint_trajectory.py).

When are the gains the cause? When the law saturates although nothing asks for torque beyond the
limits: the reference is at rest (q̇_d = q̈_d = 0: no motion demand) and its gravity torque
g(q_d) — all the feedforward a reference at rest needs — is within the limits, yet the command
saturates in more than GAINS_SHARE of the ticks of a GAINS_WINDOW_S window. A feedback that
large about a reachable rest is the gains' (or the state's noise through them: the same fix);
a saturating motion, or a pose the actuators cannot hold against gravity, is not.
"""

from __future__ import annotations

import time

import numpy as np

from robot_control import dynamics as dyn

#: the window over which saturation at rest is judged, s
GAINS_WINDOW_S = 0.5
#: the share of the window's ticks at rest that saturate for the gains to be the cause
GAINS_SHARE = 0.5
#: ticks at rest in a window for a judgement
GAINS_MIN_TICKS = 10
#: a status names a saturation (or the gains) this long after it, s
REPORT_WINDOW_S = 1.0


class Saturation:
    """Clips a law's torque to the effort limits and keeps the figures /diagnostics reports."""

    def __init__(self, model) -> None:
        self.model = model
        self.names = list(model.joint_names)
        self.limit = np.asarray(model.effort_limit, dtype=float)
        self.limited = bool(np.isfinite(self.limit).any())
        self.count = 0  # commands saturated
        self.per_joint = np.zeros(len(self.names), dtype=int)
        self.last_note = ""  # "joint1 commanded -527.2, limit 500"
        self.last_time = -np.inf  # monotonic
        self.gains_time = -np.inf  # when the gains were last judged the cause
        self.gains_note = ""
        self._window_start: float | None = None
        self._rest_ticks = 0
        self._rest_saturated = 0

    def warm_up(self) -> None:
        """Load the gravity kernel the judgement calls, so its first use stalls no tick."""
        if self.limited:
            self._rest_is_holdable(np.clip(np.zeros(len(self.names)), self.model.lower,
                                           self.model.upper))

    def clip(self, tau: np.ndarray, ref) -> np.ndarray | None:
        """τ saturated at the limits (a new array), or None when it is within them; counts it
        and judges, over the window, whether the gains are the cause (module docstring)."""
        if not self.limited:
            return None
        over = np.abs(tau) > self.limit
        saturated = bool(over.any())
        now = time.monotonic()
        self._judge(saturated, ref, now)
        if not saturated:
            return None
        self.count += 1
        self.per_joint += over
        self.last_time = now
        j = int(np.argmax(np.where(over, np.abs(tau) / self.limit, 0.0)))
        self.last_note = (f"{self.names[j]} commanded {tau[j]:.4g}, effort limit "
                          f"{self.limit[j]:.4g}")
        return np.clip(tau, -self.limit, self.limit)

    def _judge(self, saturated: bool, ref, now: float) -> None:
        """Count the window's ticks at rest and those among them that saturated although the
        reference's gravity torque is within the limits; at the window's end, judge."""
        if self._window_start is None:
            self._window_start = now
        if not ref.qd.any() and not ref.qdd.any():
            self._rest_ticks += 1
            if saturated and self._rest_is_holdable(ref.q):
                self._rest_saturated += 1
        if now - self._window_start < GAINS_WINDOW_S:
            return
        if self._rest_ticks >= GAINS_MIN_TICKS and \
                self._rest_saturated > GAINS_SHARE * self._rest_ticks:
            self.gains_time = now
            self.gains_note = (f"saturated in {self._rest_saturated} of {self._rest_ticks} "
                               f"ticks at rest within {now - self._window_start:.2f} s, the "
                               f"gravity torque there within the limits (last: {self.last_note})")
        self._window_start, self._rest_ticks, self._rest_saturated = now, 0, 0

    def _rest_is_holdable(self, q: np.ndarray) -> bool:
        """g(q) — the torque holding the arm at rest at q — is within the effort limits."""
        g = dyn.gravity_torques(self.model, q)
        return bool(np.all(np.abs(g) <= self.limit))

    @property
    def gains_blamed(self) -> bool:
        """The gains were judged the cause within the last REPORT_WINDOW_S."""
        return time.monotonic() - self.gains_time < REPORT_WINDOW_S

    @property
    def recent(self) -> bool:
        """A command saturated within the last REPORT_WINDOW_S."""
        return time.monotonic() - self.last_time < REPORT_WINDOW_S

    def diagnostics(self) -> dict[str, object]:
        """``saturated_commands`` (in all), per joint, and the last one."""
        out: dict[str, object] = {"saturated_commands": self.count}
        if self.count:
            out.update({f"saturated_commands {name}": int(k)
                        for name, k in zip(self.names, self.per_joint, strict=True) if k})
            out["last_saturation"] = self.last_note
        return out
