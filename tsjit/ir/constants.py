"""prim::Constant nodes: building them from Python values and reading their values back.

The attribute kind follows TorchScript's insertConstant: ints and bools are `i` (the output type tells them
apart), floats `f`, complex `c`, strings and devices `s` (a Device constant prints as `value="cpu"`), tensors `t`,
and lists, tuples and other values `ival`. None has no attribute. dtypes, layouts and memory formats are ints.
"""

from __future__ import annotations

from typing import Any

import torch

from tsjit.errors import IRError
from tsjit.ir import types
from tsjit.ir.scalar_type import dtype_to_code, layout_to_code, memory_format_to_code
from tsjit.ir.symbols import attr, prim

# the range of TorchScript's int (C++ int64_t)
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

# what constant_of answers for a value that is not a constant (None is a constant's value)
NOT_CONSTANT = object()


def create_constant(graph, value: Any, type_=None):
    """An unplaced prim::Constant node of `graph` whose output holds `value`."""
    node = graph.create(prim.Constant)
    node.output().set_type(type_ if type_ is not None else _constant_type(value))
    # a member of an enum type is kept as it is (an IntEnum member is also an int, which _normalize would store)
    stored, kind = (value, "ival") if isinstance(type_, types.EnumType) else _normalize(value)
    if kind is not None:
        node._set_attribute(attr.value, kind, stored)
    return node


def constant_value(node) -> Any:
    """The Python value a prim::Constant node produces."""
    if node.kind is not prim.Constant:
        raise IRError(f"{node.kind} is not a prim::Constant")
    if not node.has_attribute(attr.value):
        return _valueless_constant(node.output().type)
    kind, value = node._attribute(attr.value)
    return _value_of_kind(kind, value, node.output().type)


def constant_of(value) -> Any:
    """The Python value of a prim::Constant output, or NOT_CONSTANT for any other value."""
    if value.node.kind is not prim.Constant:
        return NOT_CONSTANT
    return constant_value(value.node)


def must_be_none(value) -> bool:
    """Whether the value is statically None (C++ Value::mustBeNone): typed None, or an Optional[T] None constant."""
    node = value.node
    if isinstance(value.type, types.NoneType) and len(node.outputs) == 1:
        return True
    return node.kind is prim.Constant and not node.attribute_names() and isinstance(value.type, types.OptionalType)


def _valueless_constant(type_) -> Any:
    """None, or the function a Function-typed constant (`prim::Constant[name="helper"]`) stands for."""
    return type_.function if isinstance(type_, types.FunctionType) else None


def _value_of_kind(kind: str, value: Any, type_) -> Any:
    if kind == "i" and isinstance(type_, types.BoolType):
        return bool(value)
    if kind == "s" and isinstance(type_, types.DeviceType):
        return torch.device(value)
    if kind == "ival" and isinstance(value, list):
        return list(value)
    return value


def _normalize(value: Any) -> tuple[Any, str | None]:
    """The attribute value and kind that store `value`."""
    if value is None:
        return None, None
    if isinstance(value, bool | int):
        return int(value), "i"
    if isinstance(value, float):
        return value, "f"
    if isinstance(value, complex):
        return value, "c"
    if isinstance(value, str):
        return value, "s"
    if isinstance(value, torch.device):
        return str(value), "s"
    if isinstance(value, torch.Tensor):
        return value, "t"
    if isinstance(value, torch.dtype):
        return dtype_to_code(value), "i"
    if isinstance(value, torch.layout):
        return layout_to_code(value), "i"
    if isinstance(value, torch.memory_format):
        return memory_format_to_code(value), "i"
    return value, "ival"


def _constant_type(value: Any):
    """The output type of a constant built from a value `_normalize` accepted."""
    if isinstance(value, torch.device):
        return types.DeviceType.get()
    if isinstance(value, torch.Tensor):
        return types.TensorType.create_from_tensor(value)
    if isinstance(value, torch.dtype | torch.layout | torch.memory_format):
        return types.IntType.get()
    return types.type_of(value)


# ---- wrapped numbers -----------------------------------------------------------------------------------------
_WRAPPED_NUMBER = "_tsjit_wrapped_number"


def wrapped_number(value: bool | int | float | complex) -> torch.Tensor:
    """A Python number passed for a Tensor, as PyTorch's bindings wrap it (`2` is `Long(){2}`, `2.5`
    `Double(){2.5}`), marked as a wrapped number: it promotes as the number did, below every tensor.

        %s : Long() = aten::sum(%x, %none)
        %c : Double() = prim::Constant[value={1.5}]()    # a wrapped number: the trace of `x.sum() * 1.5`
        %y : Float() = aten::mul(%s, %c)                 # Long * 1.5 is Float; a plain Double() would make Double

    ATen keeps the mark in the TensorImpl, which Python cannot set or read, so tsjit marks the Python tensor and
    the runtime passes it as the number's dtype would promote (tsjit.runtime.operations)."""
    dtype = {bool: torch.bool, int: torch.int64, float: torch.float64, complex: torch.complex128}[type(value)]
    tensor = torch.tensor(value, dtype=dtype, device="cpu")
    setattr(tensor, _WRAPPED_NUMBER, True)
    return tensor


def is_wrapped_number(value: Any) -> bool:
    """Whether `value` is a tensor `wrapped_number` made (a copy of it is an ordinary tensor, as in ATen)."""
    return isinstance(value, torch.Tensor) and getattr(value, _WRAPPED_NUMBER, False)
