"""Whether a description can run on the stack at all, said before anything moves.

A physically valid URDF can still be one no controller can hold: a joint that moves no inertia
about its axis (a point mass on a revolute axis: its row of M is zero and the plant divides by
zero), or a joint whose effort limit is below the gravity load at the initial pose (the arm sags
whatever the law). ``description_problems`` names each such joint with its figures and the fix;
the plant refuses to configure on any (nodes/plant_node.py) and ``robot-control check`` prints
them. The loader itself refuses, naming the link or joint, an inertia that is not positive
semi-definite and a joint whose moving subtree has no mass at all (model/robot_model.py).
"""

from __future__ import annotations

import numpy as np

#: a joint's inertia M_ii below this (kg·m² or kg) is no inertia at all
INERTIA_FLOOR = 1e-12


def description_problems(model, q0) -> list[str]:
    """One line per joint that cannot work at pose ``q0``: no inertia moved, or gravity beyond
    its effort limit; [] when the description can run."""
    from robot_control import dynamics as dyn

    q0 = np.asarray(q0, dtype=float)
    M = dyn.mass_matrix(model, q0)
    problems = []
    for i, name in enumerate(model.joint_names):
        if not M[i, i] > INERTIA_FLOOR:
            problems.append(
                f"joint '{name}': the links it moves have no mass or inertia about its axis "
                f"(M_ii = {M[i, i]:.3g}): give its child link an <inertial>, or make the joint fixed")
    if problems:
        return problems
    g = dyn.gravity_torques(model, q0)
    effort = np.asarray(model.effort_limit, dtype=float)
    for i, name in enumerate(model.joint_names):
        if abs(g[i]) > effort[i]:
            problems.append(
                f"joint '{name}': gravity at the initial pose needs {abs(g[i]):.4g} N·m (N), "
                f"beyond its effort limit {effort[i]:.4g}: choose an initial_q it can hold, or "
                "check the <limit effort> and the link masses")
    return problems
