"""TorchScript's text for runtime values: what `str(x)`, `"{}".format(x)` and `print(x)` produce in a
scripted program (C++ `operator<<` on an IValue).

It differs from Python's `str` in telling ways: floats print `1.` and `0.10000000000000001` (17 significant
digits), strings inside containers are not quoted (`[a, b]`), dicts print `{a: 1}`, tensors use ATen's
legacy printer (` 1\n 2\n[ CPUFloatType{2} ]`).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable
from typing import Any

import torch

from tsjit.ir.tensor_text import format_general, legacy_print
from tsjit.ir.types import ClassType, EnumValue, dtype_name


def ivalue_str(value: Any) -> str:
    """The text TorchScript prints for `value`."""
    printer = _PRINTERS.get(type(value))
    if printer is not None:
        return printer(value)
    for python_type, printer in _SUBCLASS_PRINTERS:
        if isinstance(value, python_type):
            return printer(value)
    return _object_str(value)


def float_str(value: float) -> str:
    """A double: `<int>.` when it is a whole number that fits in an int64, else 17 significant digits."""
    if math.isfinite(value) and value == int(value) and -(2.0**63) <= value < 2.0**63:
        return f"{int(value)}."
    return f"{value:.17g}"


def _complex_str(value: complex) -> str:
    sign = "+" if value.imag >= 0 else "-"
    return f"{float_str(value.real)}{sign}{float_str(abs(value.imag))}j"


def _tuple_str(value: tuple) -> str:
    inner = ", ".join(ivalue_str(v) for v in value)
    return f"({inner},)" if len(value) == 1 else f"({inner})"


def _dict_str(value: dict) -> str:
    return "{" + ", ".join(f"{ivalue_str(k)}: {ivalue_str(v)}" for k, v in value.items()) + "}"


def tensor_str(tensor: torch.Tensor) -> str:
    """ATen's legacy tensor printer, which TorchScript uses for `str(t)` and `print(t)`."""
    if tensor.dim() != 0:
        return legacy_print(tensor)
    item = tensor.detach().cpu()
    number = float(item.real.item() if item.is_complex() else item.item())
    type_string = tensor.device.type.upper() + dtype_name(tensor.dtype) + "Type"
    return f"{format_general(number)}\n[ {type_string}{{}} ]"


def _object_str(value: Any) -> str:
    """Objects print the way Python prints them by default: `<__torch__.M object at 0x...>` (a TorchScript
    object names its class type)."""
    class_type = getattr(value, "type", None)
    type_name = class_type.qualified_name if isinstance(class_type, ClassType) else type(value).__qualname__
    return f"<{type_name} object at {hex(id(value))}>"


_PRINTERS: dict[type, Callable[[Any], str]] = {
    type(None): lambda _: "None",
    bool: lambda value: "True" if value else "False",
    int: str,
    float: float_str,
    complex: _complex_str,
    str: lambda value: value,
    tuple: _tuple_str,
    list: lambda value: "[" + ", ".join(ivalue_str(v) for v in value) + "]",
    dict: _dict_str,
    torch.device: str,
    EnumValue: lambda value: f"Enum<{value.enum_type.name}.{value.name}>",
}
_SUBCLASS_PRINTERS: tuple[tuple[type, Callable[[Any], str]], ...] = (
    (torch.Tensor, tensor_str),
    (enum.Enum, lambda value: f"Enum<{type(value).__name__}.{value.name}>"),
    (tuple, _tuple_str),
    (bool, lambda value: "True" if value else "False"),
    (int, lambda value: str(int(value))),
    (float, lambda value: float_str(float(value))),
    (str, str),
)
