"""Shape and dtype rules: each operator's output types computed from what is known of its inputs, as data.

(seed: jit-overview.md "Required Passes", pytorch-ir-2018.md "Graph specialization".) `RULES` maps an operator
(`aten::add.Tensor`) to a function of the node's arguments that returns the output types; shape_analysis.py is
the one driver, and runs the operator on meta tensors only for operators without a rule. Rules are plain Python
(no dispatcher call): most of PyTorch's meta kernels are Python functions whose first call imports torch._dynamo,
which costs seconds, and even a cached meta call costs more than a rule.

What a rule receives, argument by argument (what the driver knows of each input):
- `AbstractTensor(dtype, device, sizes)`: dtype and rank known, a None size is unknown;
- constants as Python values (ints, floats, lists of them, None, dtype codes...);
- a number of the right type standing for a Scalar whose value is unknown (only its type may matter);
- `UnknownBool` for a bool of unknown value (`training`), `DeviceArgument` for a Device argument.

A rule returns a TensorType (dtype and sizes) per output: one, a list for several outputs, or a ListType for a
tensor list. It raises ShapeError where the operator would fail on such inputs (the output stays unrefined, as
when a meta kernel fails) and Decline where it cannot tell (then the meta kernel decides). The driver keeps the
sizes only when every input size is known, as it does for meta runs, so a rule may leave any size None.
Every rule must agree with the meta kernel: tests/passes/test_shape_rules.py runs both on many samples.

The rules live in two modules: this one (type promotion, broadcasting, elementwise, reductions, views,
indexing, concatenation, factories) and shape_rules_nn.py (matmul, linear, convolution, pooling,
normalization, attention), which registers into the same table.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import torch

from tsjit.ir import types as T
from tsjit.ir.scalar_type import code_to_dtype

Sizes = tuple[int | None, ...]
Rule = Callable[..., Any]
RULES: dict[str, Rule] = {}
# the operators TensorIterator computes: their results are laid out in the order of their inputs' strides
# (`relu(x.t())` is transposed too), which mlir/rule_results.py reproduces
TENSOR_ITERATOR_OPERATORS: set[str] = set()
# the operators whose results are new contiguous tensors whatever their inputs' layout (reductions, matrix
# products, `tril(x.t())`)
CONTIGUOUS_RESULT_OPERATORS: set[str] = set()


class AbstractTensor(NamedTuple):
    """What is known of a tensor input: dtype and rank for sure, device and sizes maybe (None: unknown)."""

    dtype: torch.dtype
    device: torch.device | None
    sizes: Sizes


class UnknownBool:
    """A bool argument of unknown value (`training`, `keepdim`)."""


class DeviceArgument(NamedTuple):
    """A Device argument: `device` is the real one if it is a constant."""

    device: torch.device | None


class ShapeError(Exception):
    """The operator would fail on inputs like these."""


class Decline(Exception):
    """The rule cannot tell from what is known: the meta kernel decides."""


def rule(*operators: str) -> Callable[[Rule], Rule]:
    """Register the decorated function as the rule of each `ns::name.overload`."""
    def register(function: Rule) -> Rule:
        for name in operators:
            RULES[name] = function
        return function
    return register


def tensor_iterator_rule(*operators: str) -> Callable[[Rule], Rule]:
    """`rule`, for operators TensorIterator computes (elementwise: their results follow their inputs' layout)."""
    TENSOR_ITERATOR_OPERATORS.update(operators)
    return rule(*operators)


def contiguous_rule(*operators: str) -> Callable[[Rule], Rule]:
    """`rule`, for operators whose results are contiguous whatever their inputs' layout."""
    CONTIGUOUS_RESULT_OPERATORS.update(operators)
    return rule(*operators)


def tensor(dtype: torch.dtype, sizes: Sequence[int | None]) -> T.TensorType:
    return T.TensorType(dtype=dtype, sizes=tuple(sizes))


def like(source: AbstractTensor, dtype: torch.dtype | None = None) -> T.TensorType:
    return tensor(dtype or source.dtype, source.sizes)


# ---- small checks ------------------------------------------------------------------------------------------
def need(condition: bool, message: str = "") -> None:
    if not condition:
        raise ShapeError(message)


def known_bool(value: Any) -> bool:
    if isinstance(value, UnknownBool):
        raise Decline
    return bool(value)


def dtype_argument(code: Any, default: torch.dtype) -> torch.dtype:
    """A `ScalarType? dtype` argument (a code, a torch.dtype or None)."""
    if code is None:
        return default
    return code if isinstance(code, torch.dtype) else code_to_dtype(code)


def wrap_dim(dim: int, rank: int) -> int:
    """`dim` counted from the front; 0-d tensors accept dims -1 and 0, as ATen's maybe_wrap_dim."""
    bound = max(rank, 1)
    need(-bound <= dim < bound, f"dim {dim} out of range")
    return dim % bound


def need_floating(*tensors: AbstractTensor) -> None:
    """Rules of float-only kernels stay out of dtypes whose errors they do not model."""
    if not all(t.dtype.is_floating_point for t in tensors):
        raise Decline


def numel(sizes: Sizes) -> int | None:
    return None if None in sizes else math.prod(sizes)  # type: ignore[arg-type]


def same_size(a: int | None, b: int | None) -> bool:
    """Whether two sizes may be equal."""
    return a is None or b is None or a == b


# ---- type promotion (ATen's ResultTypeState) ---------------------------------------------------------------
_COMPLEX_OF = {torch.float16: torch.complex32, torch.float32: torch.complex64, torch.float64: torch.complex128}
_REAL_OF = {complex_: real for real, complex_ in _COMPLEX_OF.items()}


def _scalar_dtype(value: Any) -> torch.dtype:
    """The dtype a Python number takes as a wrapped number: float and complex follow the defaults."""
    if isinstance(value, bool):
        return torch.bool
    if isinstance(value, int):
        return torch.int64
    if isinstance(value, float):
        return torch.get_default_dtype()
    if isinstance(value, complex):
        return _COMPLEX_OF[torch.get_default_dtype()]
    raise Decline


def _promote(a: torch.dtype | None, b: torch.dtype) -> torch.dtype:
    return b if a is None else torch.promote_types(a, b)


def _combine_categories(higher: torch.dtype | None, lower: torch.dtype | None) -> torch.dtype | None:
    """A higher-priority group's dtype wins unless the lower group is of a higher category (bool < int <
    float < complex): `int_tensor + 2.5` is float, `float16_tensor + 2.5` stays float16."""
    if higher is None or lower is None:
        return higher if lower is None else lower
    if higher.is_complex:
        return higher
    if lower.is_complex:
        if higher.is_floating_point:
            if higher not in _COMPLEX_OF:
                raise Decline
            return _COMPLEX_OF[higher]
        return lower
    if higher.is_floating_point:
        return higher
    if higher is torch.bool or lower.is_floating_point:
        return torch.promote_types(higher, lower)
    return higher


def result_type(*operands: Any) -> torch.dtype:
    """torch.result_type over tensors and Python numbers: tensors with dimensions first, then 0-d tensors,
    then numbers, each group deciding only when of a higher category."""
    dimensioned = zero_dim = wrapped = None
    for operand in operands:
        if operand is None:
            continue
        if isinstance(operand, AbstractTensor):
            if operand.sizes:
                dimensioned = _promote(dimensioned, operand.dtype)
            else:
                zero_dim = _promote(zero_dim, operand.dtype)
        else:
            wrapped = _promote(wrapped, _scalar_dtype(operand))
    promoted = _combine_categories(dimensioned, _combine_categories(zero_dim, wrapped))
    if promoted is None:
        raise Decline
    return promoted


def int_to_float(dtype: torch.dtype) -> torch.dtype:
    """Integral and bool results become the default float dtype (`sin`, true division)."""
    return dtype if dtype.is_floating_point or dtype.is_complex else torch.get_default_dtype()


def complex_to_float(dtype: torch.dtype) -> torch.dtype:
    """Complex results become their real dtype (`abs`)."""
    return _REAL_OF.get(dtype, dtype)


# ---- broadcasting ------------------------------------------------------------------------------------------
def broadcast(*shapes: Sizes) -> Sizes:
    """The broadcast of several shapes; an unknown size stays unknown unless a known size decides it."""
    rank = max((len(shape) for shape in shapes), default=0)
    result: list[int | None] = []
    for position in range(-rank, 0):
        sizes = [shape[position] for shape in shapes if len(shape) >= -position]
        known = {size for size in sizes if size is not None and size != 1}
        need(len(known) <= 1, f"cannot broadcast {shapes}")
        if None in sizes:
            result.append(None)
        else:
            result.append(known.pop() if known else 1)
    return tuple(result)


def shapes_of(*operands: Any) -> list[Sizes]:
    return [operand.sizes for operand in operands if isinstance(operand, AbstractTensor)]


# ---- elementwise -------------------------------------------------------------------------------------------
def _unary(result: Callable[[torch.dtype], torch.dtype], allow_bool: bool = True) -> Rule:
    def unary(self: AbstractTensor, *options: Any) -> T.TensorType:
        if self.dtype is torch.bool and not allow_bool:
            raise Decline
        return like(self, result(self.dtype))
    return unary


def _same(dtype: torch.dtype) -> torch.dtype:
    return dtype


def _floating_only(dtype: torch.dtype) -> torch.dtype:
    if not dtype.is_floating_point:
        raise Decline
    return dtype


_INT_TO_FLOAT_UNARY = ("sin", "cos", "tan", "tanh", "sigmoid", "exp", "exp2", "expm1", "log", "log2", "log10",
                       "log1p", "sqrt", "rsqrt", "erf", "erfc", "asin", "acos", "atan", "sinh", "cosh", "asinh",
                       "acosh", "atanh", "reciprocal", "erfinv", "lgamma", "digamma", "sinc")
_SAME_UNARY = ("neg", "relu", "clone", "contiguous", "detach", "floor", "ceil", "round", "trunc", "sign",
               "alias", "positive", "lift_fresh", "relu6", "frac")
_FLOAT_UNARY = ("gelu", "silu", "hardswish", "hardsigmoid", "elu", "selu", "celu", "leaky_relu", "softplus",
                "mish", "hardtanh", "log_sigmoid", "hardshrink", "softshrink", "tanhshrink")
_DROPOUTS = ("dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout")

_COPIES = ("clone", "contiguous", "detach", "alias", "lift_fresh")  # `self` or its copy: bool tensors too

for _name in _INT_TO_FLOAT_UNARY:
    tensor_iterator_rule(f"aten::{_name}")(_unary(int_to_float))
    # in place, an int tensor cannot hold the float result
    RULES[f"aten::{_name}_"] = _unary(_floating_only)
for _name in _SAME_UNARY:
    (rule if _name in (*_COPIES, "positive") else tensor_iterator_rule)(f"aten::{_name}")(
        _unary(_same, allow_bool=_name in _COPIES))
for _name in _FLOAT_UNARY:  # (log_sigmoid's result is contiguous, not laid out by TensorIterator)
    (rule if _name == "log_sigmoid" else tensor_iterator_rule)(f"aten::{_name}")(_unary(_floating_only))
for _name in _DROPOUTS:
    rule(f"aten::{_name}")(_unary(_floating_only))
tensor_iterator_rule("aten::abs")(_unary(complex_to_float, allow_bool=False))
rule("aten::relu_", "aten::neg_", "aten::clamp_min_", "aten::hardtanh_", "aten::leaky_relu_", "aten::silu_",
     "aten::dropout_", "aten::gelu_")(_unary(_floating_only))


def elementwise(kind: Callable[[torch.dtype], torch.dtype], *operands: Any) -> T.TensorType:
    """The result of an elementwise operator: the promoted dtype (then `kind`), the broadcast shape."""
    return tensor(kind(result_type(*operands)), broadcast(*shapes_of(*operands)))


def _binary(kind: Callable[[torch.dtype], torch.dtype], allow_bool: bool = True) -> Rule:
    def binary(self: Any, other: Any, *options: Any) -> T.TensorType:
        if not allow_bool and torch.bool in (_dtype_of(self), _dtype_of(other)):
            raise Decline
        return elementwise(kind, self, other)
    return binary


def _dtype_of(operand: Any) -> torch.dtype | None:
    return operand.dtype if isinstance(operand, AbstractTensor) else None


def _always_bool(dtype: torch.dtype) -> torch.dtype:
    return torch.bool


def _in_place(out_of_place: Rule) -> Rule:
    """`x.add_(y)`: the result keeps x's type; the other operand must broadcast to x's shape. Where x cannot
    hold the result's dtype, some meta kernels fail and others do not: they decide."""
    def in_place(self: AbstractTensor, *arguments: Any) -> T.TensorType:
        result = out_of_place(self, *arguments)
        if not torch.can_cast(result.dtype, self.dtype):
            raise Decline
        need(len(result.sizes) == len(self.sizes) and all(same_size(a, b) for a, b in zip(result.sizes,
                                                                                         self.sizes)))
        return like(self)
    return in_place


_BINARY_KINDS = {"add": (_same, True), "mul": (_same, True), "sub": (_same, False), "div": (int_to_float, True),
                 "maximum": (_same, True), "minimum": (_same, True), "atan2": (int_to_float, False),
                 "eq": (_always_bool, True), "ne": (_always_bool, True), "lt": (_always_bool, False),
                 "le": (_always_bool, False), "gt": (_always_bool, False), "ge": (_always_bool, False),
                 "logical_and": (_always_bool, True), "logical_or": (_always_bool, True),
                 "logical_xor": (_always_bool, True)}
_BINARY_KINDS.update({"remainder": (_same, False), "fmod": (_same, False), "floor_divide": (_same, False)})
for _name, (_kind, _bools) in _BINARY_KINDS.items():
    _rule = _binary(_kind, _bools)
    tensor_iterator_rule(f"aten::{_name}.Tensor", f"aten::{_name}.Scalar", f"aten::{_name}")(_rule)
    rule(f"aten::{_name}_.Tensor", f"aten::{_name}_.Scalar", f"aten::{_name}_")(_in_place(_rule))


def _real_to_bool(dtype: torch.dtype) -> torch.dtype:
    if dtype.is_complex:
        raise Decline  # isposinf, isneginf and signbit reject complex tensors
    return torch.bool


tensor_iterator_rule("aten::isnan", "aten::isinf", "aten::isfinite", "aten::logical_not")(_unary(_always_bool))
tensor_iterator_rule("aten::isposinf", "aten::isneginf", "aten::signbit")(_unary(_real_to_bool))


def _real_int_to_float(dtype: torch.dtype) -> torch.dtype:
    if dtype.is_complex:
        raise Decline  # rad2deg and deg2rad reject complex tensors
    return int_to_float(dtype)


tensor_iterator_rule("aten::sgn")(_unary(_same))
tensor_iterator_rule("aten::square")(_unary(_same, allow_bool=False))  # a bool tensor squares to int64
tensor_iterator_rule("aten::rad2deg", "aten::deg2rad")(_unary(_real_int_to_float))


@tensor_iterator_rule("aten::float_power.Tensor_Tensor", "aten::float_power.Tensor_Scalar")
def _float_power(self: AbstractTensor, exponent: Any) -> T.TensorType:
    """Computed in double precision: float64, or complex128 when an operand is complex."""
    complex_ = self.dtype.is_complex or _dtype_of(exponent) in _REAL_OF or isinstance(exponent, complex)
    return elementwise(lambda _: torch.complex128 if complex_ else torch.float64, self, exponent)


@tensor_iterator_rule("aten::polar")
def _polar(abs: AbstractTensor, angle: AbstractTensor) -> T.TensorType:
    """A complex tensor from magnitudes and angles of one real floating dtype."""
    if abs.dtype != angle.dtype or abs.dtype not in _COMPLEX_OF:
        raise Decline
    return tensor(_COMPLEX_OF[abs.dtype], broadcast(abs.sizes, angle.sizes))


@tensor_iterator_rule("aten::threshold")
def _threshold(self: AbstractTensor, threshold: Any, value: Any) -> T.TensorType:
    if self.dtype is torch.bool:
        raise Decline
    return like(self)


@contiguous_rule("aten::tril", "aten::triu")
def _triangle(self: AbstractTensor, diagonal: int = 0) -> T.TensorType:
    need(len(self.sizes) >= 2, "tril/triu: input tensor must have at least 2 dimensions")
    return like(self)


@tensor_iterator_rule("aten::div.Tensor_mode", "aten::div.Scalar_mode")
def _divide_with_mode(self: Any, other: Any, rounding_mode: str | None) -> T.TensorType:
    if torch.bool in (_dtype_of(self), _dtype_of(other)):
        raise Decline
    return elementwise(int_to_float if rounding_mode is None else _same, self, other)


@tensor_iterator_rule("aten::rsub.Tensor", "aten::rsub.Scalar")
def _reverse_subtract(self: Any, other: Any, alpha: Any = 1) -> T.TensorType:
    return _binary(_same, allow_bool=False)(self, other)


tensor_iterator_rule("aten::max.other", "aten::min.other")(_binary(_same))
tensor_iterator_rule("aten::fmax", "aten::fmin")(_binary(_same, allow_bool=False))
tensor_iterator_rule("aten::logaddexp", "aten::logaddexp2")(_binary(_floating_only, allow_bool=False))


@rule("aten::isclose")
def _isclose(self: AbstractTensor, other: AbstractTensor, *tolerances: Any) -> T.TensorType:
    if self.dtype != other.dtype:
        raise Decline  # isclose demands one dtype; left to the meta kernel
    return tensor(torch.bool, broadcast(self.sizes, other.sizes))


@rule("aten::pow.Scalar")  # (a contiguous result, not TensorIterator's layout)
@tensor_iterator_rule("aten::pow.Tensor_Tensor", "aten::pow.Tensor_Scalar")
def _power(self: Any, exponent: Any) -> T.TensorType:
    if torch.bool in (_dtype_of(self), _dtype_of(exponent)):
        raise Decline
    return elementwise(_same, self, exponent)


@tensor_iterator_rule("aten::where.self", "aten::where.ScalarOther", "aten::where.ScalarSelf", "aten::where.Scalar")
def _where(condition: AbstractTensor, self: Any, other: Any) -> T.TensorType:
    need(condition.dtype in (torch.bool, torch.uint8), "where expects a boolean condition")
    return tensor(result_type(self, other), broadcast(*shapes_of(condition, self, other)))


@rule("aten::masked_fill.Scalar", "aten::masked_fill.Tensor")
def _masked_fill(self: AbstractTensor, mask: AbstractTensor, value: Any) -> T.TensorType:
    need(mask.dtype is torch.bool, "masked_fill expects a boolean mask")
    if isinstance(value, AbstractTensor):
        need(not value.sizes, "masked_fill only supports a 0-dimensional value tensor")
    shape = broadcast(self.sizes, mask.sizes)
    need(len(shape) == len(self.sizes) and all(same_size(a, b) for a, b in zip(shape, self.sizes)))
    return like(self)


@tensor_iterator_rule("aten::clamp", "aten::clamp.Tensor")
def _clamp(self: AbstractTensor, low: Any = None, high: Any = None) -> T.TensorType:
    need(low is not None or high is not None, "clamp needs a min or a max")
    if self.dtype is torch.bool:
        raise Decline
    return elementwise(_same, self, low, high)


@tensor_iterator_rule("aten::clamp_min", "aten::clamp_max")
def _clamp_one_side(self: AbstractTensor, bound: Any) -> T.TensorType:
    return _clamp(self, bound)


tensor_iterator_rule("aten::nextafter")(_binary(_floating_only, allow_bool=False))
rule("aten::logit")(_unary(int_to_float))


@tensor_iterator_rule("aten::heaviside")
def _heaviside(self: AbstractTensor, values: AbstractTensor) -> T.TensorType:
    if self.dtype != values.dtype or self.dtype.is_complex:
        raise Decline  # heaviside refuses mixed dtypes and complex tensors: the meta kernel says how
    return elementwise(_same, self, values)


@rule("aten::ldexp.Tensor")
def _ldexp(self: AbstractTensor, other: AbstractTensor) -> T.TensorType:
    """`self * 2.0 ** other`: the power is floating (of other's dtype or the default), then promoted with self."""
    power = AbstractTensor(int_to_float(other.dtype), other.device, other.sizes)
    return elementwise(_same, self, power)


# ---- reductions --------------------------------------------------------------------------------------------
def reduced(sizes: Sizes, dims: Sequence[int] | None, keepdim: bool) -> Sizes:
    """The sizes left by reducing `dims` (all dimensions when None or empty)."""
    rank = len(sizes)
    wrapped = set(range(rank)) if not dims else {wrap_dim(d, rank) for d in dims}
    need(not dims or len(wrapped) == len(dims), "dim appears multiple times in the list of dims")
    if keepdim:
        return tuple(1 if i in wrapped else size for i, size in enumerate(sizes))
    return tuple(size for i, size in enumerate(sizes) if i not in wrapped)


def _sum_dtype(dtype: torch.dtype) -> torch.dtype:
    return torch.int64 if not (dtype.is_floating_point or dtype.is_complex) else dtype


@contiguous_rule("aten::sum")
def _sum_all(self: AbstractTensor, dtype: Any = None) -> T.TensorType:
    return tensor(dtype_argument(dtype, _sum_dtype(self.dtype)), ())


@contiguous_rule("aten::sum.dim_IntList")
def _sum(self: AbstractTensor, dim: list[int] | None, keepdim: Any = False, dtype: Any = None) -> T.TensorType:
    return tensor(dtype_argument(dtype, _sum_dtype(self.dtype)), reduced(self.sizes, dim, known_bool(keepdim)))


@contiguous_rule("aten::mean.dim")
def _mean(self: AbstractTensor, dim: list[int] | None, keepdim: Any = False, dtype: Any = None) -> T.TensorType:
    result = dtype_argument(dtype, self.dtype)
    need_floating(self)
    need(result.is_floating_point, "mean needs a floating point dtype")
    return tensor(result, reduced(self.sizes, dim, known_bool(keepdim)))


@contiguous_rule("aten::mean")
def _mean_all(self: AbstractTensor, dtype: Any = None) -> T.TensorType:
    return _mean(self, None, False, dtype)


@contiguous_rule("aten::amax", "aten::amin")
def _extremum(self: AbstractTensor, dim: list[int] = (), keepdim: Any = False) -> T.TensorType:  # type: ignore
    return tensor(self.dtype, reduced(self.sizes, list(dim), known_bool(keepdim)))


@contiguous_rule("aten::max.dim", "aten::min.dim")
def _extremum_with_indices(self: AbstractTensor, dim: int, keepdim: Any = False) -> list[T.TensorType]:
    sizes = reduced(self.sizes, [dim], known_bool(keepdim))
    return [tensor(self.dtype, sizes), tensor(torch.int64, sizes)]


@contiguous_rule("aten::argmax", "aten::argmin")
def _argument_extremum(self: AbstractTensor, dim: int | None = None, keepdim: Any = False) -> T.TensorType:
    if dim is None:
        return tensor(torch.int64, (1,) * len(self.sizes) if known_bool(keepdim) else ())
    return tensor(torch.int64, reduced(self.sizes, [dim], known_bool(keepdim)))


@contiguous_rule("aten::any", "aten::all", "aten::any.dim", "aten::all.dim", "aten::any.dims", "aten::all.dims")
def _any(self: AbstractTensor, dim: int | list[int] | None = None, keepdim: Any = False) -> T.TensorType:
    """Whether any (all) elements are true: bool, but uint8 for uint8 inputs. Unlike sum's, an empty list of
    dims reduces none."""
    dims = [dim] if isinstance(dim, int) else dim
    if dims and len({wrap_dim(d, len(self.sizes)) for d in dims}) != len(dims):
        raise Decline
    dtype = torch.uint8 if self.dtype is torch.uint8 else torch.bool
    if dims == []:
        return tensor(dtype, self.sizes)
    return tensor(dtype, reduced(self.sizes, dims, known_bool(keepdim)))


@contiguous_rule("aten::cumsum", "aten::cumprod")
def _cumulative(self: AbstractTensor, dim: int, dtype: Any = None) -> T.TensorType:
    wrap_dim(dim, len(self.sizes))
    return like(self, dtype_argument(dtype, _sum_dtype(self.dtype)))


@contiguous_rule("aten::linalg_vector_norm", "aten::norm.Scalar", "aten::norm.ScalarOpt_dim")
def _vector_norm(self: AbstractTensor, ord: Any = 2, dim: list[int] | None = None, keepdim: Any = False,
                 dtype: Any = None) -> T.TensorType:
    """The vector norm over `dim` (all dimensions when None or empty), real for complex tensors; torch.norm's
    `p=None` is the 2-norm."""
    if dtype is not None or not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise Decline  # a dtype argument's checks are the meta kernel's
    if numel(self.sizes) == 0 and not (isinstance(ord, int | float) and 0 <= ord < math.inf):
        raise Decline  # an empty tensor's inf and negative norms fail where a reduced dimension is empty
    if dim and len({wrap_dim(d, len(self.sizes)) for d in dim}) != len(dim):
        raise Decline  # repeated dims: the meta kernel accepts them or not depending on the sizes
    return tensor(complex_to_float(self.dtype), reduced(self.sizes, dim, known_bool(keepdim)))


def _variance(self: AbstractTensor, dim: list[int] | None, keepdim: Any, with_mean: bool) -> Any:
    """var and std (complex inputs give real results) and, with_mean, the mean beside them."""
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise Decline
    if dim and len({wrap_dim(d, len(self.sizes)) for d in dim}) != len(dim):
        raise Decline
    sizes = reduced(self.sizes, dim, known_bool(keepdim))
    variance = tensor(complex_to_float(self.dtype), sizes)
    return [variance, tensor(self.dtype, sizes)] if with_mean else variance


def _variance_rules(name: str, with_mean: bool) -> None:
    def whole(self: AbstractTensor, unbiased: Any = True) -> Any:
        return _variance(self, None, False, with_mean)

    def by_dim(self: AbstractTensor, dim: list[int] | None, unbiased: Any = True, keepdim: Any = False) -> Any:
        return _variance(self, dim, keepdim, with_mean)

    def corrected(self: AbstractTensor, dim: list[int] | None = None, correction: Any = None,
                  keepdim: Any = False) -> Any:
        return _variance(self, dim, keepdim, with_mean)

    contiguous_rule(f"aten::{name}")(whole)
    contiguous_rule(f"aten::{name}.dim")(by_dim)
    contiguous_rule(f"aten::{name}.correction")(corrected)


for _name in ("var", "std"):
    _variance_rules(_name, with_mean=False)
    _variance_rules(f"{_name}_mean", with_mean=True)


@contiguous_rule("aten::softmax.int", "aten::log_softmax.int", "aten::_safe_softmax")
def _softmax(self: AbstractTensor, dim: int, dtype: Any = None) -> T.TensorType:
    need_floating(self)
    wrap_dim(dim, len(self.sizes))
    return like(self, dtype_argument(dtype, self.dtype))


@contiguous_rule("aten::count_nonzero", "aten::count_nonzero.dim_IntList")
def _count_nonzero(self: AbstractTensor, dim: int | list[int] | None = None) -> T.TensorType:
    dims = [dim] if isinstance(dim, int) else dim
    return tensor(torch.int64, reduced(self.sizes, dims, False))


@contiguous_rule("aten::quantile", "aten::quantile.scalar", "aten::nanquantile", "aten::nanquantile.scalar")
def _quantile(self: AbstractTensor, q: Any, dim: int | None = None, keepdim: Any = False,
              interpolation: str = "linear") -> T.TensorType:
    """The q-th quantiles over `dim` (over all elements, flattened, when None); a vector of q adds a first
    dimension."""
    need(self.dtype in (torch.float32, torch.float64), "quantile() input tensor must be either float or double")
    if isinstance(q, AbstractTensor):
        need(len(q.sizes) <= 1 and q.dtype == self.dtype, "quantile() q must be a scalar or 1D of input's dtype")
    else:
        need(0 <= q <= 1, "quantile() q must be in the range [0, 1]")
    need(interpolation in ("linear", "lower", "higher", "midpoint", "nearest"), "quantile(): bad interpolation")
    need(numel(self.sizes) != 0, "quantile() input tensor must be non-empty")
    keep = known_bool(keepdim)
    if dim is None:
        sizes: Sizes = (1,) * len(self.sizes) if keep else ()
    else:
        sizes = reduced(self.sizes, [dim], keep)
    leading = q.sizes if isinstance(q, AbstractTensor) else ()
    return tensor(self.dtype, leading + sizes)


# ---- views and reshapes ------------------------------------------------------------------------------------
def infer_size(shape: Sequence[int], count: int | None) -> Sizes:
    """A view's sizes with its one -1 inferred from the element count (ATen's infer_size)."""
    need(sum(1 for size in shape if size == -1) <= 1, "only one dimension can be inferred")
    need(all(size >= -1 for size in shape), "invalid shape dimension")
    known = math.prod(size for size in shape if size != -1)
    if -1 not in shape:
        need(count is None or count == known, f"shape {list(shape)} is invalid for input of size {count}")
        return tuple(shape)
    if count is None:
        return tuple(None if size == -1 else size for size in shape)
    need(known != 0 and count % known == 0, f"shape {list(shape)} is invalid for input of size {count}")
    return tuple(count // known if size == -1 else size for size in shape)


@rule("aten::view", "aten::reshape", "aten::_unsafe_view", "aten::view_copy", "aten::_reshape_alias")
def _view(self: AbstractTensor, size: list[int], *strides: Any) -> T.TensorType:
    return tensor(self.dtype, infer_size(size, numel(self.sizes)))


@rule("aten::view_as", "aten::reshape_as")
def _view_as(self: AbstractTensor, other: AbstractTensor) -> T.TensorType:
    return _view(self, [-1 if size is None else size for size in other.sizes]) if None in other.sizes \
        else _view(self, list(other.sizes))


@rule("aten::flatten.using_ints")
def _flatten(self: AbstractTensor, start_dim: int = 0, end_dim: int = -1) -> T.TensorType:
    rank = len(self.sizes)
    if rank == 0:
        return tensor(self.dtype, (1,))
    start, end = wrap_dim(start_dim, rank), wrap_dim(end_dim, rank)
    need(start <= end, "flatten() has invalid args: start_dim cannot come after end_dim")
    middle = numel(self.sizes[start:end + 1])
    return tensor(self.dtype, self.sizes[:start] + (middle,) + self.sizes[end + 1:])


@rule("aten::unflatten.int")
def _unflatten(self: AbstractTensor, dim: int, sizes: list[int]) -> T.TensorType:
    position = wrap_dim(dim, len(self.sizes))
    need(len(sizes) > 0, "unflatten: sizes must be non-empty")
    inner = infer_size(sizes, self.sizes[position] if self.sizes else 1)
    return tensor(self.dtype, self.sizes[:position] + inner + self.sizes[position + 1:])


@rule("aten::expand", "aten::expand_copy")
def _expand(self: AbstractTensor, size: list[int], implicit: bool = False) -> T.TensorType:
    need(len(size) >= len(self.sizes), "the number of sizes provided must be at least the tensor's dimensions")
    offset = len(size) - len(self.sizes)
    need(all(s >= 0 for s in size[:offset]), "expand: negative size for a new leading dimension")
    result: list[int | None] = list(size[:offset])
    for target, actual in zip(size[offset:], self.sizes):
        if target == -1:
            result.append(actual)
        else:
            need(actual is None or actual == 1 or actual == target, "expanded size must match")
            result.append(target)
    return tensor(self.dtype, result)


@rule("aten::expand_as")
def _expand_as(self: AbstractTensor, other: AbstractTensor) -> T.TensorType:
    if None in other.sizes:
        raise Decline
    return _expand(self, list(other.sizes))  # type: ignore[arg-type]


@rule("aten::permute")
def _permute(self: AbstractTensor, dims: list[int]) -> T.TensorType:
    rank = len(self.sizes)
    need(len(dims) == rank, "permute: number of dims don't match")
    order = [wrap_dim(d, rank) for d in dims]
    need(len(set(order)) == rank, "permute: repeated dim")
    return tensor(self.dtype, [self.sizes[d] for d in order])


@rule("aten::transpose.int")
def _transpose(self: AbstractTensor, dim0: int, dim1: int) -> T.TensorType:
    rank = len(self.sizes)
    a, b = wrap_dim(dim0, rank), wrap_dim(dim1, rank)
    sizes = list(self.sizes)
    if rank:
        sizes[a], sizes[b] = sizes[b], sizes[a]
    return tensor(self.dtype, sizes)


@rule("aten::t")
def _t(self: AbstractTensor) -> T.TensorType:
    need(len(self.sizes) <= 2, "t() expects a tensor with <= 2 dimensions")
    return tensor(self.dtype, self.sizes[::-1])


@rule("aten::unsqueeze")
def _unsqueeze(self: AbstractTensor, dim: int) -> T.TensorType:
    position = wrap_dim(dim, len(self.sizes) + 1)
    return tensor(self.dtype, self.sizes[:position] + (1,) + self.sizes[position:])


@rule("aten::squeeze")
def _squeeze_all(self: AbstractTensor) -> T.TensorType:
    return tensor(self.dtype, [size for size in self.sizes if size != 1])


@rule("aten::squeeze.dim", "aten::squeeze.dims")
def _squeeze(self: AbstractTensor, dim: int | list[int]) -> T.TensorType:
    rank = len(self.sizes)
    dims = {wrap_dim(d, rank) for d in (dim if isinstance(dim, list) else [dim])}
    return tensor(self.dtype, [size for i, size in enumerate(self.sizes) if not (i in dims and size == 1)])


@rule("aten::repeat")
def _repeat(self: AbstractTensor, repeats: list[int]) -> T.TensorType:
    need(len(repeats) >= len(self.sizes), "number of repeat dims can not be smaller than number of tensor dims")
    need(all(r >= 0 for r in repeats), "repeats can not be negative")
    padded = (1,) * (len(repeats) - len(self.sizes)) + self.sizes
    return tensor(self.dtype, [None if size is None else size * r for size, r in zip(padded, repeats)])


# ---- indexing ----------------------------------------------------------------------------------------------
@rule("aten::select.int")
def _select(self: AbstractTensor, dim: int, index: int) -> T.TensorType:
    need(len(self.sizes) > 0, "select() cannot be applied to a 0-dim tensor")
    position = wrap_dim(dim, len(self.sizes))
    size = self.sizes[position]
    need(size is None or -size <= index < size, f"select(): index {index} out of range")
    return tensor(self.dtype, self.sizes[:position] + self.sizes[position + 1:])


def _slice_length(size: int, start: int | None, end: int | None, step: int) -> int:
    """The length of `x[start:end:step]` along a dimension of `size` (start and end clamped)."""
    start = 0 if start is None else start
    end = size if end is None else end
    start = min(max(start + size if start < 0 else start, 0), size)
    end = min(max(end + size if end < 0 else end, start), size)
    return (end - start + step - 1) // step


@rule("aten::slice.Tensor")
def _slice(self: AbstractTensor, dim: int = 0, start: int | None = None, end: int | None = None,
           step: int = 1) -> T.TensorType:
    need(len(self.sizes) > 0, "slice() cannot be applied to a 0-dim tensor")
    need(step > 0, "slice step must be positive")
    position = wrap_dim(dim, len(self.sizes))
    size = self.sizes[position]
    sizes = list(self.sizes)
    sizes[position] = None if size is None else _slice_length(size, start, end, step)
    return tensor(self.dtype, sizes)


@rule("aten::narrow")
def _narrow(self: AbstractTensor, dim: int, start: int, length: int) -> T.TensorType:
    need(len(self.sizes) > 0, "narrow() cannot be applied to a 0-dim tensor")
    position = wrap_dim(dim, len(self.sizes))
    size = self.sizes[position]
    need(length >= 0, "narrow(): length must be non-negative")
    if size is not None:
        begin = start + size if start < 0 else start
        need(0 <= begin <= size and begin + length <= size, "narrow(): out of range")
    sizes = list(self.sizes)
    sizes[position] = length
    return tensor(self.dtype, sizes)


@rule("aten::index_select")
def _index_select(self: AbstractTensor, dim: int, index: AbstractTensor) -> T.TensorType:
    need(len(index.sizes) <= 1, "index_select(): index must be a vector")
    position = wrap_dim(dim, len(self.sizes))
    sizes = list(self.sizes)
    if sizes:
        sizes[position] = numel(index.sizes)
    return tensor(self.dtype, sizes)


@rule("aten::chunk")
def _chunk(self: AbstractTensor, chunks: int, dim: int = 0) -> T.ListType:
    need(chunks > 0, "chunk expects `chunks` to be greater than 0")
    need(len(self.sizes) > 0, "chunk expects at least a 1-dimensional tensor")
    position = wrap_dim(dim, len(self.sizes))
    size = self.sizes[position]
    if size is None:
        return _pieces(self, position, [None])
    each = -(-size // chunks) if size else 1
    return _split(self, each, dim)


@rule("aten::split.Tensor", "aten::split_with_sizes")
def _split(self: AbstractTensor, split_size: int | list[int], dim: int = 0) -> T.ListType:
    need(len(self.sizes) > 0, "split expects at least a 1-dimensional tensor")
    position = wrap_dim(dim, len(self.sizes))
    size = self.sizes[position]
    if isinstance(split_size, list):
        return _split_sizes(self, split_size, dim)
    need(split_size >= 0, "split expects split_size be non-negative")
    if size is None:
        return _pieces(self, position, [None])
    need(split_size > 0 or size == 0, "split_size can only be 0 if the dimension size is 0")
    count = max(-(-size // split_size), 1) if split_size else 1
    lengths = [min(split_size, size - i * split_size) for i in range(count)]
    return _pieces(self, position, lengths)


@rule("aten::split.sizes")
def _split_sizes(self: AbstractTensor, split_sizes: list[int], dim: int = 0) -> T.ListType:
    position = wrap_dim(dim, len(self.sizes))
    size = self.sizes[position] if self.sizes else None
    need(size is None or sum(split_sizes) == size, "split_with_sizes expects split_sizes to sum exactly")
    need(all(s >= 0 for s in split_sizes), "split_with_sizes expects non-negative sizes")
    if not split_sizes:
        raise Decline  # an empty list of tensors has no element type
    return _pieces(self, position, list(split_sizes))


@rule("aten::unbind.int")
def _unbind(self: AbstractTensor, dim: int = 0) -> T.ListType:
    need(len(self.sizes) > 0, "unbind() cannot be applied to a 0-dim tensor")
    position = wrap_dim(dim, len(self.sizes))
    if self.sizes[position] == 0:
        raise Decline
    return T.ListType(tensor(self.dtype, self.sizes[:position] + self.sizes[position + 1:]))


def _pieces(self: AbstractTensor, position: int, lengths: Sequence[int | None]) -> T.ListType:
    """A tensor list whose elements are `self` with dimension `position` of the given lengths."""
    element = T.TensorType(dtype=self.dtype, sizes=tuple(
        (lengths[0] if len(set(lengths)) == 1 else None) if i == position else size
        for i, size in enumerate(self.sizes)))
    return T.ListType(element)


# ---- concatenation -----------------------------------------------------------------------------------------
@rule("aten::cat")
def _cat(tensors: list[AbstractTensor], dim: int = 0) -> T.TensorType:
    need(len(tensors) > 0, "torch.cat(): expected a non-empty list of Tensors")
    if any(t.sizes == (0,) for t in tensors) or any(not t.sizes for t in tensors):
        raise Decline  # legacy empty tensors are skipped, 0-d ones rejected: left to the meta kernel
    rank = len(tensors[0].sizes)
    need(all(len(t.sizes) == rank for t in tensors), "Tensors must have same number of dimensions")
    position = wrap_dim(dim, rank)
    sizes: list[int | None] = []
    for i in range(rank):
        column = [t.sizes[i] for t in tensors]
        if i == position:
            sizes.append(None if None in column else sum(column))  # type: ignore[arg-type]
        else:
            known = {size for size in column if size is not None}
            need(len(known) <= 1, "Sizes of tensors must match except in the concatenating dimension")
            sizes.append(known.pop() if known and None not in column else None)
    return tensor(result_type(*tensors), sizes)


@rule("aten::stack")
def _stack(tensors: list[AbstractTensor], dim: int = 0) -> T.TensorType:
    need(len(tensors) > 0, "stack expects a non-empty TensorList")
    rank = len(tensors[0].sizes)
    need(all(len(t.sizes) == rank for t in tensors), "stack expects each tensor to be equal size")
    position = wrap_dim(dim, rank + 1)
    sizes: list[int | None] = []
    for i in range(rank):
        known = {t.sizes[i] for t in tensors if t.sizes[i] is not None}
        need(len(known) <= 1, "stack expects each tensor to be equal size")
        sizes.append(known.pop() if known and all(t.sizes[i] is not None for t in tensors) else None)
    sizes.insert(position, len(tensors))
    return tensor(result_type(*tensors), sizes)


def _at_least_1d(tensor_: AbstractTensor) -> AbstractTensor:
    return tensor_ if tensor_.sizes else AbstractTensor(tensor_.dtype, tensor_.device, (1,))


@rule("aten::hstack")
def _hstack(tensors: list[AbstractTensor]) -> T.TensorType:
    """Concatenated along the columns (along the only dimension when the first is a vector)."""
    need(len(tensors) > 0, "hstack expects a non-empty TensorList")
    pieces = [_at_least_1d(t) for t in tensors]
    return _cat(pieces, 0 if len(pieces[0].sizes) == 1 else 1)


@rule("aten::column_stack")
def _column_stack(tensors: list[AbstractTensor]) -> T.TensorType:
    """Numbers and vectors as columns, then concatenated along the columns."""
    need(len(tensors) > 0, "column_stack expects a non-empty TensorList")
    columns = [AbstractTensor(t.dtype, t.device, (numel(t.sizes), 1)) if len(t.sizes) <= 1 else t for t in tensors]
    return _cat(columns, 1)


@rule("aten::roll")
def _roll(self: AbstractTensor, shifts: list[int], dims: Sequence[int] = ()) -> T.TensorType:
    need(len(shifts) > 0, "`shifts` required")
    need(len(shifts) == len(dims) or (not dims and len(shifts) == 1), "shifts and dimensions must align")
    for dim in dims:
        wrap_dim(dim, len(self.sizes))
    return like(self)


# ---- conversions and factories -----------------------------------------------------------------------------
@rule("aten::to.dtype")
def _to_dtype(self: AbstractTensor, dtype: Any, *options: Any) -> T.TensorType:
    return like(self, dtype_argument(dtype, self.dtype))


@rule("aten::to.device")
def _to_device(self: AbstractTensor, device: Any, dtype: Any, *options: Any) -> T.TensorType:
    return like(self, dtype_argument(dtype, self.dtype))


@rule("aten::to.dtype_layout")
def _to_layout(self: AbstractTensor, dtype: Any = None, layout: Any = None, *options: Any) -> T.TensorType:
    if layout not in (None, 0):
        raise Decline
    return like(self, dtype_argument(dtype, self.dtype))


@rule("aten::to.other", "aten::type_as")
def _to_other(self: AbstractTensor, other: AbstractTensor, *options: Any) -> T.TensorType:
    return like(self, other.dtype)


def _factory(sizes: list[int], dtype: Any, layout: Any, default: torch.dtype) -> T.TensorType:
    need(all(size >= 0 for size in sizes), "negative dimension")
    if layout not in (None, 0):
        raise Decline
    return tensor(dtype_argument(dtype, default), sizes)


@rule("aten::zeros", "aten::ones", "aten::empty.memory_format")
def _sized_factory(size: list[int], dtype: Any = None, layout: Any = None, *options: Any) -> T.TensorType:
    return _factory(size, dtype, layout, torch.get_default_dtype())


@rule("aten::rand", "aten::randn")
def _random_factory(size: list[int], dtype: Any = None, layout: Any = None, *options: Any) -> T.TensorType:
    result = _factory(size, dtype, layout, torch.get_default_dtype())
    need(result.dtype is not None and (result.dtype.is_floating_point or result.dtype.is_complex),
         "random numbers need a floating point dtype")
    return result


@rule("aten::full")
def _full(size: list[int], fill_value: Any, dtype: Any = None, layout: Any = None, *options: Any) -> T.TensorType:
    return _factory(size, dtype, layout, _scalar_dtype(fill_value))


@rule("aten::zeros_like", "aten::ones_like", "aten::empty_like", "aten::rand_like", "aten::randn_like")
def _like_factory(self: AbstractTensor, dtype: Any = None, layout: Any = None, *options: Any) -> T.TensorType:
    if None in self.sizes:
        return like(self, dtype_argument(dtype, self.dtype))
    return _factory([size for size in self.sizes if size is not None], dtype, layout, self.dtype)


@rule("aten::full_like")
def _full_like(self: AbstractTensor, fill_value: Any, dtype: Any = None, layout: Any = None,
               *options: Any) -> T.TensorType:
    return _like_factory(self, dtype, layout)

