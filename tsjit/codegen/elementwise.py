"""The elementwise operators fused kernels compute, and the C expression each one becomes.

OPERATORS maps an operator name (`aten::add.Tensor`) to its operand roles, one per schema argument: `t` a
tensor operand (same shape and dtype as the result), `s` an int or float scalar, `o` an optional scalar (None
or a scalar), and to a function writing the result as a C expression of the kernel's element type `T` (float
or double) from the operands. The graph fuser asks OPERATORS what it may group; the kernel generator asks it
how to compute each node. `T` is float for float32 tensors: every operation rounds to the tensor's dtype as
eager does, and the formulas are eager PyTorch's CPU ones (sigmoid is 1 / (1 + exp(-x)), maximum and clamp
propagate NaN, remainder has Python's sign, pow special-cases the exponents 2, 3, 0.5, -0.5, -1 and -2), so
results agree with eager to within a rounding or two. Math functions come from <tgmath.h>, which picks
sinf for a float argument and sin for a double one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

TENSOR, SCALAR, OPTIONAL_SCALAR = "t", "s", "o"


class Operand(NamedTuple):
    """One argument as the kernel sees it: a C expression of type T (None for a None constant), and the
    argument's value when it is a constant (`UNKNOWN` otherwise)."""

    expr: str | None
    value: Any


UNKNOWN = object()

Emitter = Callable[..., str]


class ElementwiseOperator(NamedTuple):
    roles: str
    emit: Emitter


# Helpers every kernel defines before its loop (T is typedef'd to the element type first).
C_HELPERS = """\
static inline T tsjit_relu(T x) { return (isnan(x) || x > 0) ? x : (T)0; }
static inline T tsjit_sigmoid(T x) { return (T)1 / ((T)1 + exp(-x)); }
static inline T tsjit_silu(T x) { return x / ((T)1 + exp(-x)); }
static inline T tsjit_maximum(T a, T b) { return (isnan(a) || a > b) ? a : b; }
static inline T tsjit_minimum(T a, T b) { return (isnan(a) || a < b) ? a : b; }
static inline T tsjit_clamp_min(T x, T lo) { return (isnan(x) || x > lo) ? x : lo; }
static inline T tsjit_clamp_max(T x, T hi) { return (isnan(x) || x < hi) ? x : hi; }
static inline T tsjit_remainder(T a, T b) {
  T r = fmod(a, b);
  return (r != 0 && ((b < 0) != (r < 0))) ? r + b : r;
}
static inline T tsjit_lerp(T a, T b, T w) {
  T d = b - a;
  return fabs(w) < (T)0.5 ? a + w * d : b - d * ((T)1 - w);
}
static inline T tsjit_leaky_relu(T x, T slope) { return x > 0 ? x : x * slope; }
"""


def _call(function: str) -> Emitter:
    def emit(*operands: Operand) -> str:
        return f"{function}({', '.join(o.expr for o in operands)})"  # type: ignore[misc]

    return emit


def _infix(symbol: str) -> Emitter:
    return lambda a, b: f"({a.expr} {symbol} {b.expr})"


def _plus_scaled(symbol: str, reverse: bool = False) -> Emitter:
    """add/sub/rsub: `a + alpha * b` (rsub: `b - alpha * a`), without the multiplication when alpha is 1."""
    def emit(a: Operand, b: Operand, alpha: Operand) -> str:
        left, right = (b, a) if reverse else (a, b)
        if alpha.value is not UNKNOWN and alpha.value == 1:
            return f"({left.expr} {symbol} {right.expr})"
        return f"({left.expr} {symbol} {alpha.expr} * {right.expr})"

    return emit


_POW_SPECIAL_CASES = {2: "({x} * {x})", 3: "({x} * {x} * {x})", 0.5: "sqrt({x})", -0.5: "((T)1 / sqrt({x}))",
                      -1: "((T)1 / {x})", -2: "((T)1 / ({x} * {x}))"}


def _pow_scalar(x: Operand, exponent: Operand) -> str:
    if exponent.value is not UNKNOWN and exponent.value in _POW_SPECIAL_CASES:
        return _POW_SPECIAL_CASES[exponent.value].format(x=x.expr)
    return f"pow({x.expr}, {exponent.expr})"


def _clamp(x: Operand, low: Operand, high: Operand) -> str:
    result = str(x.expr)
    if low.expr is not None:
        result = f"tsjit_clamp_min({result}, {low.expr})"
    if high.expr is not None:
        result = f"tsjit_clamp_max({result}, {high.expr})"
    return result


def _unary(template: str) -> Emitter:
    return lambda x: template.format(x=x.expr)


_MATH_FUNCTIONS = ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin", "acos",
                   "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sqrt", "floor", "ceil", "trunc",
                   "erf", "erfc")
_UNARY_TEMPLATES = {
    "neg": "(-{x})", "abs": "fabs({x})", "reciprocal": "((T)1 / {x})", "rsqrt": "((T)1 / sqrt({x}))",
    "round": "nearbyint({x})", "frac": "({x} - trunc({x}))", "square": "({x} * {x})",
    "relu": "tsjit_relu({x})", "sigmoid": "tsjit_sigmoid({x})", "silu": "tsjit_silu({x})",
}

OPERATORS: dict[str, ElementwiseOperator] = {
    **{f"aten::{name}": ElementwiseOperator("t", _call(name)) for name in _MATH_FUNCTIONS},
    **{f"aten::{name}": ElementwiseOperator("t", _unary(template)) for name, template in _UNARY_TEMPLATES.items()},
    "aten::add.Tensor": ElementwiseOperator("tts", _plus_scaled("+")),
    "aten::add.Scalar": ElementwiseOperator("tss", _plus_scaled("+")),
    "aten::sub.Tensor": ElementwiseOperator("tts", _plus_scaled("-")),
    "aten::sub.Scalar": ElementwiseOperator("tss", _plus_scaled("-")),
    "aten::rsub.Tensor": ElementwiseOperator("tts", _plus_scaled("-", reverse=True)),
    "aten::rsub.Scalar": ElementwiseOperator("tss", _plus_scaled("-", reverse=True)),
    "aten::mul.Tensor": ElementwiseOperator("tt", _infix("*")),
    "aten::mul.Scalar": ElementwiseOperator("ts", _infix("*")),
    "aten::div.Tensor": ElementwiseOperator("tt", _infix("/")),
    "aten::div.Scalar": ElementwiseOperator("ts", _infix("/")),
    "aten::pow.Tensor_Tensor": ElementwiseOperator("tt", _call("pow")),
    "aten::pow.Tensor_Scalar": ElementwiseOperator("ts", _pow_scalar),
    "aten::atan2": ElementwiseOperator("tt", _call("atan2")),
    "aten::fmod.Tensor": ElementwiseOperator("tt", _call("fmod")),
    "aten::fmod.Scalar": ElementwiseOperator("ts", _call("fmod")),
    "aten::remainder.Tensor": ElementwiseOperator("tt", _call("tsjit_remainder")),
    "aten::remainder.Scalar": ElementwiseOperator("ts", _call("tsjit_remainder")),
    "aten::maximum": ElementwiseOperator("tt", _call("tsjit_maximum")),
    "aten::minimum": ElementwiseOperator("tt", _call("tsjit_minimum")),
    "aten::clamp": ElementwiseOperator("too", _clamp),
    "aten::clamp_min": ElementwiseOperator("ts", _call("tsjit_clamp_min")),
    "aten::clamp_max": ElementwiseOperator("ts", _call("tsjit_clamp_max")),
    "aten::hardtanh": ElementwiseOperator("tss", _clamp),
    "aten::leaky_relu": ElementwiseOperator("ts", _call("tsjit_leaky_relu")),
    "aten::lerp.Scalar": ElementwiseOperator("tts", _call("tsjit_lerp")),
}

# the node kinds (`aten::add`) some overload of which is in OPERATORS: a cheap test before schema matching
KINDS = frozenset(name.partition(".")[0] for name in OPERATORS)
