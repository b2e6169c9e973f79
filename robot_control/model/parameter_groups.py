"""Named parameter groups: linear combinations p = G θ of the standard parameters (Huo 2.5).

A robot may ship sets of grouped parameters beside its model (``<robot>.groups.yaml``),
e.g. the DDArm's ``huo_p`` = (P1 … P9) of Huo Ex. 3-4, which adaptive laws estimate instead of θ.
File layout (coefficients are numbers or safe expressions over ``constants``)::

    constants: {d2: 0.462}
    huo_p:
      P1: {link1.yy: 1, link2.xx: 1, link2.my: 2*d2, link2.m: d2**2, link3.xx: 1, link3.m: d2**2}
      P2: {link2.xx: 1, link2.zz: -1, link3.xx: 1}

Keys are ``<body name>.<xx|xy|xz|yy|yz|zz|mx|my|mz|m>`` (inertia about the body-frame origin,
first moments, mass), matching ``RobotModel.inertial_parameters``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from robot_control.model.expressions import number, read_constants
from robot_control.model.robot_model import ModelError

#: Order of the 10 standard parameters of one body (Huo 2-113).
PARAMETER_NAMES = ("xx", "xy", "xz", "yy", "yz", "zz", "mx", "my", "mz", "m")
_RESERVED = ("constants",)


@dataclass(frozen=True, eq=False)
class ParameterGroups:
    """k named groups p = matrix @ θ, with θ = model.inertial_parameters() (10 per body)."""

    names: list[str]
    matrix: np.ndarray
    #: standard parameters ("link2.xy") the set takes as zero, like Huo's xy₂ = … = 0
    assumed_zero: tuple[str, ...] = ()

    def values(self, model) -> np.ndarray:
        """The group values p = G θ of a model."""
        return self.matrix @ model.inertial_parameters()

    def __getitem__(self, key: str):
        # Lets callers written against the dict form {"names": ..., "matrix": ...} keep working.
        if key in ("names", "matrix", "assumed_zero"):
            return getattr(self, key)
        raise KeyError(key)


def parse_parameter_groups(model, spec: object, where: str) -> dict[str, ParameterGroups]:
    """Every group set of a ``*.groups.yaml`` mapping, each as a k × 10n coefficient matrix."""
    if not isinstance(spec, Mapping) or not spec:
        raise ModelError(f"{where}: expected a mapping of group-set names to groups")
    constants = read_constants(spec.get("constants"), where)
    sets: dict[str, ParameterGroups] = {}
    for set_name, groups in spec.items():
        if set_name in _RESERVED:
            continue
        sets[str(set_name)] = _parse_set(model, str(set_name), groups, constants, where)
    if not sets:
        raise ModelError(f"{where}: no group sets defined")
    return sets


def _parse_set(model, set_name: str, groups: object, constants, where: str) -> ParameterGroups:
    w = f"{where}: group set '{set_name}'"
    if not isinstance(groups, Mapping) or not groups:
        raise ModelError(f"{w}: expected a non-empty mapping of group names to coefficients")
    bodies = {name: i for i, name in enumerate(model.body_names)}
    groups = dict(groups)
    assumed_zero = groups.pop("assumed_zero", [])
    if not isinstance(assumed_zero, list):
        raise ModelError(f"{w}: 'assumed_zero' must be a list of '<body>.<parameter>' names")
    for key in assumed_zero:
        body, _, parameter = str(key).rpartition(".")
        if body not in bodies or parameter not in PARAMETER_NAMES:
            raise ModelError(f"{w}: assumed_zero entry '{key}' is not '<body>.<parameter>'")
    names = [str(g) for g in groups]
    G = np.zeros((len(names), 10 * model.nq))
    for row, (group, coefficients) in enumerate(groups.items()):
        wg = f"{w}, group '{group}'"
        if not isinstance(coefficients, Mapping) or not coefficients:
            raise ModelError(f"{wg}: expected a mapping '<body>.<parameter>: coefficient'")
        for key, value in coefficients.items():
            body, _, parameter = str(key).rpartition(".")
            if body not in bodies:
                raise ModelError(
                    f"{wg}: key '{key}' names unknown body '{body}' "
                    f"(bodies: {', '.join(bodies)})"
                )
            if parameter not in PARAMETER_NAMES:
                raise ModelError(
                    f"{wg}: key '{key}' has unknown parameter '{parameter}' "
                    f"(one of {', '.join(PARAMETER_NAMES)})"
                )
            column = 10 * bodies[body] + PARAMETER_NAMES.index(parameter)
            G[row, column] += number(value, constants, f"{wg}, key '{key}'")
        if not np.any(G[row]):
            raise ModelError(f"{wg}: all coefficients are zero")
    if np.linalg.matrix_rank(G) < len(names):
        raise ModelError(f"{w}: the groups are linearly dependent")
    return ParameterGroups(names, G, tuple(str(k) for k in assumed_zero))
