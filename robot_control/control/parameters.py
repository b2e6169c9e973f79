"""Declarative, validated controller parameters (the ros2_controllers ``generate_parameter_library`` idea).

Every law lists its parameters as :class:`ParamSpec` rows. A node declares them from these rows
(name, ROS type, default, description, range); the library validates a whole parameter set in one
place, so a rejected value always comes back as a :class:`ParameterError` naming the parameter and
saying why, and nothing is applied.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

Array = np.ndarray

#: ROS 2 parameter types the specs use (rcl_interfaces/ParameterType names).
TYPES = ("double", "double_array", "string", "bool", "integer")
#: Lengths a double_array may be tied to: a joint, the state x = [e; ė], or the task vector.
SIZES = ("joint", "state", "task", "any")

#: Gains are bounded by what a manipulator can use. A closed-loop bandwidth above ω = 1000 rad/s
#: (160 Hz) lies beyond the structural modes of real arms and, at the default 1 kHz rate, beyond
#: ω·T = 1, where the sampled loop goes unstable: K_p ≤ ω², K_d ≤ 10 ω, Λ ≤ ω. Read as torque
#: gains (PD, N·m/rad), K_p = 1e6 already asks 1000 N·m for 1 mrad of error: bang-bang.
KP_MAX = 1e6
KD_MAX = 1e4
LAMBDA_MAX = 1e3
#: every other number is bounded too: a magnitude beyond this is a typo, not a setting
MAGNITUDE_MAX = 1e9


class ParameterError(ValueError):
    """A refused parameter value; ``parameter`` names it and the message gives the reason."""

    def __init__(self, parameter: str, reason: str) -> None:
        super().__init__(f"{parameter}: {reason}")
        self.parameter = parameter
        self.reason = reason


@dataclass(frozen=True)
class ParamSpec:
    """One declared parameter.

    ``size`` ties a double_array's length to the model: "joint" (n), "state" (2n), "task" (the
    task-space dimension the law chose) or "any" (checked by the law, e.g. one entry per base
    parameter). A sized array's ``default`` is a scalar repeated to that length, so
    ``per_joint`` arrays can be declared before the model is known. ``lower``/``upper`` bound
    every element; ``strict`` makes the lower bound exclusive (a gain that must be positive).
    """

    name: str
    type: str
    default: Any
    description: str
    lower: float | None = None
    upper: float | None = None
    strict: bool = False
    size: str | None = None
    choices: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"parameter spec {self.name}: unknown type {self.type}")
        if self.size is not None and self.size not in SIZES:
            raise ValueError(f"parameter spec {self.name}: unknown size {self.size}")

    @property
    def per_joint(self) -> bool:
        return self.size == "joint"

    def length(self, n: int, task_dim: int | None = None) -> int | None:
        """Required array length for an n-joint model (None: not fixed by the spec)."""
        if self.size == "joint":
            return n
        if self.size == "state":
            return 2 * n
        if self.size == "task":
            return task_dim
        return None

    def default_value(self, n: int, task_dim: int | None = None) -> Any:
        """The default expanded for an n-joint model (scalar defaults of sized arrays repeat)."""
        if self.type != "double_array":
            return self.default
        length = self.length(n, task_dim)
        if np.isscalar(self.default) and length is not None:
            return np.full(length, float(self.default))
        return np.array(self.default, dtype=float)

    @property
    def full_description(self) -> str:
        """The description with the accepted range, as a node declares it."""
        if self.type not in ("double", "double_array", "integer"):
            return self.description
        if self.lower is None and self.upper is None:
            return f"{self.description} (|value| ≤ {MAGNITUDE_MAX:g})"
        return f"{self.description} (range {self.range_text()})"

    def range_text(self) -> str:
        lo = "(" if self.strict else "["
        a = "-inf" if self.lower is None else f"{self.lower:g}"
        b = "inf" if self.upper is None else f"{self.upper:g}"
        return f"{lo}{a}, {b}]"

    def validate(self, value: Any, n: int, task_dim: int | None = None) -> Any:
        """The value converted to its canonical form, or ParameterError with the reason."""
        if self.type == "string":
            if not isinstance(value, str):
                raise ParameterError(self.name, f"expected a string, got {type(value).__name__}")
            if self.choices is not None and value not in self.choices:
                raise ParameterError(
                    self.name, f"'{value}' is not one of {', '.join(self.choices)}"
                )
            return value
        if self.type == "bool":
            if not isinstance(value, (bool, np.bool_)):
                raise ParameterError(self.name, f"expected true or false, got {value!r}")
            return bool(value)
        if self.type == "integer":
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise ParameterError(self.name, f"expected an integer, got {value!r}")
            self._check_range(np.array([float(value)]))
            return int(value)
        if self.type == "double":
            if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
                raise ParameterError(self.name, f"expected a number, got {value!r}")
            self._check_range(np.array([float(value)]))
            return float(value)
        return self._validate_array(value, n, task_dim)

    def _validate_array(self, value: Any, n: int, task_dim: int | None) -> Array:
        length = self.length(n, task_dim)
        if isinstance(value, (bool, str)) or value is None:
            raise ParameterError(self.name, f"expected a list of numbers, got {value!r}")
        try:
            arr = np.array(value, dtype=float)
        except (TypeError, ValueError):
            raise ParameterError(self.name, f"expected a list of numbers, got {value!r}") from None
        if arr.ndim == 0 and length is not None:
            arr = np.full(length, float(arr))  # a single number means "the same on every axis"
        if arr.ndim != 1:
            raise ParameterError(self.name, f"expected a flat list, got shape {arr.shape}")
        if length is not None and arr.shape[0] != length:
            what = {"joint": "one per joint", "state": "one per state [e; ė]",
                    "task": "one per task coordinate"}[self.size]
            raise ParameterError(
                self.name, f"wrong length {arr.shape[0]}: expected {length} ({what})"
            )
        self._check_range(arr)
        return arr

    def _check_range(self, arr: Array) -> None:
        if not np.all(np.isfinite(arr)):
            raise ParameterError(self.name, "values must be finite")
        if np.any(np.abs(arr) > MAGNITUDE_MAX):
            i = int(np.flatnonzero(np.abs(arr) > MAGNITUDE_MAX)[0])
            where = f" (entry {i})" if arr.size > 1 else ""
            raise ParameterError(self.name, f"value {arr[i]:g}{where} is beyond "
                                            f"±{MAGNITUDE_MAX:g}")
        bad = np.zeros(arr.shape, dtype=bool)
        if self.lower is not None:
            bad |= arr <= self.lower if self.strict else arr < self.lower
        if self.upper is not None:
            bad |= arr > self.upper
        if np.any(bad):
            i = int(np.flatnonzero(bad)[0])
            where = f" (entry {i})" if arr.size > 1 else ""
            need = "positive" if (self.strict and self.lower == 0.0) else f"in {self.range_text()}"
            if self.lower == 0.0 and not self.strict and self.upper is None:
                need = "non-negative"
            raise ParameterError(self.name, f"value {arr[i]:g}{where} must be {need}")


def validate_parameters(
    specs: tuple[ParamSpec, ...], values: Mapping[str, Any], n: int, task_dim_of=None
) -> dict[str, Any]:
    """Validate a complete parameter mapping against ``specs`` (unknown names are refused).

    ``task_dim_of(values)`` gives the task dimension once the non-task parameters are known.
    """
    by_name = {s.name: s for s in specs}
    unknown = sorted(set(values) - set(by_name))
    if unknown:
        raise ParameterError(
            unknown[0], f"unknown parameter (known: {', '.join(sorted(by_name))})"
        )
    out: dict[str, Any] = {}
    for spec in specs:
        if spec.size != "task":
            raw = values[spec.name] if spec.name in values else spec.default_value(n)
            out[spec.name] = spec.validate(raw, n)
    task_dim = task_dim_of(out) if task_dim_of is not None else None
    for spec in specs:
        if spec.size == "task":
            raw = values[spec.name] if spec.name in values else spec.default_value(n, task_dim)
            out[spec.name] = spec.validate(raw, n, task_dim)
    return out


def as_plain(value: Any) -> Any:
    """A validated value as plain Python (lists instead of arrays), e.g. for YAML or a ROS reply."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value
