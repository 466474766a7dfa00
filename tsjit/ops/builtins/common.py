"""Helpers shared by the builtin tables: TorchScript's int64 and double arithmetic, and its error messages.

TorchScript computes with C++ `int64_t` and `double`. Python ints are unbounded and Python's `math` raises
where C returns inf or NaN, so the builtins route through these helpers to give the IEEE/two's-complement
results torch.jit gives: `2**62 * 4` is 0, `math.log(0.0)` is -inf, `1 / 0` is inf.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable
from typing import Any, NoReturn

import torch

from tsjit.ir.constants import INT64_MAX, INT64_MIN


def fail(message: str) -> NoReturn:
    """Raise a builtin's runtime error; the message is TorchScript's own for the same failure."""
    raise RuntimeError(message)


def int64(value: int) -> int:
    """`value` wrapped to a signed 64-bit integer, as C++ int arithmetic overflows."""
    if INT64_MIN <= value <= INT64_MAX:
        return value
    return (value - INT64_MIN) % (1 << 64) + INT64_MIN


def int32(value: int) -> int:
    """C++ `(int)x` of an int64: the low 32 bits, signed (where TorchScript's C++ declares an `int`)."""
    return (value + (1 << 31)) % (1 << 32) - (1 << 31)


def wrap_int_result(value: Any) -> Any:
    """int64-wrap an int result, leave floats and complex numbers alone (for Scalar overloads)."""
    return int64(value) if type(value) is int else value


def float_to_int64(value: float) -> int:
    """C++ `static_cast<int64_t>(double)` on x86: truncation, and INT64_MIN for NaN, inf and overflow."""
    if math.isfinite(value) and INT64_MIN <= value < 2.0**63:
        return int(value)
    return INT64_MIN


def float_to_float32(value: float) -> float:
    """C++ `(float)x`: round a double (or an int) to single precision, overflowing to inf."""
    try:
        return struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)


def checked_float_to_int(value: float, rounding: Callable[[float], int]) -> int:
    """`rounding(value)` (math.floor or math.ceil) after TorchScript's `checkDoubleInRange`."""
    if not math.isfinite(value) or not (-(2.0**63) <= value <= 2.0**63):
        fail(f"Cannot convert float {value:f} to integer")
    return int64(rounding(value))


def ieee_divide(a: float, b: float) -> float:
    """C's double division: x/0 is ±inf, 0/0 is NaN."""
    try:
        return a / b
    except ZeroDivisionError:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)


def ieee_fmod(a: float, b: float) -> float:
    """C's `fmod`: NaN where Python's math.fmod raises."""
    try:
        return math.fmod(a, b)
    except ValueError:
        return math.nan


def ieee_floor(value: float) -> float:
    """C's `floor` on a double, which keeps inf, NaN and the sign of zero."""
    return float(math.floor(value)) if math.isfinite(value) and value != 0 else value


def c_math(python_fn: Callable[..., float], fallback: Callable[..., float]) -> Callable[..., float]:
    """A double function with C semantics: Python's `math` version, and `fallback` where that raises a
    domain or range error (C returns inf or NaN there: log(0) is -inf, sqrt(-1) is NaN)."""

    def function(*args: float) -> float:
        try:
            return python_fn(*args)
        except (ValueError, OverflowError):
            return fallback(*args)

    function.__name__ = python_fn.__name__
    return function


def via_torch(torch_fn: Callable[..., torch.Tensor]) -> Callable[..., float]:
    """`torch_fn` on float64 0-d tensors, as a float function: ATen gives C's results at the edges."""
    return lambda *args: torch_fn(*(torch.tensor(float(arg), dtype=torch.float64) for arg in args)).item()


def normalize_index(index: int, size: int) -> int:
    """A Python index (maybe negative) as an offset into a container of `size` elements."""
    return index + size if index < 0 else index


def list_index(index: int, size: int) -> int:
    """A checked list offset: TorchScript's `getItem`/`setItem` bounds check."""
    offset = normalize_index(index, size)
    if not 0 <= offset < size:
        fail("list index out of range")
    return offset


def slice_indices(size: int, start: int | None, end: int | None, step: int) -> range:
    """The offsets `l[start:end:step]` selects (TorchScript's `slice_indices_adjust`, CPython's algorithm)."""
    if step == 0:
        fail("List slice should have non-zero step")
    return range(size)[slice(start, end, step)]
