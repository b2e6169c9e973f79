"""The plant's drive-safety parameters: what its drive does when commands stop, and when a
joint overspeeds.

A real drive's safety settings are not retuned under motion: they change only while the plant
is inactive (``locked_while_active``). nodes/plant_node.py applies them; their names and ranges
are the design's plant parameters.
"""

from __future__ import annotations

from dataclasses import dataclass

from robot_control.bus.param_table import param

SAFE_BEHAVIOURS = ("hold", "zero_torque")
#: why a safety parameter may not change while the plant is active
LOCKED = "a safety parameter of the plant"


@dataclass(frozen=True)
class DriveSafety:
    """The plant's safety settings (bus/param_table.py rows)."""

    command_timeout: float = param(
        0.05, "seconds without a valid command, beyond one period, before the safe behaviour",
        range=(1e-3, 10.0), locked_while_active=LOCKED)
    safe_behaviour: str = param(
        "hold", "without commands: 'hold' (gravity compensation with damping) or 'zero_torque'",
        choices=SAFE_BEHAVIOURS, locked_while_active=LOCKED)
    hold_damping: float = param(
        10.0, "hold behaviour: τ = g(q) − d M(q) q̇, damping rate d in 1/s (scaled by the inertia "
        "so light wrist links stay stable)", range=(0.0, 1e3), locked_while_active=LOCKED)
    overspeed_factor: float = param(
        1.2, "safety stop when a joint moves faster than this many times its velocity limit "
        "(range [1, 10])", range=(1.0, 10.0), locked_while_active=LOCKED)
    safe_blend_time: float = param(
        0.05, "entering the safe behaviour when commands stop, the applied torque blends into "
        "it with this time constant, s (0: switch at once)", range=(0.0, 10.0),
        locked_while_active=LOCKED)
