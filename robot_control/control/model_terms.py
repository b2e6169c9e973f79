"""Where a model-based law gets M(q), C(q, q̇), g(q): the seam between a law and its model.

Two sources implement one interface:
- :class:`LocalModelTerms` evaluates the controller's own RobotModel with robot_control.dynamics
  (that model may differ from the plant's: a payload it does not know, estimated parameters…);
- :class:`ExternalModelTerms` holds the latest terms pushed from outside, as the controller node
  receives them on /dynamics/terms in ``dynamics_source: server`` mode (mass_matrix, coriolis_torque
  Cq̇, gravity_torque, and optionally the full Coriolis matrix). It answers for the state the terms
  were computed at; the node is responsible for pairing terms and state.

Laws ask for what they need (``inverse_dynamics`` for computed torque, ``reference_torque`` for
passivity …); a law needing C(q, q̇) itself declares it and is refused at configure time by a source
that cannot provide it.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod

import numpy as np

from robot_control import dynamics as dyn

Array = np.ndarray

#: every term a source may provide
TERMS = frozenset({"mass_matrix", "coriolis_torque", "gravity", "coriolis_matrix"})


class ModelTerms(ABC):
    """M(q), C(q, q̇)q̇, g(q) (and C(q, q̇) if ``"coriolis_matrix" in provides``) for n joints."""

    n: int
    provides: frozenset[str]

    @abstractmethod
    def mass_matrix(self, q: Array) -> Array:
        """M(q), n×n."""

    @abstractmethod
    def coriolis_torque(self, q: Array, qd: Array) -> Array:
        """C(q, q̇)q̇."""

    @abstractmethod
    def gravity(self, q: Array) -> Array:
        """g(q)."""

    @abstractmethod
    def coriolis_matrix(self, q: Array, qd: Array) -> Array:
        """C(q, q̇) with Ṁ − 2C skew-symmetric (only if provided)."""

    def bias(self, q: Array, qd: Array) -> Array:
        """C(q, q̇)q̇ + g(q)."""
        return self.coriolis_torque(q, qd) + self.gravity(q)

    def inverse_dynamics(self, q: Array, qd: Array, qdd: Array) -> Array:
        """M(q)q̈ + C(q, q̇)q̇ + g(q) (the computed-torque term, Huo 3-31)."""
        return self.mass_matrix(q) @ qdd + self.bias(q, qd)

    def reference_torque(self, q: Array, qd: Array, qd_r: Array, qdd_r: Array) -> Array:
        """M(q)q̈_r + C(q, q̇)q̇_r + g(q) (Huo 3-67; needs the Coriolis matrix)."""
        return (self.mass_matrix(q) @ qdd_r + self.coriolis_matrix(q, qd) @ qd_r
                + self.gravity(q))


class LocalModelTerms(ModelTerms):
    """Terms of a RobotModel by robot_control.dynamics (recursive Newton–Euler, composite bodies)."""

    provides = TERMS

    def __init__(self, model) -> None:
        self.model = model
        self.n = model.nq

    def mass_matrix(self, q: Array) -> Array:
        return dyn.mass_matrix(self.model, q)

    def coriolis_torque(self, q: Array, qd: Array) -> Array:
        return dyn.bias_torques(self.model, q, qd) - dyn.gravity_torques(self.model, q)

    def gravity(self, q: Array) -> Array:
        return dyn.gravity_torques(self.model, q)

    def coriolis_matrix(self, q: Array, qd: Array) -> Array:
        return dyn.coriolis_matrix(self.model, q, qd)

    def bias(self, q: Array, qd: Array) -> Array:
        return dyn.bias_torques(self.model, q, qd)

    def inverse_dynamics(self, q: Array, qd: Array, qdd: Array) -> Array:
        return dyn.inverse_dynamics(self.model, q, qd, qdd)  # one O(n) recursion

    def reference_torque(self, q: Array, qd: Array, qd_r: Array, qdd_r: Array) -> Array:
        # Niemeyer–Slotine O(n) recursion, same C(q, q̇) as coriolis_matrix
        return _regressor_module().slotine_li_torque(self.model, q, qd, qd_r, qdd_r)


class ExternalModelTerms(ModelTerms):
    """The latest terms pushed by a dynamics server; they stand for the state they were made at."""

    def __init__(self, n: int, with_coriolis_matrix: bool = False) -> None:
        self.n = int(n)
        base = {"mass_matrix", "coriolis_torque", "gravity"}
        self.provides = frozenset(base | ({"coriolis_matrix"} if with_coriolis_matrix else set()))
        self._M = np.zeros((self.n, self.n))
        self._c = np.zeros(self.n)
        self._g = np.zeros(self.n)
        self._C = np.zeros((self.n, self.n))
        self.stamp: float | None = None

    def push(self, mass_matrix, coriolis_torque, gravity, coriolis_matrix=None,
             stamp: float | None = None) -> None:
        """Store terms received from outside (shapes checked; copied into preallocated arrays)."""
        n = self.n
        M = np.asarray(mass_matrix, dtype=float)
        c = np.asarray(coriolis_torque, dtype=float)
        g = np.asarray(gravity, dtype=float)
        if M.shape != (n, n) or c.shape != (n,) or g.shape != (n,):
            raise ValueError(
                f"dynamics terms must be M {n}×{n}, Cq̇ and g of length {n}; got {M.shape}, "
                f"{c.shape}, {g.shape}"
            )
        if coriolis_matrix is not None:
            C = np.asarray(coriolis_matrix, dtype=float)
            if C.shape != (n, n):
                raise ValueError(f"coriolis_matrix must be {n}×{n}, got {C.shape}")
            self._C[:] = C
        elif "coriolis_matrix" in self.provides:
            raise ValueError("this source was created with_coriolis_matrix: push C(q, q̇) too")
        self._M[:] = M
        self._c[:] = c
        self._g[:] = g
        self.stamp = stamp if stamp is not None else 0.0

    def _check(self) -> None:
        if self.stamp is None:
            raise RuntimeError("no dynamics terms received yet (dynamics_source: server)")

    def mass_matrix(self, q: Array) -> Array:
        self._check()
        return self._M

    def coriolis_torque(self, q: Array, qd: Array) -> Array:
        self._check()
        return self._c

    def gravity(self, q: Array) -> Array:
        self._check()
        return self._g

    def coriolis_matrix(self, q: Array, qd: Array) -> Array:
        self._check()
        if "coriolis_matrix" not in self.provides:
            raise RuntimeError("the dynamics server does not provide the Coriolis matrix")
        return self._C


def _regressor_module():
    # the package re-exports a function named ``regressor``: fetch the module itself
    return importlib.import_module("robot_control.dynamics.regressor")


def estimated_model(model, basis, p):
    """A copy of ``model`` whose dynamics are those of the parameter vector p in ``basis``.

    ``basis`` is a robot_control.dynamics.regressor ParameterBasis (p = matrix @ θ) or its name.
    Among the standard parameter sets θ with matrix @ θ = p the one closest to the model's own θ₀
    is taken: θ = θ₀ + matrix⁺(p − matrix θ₀). Directions outside the basis do not change the
    joint-space dynamics, so this reproduces Ĥ, Ĉ, Ĝ of Huo's p̂ (e.g. Ex 3-5/3-6 on the DDArm).
    The copy is not checked for physical consistency (an estimate need not be).
    """
    if isinstance(basis, str):
        basis = _regressor_module().parameter_basis(model, basis)
    p = np.asarray(p, dtype=float)
    if p.shape != (basis.matrix.shape[0],):
        raise ValueError(f"parameter vector must have length {basis.matrix.shape[0]}, got {p.shape}")
    theta0 = model.inertial_parameters()
    theta = theta0 + np.linalg.pinv(basis.matrix) @ (p - basis.matrix @ theta0)
    return model.with_inertial_parameters(theta, check=False)
