"""``robot-control view --bag DIR``: a recording as the traces the live page draws (the bag's
q, q_d, error, commanded and applied torque, via recording/runs.py), its robot_description,
and the posture at any time of it."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from robot_control.recording import bag
from robot_control.recording.runs import run_from_bag
from robot_control.view.traces import Traces


class Recording:
    """A whole recorded run of one namespace, held as Traces on the states' time base."""

    def __init__(self, path: str | Path, namespace: str = "/", window_s: float = 10.0) -> None:
        self.path = Path(path)
        run = run_from_bag(self.path, None, namespace or "/")
        self.title = run.title
        self.label = f"{self.path.name} ({namespace or '/'})"
        self.effort_limit = run.effort_limit
        base = run.position or run.error or run.command
        if base is None:
            raise bag.BagError(f"{self.path}: no joint positions, errors or torques to replay")
        t = np.asarray(base[0], float)
        self.duration = float(t[-1]) if len(t) else 0.0
        self.traces = Traces(run.joints, window_s, capacity=max(2, len(t)))
        series = {"q": run.position, "q_d": run.reference, "error": run.error,
                  "tau_cmd": run.command, "tau_applied": run.applied}
        resampled = {k: _at(t, s) for k, s in series.items()}
        for i, ti in enumerate(t):
            self.traces.add(float(ti), {k: None if v is None else v[i]
                                        for k, v in resampled.items()})
        self.description = _description(self.path, namespace)

    def posture(self, t: float) -> tuple[np.ndarray | None, np.ndarray | None]:
        """(q, q_d) at time t of the run (the sample at or before it)."""
        times, data = self.traces.window(end=t)
        if not len(times):
            return None, None
        return data["q"][-1], data["q_d"][-1]


def _at(t: np.ndarray, series) -> np.ndarray | None:
    """A recorded series (times, rows) interpolated per joint at the times t."""
    if series is None:
        return None
    ts, v = np.asarray(series[0], float), np.asarray(series[1], float)
    if not len(ts) or v.ndim != 2:
        return None
    return np.column_stack([np.interp(t, ts, v[:, j], left=np.nan, right=np.nan)
                            for j in range(v.shape[1])])


def _description(path: Path, namespace: str) -> str | None:
    """The last robot_description the bag holds for the namespace, None if none."""
    name = f"{namespace.rstrip('/')}/robot_description" if namespace.strip("/") \
        else "/robot_description"
    found = None
    for msg in bag.read_messages(path, [name]):
        found = str(bag.decode(msg).data)
    return found
