"""Number builtins: int/float/complex/Scalar arithmetic, comparisons, bit operations, `min`/`max` and the
`math` module (`aten::add.int`, `aten::floordiv.float_int`, `aten::sqrt.Scalar`, `prim::min.int`, ...).

PyTorch registers every operation once per operand-type combination; the overload name spells the operand
types (`int_float` is `(int a, float b)`, `Scalar_Scalar` and the empty overload take two Scalars). The
tables below give each operation's Python function and result type per overload, and `_binary`/`_unary`
turn them into schemas, applying TorchScript's rules uniformly:

- an int operand meets a float (mixed overloads, Scalars of mixed kinds) as a C++ double;
- int results are int64 (they wrap on overflow), a Scalar result is an int only when both operands are;
- float operations follow C (see `common.c_math`): `1 / 0` is inf, `math.log(-1)` is NaN.

Semantics worth knowing: `int / int` is a float, `int ** int` is a float (`aten::pow.int`), `%` and `//`
round like Python, `floor`/`ceil` give ints, `round` rounds half to even and gives a float.
"""

from __future__ import annotations

import cmath
import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from tsjit.ops.builtins.common import (
    c_math,
    checked_float_to_int,
    fail,
    float_to_float32,
    ieee_divide,
    ieee_floor,
    ieee_fmod,
    int32,
    int64,
    via_torch,
    wrap_int_result,
)

Binary = Callable[[Any, Any], Any]
Unary = Callable[[Any], Any]


# ------------------------------------------------------------------------------- schemas from the tables

def _operand_types(overload: str) -> tuple[str, str]:
    """`int_float` -> (int, float); `int` -> (int, int); the empty overload and `Scalar_Scalar` -> Scalars."""
    if overload in ("", "Scalar_Scalar"):
        return "Scalar", "Scalar"
    if overload == "int_to_int":
        return "int", "int"
    first, _, second = overload.partition("_")
    return first, second or first


def _binary(name: str, fn: Binary, results: dict[str, str], ns: str = "aten",
            overrides: dict[str, Binary] | None = None, complex_scalars: bool = False
            ) -> list[tuple[str, Callable]]:
    """Schemas `ns::name.overload(A a, B b) -> R` for each `overload: R` of `results`; the Scalar overloads
    accept complex numbers only with `complex_scalars` (as in TorchScript, only for + - * == !=)."""
    rows = []
    for overload, result in results.items():
        a, b = _operand_types(overload)
        dotted = f".{overload}" if overload else ""
        schema = f"{ns}::{name}{dotted}({a} a, {b} b) -> {result}"
        operation = (overrides or {}).get(overload, fn)
        rows.append((schema, _binary_operation(operation, a, b, result, complex_scalars)))
    return rows


def _binary_operation(fn: Binary, a: str, b: str, result: str, complex_scalars: bool) -> Binary:
    """Apply TorchScript's operand and result conversions around `fn` (see the module docstring): mixed
    int/float operands become doubles, int results wrap; `fn` itself handles two ints or two floats."""
    if a == "Scalar":
        return _scalar_operands(fn, complex_scalars)
    if result == "int":
        return lambda x, y: wrap_int_result(fn(x, y))
    if a == b or "complex" in (a, b):
        return fn
    return lambda x, y: fn(float(x), float(y))


def _scalar_operands(fn: Binary, complex_scalars: bool) -> Binary:
    """Two Scalars: ints stay ints when both are, complex numbers stay complex, otherwise both are doubles."""

    def operation(x: Any, y: Any) -> Any:
        if type(x) is int and type(y) is int:
            return wrap_int_result(fn(x, y))
        if isinstance(x, complex) or isinstance(y, complex):
            if not complex_scalars:
                raise RuntimeError("this operator takes int and float Scalars, not complex numbers")
            return fn(x, y)
        return fn(float(x), float(y))

    return operation


def _unary(name: str, implementations: dict[str, tuple[str, Unary]], ns: str = "aten"
           ) -> list[tuple[str, Callable]]:
    """Schemas `ns::name.T(T a) -> R` for each `T: (R, fn)`, plus `name.Scalar(Scalar a) -> Scalar`, which
    runs the implementation for the runtime kind of its operand.

    The Scalar overload converts real results through C++ `float` or `int` (32 bits), as TorchScript's
    macro does (`math.sqrt` of a Scalar 7 is 2.6457512378692627, not 2.6457513110645907)."""
    rows = [(f"{ns}::{name}.{operand}({operand} a) -> {result}", fn)
            for operand, (result, fn) in implementations.items()]
    by_kind = {kind: _SCALAR_CASTS[result](fn) for kind, (result, fn) in implementations.items()}
    rows.append((f"{ns}::{name}.Scalar(Scalar a) -> Scalar", lambda a: by_kind[_kind(a)](a)))
    return rows


_SCALAR_CASTS: dict[str, Callable[[Unary], Unary]] = {
    "int": lambda fn: lambda a: int32(fn(a)),
    "float": lambda fn: lambda a: float_to_float32(fn(a)),
    "complex": lambda fn: fn,
}


def _kind(value: Any) -> str:
    return "complex" if isinstance(value, complex) else "float" if isinstance(value, float) else "int"


def _real(fn: Callable[[float], Any]) -> Unary:
    """A double function also used for int operands (C++ converts them)."""
    return lambda a: fn(float(a))


# ----------------------------------------------------------------------------------- binary operations

def _real_and_complex(real_op: Binary, scalar_left: Callable[[float, complex], complex],
                      scalar_right: Callable[[complex, float], complex]) -> Binary:
    """`real_op` on reals; with one complex operand, C++'s scalar-with-complex formula, which keeps signed
    zeros (`0 - 0j` is `-0j`) where Python first makes the real a complex number."""

    def operation(a: Any, b: Any) -> Any:
        if isinstance(b, complex) and not isinstance(a, complex):
            return scalar_left(a, b)
        if isinstance(a, complex) and not isinstance(b, complex):
            return scalar_right(a, b)
        return real_op(a, b)

    return operation


add = _real_and_complex(operator.add, lambda s, z: complex(s + z.real, z.imag),
                        lambda z, s: complex(z.real + s, z.imag))
subtract = _real_and_complex(operator.sub, lambda s, z: complex(s - z.real, -z.imag),
                             lambda z, s: complex(z.real - s, z.imag))
multiply = _real_and_complex(operator.mul, lambda s, z: complex(s * z.real, s * z.imag),
                             lambda z, s: complex(z.real * s, z.imag * s))


def complex_divide(x: complex, y: complex) -> complex:
    """c10::complex division (numpy's algorithm): scaled to avoid overflow, inf or NaN for a zero divisor."""
    a, b, c, d = x.real, x.imag, y.real, y.imag
    if abs(c) >= abs(d):
        if c == 0 and d == 0:
            return complex(ieee_divide(a, abs(c)), ieee_divide(b, abs(d)))
        ratio = d / c
        scale = ieee_divide(1.0, c + d * ratio)
        return complex((a + b * ratio) * scale, (b - a * ratio) * scale)
    ratio = c / d
    scale = ieee_divide(1.0, d + c * ratio)
    return complex((a * ratio + b) * scale, (b * ratio - a) * scale)

def divide(a: Any, b: Any) -> Any:
    """Python's `/` with C's division by zero: inf or NaN."""
    if isinstance(a, complex) or isinstance(b, complex):
        return complex_divide(complex(a), complex(b))
    return ieee_divide(float(a), float(b))


def floor_divide(a: Any, b: Any) -> Any:
    """`//`: Python's rounding for ints (an error on zero), `floor(a / b)` for doubles."""
    if type(a) is int and type(b) is int:
        if b == 0:
            fail("division by 0")
        return a // b
    return ieee_floor(ieee_divide(a, b))


def remainder(a: Any, b: Any) -> Any:
    """`%` with the sign of the divisor; doubles use C's `fmod((b + fmod(a, b)), b)`."""
    if type(a) is int and type(b) is int:
        if b == 0:
            fail("ZeroDivisionError: integer division or modulo by zero")
        return a % b
    return ieee_fmod(b + ieee_fmod(a, b), b)


_float_pow = c_math(math.pow, via_torch(torch.pow))


def power(a: Any, b: Any) -> Any:
    """`**` on reals, always a double (`2 ** -1` is 0.5); zero to a negative power is an error."""
    if isinstance(a, complex) or isinstance(b, complex):
        return complex_power(a, b)
    if a == 0 and b < 0:
        fail("0.0 cannot be raised to a negative power")
    return _float_pow(float(a), float(b))


def complex_power(a: Any, b: Any) -> complex:
    """std::pow as libstdc++ computes it for each mix of real and complex operands (so `0j ** 0j` is NaN
    and `0.1 ** 0j` is `1-0j`)."""
    if not isinstance(b, complex):
        if a.imag == 0 and a.real > 0:
            return complex(_float_pow(a.real, b))
        log_a = _complex_log(a)
        return polar(_float_exp(b * log_a.real), b * log_a.imag)
    if not isinstance(a, complex) and a > 0:
        return polar(_float_pow(a, b.real), b.imag * _float_log(a))
    return _complex_exp(b * _complex_log(complex(a)))


def power_unchecked(a: Any, b: Any) -> float:
    """aten::pow.Scalar_Scalar skips the zero check (and gives inf)."""
    return _float_pow(float(a), float(b))


def power_int_to_int(a: int, b: int) -> float:
    """aten::pow.int_to_int returns the C++ double its schema calls an int (as torch.jit does)."""
    return power(a, b)


def _complex_function(ufunc: np.ufunc) -> Callable[[complex], complex]:
    """A complex function with C99's results at the edges (`log(0j)` is -inf), through numpy's ufunc."""

    def function(z: complex) -> complex:
        with np.errstate(all="ignore"):
            return complex(ufunc(np.complex128(z)))

    return function


_complex_exp, _complex_log = _complex_function(np.exp), _complex_function(np.log)
_float_log = c_math(math.log, via_torch(torch.log))
_float_exp = c_math(math.exp, via_torch(torch.exp))


def log_base(a: Any, b: Any) -> Any:
    """`math.log(a, b)` as `log(a) / log(b)`; a real operand takes the real log (NaN below zero), and a
    complex logarithm divided by a real one divides each part."""
    numerator, denominator = _any_log(a), _any_log(b)
    if not isinstance(numerator, complex) and not isinstance(denominator, complex):
        return ieee_divide(numerator, denominator)
    if not isinstance(denominator, complex):
        return complex(ieee_divide(numerator.real, denominator), ieee_divide(numerator.imag, denominator))
    return complex_divide(complex(numerator), denominator)


def _any_log(value: Any) -> Any:
    return _complex_log(value) if isinstance(value, complex) else _float_log(float(value))


_cos, _sin = c_math(math.cos, lambda x: math.nan), c_math(math.sin, lambda x: math.nan)


def polar(r: float, theta: float) -> complex:
    return complex(r * _cos(theta), r * _sin(theta))


def divmod_ints(x: int, y: int) -> tuple[int, int]:
    if y == 0:
        fail("ZeroDivisionError: integer division or modulo by zero")
    return divmod(x, y)


def divmod_floats(x: float, y: float) -> tuple[float, float]:
    """C++'s float divmod: the remainder from fmod, moved to the divisor's sign."""
    if y == 0:
        fail("ZeroDivisionError: float divmod()")
    rest = ieee_fmod(x, y)
    if rest and (x < 0) != (y < 0):
        rest += y
    return (x - rest) / y, rest


def divmod_mixed(x: Any, y: Any) -> tuple[float, float]:
    """divmod of an int and a float: TorchScript's C++ declares them `int` and `float` (32 bits each),
    divides in single precision and floors through an int64, so `divmod(1, 0.1)` is
    (10.0, -1.4901161193847656e-08)."""
    a, b = _c_narrow(x), _c_narrow(y)
    if b == 0:
        fail("ZeroDivisionError: float divmod()")
    quotient = float(checked_float_to_int(float_to_float32(ieee_divide(float(a), float(b))), math.floor))
    return quotient, a - quotient * b


def _c_narrow(value: Any) -> Any:
    return int32(value) if type(value) is int else float_to_float32(value)


def round_to_zero_floordiv(a: int, b: int) -> int:
    """C++ integer division, which truncates (used by loop unrolling)."""
    if b == 0:
        fail("division by 0")
    quotient = abs(a) // abs(b)
    return int64(quotient if (a >= 0) == (b >= 0) else -quotient)


def range_length(lo: int, hi: int, step: int) -> int:
    """aten::__range_length: how many values `range(lo, hi, step)` yields (for-loops over ranges)."""
    if step == 0:
        fail("range() arg 3 must not be zero")
    if step > 0 and lo < hi:
        return int64(1 + int64(hi - 1 - lo) // step)
    if step < 0 and lo > hi:
        return int64(1 + int64(lo - 1 - hi) // int64(-step))
    return 0


def derive_index(index: int, start: int, step: int) -> int:
    """aten::__derive_index: the loop variable of iteration `index` of `range(start, _, step)`."""
    return int64(start + index * step)


def shift_left(a: int, b: int) -> int:
    """C++ `a << b` on x86: the shift count is taken modulo 64, the result wraps."""
    return int64(a << (b & 63))


def shift_right(a: int, b: int) -> int:
    return a >> (b & 63)


def minimum(a: Any, b: Any) -> Any:
    """C++ `a < b ? a : b` (so `min(nan, 1.0)` is 1.0 but `min(1.0, nan)` is nan)."""
    return a if a < b else b


def maximum(a: Any, b: Any) -> Any:
    return a if a > b else b


def ldexp(x: float, i: int) -> float:
    """C's ldexp, whose exponent parameter is an `int` (32 bits)."""
    try:
        return math.ldexp(x, int32(i))
    except OverflowError:
        return math.copysign(math.inf, x)


def factorial(a: int) -> int:
    """C++'s factorial(int): the argument truncated to 32 bits, the product in wrapping int64, and the power
    of two shifted in last by a count x86 takes modulo 64 (so `factorial(66)` is not 0 but what torch.jit
    gives)."""
    n = (a + (1 << 31)) % (1 << 32) - (1 << 31)
    if n < 0:
        fail("factorial() not defined for negative values")
    twos = n - bin(n).count("1")
    odd_part = math.factorial(n) >> twos if n <= 20 else _odd_factorial(n)
    return int64(odd_part << (twos & 63))


def _odd_factorial(n: int) -> int:
    """The odd part of n!, modulo 2**64 (the product C++'s `loop` accumulates)."""
    partial, result = 1, 1
    for level in reversed(range(n.bit_length())):
        m = n >> level
        if m > 2:
            partial = int64(partial * _odd_product(m // 2 + 1 + ((m // 2) & 1), m - 1 + (m & 1)))
            result = int64(result * partial)
    return result


def _odd_product(low: int, high: int) -> int:
    """The product of the odd numbers from `low` to `high`, both odd (C++'s partProduct), modulo 2**64."""
    product = 1
    for odd in range(low, high + 1, 2):
        product = int64(product * odd)
    return product


# ------------------------------------------------------------------------------------ unary operations

def _gamma_at_pole(x: float) -> float:
    """C's tgamma where Python's raises: ±inf at zero and on overflow, NaN at negative integers and -inf."""
    if x == 0:
        return math.copysign(math.inf, x)
    if x == -math.inf or (x < 0 and x == math.floor(x)):
        return math.nan
    return math.inf


def round_half_even(a: float) -> float:
    """Round half to even, keeping inf, NaN and the sign of a zero result (`round(-0.4)` is -0.0)."""
    if not math.isfinite(a):
        return a
    rounded = float(round(a))
    return rounded if rounded != 0 else math.copysign(0.0, a)


def angle(a: float) -> float:
    """std::arg of a real: pi when the sign bit is set (-0.0 included), else 0 (NaN included)."""
    return math.pi if math.copysign(1.0, a) < 0 else 0.0


def _float_and_complex(name: str) -> dict[str, tuple[str, Unary]]:
    """int -> float, float -> float, complex -> complex (C++'s DEFINE_UNARY_OP_WITH_COMPLEX)."""
    real = _real(c_math(getattr(math, name), via_torch(getattr(torch, name))))
    ufunc = getattr(np, _NUMPY_NAMES.get(name, name))
    complex_fn = _complex_function(ufunc)
    return {"int": ("float", real), "float": ("float", real), "complex": ("complex", complex_fn)}


_NUMPY_NAMES = {"acos": "arccos", "asin": "arcsin", "atan": "arctan", "asinh": "arcsinh", "atanh": "arctanh",
                "acosh": "arccosh"}


def _float_only(fn: Callable[[float], float]) -> dict[str, tuple[str, Unary]]:
    """int -> float, float -> float (C++'s DEFINE_UNARY_OP with float results)."""
    real = _real(fn)
    return {"int": ("float", real), "float": ("float", real)}


_WITH_COMPLEX = {
    name: _float_and_complex(name)
    for name in ("exp", "log", "sqrt", "log10", "acos", "asin", "atan", "cos", "sin", "tan", "asinh", "atanh",
                 "acosh", "sinh", "cosh", "tanh")
}
_FLOAT_ONLY = {
    "log1p": _float_only(c_math(math.log1p, via_torch(torch.log1p))),
    "expm1": _float_only(c_math(math.expm1, via_torch(torch.expm1))),
    "gamma": _float_only(c_math(math.gamma, _gamma_at_pole)),
    "lgamma": _float_only(c_math(math.lgamma, via_torch(torch.lgamma))),
    "erf": _float_only(math.erf),
    "erfc": _float_only(math.erfc),
    "fabs": _float_only(math.fabs),
    "degrees": _float_only(lambda a: a * (180.0 / math.pi)),
    "radians": _float_only(lambda a: a * (math.pi / 180.0)),
    "round": _float_only(round_half_even),
}
_OTHER_UNARY = {
    "floor": {"int": ("int", lambda a: a), "float": ("int", lambda a: checked_float_to_int(a, math.floor))},
    "ceil": {"int": ("int", lambda a: a), "float": ("int", lambda a: checked_float_to_int(a, math.ceil))},
    "neg": {"int": ("int", lambda a: int64(-a)), "float": ("float", operator.neg),
            "complex": ("complex", operator.neg)},
    "angle": {"int": ("float", _real(angle)), "float": ("float", angle), "complex": ("float", cmath.phase)},
}
_PRIM_ABS = {"int": ("int", lambda a: int64(abs(a))), "float": ("float", abs), "complex": ("float", abs)}


# ----------------------------------------------------------------------------------- overload tables

_ARITHMETIC = {"int": "int", "complex": "complex", "float": "float", "int_complex": "complex",
               "complex_int": "complex", "float_complex": "complex", "complex_float": "complex",
               "int_float": "float", "float_int": "float", "": "Scalar"}
_INT_FLOAT_SCALAR = {"int": "int", "float": "float", "int_float": "float", "float_int": "float", "": "Scalar"}
_TO_FLOAT = {"int": "float", "float": "float", "int_float": "float", "float_int": "float"}
_COMPARISON = {"int": "bool", "float": "bool", "int_float": "bool", "float_int": "bool", "": "bool"}
_EQUALITY = {"int": "bool", "complex": "bool", "float": "bool", "int_float": "bool", "float_int": "bool",
             "float_complex": "bool", "complex_float": "bool", "": "bool"}
_POWER = {"int": "float", "complex": "complex", "float": "float", "int_float": "float", "float_int": "float",
          "float_complex": "complex", "complex_float": "complex", "Scalar_Scalar": "float",
          "int_to_int": "int"}
_LOG_BASE = {"int_int": "float", "float_float": "float", "complex_complex": "complex", "int_float": "float",
             "float_int": "float", "int_complex": "complex", "complex_int": "complex",
             "float_complex": "complex", "complex_float": "complex", "Scalar_Scalar": "float"}
_POLAR = {"int": "complex", "float": "complex", "int_float": "complex", "float_int": "complex",
          "Scalar_Scalar": "Scalar"}



def _real_only(fn: Binary) -> dict[str, Binary]:
    """Overrides for the overloads without a complex operand, which need no complex handling."""
    return {"int": fn, "float": fn, "int_float": fn, "float_int": fn}


_math_remainder = c_math(math.remainder, lambda a, b: math.nan)

OPERATORS: list[tuple[str, Callable]] = [
    *_binary("add", add, _ARITHMETIC, overrides=_real_only(operator.add), complex_scalars=True),
    *_binary("sub", subtract, _ARITHMETIC, overrides=_real_only(operator.sub), complex_scalars=True),
    *_binary("mul", multiply, _ARITHMETIC, overrides=_real_only(operator.mul), complex_scalars=True),
    *_binary("div", divide, {"int": "float", "complex": "complex", "float": "float", "": "float"}),
    *_binary("floordiv", floor_divide, _INT_FLOAT_SCALAR),
    *_binary("remainder", remainder, _INT_FLOAT_SCALAR),
    *_binary("pow", power, _POWER,
             overrides={"Scalar_Scalar": power_unchecked, "int_to_int": power_int_to_int}),
    *[row for name in ("lt", "gt", "le", "ge")
      for row in _binary(name, getattr(operator, name), _COMPARISON)],
    *_binary("eq", operator.eq, _EQUALITY, complex_scalars=True),
    *_binary("ne", operator.ne, _EQUALITY, complex_scalars=True),
    ("aten::eq.bool(bool a, bool b) -> bool", operator.eq),
    ("aten::ne.bool(bool a, bool b) -> bool", operator.ne),
    ("aten::eq.device(Device a, Device b) -> bool", operator.eq),
    ("aten::ne.device(Device a, Device b) -> bool", operator.ne),
    ("aten::eq.enum(AnyEnumType a, AnyEnumType b) -> bool", operator.eq),
    ("aten::ne.enum(AnyEnumType a, AnyEnumType b) -> bool", operator.ne),
    *_binary("min", minimum, _INT_FLOAT_SCALAR, ns="prim"),
    *_binary("max", maximum, _INT_FLOAT_SCALAR, ns="prim"),
    *_binary("log", log_base, _LOG_BASE),
    *_binary("atan2", math.atan2, {**_TO_FLOAT, "Scalar_Scalar": "float"}),
    *_binary("copysign", math.copysign, {**_TO_FLOAT, "": "float"}),
    *_binary("fmod", ieee_fmod, {**_TO_FLOAT, "": "float"}),
    *_binary("mathremainder", _math_remainder, {**_TO_FLOAT, "": "float"}),
    *_binary("polar", polar, _POLAR),
    ("aten::divmod.int(int x, int y) -> (int, int)", divmod_ints),
    ("aten::divmod.float(float x, float y) -> (float, float)", divmod_floats),
    ("aten::divmod.int_float(int x, float y) -> (float, float)", divmod_mixed),
    ("aten::divmod.float_int(float x, int y) -> (float, float)", divmod_mixed),
    ("aten::gcd.int(int a, int b) -> int", math.gcd),
    ("aten::__round_to_zero_floordiv.int(int a, int b) -> int", round_to_zero_floordiv),
    ("aten::__range_length(int lo, int hi, int step) -> int", range_length),
    ("aten::__derive_index(int index, int start, int step) -> int", derive_index),
    ("aten::__and__.bool(bool a, bool b) -> bool", lambda a, b: a and b),
    ("aten::__or__.bool(bool a, bool b) -> bool", lambda a, b: a or b),
    ("aten::__xor__.bool(bool a, bool b) -> bool", operator.ne),
    ("aten::__and__.int(int a, int b) -> int", operator.and_),
    ("aten::__or__.int(int a, int b) -> int", operator.or_),
    ("aten::__xor__.int(int a, int b) -> int", operator.xor),
    ("aten::__lshift__.int(int a, int b) -> int", shift_left),
    ("aten::__rshift__.int(int a, int b) -> int", shift_right),
    ("aten::__not__(bool self) -> bool", operator.not_),
    *[row for name, table in {**_WITH_COMPLEX, **_FLOAT_ONLY, **_OTHER_UNARY}.items()
      for row in _unary(name, table)],
    *_unary("abs", _PRIM_ABS, ns="prim"),
    ("aten::isnan.float(float a) -> bool", math.isnan),
    ("aten::isnan.complex(complex a) -> bool", cmath.isnan),
    ("aten::isinf.float(float a) -> bool", math.isinf),
    ("aten::isinf.complex(complex a) -> bool", cmath.isinf),
    ("aten::isfinite.float(float a) -> bool", math.isfinite),
    ("aten::isfinite.complex(complex a) -> bool", cmath.isfinite),
    ("aten::factorial.int(int a) -> int", factorial),
    ("aten::ldexp(float x, int i) -> float", ldexp),
    ("aten::frexp(float a) -> (float, int)", math.frexp),
    ("aten::modf(float a) -> (float, float)", math.modf),
]
