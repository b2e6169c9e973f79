"""The plant's drive-safety parameters: what its drive does when commands stop, and when a
joint overspeeds.

A real drive's safety settings are not retuned under motion: they change only while the plant
is inactive (:func:`safety_change_error`). nodes/plant_node.py applies them; their names and
ranges are the design's plant parameters.
"""

from __future__ import annotations

from typing import NamedTuple

SAFE_BEHAVIOURS = ("hold", "zero_torque")
#: what the drive does when things go wrong: changed only while inactive
SAFETY_PARAMETERS = ("command_timeout", "safe_behaviour", "hold_damping", "overspeed_factor",
                     "safe_blend_time")


class DriveSafety(NamedTuple):
    command_timeout: float
    safe_behaviour: str
    hold_damping: float
    overspeed_factor: float
    safe_blend_time: float


def declare_drive_safety(node) -> DriveSafety:
    """Declare the safety parameters on the plant's node; their values."""
    return DriveSafety(
        node.declare_parameter(
            "command_timeout", 0.05, "seconds without a valid command, beyond one period, before "
            "the safe behaviour", floating_point_range=(1e-3, 10.0)),
        node.declare_parameter(
            "safe_behaviour", "hold", "without commands: 'hold' (gravity compensation with "
            "damping) or 'zero_torque'", additional_constraints=" | ".join(SAFE_BEHAVIOURS)),
        node.declare_parameter(
            "hold_damping", 10.0, "hold behaviour: τ = g(q) − d M(q) q̇, damping rate d in 1/s "
            "(scaled by the inertia so light wrist links stay stable)",
            floating_point_range=(0.0, 1e3)),
        node.declare_parameter(
            "overspeed_factor", 1.2, "safety stop when a joint moves faster than this many times "
            "its velocity limit (range [1, 10])", floating_point_range=(1.0, 10.0)),
        node.declare_parameter(
            "safe_blend_time", 0.05, "entering the safe behaviour when commands stop, the "
            "applied torque blends into it with this time constant, s (0: switch at once)",
            floating_point_range=(0.0, 10.0)),
    )


def safety_change_error(changes: dict, active: bool) -> str | None:
    """Why a parameter change must be refused: a safety parameter while the plant is active, or
    an unknown safe behaviour (None: allowed)."""
    locked = sorted(set(changes) & set(SAFETY_PARAMETERS))
    if locked and active:
        return (f"{', '.join(locked)}: a safety parameter of the plant, read-only while it is "
                "active; deactivate the plant to change it")
    if "safe_behaviour" in changes and changes["safe_behaviour"] not in SAFE_BEHAVIOURS:
        return f"safe_behaviour must be one of {SAFE_BEHAVIOURS}, got '{changes['safe_behaviour']}'"
    return None
