"""Control laws of Huo ch. 3 behind one interface, and a registry of them by name.

    from robot_control.control import create, State, Reference
    law = create("computed_torque")
    law.configure(model, {"kp": [50, 50, 50], "kd": [10, 10, 10]})
    law.reset(state)
    tau = law.update(t, state, Reference(q_d, qd_d, qdd_d))
"""

# first: numba fixes a kernel's cache folder when the kernel is defined, so the user cache
# (dynamics/compile_cache.py) is set before this room's kernels, whatever a process imports
from robot_control.dynamics import compile_cache  # noqa: F401, I001

# isort: split
from robot_control.control.base import Config, ConfigurationError, Controller, Reference, State
from robot_control.control.errors import TrackingErrors, saturation
from robot_control.control.model_terms import (
    ExternalModelTerms,
    LocalModelTerms,
    ModelTerms,
    estimated_model,
)
from robot_control.control.parameters import ParameterError, ParamSpec
from robot_control.control.registry import (
    GROUP,
    UnknownControllerError,
    available,
    controller_class,
    create,
    register,
    unregister,
)

__all__ = [
    "GROUP",
    "Config",
    "ConfigurationError",
    "Controller",
    "ExternalModelTerms",
    "LocalModelTerms",
    "ModelTerms",
    "ParamSpec",
    "ParameterError",
    "Reference",
    "State",
    "TrackingErrors",
    "UnknownControllerError",
    "available",
    "controller_class",
    "create",
    "estimated_model",
    "register",
    "saturation",
    "unregister",
]
