"""A drive's two velocity protections, as the plant node applies them.

- The limiter: a command that the plant's model says would take a joint past its overspeed trip
  (``overspeed_factor`` × its velocity limit) within the steps it is held is not applied; the
  plant holds instead for those steps. A drive's velocity limiter works this way, so the state
  diverges only by a numerical failure, never by a command (a light wrist given a few N·m).
- The overspeed stop: a joint faster than the trip anyway (gravity, the safe behaviour) stops
  the drive: it holds, whatever the safe behaviour says (a robot under gravity must not fall),
  until every joint is back under half its limit.
"""

from __future__ import annotations

import numpy as np


class VelocityGuard:
    """The limiter's and the stop's decisions and counters for one set of joints."""

    def __init__(self, log, names: list[str], velocity_limit: np.ndarray,
                 factor: float) -> None:
        self.log = log
        self.names = names
        self.velocity_limit = np.asarray(velocity_limit, dtype=float)
        self.factor = factor  # overspeed_factor
        self.reset()

    def reset(self) -> None:
        self.stopping = False  # an overspeed stop is active
        self.stops = 0
        self.limited = 0  # held periods whose command the limiter refused

    @property
    def trip(self) -> np.ndarray:
        return self.factor * self.velocity_limit

    def refuses(self, tau: np.ndarray, predicted: np.ndarray | None, steps: int) -> bool:
        """True (logged, counted) when the velocity ``predicted`` after ``steps`` steps under τ
        is past the trip: the command must not run (None: no prediction, it runs)."""
        if predicted is None:
            return False
        over = np.flatnonzero(~(np.abs(predicted) <= self.trip))  # NaN counts as over
        if not over.size:
            return False
        i = int(over[0])
        self.limited += 1
        self.log.warn(f"command limited: {self.names[i]} would reach {predicted[i]:.3g} within "
                      f"{steps} steps under {tau[i]:.4g} (trip at {self.trip[i]:.3g}): holding "
                      f"instead ({self.limited} so far)", throttle_duration_sec=1.0)
        return True

    def watch(self, qd: np.ndarray) -> None:
        """The overspeed stop: trip above the trip speed, release under half the limit."""
        speed = np.abs(qd)
        if not self.stopping:
            over = np.flatnonzero(speed > self.trip)
            if over.size:
                i = int(over[0])
                self.stopping = True
                self.stops += 1
                self.log.error(f"safety stop: {self.names[i]} at {speed[i]:.3g} (limit "
                               f"{self.velocity_limit[i]:.3g}, trip at {self.factor:g}×): "
                               "holding (gravity compensation with damping) until every joint "
                               "is under half its limit")
        elif np.all(speed <= 0.5 * self.velocity_limit):
            self.stopping = False
            self.log.info("safety stop released: commands apply again")


def predicted_velocity(plant, tau: np.ndarray, seconds: float) -> np.ndarray:
    """q̇ + q̈(τ)·seconds: one explicit Euler step of the plant's full model (its saturation
    included) from its current state, q̈ by its forward dynamics."""
    qdd = plant.acceleration(plant.t, plant.q, plant.qd, np.array(plant.saturate(tau)))
    return plant.qd + qdd * seconds


def step_and_predict(plant, seconds: float) -> None:
    """One step and one prediction under zero torque: loads both compiled kernels (the guard's
    q̈ is a kernel of its own, ~5 ms at its first call) before a loop needs them."""
    zeros = np.zeros(plant.n)
    plant.step(zeros, seconds)
    predicted_velocity(plant, zeros, seconds)
