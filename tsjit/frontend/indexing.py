"""Tensor indexing (part of the IR emitter): `x[1:3, None, 4, ..., idx]` to slice, unsqueeze, select, index.

Each index applies to a dimension that depends on the indices before it: a slice keeps the dimension, None
adds one, an int removes one; after an ellipsis dimensions count from the end. So dimensions are assigned in
two passes, left to right up to the ellipsis and right to left after it, and then the int and slice indices
are applied; tensor indices (and lists, made tensors) are collected for one aten::index at the end:

    x[1:, None, 2]      %a = aten::slice(%x, 0, 1, None, 1)
                        %b = aten::unsqueeze(%a, 1)
                        %c = aten::select(%b, 2, 2)
"""

from __future__ import annotations

import torch

from tsjit.errors import CompileError
from tsjit.frontend.sugared_value import SliceValue, emit_builtin_call
from tsjit.frontend.tree_views import Expr, SliceExpr
from tsjit.ir import types as T
from tsjit.ir.graph import Value
from tsjit.ir.symbols import aten
from tsjit.source import lexer as lx


def emit_int_and_slice_indexing(emitter, loc, sliceable: Value, subscripts: list[Expr]
                                ) -> tuple[Value, list[Value]]:
    """Apply the int, slice and None indices; return the result and the tensor indices still to apply
    (one per dimension, None constants where a dimension is not indexed)."""
    dims: list[int] = [0] * len(subscripts)
    values: list[Value | None] = [None] * len(subscripts)
    position, dim = 0, 0
    while position < len(subscripts) and subscripts[position].kind != lx.TK_DOTS:
        dim = _assign_dim(emitter, loc, subscripts, position, dim, dims, values, reverse=False)
        position += 1
    reverse_dim = -1
    for index in range(len(subscripts) - 1, position, -1):
        if subscripts[index].kind == lx.TK_DOTS:
            raise CompileError("An index can only have a single ellipsis ('...')", loc)
        reverse_dim = _assign_dim(emitter, loc, subscripts, index, reverse_dim, dims, values, reverse=True)
    return _apply_indices(emitter, loc, sliceable, subscripts, dims, values)


def _assign_dim(emitter, loc, subscripts: list[Expr], index: int, dim: int, dims: list[int],
                values: list[Value | None], reverse: bool) -> int:
    """Record the dimension index `index` applies to; return the dimension the next index applies to."""
    dims[index] = dim
    step = -1 if reverse else 1
    expr = subscripts[index]
    if isinstance(expr, SliceExpr) or isinstance(emitter.emit_sugared_expr(expr, 1), SliceValue):
        return dim + step
    value = emitter.emit_expr(expr, T.NoneType.get() if expr.kind == lx.TK_NONE else None)
    if isinstance(value.type, T.ListType):
        # indexing with a list means indexing with a tensor of it (always long, as eager PyTorch does)
        value = emit_builtin_call(emitter.graph, loc, aten.tensor, [value], {"dtype": torch.int64})
    values[index] = value
    if value.type.is_subtype_of(T.NoneType.get()):
        return dim if reverse else dim + 1
    if value.type == T.IntType.get():
        return dim - 1 if reverse else dim
    if value.type.is_subtype_of(T.OptionalType(T.TensorType.get())):
        if reverse:
            raise CompileError("Ellipses followed by tensor indexing is currently not supported", loc)
        return dim + 1
    raise CompileError(f"Unsupported operation: indexing tensor with unsupported index type "
                       f"'{value.type.annotation_str()}'. Only ints, slices, lists and tensors are supported", loc)


def _apply_indices(emitter, loc, sliceable: Value, subscripts: list[Expr], dims: list[int],
                   values: list[Value | None]) -> tuple[Value, list[Value]]:
    graph = emitter.graph
    tensor_indices: list[Value | None] = []
    for expr, dim, value in zip(subscripts, dims, values):
        if value is None:
            sliceable = _apply_slice(emitter, loc, sliceable, expr, dim)
            continue
        dim_value = graph.insert_constant(dim, source_range=loc)
        if value.type.is_subtype_of(T.NoneType.get()):
            sliceable = emit_builtin_call(graph, loc, aten.unsqueeze, [sliceable, dim_value])
        elif value.type == T.IntType.get():
            sliceable = emit_builtin_call(graph, loc, aten.select, [sliceable, dim_value, value])
        else:
            tensor_indices.extend([None] * (dim + 1 - len(tensor_indices)))
            tensor_indices[dim] = value
    filled = [index if index is not None else graph.insert_constant(None) for index in tensor_indices]
    return sliceable, filled


def _apply_slice(emitter, loc, sliceable: Value, expr: Expr, dim: int) -> Value:
    """A slice (`a:b:c` or a `slice(...)` value) at `dim`; an ellipsis does nothing."""
    if isinstance(expr, SliceExpr):
        return emitter.emit_slice(loc, sliceable, emitter.graph.insert_constant(dim, source_range=loc), expr)
    if expr.kind == lx.TK_DOTS:
        return sliceable
    slice_value = emitter.emit_sugared_expr(expr, 1)
    if isinstance(slice_value, SliceValue):
        dim_value = emitter.graph.insert_constant(dim, source_range=loc)
        return emitter.emit_slice_op(loc, sliceable, dim_value, slice_value.start, slice_value.stop,
                                     slice_value.step)
    return sliceable
