"""Indexing while tracing: `x[i]` and `x[i] = v` recorded as the operators PyTorch's indexing code calls
(python_variable_indexing.cpp), keeping traced sizes as graph values so `x[:n]` generalizes:

    x[:, 1]            aten::slice(%x, 0, 0, 9223372036854775807, 1), then aten::select(%s, 1, 1)
    x[None, ..., -1]   aten::unsqueeze(%x, 0), then aten::select(%u, 2, -1)
    x[:n]              aten::slice(%x, 0, 0, aten::Int(%n), 1)
    x[mask]            aten::index(%x, prim::ListConstruct(%mask))
    y[0] = t           aten::select(%y, 0, 0), then aten::copy_(%s, %t, False)
    y[0] = 3.0         aten::select(%y, 0, 0), then aten::fill_(%s, Float(){3})
    y[mask] = 0.0      aten::index_put_(%y, [%mask], Float(){0}, False)

The value the program sees is the one PyTorch's own indexing computed; the operators are re-run only to learn
the intermediate views' types. Indices of other kinds fall back to recording what indexing dispatched.
"""

from __future__ import annotations

from typing import Any

import torch

from tsjit.frontend.trace_arguments import is_int_like
from tsjit.frontend.tracer import DispatchProbe, TracingState, record_dispatched
from tsjit.ir import types as T
from tsjit.ir.constants import INT64_MAX, wrapped_number
from tsjit.ops.registry import find_operator


class _Unsupported(Exception):
    """An index the recorder does not handle: record what indexing dispatched instead."""


def getitem(state: TracingState, func, args: tuple) -> Any:
    """`tensor[index]`: the slicing operators, then `aten::index` for tensor indices."""
    tensor, index = args
    probe = DispatchProbe()
    with probe:
        result = func(tensor, index)
    try:
        sliced, tensor_indices = _slice(state, tensor, _as_tuple(index))
        if tensor_indices:
            _apply(state, "aten::index.Tensor", [sliced, tensor_indices], result)
        elif sliced is tensor:
            _apply(state, "aten::alias", [tensor], result)  # `x[...]`
        else:
            state.set_value(result, state.value_of(sliced))
    except _Unsupported:
        record_dispatched(state, probe.calls, func)
    return result


def setitem(state: TracingState, func, args: tuple) -> None:
    """`tensor[index] = value`: the slicing operators, then `copy_`/`fill_`, or `index_put_` for tensor indices."""
    tensor, index, value = args
    probe = DispatchProbe()
    with probe:
        func(tensor, index, value)
    try:
        sliced, tensor_indices = _slice(state, tensor, _as_tuple(index))
        source = value if isinstance(value, torch.Tensor) else torch.tensor(value, dtype=tensor.dtype)
        if tensor_indices:
            _apply(state, "aten::index_put_", [sliced, tensor_indices, source, False], sliced)
        else:
            _copy_to(state, sliced, source)
    except _Unsupported:
        record_dispatched(state, probe.calls, func)


def _as_tuple(index: Any) -> tuple:
    if isinstance(index, tuple):
        return index
    if isinstance(index, list) and any(isinstance(i, slice | type(None) | type(Ellipsis) | list) for i in index):
        raise _Unsupported  # a list read as a tuple of indices: PyTorch's legacy rule
    return (index,)


def _slice(state: TracingState, tensor: torch.Tensor, index: tuple) -> tuple[torch.Tensor, list]:
    """Apply the basic indices (PyTorch's applySlicing); the tensor indices left for `aten::index`, by dim."""
    result, dim, tensor_indices = tensor, 0, []
    for item in index:
        if item is Ellipsis:
            dim += tensor.dim() - _specified_dims(index)
        elif item is None:
            result, dim = _apply(state, "aten::unsqueeze", [result, dim]), dim + 1
        elif isinstance(item, slice):
            result, dim = _apply(state, "aten::slice.Tensor", [result, dim, *_bounds(item)]), dim + 1
        elif is_int_like(item) and not isinstance(item, bool):
            result = _apply(state, "aten::select.int", [result, dim, item])
        elif isinstance(item, list) or (isinstance(item, torch.Tensor) and item.dim() > 0):
            tensor_indices += [None] * (dim - len(tensor_indices)) + [_index_tensor(state, item)]
            dim += 1
        else:
            raise _Unsupported
    return result, tensor_indices


def _specified_dims(index: tuple) -> int:
    """How many dimensions the indices consume (a mask consumes its rank), for where `...` ends."""
    count = 0
    for item in index:
        if isinstance(item, torch.Tensor) and item.dtype in (torch.bool, torch.uint8):
            count += item.dim()
        elif item is not None and item is not Ellipsis and not isinstance(item, bool):
            count += 1
    return count


def _bounds(item: slice) -> list[Any]:
    if item.step is not None and is_int_like(item.step) and int(item.step) <= 0:
        raise _Unsupported
    return [0 if item.start is None else item.start, INT64_MAX if item.stop is None else item.stop,
            1 if item.step is None else item.step]


def _index_tensor(state: TracingState, item: Any) -> torch.Tensor:
    """A tensor index; a list becomes a constant tensor converted with `aten::to`, as PyTorch's indexing does."""
    if isinstance(item, torch.Tensor):
        return item
    constant = torch.tensor(item)
    converted = constant.detach()
    state.record_call(find_operator("aten::to.device").schema, [constant, constant.device, constant.dtype], converted)
    return converted


def _copy_to(state: TracingState, destination: torch.Tensor, source: torch.Tensor) -> None:
    """PyTorch's copy_to: copy_ if the sizes agree, fill_ from a 0-dim CPU value, else broadcast then copy_."""
    if destination.shape == source.shape:
        _apply(state, "aten::copy_", [destination, source, False], destination)
    elif source.dim() == 0 and source.device.type == "cpu":
        _apply(state, "aten::fill_.Tensor", [destination, source], destination)
    else:
        sizes = list(source.shape)
        while sizes and sizes[0] == 1:
            sizes.pop(0)
        view = _apply(state, "aten::view", [source, sizes])
        expanded = _apply(state, "aten::expand", [view, list(destination.shape), False])
        _apply(state, "aten::copy_", [destination, expanded, False], destination)


def _apply(state: TracingState, name: str, values: list[Any], result: Any = None) -> Any:
    """Record operator `name` on `values`; run it (with sizes as ints) to learn the output unless `result` is
    the output already."""
    operator = find_operator(name)
    schema = operator.schema
    if result is None:
        result = operator.get_operation()(*[_concrete(a.type, v) for a, v in zip(schema.arguments, values)])
    state.record_call(schema, values, result)
    return result


def _concrete(type_: T.Type, value: Any) -> Any:
    if isinstance(value, torch.Tensor) and isinstance(type_, T.IntType):
        return int(value)
    if isinstance(type_, T.TensorType) and not isinstance(value, torch.Tensor):
        return wrapped_number(value)
    return value
