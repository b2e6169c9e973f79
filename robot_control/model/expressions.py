"""Numbers in robot files: a plain number, or a safe arithmetic expression such as ``pi/2``.

Only number literals, named constants, + − × / ** and unary signs are evaluated (the
expression is walked as a Python AST; nothing is executed), so a file can write
``alpha: -pi/2`` or ``link3.m: d2**2`` without becoming a code-injection vector.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Mapping

from robot_control.model.robot_model import ModelError

#: Constants every expression may use; files add their own under a ``constants`` key.
BUILTIN_CONSTANTS = {"pi": math.pi, "deg": math.pi / 180.0}

_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos}
_MAX_LENGTH = 200


def evaluate(text: str, constants: Mapping[str, float], where: str) -> float:
    """Value of an arithmetic expression over number literals and ``constants``."""
    if len(text) > _MAX_LENGTH:
        raise ModelError(f"{where}: expression longer than {_MAX_LENGTH} characters")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ModelError(f"{where}: '{text}' is not a number or arithmetic expression") from exc

    def walk(node: ast.AST) -> float:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return float(node.value)
        if isinstance(node, ast.Name):
            if node.id not in constants:
                known = ", ".join(sorted(constants)) or "none"
                raise ModelError(f"{where}: unknown constant '{node.id}' (known: {known})")
            return float(constants[node.id])
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            return _BINARY[type(node.op)](walk(node.left), walk(node.right))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return _UNARY[type(node.op)](walk(node.operand))
        raise ModelError(
            f"{where}: '{text}' may only use numbers, constants and + - * / ** (found "
            f"{type(node).__name__})"
        )

    try:
        value = walk(tree)
    except (ZeroDivisionError, OverflowError) as exc:
        raise ModelError(f"{where}: cannot evaluate '{text}' ({exc})") from exc
    if isinstance(value, complex) or not math.isfinite(value):
        raise ModelError(f"{where}: '{text}' is not a finite real number")
    return value


def number(value: object, constants: Mapping[str, float], where: str) -> float:
    """A finite float from a YAML scalar: a number or an expression string."""
    if isinstance(value, bool) or value is None:
        raise ModelError(f"{where}: expected a number, got {value!r}")
    if isinstance(value, int | float):
        if not math.isfinite(value):
            raise ModelError(f"{where}: expected a finite number, got {value!r}")
        return float(value)
    if isinstance(value, str):
        return evaluate(value, constants, where)
    raise ModelError(f"{where}: expected a number, got {type(value).__name__} {value!r}")


def read_constants(spec: object, where: str) -> dict[str, float]:
    """The built-in constants plus a file's ``constants`` (an entry may use the ones before it)."""
    constants = dict(BUILTIN_CONSTANTS)
    if spec is None:
        return constants
    if not isinstance(spec, Mapping):
        raise ModelError(f"{where}: 'constants' must be a mapping of name: number")
    for name, value in spec.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise ModelError(f"{where}: constant name {name!r} is not an identifier")
        constants[name] = number(value, constants, f"{where} constant '{name}'")
    return constants
