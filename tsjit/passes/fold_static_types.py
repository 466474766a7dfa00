"""Fold what refined tensor types state: sizes, ranks and dtypes become constants.

    %s : int[] = aten::size(%x)                       %s : int[] = prim::Constant[value=[2, 3]]()
    %d : int = aten::dim(%x)                 ->       %d : int = prim::Constant[value=2]()
    %n : int = aten::len(%x)                          %n : int = prim::Constant[value=2]()
    %f : bool = aten::is_floating_point(%x)           %f : bool = prim::Constant[value=1]()
    (with %x : Float(2, 3))

Library code checks shapes with comparisons of size lists (`hx.size() != expected` in nn.LSTM) or picks a path by
dtype (nn.MultiheadAttention's fast-path checks); once types are refined (tsjit.mlir.shapes for MLIR preparation,
where the compiled program is specialized to its arguments' static shapes anyway), folding them lets
static_control_flow remove the checks and the Ifs on them. F._canonical_mask (nn.MultiheadAttention's
key_padding_mask) keeps a float mask and turns a bool one into a float one on `mask.is_floating_point()`: unfolded,
the branch that keeps the mask yields a bool tensor where the If's refined type is float. Sound only where no op
changes a tensor's metadata in place (`unsqueeze_`, `resize_`), which makes a value's type describe it only before
that op: callers ask shape_analysis.may_change_tensor_metadata first. A tensor's length (its first size: the trip
count of `for a, b in zip(x, y)`) folds too, so that a loop over a tensor of static size has a constant trip count.
"""

from __future__ import annotations

from tsjit import log
from tsjit.ir import types as ts
from tsjit.ir.constants import constant_value
from tsjit.ir.graph import Graph, Node
from tsjit.ir.scalar_type import dtype_to_code
from tsjit.ir.symbols import aten, prim

_DTYPE_QUERIES = {
    prim.dtype: dtype_to_code,
    aten.is_floating_point: lambda dtype: dtype.is_floating_point,
    aten.is_complex: lambda dtype: dtype.is_complex,
}
_FOLDED = frozenset({aten.size, aten.dim, aten.len, *_DTYPE_QUERIES})


def fold_static_types(graph: Graph) -> bool:
    """`aten::size(%t)`, `aten::size(%t, d)`, `aten::dim(%t)`, `aten::len(%t)`, `prim::dtype(%t)`,
    `aten::is_floating_point(%t)` and `aten::is_complex(%t)` -> constants, where %t's refined type states them."""
    changed = False
    for node in [n for n in graph.all_nodes() if n.kind in _FOLDED]:
        value = _static_value(node)
        if value is not None and log.opt_allowed():
            with graph.insert_point_guard(node):
                node.output().replace_all_uses_with(graph.insert_constant(value, node.output().type))
            node.destroy()
            changed = True
    return changed


def _static_value(node: Node) -> int | bool | list[int] | None:
    type_ = node.input(0).type
    if node.kind in _DTYPE_QUERIES:
        dtype = type_.dtype if isinstance(type_, ts.TensorType) else None
        return None if dtype is None else _DTYPE_QUERIES[node.kind](dtype)
    sizes = type_.sizes if isinstance(type_, ts.TensorType) else None
    if sizes is None or len(node.outputs) != 1:
        return None
    if node.kind is aten.dim:
        return len(sizes)
    if node.kind is aten.len:
        return sizes[0] if sizes else None
    if len(node.inputs) == 1:
        known = [size for size in sizes if size is not None]
        return known if len(known) == len(sizes) else None
    dim = node.input(1)
    index = constant_value(dim.node) if dim.node.kind is prim.Constant else None
    return sizes[index] if isinstance(index, int) and -len(sizes) <= index < len(sizes) else None
