"""Regressors in a chosen parameter basis, for the laws that work with p instead of M, C, g.

Huo's linearity in the parameters (2-113): M q̈ + C q̇ + G = Y(q, q̇, q̈) p. The standard vector θ
has 10 entries per link; a basis (``base``, ``standard`` or a group set bundled with the robot such
as the DDArm's ``huo_p``) gives p = matrix θ and Y_p = Y · regressor_map with Y_p p = Y θ
(robot_control.dynamics.regressor). The regressor depends on the kinematics only, so it is always
evaluated on the controller's own model.
"""

from __future__ import annotations

import importlib

import numpy as np

from robot_control.control.parameters import ParameterError

Array = np.ndarray


class BasisRegressor:
    """Y_p(q, q̇, q̈) and the reference regressor Y_p(q, q̇, q̇_r, q̈_r) in one basis of one model."""

    def __init__(self, model, basis_name: str, parameter: str = "parameter_basis") -> None:
        # the package re-exports a function named ``regressor``: fetch the module itself
        reg = importlib.import_module("robot_control.dynamics.regressor")
        try:
            basis = reg.parameter_basis(model, basis_name)
        except (KeyError, ValueError) as exc:
            known = ["base", "standard", *sorted(getattr(model, "parameter_groups", {}))]
            raise ParameterError(
                parameter, f"unknown basis '{basis_name}' for {model.name} "
                f"(known: {', '.join(known)}): {exc}"
            ) from None
        self._reg = reg
        self.model = model
        self.basis = basis
        self.names = list(basis.names)
        self.size = len(self.names)
        self._map = np.asarray(basis.regressor_map, dtype=float)

    @property
    def regressor_map(self) -> Array:
        """The map with Y_p = Y · regressor_map (10n × size)."""
        return self._map

    def parameters_of(self, model) -> Array:
        """p = matrix θ of a model's standard parameters (e.g. the controller model's own p)."""
        return np.asarray(self.basis.matrix, dtype=float) @ model.inertial_parameters()

    def regressor(self, q: Array, qd: Array, qdd: Array) -> Array:
        """Y_p(q, q̇, q̈) with Y_p p = M q̈ + C q̇ + g."""
        return self._reg.regressor(self.model, q, qd, qdd) @ self._map

    def reference(self, q: Array, qd: Array, qd_r: Array, qdd_r: Array) -> Array:
        """Y_p(q, q̇, q̇_r, q̈_r) with Y_p p = M q̈_r + C(q, q̇) q̇_r + g (Huo 3-79)."""
        return self._reg.reference_regressor(self.model, q, qd, qd_r, qdd_r) @ self._map

    def mass_matrix(self, q: Array, p: Array) -> Array:
        """M̂(q) of the parameters p: column j is Y_p(q, 0, e_j) p − Y_p(q, 0, 0) p."""
        n = self.model.nq
        zero = np.zeros(n)
        g = self.regressor(q, zero, zero) @ p
        M = np.empty((n, n))
        e = np.zeros(n)
        for j in range(n):
            e[j] = 1.0
            M[:, j] = self.regressor(q, zero, e) @ p - g
            e[j] = 0.0
        return 0.5 * (M + M.T)

    def vector(self, values: Array, parameter: str, default: Array | None = None) -> Array:
        """A basis-length parameter vector; an empty list takes ``default``; wrong length refused."""
        values = np.asarray(values, dtype=float)
        if values.size == 0 and default is not None:
            return np.array(default, dtype=float)
        if values.shape != (self.size,):
            raise ParameterError(
                parameter, f"wrong length {values.size}: expected {self.size}, one per parameter "
                f"of basis '{self.basis.name}' ({', '.join(self.names)})"
            )
        return values
