"""Time in whole nanoseconds, as ROS stamps carry it, shared by the offline loop and the nodes.

Both compute t_k = k · period from the same integer period and convert with the same rounding,
so a lockstep run over the bus and an offline simulation see bit-identical times.
"""

from __future__ import annotations

NS = 1_000_000_000


def period_ns(rate_hz: float) -> int:
    """The control period in whole nanoseconds."""
    return int(round(NS / float(rate_hz)))


def seconds(ns: int) -> float:
    """Integer nanoseconds → seconds."""
    return ns * 1e-9
