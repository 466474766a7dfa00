"""Between tensors and numbers: `int(t)`/`float(x)`/`bool(x)`/`complex(a, b)`, the implicit conversions the
compiler inserts (`aten::ScalarImplicit`, `prim::NumToTensor`), `torch.tensor`/`torch.as_tensor` of numbers
and lists, tensor properties (`t.device`, `t.dtype`, `t.is_cuda`, `t.shape`), devices, and the int-list size
helpers (`aten::size`, `aten::_infer_size`, ...).

dtypes are ints here, as in TorchScript (`prim::dtype` returns 6 for torch.float32), layouts too.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import torch

from tsjit.ir.constants import INT64_MAX, INT64_MIN
from tsjit.ir.scalar_type import code_to_dtype, dtype_to_code, layout_to_code
from tsjit.ir.types import BoolType, ComplexType, FloatType, IntType, ListType, dtype_name
from tsjit.ops.builtins.common import fail, float_to_int64, int32

# ------------------------------------------------------------------------------------ number conversions

# patterns, compiled (and cached by `re`) on first use: loading this table compiles nothing
_INTEGER_TEXT = r"\s*[+-]?\d+"
_FLOAT_TEXT = r"(?i)\s*[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)"


def _checked_int(value: Any, type_name: str) -> int:
    """An int from a number, failing on NaN, inf, overflow and a non-zero imaginary part (c10's checked
    conversion, whose message names the C++ type)."""
    if isinstance(value, complex):
        if value.imag != 0:
            fail(f"value cannot be converted to type {type_name} without overflow")
        value = value.real
    if isinstance(value, float) and not (math.isfinite(value) and INT64_MIN <= value < 2.0**63):
        fail(f"value cannot be converted to type {type_name} without overflow")
    return int(value)


def tensor_to_int(a: torch.Tensor) -> int:
    """`int(t)`: the tensor's single value, truncated (`a.item<int64_t>()`)."""
    return _checked_int(a.item(), "int64_t")


def tensor_to_float(a: torch.Tensor) -> float:
    value = a.item()
    return float(value.real if isinstance(value, complex) else value)


def scalar_to_int(a: Any) -> int:
    return a if type(a) is int else _checked_int(a, "int")


def scalar_to_float(a: Any) -> float:
    return a.real if isinstance(a, complex) else float(a)


def string_to_int(a: str) -> int:
    """C++ `stoll`: leading whitespace and a sign allowed, nothing after the digits."""
    match = re.match(_INTEGER_TEXT, a)
    if match is None:
        fail("stoll")
    if match.end() != len(a):
        fail(f"invalid literal for int() with base 10: '{a}'")
    value = int(match.group())
    if not INT64_MIN <= value <= INT64_MAX:
        fail("stoll")
    return value


def string_to_float(a: str) -> float:
    """C++ `stod`: leading whitespace, decimal or exponent notation, inf and nan; nothing after."""
    match = re.match(_FLOAT_TEXT, a)
    if match is None:
        fail("stod")
    if match.end() != len(a):
        fail(f"could not convert string to float: '{a}'")
    return float(match.group())


def to_complex(x: Any, y: Any) -> complex:
    """`complex(x, y)` of numbers, bools and one-element tensors; TorchScript's C++ reads an int operand as
    an `int` (32 bits) and a tensor as a double."""
    return complex(_as_double(x), _as_double(y))


def _as_double(value: Any) -> float:
    if isinstance(value, torch.Tensor):
        return float(value.item())
    return float(int32(value) if type(value) is int else value)


def scalar_to_complex(a: Any) -> complex:
    return complex(a)


# -------------------------------------------------------------------------------- implicit conversions

def _check_implicit(a: torch.Tensor, to_int: bool) -> None:
    """checkImplicitTensorToNum: a tensor used where a number is expected must be 0-d and need no grad."""
    if a.requires_grad:
        fail("Cannot input a tensor that requires grad as a scalar argument")
    if a.dim() != 0:
        fail("Cannot input a tensor of dimension other than 0 as a scalar argument")
    if to_int and (a.dtype.is_floating_point or a.dtype.is_complex or a.dtype == torch.bool):
        fail(f"Cannot input a tensor of type {dtype_name(a.dtype)} as an integral argument")


def int_implicit(a: torch.Tensor) -> int:
    _check_implicit(a, to_int=True)
    return int(a.item())


def float_implicit(a: torch.Tensor) -> float:
    _check_implicit(a, to_int=False)
    return tensor_to_float(a)


def complex_implicit(a: torch.Tensor) -> complex:
    _check_implicit(a, to_int=False)
    return complex(a.item())


def scalar_implicit(a: torch.Tensor) -> int | float | complex | bool:
    _check_implicit(a, to_int=False)
    return a.item()


_NUMBER_DTYPES = {bool: torch.bool, int: torch.int64, float: torch.float64, complex: torch.complex128}


def num_to_tensor(a: Any) -> torch.Tensor:
    """prim::NumToTensor: a 0-d tensor of the number's own width (int64, float64, complex128, bool)."""
    return torch.tensor(a, dtype=_NUMBER_DTYPES[type(a)])


# ------------------------------------------------------------------------------- torch.tensor, as_tensor

def _dtype(code: int | None) -> torch.dtype | None:
    return None if code is None else code_to_dtype(code)


def tensor_from_number(t: Any, dtype: int | None, device: torch.device | None,
                       requires_grad: bool) -> torch.Tensor:
    """`torch.tensor(3)`: int64, bool, or the default float / complex dtype, then cast to `dtype`."""
    return torch.tensor(t, dtype=_dtype(dtype), device=device, requires_grad=requires_grad)


def as_tensor_from_number(t: Any, dtype: int | None, device: torch.device | None) -> torch.Tensor:
    return torch.tensor(t, dtype=_dtype(dtype), device=device)


def as_tensor(data: torch.Tensor, dtype: int | None, device: torch.device | None) -> torch.Tensor:
    return torch.as_tensor(data, dtype=_dtype(dtype), device=device)


def _innermost(type_: Any) -> Any:
    while isinstance(type_, ListType):
        type_ = type_.elem
    return type_


def _list_default_dtype(node) -> torch.dtype | None:
    """The dtype TorchScript gives a list by its static element type: an empty `List[int]` is int64."""
    if node is None:
        return None
    element = _innermost(node.inputs[0].type)
    if isinstance(element, BoolType):
        return torch.bool
    if isinstance(element, IntType):
        return torch.int64
    if isinstance(element, FloatType):
        return torch.get_default_dtype()
    if isinstance(element, ComplexType):
        return torch.complex128 if torch.get_default_dtype() == torch.float64 else torch.complex64
    return None


def tensor_from_list(node) -> Callable[..., torch.Tensor]:
    """An operation factory for aten::tensor(t[] data, ...): the node's list type picks the default dtype."""
    default = _list_default_dtype(node)

    def tensor(data: list, dtype: int | None, device: torch.device | None,
               requires_grad: bool) -> torch.Tensor:
        _check_rectangular(data, 0)
        chosen = _dtype(dtype) or default
        return torch.tensor(data, dtype=chosen, device=device, requires_grad=requires_grad)

    return tensor


def _check_rectangular(data: list, dim: int) -> None:
    """Nested lists must have one length per dimension (with TorchScript's words for the failure)."""
    rows = [row for row in data if isinstance(row, list)]
    if not rows:
        return
    length = len(rows[0])
    for row in rows:
        if len(row) != length:
            fail(f"Expected sequence of length {length} at dim {dim + 1} (got {len(row)})")
    for row in rows:
        _check_rectangular(row, dim + 1)


def as_tensor_from_list(node) -> Callable[..., torch.Tensor]:
    make = tensor_from_list(node)
    return lambda data, dtype, device: make(data, dtype, device, False)


def list_to_tensor(values: list[int]) -> torch.Tensor:
    """aten::_list_to_tensor: an int32 vector."""
    return torch.tensor(values, dtype=torch.int32)


def tensor_to_list(values: torch.Tensor) -> list[int]:
    return [int(v) for v in values.tolist()]


# ------------------------------------------------------------------------------------ tensor properties

def tensor_length(t: torch.Tensor) -> int:
    if t.dim() == 0:
        fail("len() of a 0-d tensor")
    return t.shape[0]


def tensor_name(t: torch.Tensor) -> str | None:
    return getattr(t, "name", None) or None


def _tensor_property(name: str) -> Callable[[torch.Tensor], Any]:
    return lambda a: getattr(a, name)


_BOOL_PROPERTIES = ("is_cuda", "is_cpu", "is_xpu", "is_xla", "is_mps", "is_maia", "is_mtia", "is_ipu",
                    "is_vulkan", "is_mkldnn", "is_meta", "is_quantized", "is_sparse", "is_sparse_csr",
                    "is_nested", "requires_grad")


# ---------------------------------------------------------------------------------------- size helpers

def infer_size(a: list[int], b: list[int]) -> list[int]:
    """The broadcast of two shapes, with ATen's error for incompatible ones."""
    return list(torch._C._infer_size(torch.Size(a), torch.Size(b)))


def broadcast_shapes(a: list[int], b: list[int]) -> list[int]:
    """aten::broadcast_shapes: TorchScript broadcasts `b` against `a`, which shows in its error message."""
    return infer_size(b, a)


def broadcast_sizes(*sizes: list[int]) -> list[int]:
    """prim::BroadcastSizes: the broadcast of any number of shapes."""
    result: list[int] = []
    for size in sizes:
        result = infer_size(result, size)
    return result


def size_if_not_equal(self_size: list[int], other_size: list[int]) -> list[int] | None:
    return None if self_size == other_size else self_size


def reduction_sizes(size: list[int], red_axes: list[int], keepdim: bool) -> list[int]:
    """prim::ReductionSizes: the shape after reducing over `red_axes`."""
    if keepdim:
        return [1 if axis in red_axes else extent for axis, extent in enumerate(size)]
    return [extent for axis, extent in enumerate(size) if axis not in red_axes]


OPERATORS: list[tuple[str, Callable]] = [
    ("aten::Int.Tensor(Tensor a) -> int", tensor_to_int),
    ("aten::Int.bool(bool a) -> int", int),
    ("aten::Int.float(float a) -> int", float_to_int64),
    ("aten::Int.Scalar(Scalar a) -> int", scalar_to_int),
    ("aten::Int.str(str a) -> int", string_to_int),
    ("aten::Float.Tensor(Tensor a) -> float", tensor_to_float),
    ("aten::Float.Scalar(Scalar a) -> float", scalar_to_float),
    ("aten::Float.int(int a) -> float", float),
    ("aten::Float.bool(bool a) -> float", float),
    ("aten::Float.str(str a) -> float", string_to_float),
    ("aten::Bool.Tensor(Tensor a) -> bool", bool),
    ("aten::Bool.int(int a) -> bool", bool),
    ("aten::Bool.float(float a) -> bool", bool),
    ("aten::Complex.Scalar(Scalar a) -> complex", scalar_to_complex),
    ("aten::Complex.Tensor_Tensor(Tensor a, Tensor b) -> complex", to_complex),
    *[(f"aten::Complex.{a}_{b}({a} x, {b} y) -> complex", to_complex)
      for a, b in (("int", "bool"), ("bool", "int"), ("float", "bool"), ("bool", "float"), ("float", "int"),
                   ("int", "float"), ("int", "int"), ("bool", "bool"), ("float", "float"),
                   ("Tensor", "float"), ("float", "Tensor"), ("Tensor", "int"), ("int", "Tensor"),
                   ("Tensor", "bool"), ("bool", "Tensor"))],
    ("aten::IntImplicit(Tensor a) -> int", int_implicit),
    ("aten::FloatImplicit(Tensor a) -> float", float_implicit),
    ("aten::ComplexImplicit(Tensor a) -> complex", complex_implicit),
    ("aten::ScalarImplicit(Tensor a) -> Scalar", scalar_implicit),
    ("prim::NumToTensor.Scalar(Scalar a) -> Tensor", num_to_tensor),
    ("prim::NumToTensor.bool(bool a) -> Tensor", num_to_tensor),
    *[(f"aten::tensor.{kind}({kind} t, *, ScalarType? dtype=None, Device? device=None, "
       "bool requires_grad=False) -> Tensor", tensor_from_number)
      for kind in ("bool", "float", "int", "complex")],
    *[(f"aten::as_tensor.{kind}({kind} t, *, ScalarType? dtype=None, Device? device=None) -> Tensor",
       as_tensor_from_number) for kind in ("bool", "float", "int", "complex")],
    ("aten::as_tensor(Tensor(a) data, *, ScalarType? dtype=None, Device? device=None) -> Tensor(b|a)",
     as_tensor),
    ("aten::_list_to_tensor(int[] self) -> Tensor", list_to_tensor),
    ("aten::_tensor_to_list(Tensor self) -> int[]", tensor_to_list),
    ("prim::device(Tensor a) -> Device", _tensor_property("device")),
    ("prim::dtype(Tensor a) -> int", lambda a: dtype_to_code(a.dtype)),
    ("prim::layout(Tensor a) -> Layout", lambda a: layout_to_code(a.layout)),
    *[(f"prim::{name}(Tensor a) -> bool", _tensor_property(name)) for name in _BOOL_PROPERTIES],
    ("prim::name(Tensor a) -> str?", tensor_name),
    ("prim::itemsize(Tensor a) -> int", _tensor_property("itemsize")),
    ("prim::nbytes(Tensor a) -> int", _tensor_property("nbytes")),
    ("prim::grad(Tensor a) -> Tensor(*)", _tensor_property("grad")),
    ("prim::data(Tensor(a) a) -> Tensor(a)", _tensor_property("data")),
    ("aten::element_size(Tensor self) -> int", lambda self: self.element_size()),
    ("aten::len.Tensor(Tensor t) -> int", tensor_length),
    ("aten::size(Tensor self) -> int[]", lambda self: list(self.shape)),
    ("aten::sym_size(Tensor self) -> SymInt[]", lambda self: list(self.shape)),
    ("aten::stride(Tensor self) -> int[]", lambda self: list(self.stride())),
    ("aten::sym_stride(Tensor self) -> SymInt[]", lambda self: list(self.stride())),
    ("aten::Size(int[] sizes) -> int[]", lambda sizes: sizes),
    ("aten::_infer_size(int[] a, int[] b) -> int[]", infer_size),
    ("aten::broadcast_shapes(int[] a, int[] b) -> int[]", broadcast_shapes),
    ("aten::_size_if_not_equal(int[] self_size, int[] other_size) -> int[]?", size_if_not_equal),
    ("prim::BroadcastSizes(...) -> int[]", broadcast_sizes),
    ("prim::ReductionSizes(int[] size, int[] red_axes, bool keepdim=False) -> int[]", reduction_sizes),
    ("aten::device(str a) -> Device", torch.device),
    ("aten::device.with_index(str type, int index) -> Device", torch.device),
    ("prim::index(Device self) -> int?", lambda self: self.index),
    ("prim::type(Device self) -> str", lambda self: self.type),
]

OPERATION_FACTORIES: list[tuple[str, Callable]] = [
    ("aten::tensor(t[] data, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False) "
     "-> Tensor", tensor_from_list),
    ("aten::as_tensor.list(t[] data, *, ScalarType? dtype=None, Device? device=None) -> Tensor",
     as_tensor_from_list),
]
