"""Shared by the builtin tests: comparing runtime values the way TorchScript defines them, and calling tsjit's
implementation of an operator by name.

TorchScript is the oracle; equality is strict where TorchScript is exact (ints, bools, strings, the Python
type of every number, list/tuple/dict shape and order) and tolerant only in the last bits of a double, where
CPython's `math` and C's libm may round differently.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from tsjit.ops.builtins import load
from tsjit.ops.registry import find_operator

load()


def tsjit_operation(operator_name: str, node=None):
    """tsjit's Operation for `ns::name.overload`."""
    operator = find_operator(operator_name)
    assert operator is not None, f"tsjit has no operator {operator_name}"
    return operator.get_operation(node)


def same_value(expected: Any, actual: Any) -> bool:
    """Whether two runtime values are the same TorchScript value (see the module docstring)."""
    if isinstance(expected, torch.Tensor):
        return isinstance(actual, torch.Tensor) and _same_tensor(expected, actual)
    if type(expected) is not type(actual):
        return False
    if isinstance(expected, float):
        return _same_float(expected, actual)
    if isinstance(expected, complex):
        return _same_float(expected.real, actual.real) and _same_float(expected.imag, actual.imag)
    if isinstance(expected, list | tuple):
        return len(expected) == len(actual) and all(map(same_value, expected, actual))
    if isinstance(expected, dict):
        return same_value(list(expected.items()), list(actual.items()))
    return expected == actual


def _same_float(expected: float, actual: float) -> bool:
    if math.isnan(expected) or math.isnan(actual):
        return math.isnan(expected) and math.isnan(actual)
    if math.isinf(expected) or expected == 0:
        return expected == actual and math.copysign(1, expected) == math.copysign(1, actual)
    return math.isclose(expected, actual, rel_tol=1e-13)


def _same_tensor(expected: torch.Tensor, actual: torch.Tensor) -> bool:
    if expected.is_quantized:
        return actual.is_quantized and _same_tensor(expected.dequantize(), actual.dequantize())
    return (expected.dtype == actual.dtype and expected.shape == actual.shape
            and expected.device == actual.device and expected.requires_grad == actual.requires_grad
            and torch.allclose(expected.detach(), actual.detach(), rtol=0, atol=0, equal_nan=True))


def error_line(error: BaseException) -> str:
    """The message of a TorchScript runtime error without its traceback: its last non-empty line, without
    the `RuntimeError: ` prefix the interpreter adds."""
    lines = [line for line in str(error).strip().splitlines() if line.strip()]
    last = lines[-1] if lines else ""
    return last.removeprefix("RuntimeError: ")
