"""Fold what refined tensor types state: sizes, ranks and dtypes become constants.

    %s : int[] = aten::size(%x)                       %s : int[] = prim::Constant[value=[2, 3]]()
    %d : int = aten::dim(%x)                 ->       %d : int = prim::Constant[value=2]()
    (with %x : Float(2, 3))

Library code checks shapes with comparisons of size lists (`hx.size() != expected` in nn.LSTM) or picks a path by
dtype (nn.MultiheadAttention's fast-path checks); once types are refined (tsjit.mlir.shapes for MLIR preparation,
where the compiled program is specialized to its arguments' static shapes anyway), folding them lets
static_control_flow remove the checks and the Ifs on them. Sound only where no op changes a tensor's metadata in
place (`unsqueeze_`, `resize_`), which makes a value's type describe it only before that op: callers ask
shape_analysis.may_change_tensor_metadata first.
"""

from __future__ import annotations

from tsjit import log
from tsjit.ir import types as ts
from tsjit.ir.constants import constant_value
from tsjit.ir.graph import Graph, Node
from tsjit.ir.scalar_type import dtype_to_code
from tsjit.ir.symbols import aten, prim


def fold_static_types(graph: Graph) -> bool:
    """`aten::size(%t)`, `aten::size(%t, d)`, `aten::dim(%t)` and `prim::dtype(%t)` -> constants, where %t's
    refined type states them."""
    changed = False
    for node in [n for n in graph.all_nodes() if n.kind in (aten.size, aten.dim, prim.dtype)]:
        value = _static_value(node)
        if value is not None and log.opt_allowed():
            with graph.insert_point_guard(node):
                node.output().replace_all_uses_with(graph.insert_constant(value, node.output().type))
            node.destroy()
            changed = True
    return changed


def _static_value(node: Node) -> int | list[int] | None:
    type_ = node.input(0).type
    if node.kind is prim.dtype:
        return dtype_to_code(type_.dtype) if isinstance(type_, ts.TensorType) and type_.dtype is not None else None
    sizes = type_.sizes if isinstance(type_, ts.TensorType) else None
    if sizes is None or len(node.outputs) != 1:
        return None
    if node.kind is aten.dim:
        return len(sizes)
    if len(node.inputs) == 1:
        known = [size for size in sizes if size is not None]
        return known if len(known) == len(sizes) else None
    dim = node.input(1)
    index = constant_value(dim.node) if dim.node.kind is prim.Constant else None
    return sizes[index] if isinstance(index, int) and -len(sizes) <= index < len(sizes) else None
