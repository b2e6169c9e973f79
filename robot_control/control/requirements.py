"""What a law needs beyond a joint reference before it may drive the stack's robot (issue 22).

The stack gives every law the joint reference of the trajectory generator; a task-space law
derives its Cartesian reference from it by forward kinematics, and a force law needs a desired
wrench besides. A law that cannot hold every joint from what the stack gives it would let the
arm drift (Huo C5's resolved acceleration on the DDArm with a position task: the hand position
moves with q₁ alone: q₂, q₃ wander 0.5 and 1.5 rad), so it is refused with the reason instead:

- a force reference: a law that presses (``NEEDS_FORCE_REFERENCE``) without one (Huo C13's
  hybrid control would press with its set point into free space);
- a task that controls every joint: the task Jacobian J(q) (m × n) must have rank n at the
  current pose; rank < n leaves n − rank joint motions (J's null space) to drift.
"""

from __future__ import annotations

import numpy as np

Array = np.ndarray

#: singular values below this fraction of the largest count as zero (J's rank)
RANK_TOLERANCE = 1e-6


def task_rank(law, q: Array) -> tuple[int, int] | None:
    """(rank of J(q), number of joints) for a task-space law, None for a joint-space one."""
    space = getattr(law.cfg, "space", None)
    if space is None:
        return None
    _, J, _, _ = space.kinematics(np.asarray(q, dtype=float), np.zeros(law.n))
    s = np.linalg.svd(J, compute_uv=False)
    rank = int(np.sum(s > RANK_TOLERANCE * max(float(s.max(initial=0.0)), 1e-300)))
    return rank, law.n


def refusal(law, q: Array | None, force_reference: Array | None) -> str | None:
    """Why ``law`` (configured) cannot take over the stack's robot at pose q, or None."""
    if getattr(law, "NEEDS_FORCE_REFERENCE", False) and force_reference is None:
        return (f"{law.name} needs a force reference: publish the desired wrench on "
                "/force_reference (geometry_msgs/WrenchStamped) or run a scenario with "
                "force_reference (and a contact to press on)")
    if q is None:
        return None
    ranks = task_rank(law, q)
    if ranks is not None and ranks[0] < ranks[1]:
        rank, n = ranks
        task = law.params.get("task", "?")
        return (f"{law.name} needs a task that controls every joint: its task ({task}, "
                f"{law.cfg.space.m} coordinates) controls {rank} of the {n} joints at this "
                f"pose, the other {n - rank} would drift; set {law.name}.task to pose (or a "
                "frame that moves with every joint), or use a joint-space law")
    return None
