"""An operator's result on meta tensors computed from the shape rule tables instead of by running it.

MLIR's type refinement (shapes.py) runs every node on abstract values. Calling an operator on meta tensors runs
its meta kernel, and most of PyTorch's are Python (torch._refs, torch._decomp) whose elementwise type promotion
wrapper imports torch._dynamo on its first call: seconds of CPU, and tsjit must never load it. The executor's
shape analysis avoids that with the rule tables of passes/shape_rules.py and shape_rules_nn.py; this module lets
MLIR's refinement ask the same tables first:

    %y = aten::relu(%x)        %x: meta Float(2, 3)   ->   RULES["aten::relu"] gives Float(2, 3)
                                                          ->   %y: torch.empty((2, 3), device="meta")

A rule gives dtype and sizes, not strides, so its answer is used only where the result's strides follow: the
operator returns fresh tensors (no view, no `out=`), every tensor input lies in memory in row-major order (or the
operator is a matrix product, whose result is contiguous anyway) and no memory format other than the contiguous
one is asked for; then eager's result is contiguous too. An in-place operator (`x.add_(y)`)
returns its first argument itself once the rule accepts the call. Anything else returns None: the caller runs the
operator's meta kernel.
"""

from __future__ import annotations

from typing import Any

import torch

from tsjit.ir import types as ts
from tsjit.ir.scalar_type import MEMORY_FORMATS
from tsjit.passes.shape_analysis import apply_rule
from tsjit.passes.shape_rules import AbstractTensor, DeviceArgument, ShapeError

_CONTIGUOUS_FORMATS = (None, 0, 1, torch.contiguous_format, torch.preserve_format)
# matrix products whose results are new contiguous matrices whatever their inputs' layout (`x @ w.t()`)
_CONTIGUOUS_PRODUCTS = frozenset({"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::linear"})


class RuleRejects(Exception):
    """The rule says the operator fails on these inputs (the meta kernel would raise)."""


def result_by_rule(operator, values: list[Any]) -> list[Any] | None:
    """The operator's results on `values` (meta tensors, Python values) as new meta tensors (or, in place, its
    first argument), or None where no rule applies. Raises RuleRejects where the rule says the call fails."""
    schema = operator.schema
    if not _rule_may_answer(schema, values):
        return None
    abstract = [_abstract(value) for value in values]
    try:
        types = apply_rule(operator, abstract, len(schema.returns))
    except ShapeError as error:
        raise RuleRejects(str(error)) from error
    if types is None or not all(_is_complete(t) for t in types):
        return None
    if schema.is_mutable:
        return [values[0]]
    return [torch.empty(t.sizes, dtype=t.dtype, device="meta") for t in types]


def _rule_may_answer(schema, values: list[Any]) -> bool:
    """Whether a rule's dtype and sizes determine the results: fresh contiguous tensors, or `self` in place."""
    if schema.is_vararg or len(values) != len(schema.arguments):
        return False
    if any(not isinstance(r.type, ts.TensorType) for r in schema.returns):
        return False
    if schema.is_mutable and not _writes_only_self(schema):
        return False
    if not schema.is_mutable and any(r.alias_info is not None for r in schema.returns):
        return False  # a view: its strides follow its input's, which C++ meta kernels compute
    if schema.operator_name not in _CONTIGUOUS_PRODUCTS and not all(_row_major(t) for t in _tensors(values)):
        return False
    return all(value in _CONTIGUOUS_FORMATS for value, argument in zip(values, schema.arguments)
               if argument.name == "memory_format")


def _row_major(tensor: torch.Tensor) -> bool:
    """Whether the tensor's dimensions lie in memory in row-major order (a chunk `x[:, :20]` of a contiguous `x`
    does, `x.t()` does not): size-1 and broadcast (stride 0) dimensions aside, strides never grow. Eager lays
    results out in the order of the inputs' strides, so on such inputs its results are contiguous."""
    strides = [stride for size, stride in zip(tensor.shape, tensor.stride()) if size > 1 and stride != 0]
    return all(a >= b for a, b in zip(strides, strides[1:]))


def _writes_only_self(schema) -> bool:
    """`add_(Tensor(a!) self, ...) -> Tensor(a!)`: the one written argument is the first, the one result."""
    return schema.written_arguments == (0,) and len(schema.returns) == 1 and \
        not any(argument.is_out for argument in schema.arguments)


def _tensors(values: list[Any]):
    for value in values:
        if isinstance(value, torch.Tensor):
            yield value
        elif isinstance(value, list | tuple):
            yield from (v for v in value if isinstance(v, torch.Tensor))


def _abstract(value: Any) -> Any:
    """A value as the rules take it: tensors as AbstractTensor, devices as DeviceArgument, lists item by item."""
    if isinstance(value, torch.Tensor):
        return AbstractTensor(value.dtype, None, tuple(value.shape))
    if isinstance(value, torch.device):
        return DeviceArgument(value)
    if isinstance(value, list | tuple):
        return [_abstract(v) for v in value]
    if isinstance(value, torch.memory_format):
        return MEMORY_FORMATS.index(value)
    return value


def _is_complete(type_: ts.Type | None) -> bool:
    """A tensor type whose dtype and every size are known (a ListType, a tensor list, is left to meta)."""
    return isinstance(type_, ts.TensorType) and type_.dtype is not None and type_.sizes is not None and \
        None not in type_.sizes
