"""An operator's result on meta tensors computed from the shape rule tables instead of by running it.

MLIR's type refinement (shapes.py) runs every node on abstract values. Calling an operator on meta tensors runs
its meta kernel, and most of PyTorch's are Python (torch._refs, torch._decomp) whose elementwise type promotion
wrapper imports torch._dynamo on its first call: seconds of CPU, and tsjit must never load it. The executor's
shape analysis avoids that with the rule tables of passes/shape_rules.py and shape_rules_nn.py; this module lets
MLIR's refinement ask the same tables first:

    %y = aten::relu(%x)        %x: meta Float(2, 3)   ->   RULES["aten::relu"] gives Float(2, 3)
                                                          ->   %y: torch.empty((2, 3), device="meta")

A rule gives dtype and sizes, not strides, so its answer is used only where the result's strides follow (later
operators such as `view` depend on them): the operator returns fresh tensors (no view, no `out=`), no memory
format other than the contiguous one is asked for, and either
- TensorIterator computes it (elementwise operators): the result is laid out in the order of the inputs'
  strides, as TensorIterator lays it out (`relu(x.t())` is transposed too), see `tensor_iterator_strides`;
- or its result is contiguous whatever its inputs' layout (reductions, matrix products, tril/triu);
- or every tensor input lies in memory in row-major order, so that eager's result is contiguous too;
- or a layout rule of its own (RESULT_LAYOUTS) tells, as scaled_dot_product_attention's: like its query.
An in-place operator (`x.add_(y)`) returns its first argument itself once the rule accepts the call; an operator
that writes other arguments and returns fresh tensors (`_native_batch_norm_legit` updating its running
statistics) returns new ones, the written arguments keeping their sizes. Anything
else returns None: the caller runs the operator's meta kernel.
"""

from __future__ import annotations

from typing import Any

import torch

from tsjit.ir import types as ts
from tsjit.ir.scalar_type import MEMORY_FORMATS
from tsjit.passes.shape_analysis import apply_rule
from tsjit.passes.shape_rules import (
    CONTIGUOUS_RESULT_OPERATORS,
    TENSOR_ITERATOR_OPERATORS,
    AbstractTensor,
    DeviceArgument,
    ShapeError,
)

_CONTIGUOUS_FORMATS = (None, 0, 1, torch.contiguous_format, torch.preserve_format)


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
    if _writes_only_self(schema):
        return [values[0]]
    strides = [_result_strides(schema.operator_name, values, t.sizes) for t in types]
    if None in strides:
        return None
    return [torch.empty_strided(t.sizes, s, dtype=t.dtype, device="meta") for t, s in zip(types, strides)]


def _rule_may_answer(schema, values: list[Any]) -> bool:
    """Whether a rule's dtype and sizes may determine the results: fresh tensors, or `self` in place."""
    if schema.is_vararg or len(values) != len(schema.arguments):
        return False
    if any(not isinstance(r.type, ts.TensorType) for r in schema.returns):
        return False
    if _writes_only_self(schema):
        if _overlaps_itself(values[0]):
            return False  # eager refuses to write one element through several indices: the meta kernel says so
    elif any(r.alias_info is not None for r in schema.returns):
        return False  # a view or an `out=` argument: its strides are its input's, which C++ meta kernels compute
    return all(value in _CONTIGUOUS_FORMATS for value, argument in zip(values, schema.arguments)
               if argument.name == "memory_format")


def _result_strides(name: str, values: list[Any], sizes: tuple[int, ...]) -> tuple[int, ...] | None:
    """The strides of the operator's result of `sizes`, or None where they do not follow from the inputs'."""
    if name in RESULT_LAYOUTS:
        return RESULT_LAYOUTS[name](values, sizes)
    tensors = list(_tensors(values))
    if name in TENSOR_ITERATOR_OPERATORS:
        return tensor_iterator_strides(sizes, tensors)
    if name in CONTIGUOUS_RESULT_OPERATORS or all(_row_major(t) for t in tensors):
        return _contiguous_strides(sizes)
    return None


def tensor_iterator_strides(sizes: tuple[int, ...], inputs: list[torch.Tensor]) -> tuple[int, ...]:
    """The strides TensorIterator gives a new result of `sizes` computed from `inputs` (in argument order).

    Inputs of the result's shape that agree (all contiguous, all channels-last, or all dense with equal strides)
    give theirs. Otherwise the result's dimensions are ordered as the inputs' strides order them, the first input
    that tells two dimensions apart deciding (broadcast dimensions tell nothing; equal strides put the smaller
    size inside), and the result is dense in that order:

        x: (3, 4) strides (1, 3)  (a transposed matrix)   ->   relu(x), x + y: strides (1, 3)
    """
    shared = _shared_layout(sizes, inputs)
    if shared is not None:
        return shared
    rank = len(sizes)
    aligned = [_broadcast_strides(t, sizes) for t in inputs]
    order = list(range(rank - 1, -1, -1))  # innermost dimension first
    for i in range(1, rank):
        moving = i
        for position in range(i - 1, -1, -1):
            comparison = _compare_dimensions(order[position], order[moving], aligned, sizes)
            if comparison > 0:
                order[position], order[moving] = order[moving], order[position]
                moving = position
            elif comparison < 0:
                break
    if order == list(range(rank - 1, -1, -1)):
        return _contiguous_strides(sizes)
    strides = [0] * rank
    step = 1
    for dim in order:
        strides[dim] = step
        step *= sizes[dim]
    return tuple(strides)


def _attention_strides(values: list[Any], sizes: tuple[int, ...]) -> tuple[int, ...] | None:
    """scaled_dot_product_attention's result on the CPU. Eager picks its flash kernel for 4-D query, key and value
    of one batch and head count, equal head sizes, no dropout (nor mask: the rule declines masks) and a unit
    innermost stride each; that kernel makes the result like the query (`empty_like`), so a dense query's strides
    carry over. nn.MultiheadAttention's queries are such permuted views:

        q = x.view(L, N * H, E).transpose(0, 1).view(N, H, L, E)    strides (H*E, E, N*H*E, 1), the result's too

    Its other path (math: softmax(q kᵀ) v by matrix products) makes a contiguous result. None where neither
    is sure (a query that is not dense, flash attention switched off, empty sequences)."""
    query, key, value, _, dropout_p = values[:5]
    if query.dim() != 4 or dropout_p != 0 or not key.shape[-1] == value.shape[-1] == query.shape[-1]:
        return _contiguous_strides(sizes)
    flash = torch.backends.cuda.flash_sdp_enabled() and query.shape[:2] == key.shape[:2] == value.shape[:2] and \
        all(t.stride(-1) == 1 and t.numel() > 0 for t in (query, key, value))
    return query.stride() if flash and _dense(query) and tuple(query.shape) == tuple(sizes) else None


# Layout rules of their own, by operator: the result's strides from the operator's values and the result's sizes.
RESULT_LAYOUTS = {"aten::scaled_dot_product_attention": _attention_strides}


def _shared_layout(sizes: tuple[int, ...], inputs: list[torch.Tensor]) -> tuple[int, ...] | None:
    """The layout of inputs that all have the result's shape and agree on their layout, or None."""
    if not inputs or any(tuple(t.shape) != tuple(sizes) for t in inputs):
        return None
    if all(t.is_contiguous() for t in inputs):
        return _contiguous_strides(sizes)
    if all(t.is_contiguous(memory_format=torch.channels_last) for t in inputs):
        return inputs[0].stride()
    if all(_dense(t) for t in inputs) and len({t.stride() for t in inputs}) == 1:
        return inputs[0].stride()
    return None


def _compare_dimensions(a: int, b: int, aligned: list[tuple[int, ...]], sizes: tuple[int, ...]) -> int:
    """1 where dimension `a` lies outside `b` (they swap: `b` goes in), -1 where inside, 0 where no input tells."""
    for strides in aligned:
        if strides[a] == 0 or strides[b] == 0:
            continue
        if strides[a] != strides[b]:
            return 1 if strides[a] > strides[b] else -1
        if sizes[a] > sizes[b]:
            return 1
    return 0


def _broadcast_strides(tensor: torch.Tensor, sizes: tuple[int, ...]) -> tuple[int, ...]:
    """The tensor's strides over the result's dimensions: 0 where it is broadcast (a new or a size-1 one)."""
    new = len(sizes) - tensor.dim()
    own = [0 if size == 1 and sizes[new + i] != 1 else stride
           for i, (size, stride) in enumerate(zip(tensor.shape, tensor.stride()))]
    return (0,) * new + tuple(own)


def _dense(tensor: torch.Tensor) -> bool:
    """Whether the tensor's elements fill a block of memory exactly once, in some order of its dimensions."""
    expected = 1
    for stride, size in sorted((stride, size) for size, stride in zip(tensor.shape, tensor.stride()) if size > 1):
        if stride != expected:
            return False
        expected *= size
    return True


def _contiguous_strides(sizes: tuple[int, ...]) -> tuple[int, ...]:
    return torch.empty(sizes, device="meta").stride()


def _overlaps_itself(tensor: Any) -> bool:
    """Whether several indices reach one element (`x.expand(3, 4)`: a stride 0 over a size above 1)."""
    return isinstance(tensor, torch.Tensor) and any(
        stride == 0 and size > 1 for size, stride in zip(tensor.shape, tensor.stride()))


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
