"""Concatenations fused into the kernel computing their pieces: `cat([a, b, ...], dim)` of a FusionGroup's outputs
becomes one output of the group, a prim::VarConcat in its subgraph, which the kernel writes piece by piece.

(TorchScript's fuser did the same: fuseConcats, prim::FusedConcat.) A backward graph of the LSTM cell
concatenates the four gates' gradients, which one kernel computes, before the products that read them:

    %i, %f, %g, %o = prim::FusionGroup_0(...)             %c = prim::FusionGroup_0(...)
    %l : Tensor[] = prim::ListConstruct(%i, %f, %g, %o)   ->   with prim::FusionGroup_0 = graph(...):
    %c : Tensor = aten::cat(%l, %1)                               ...
                                                                  %c = prim::VarConcat(%i, %f, %g, %o, %1)
                                                                  return (%c)

The kernel writes each piece at its offset along the dimension (tsjit.codegen.c_kernel): no cat, no list, and one
output allocated instead of four. Applies when the dim is an int constant, the list is read by the cat alone, and
its items are distinct outputs of one FusionGroup of the cat's block, each read by the list alone, tensors of the
group's dtype and one rank. The pieces must have one shape to be concatenated there, which the launch checks when
the kernel runs (tsjit.codegen.launch); otherwise the group's subgraph runs, and VarConcat is eager's cat.
"""

from __future__ import annotations

from tsjit import log
from tsjit.ir.constants import constant_value
from tsjit.ir.graph import Graph, Node, Value
from tsjit.ir.symbols import aten, prim
from tsjit.ir.types import TensorType


def fuse_concats(graph: Graph) -> bool:
    """Move every concatenation of one FusionGroup's outputs into that group; whether any moved."""
    changed = False
    for node in list(graph.all_nodes()):
        group = _fusible_concat(node)
        if group is None or not log.opt_allowed():
            continue
        _move_into_group(graph, node, group)
        log.graph_update(f"aten::cat of {group.kind}'s outputs into the group as a prim::VarConcat")
        changed = True
    return changed


def _fusible_concat(cat: Node) -> Node | None:
    """The FusionGroup whose outputs `cat` concatenates, when the concatenation can move into it."""
    if cat.kind is not aten.cat or len(cat.inputs) != 2 or not isinstance(cat.output().type, TensorType):
        return None
    items, dim = cat.inputs
    if dim.node.kind is not prim.Constant or type(constant_value(dim.node)) is not int:
        return None
    construct = items.node
    if construct.kind is not prim.ListConstruct or len(items.uses) != 1 or len(construct.inputs) < 2:
        return None
    pieces = construct.inputs
    group = pieces[0].node
    if group.kind is not prim.FusionGroup or group.owning_block is not cat.owning_block:
        return None
    if len(set(pieces)) != len(pieces) or not all(_piece_of(value, group) for value in pieces):
        return None
    types = [value.type for value in pieces]
    rank = types[0].rank
    if rank is None or not -rank <= constant_value(dim.node) < rank:
        return None
    return group if all(t.rank == rank and t.dtype is types[0].dtype for t in types) else None


def _piece_of(value: Value, group: Node) -> bool:
    return value.node is group and len(value.uses) == 1 and isinstance(value.type, TensorType)


def _move_into_group(graph: Graph, cat: Node, group: Node) -> None:
    items, dim = cat.inputs
    construct = items.node
    positions = [value.offset for value in construct.inputs]
    subgraph = group.g("Subgraph")
    with subgraph.insert_point_guard(subgraph.return_node):
        dim_value = subgraph.insert_constant(constant_value(dim.node))
        concat = subgraph.insert_node(subgraph.create(
            prim.VarConcat, [subgraph.outputs[k] for k in positions] + [dim_value], 1))
    concat.output().copy_metadata(cat.output())
    subgraph.register_output(concat.output())
    result = group.add_output().copy_metadata(cat.output())
    cat.output().replace_all_uses_with(result)
    cat.destroy()
    construct.destroy()
    for k in sorted(positions, reverse=True):
        group.erase_output(k)
        subgraph.erase_output(k)
