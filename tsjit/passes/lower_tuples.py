"""Lowering simple tuples: read tuple elements straight from the prim::TupleConstruct that built them.

    %t : (Tensor, int) = prim::TupleConstruct(%a, %b)
    %x : Tensor, %y : int = prim::TupleUnpack(%t)           ->   uses of %x read %a, of %y read %b
    %z : int = prim::TupleIndex(%t, %one)                   ->   uses of %z read %b
    %s : (int) = prim::TupleSlice[beg=1, end=2](%t)         ->   prim::TupleConstruct(%b)

TorchScript runs this right after compiling (LowerSimpleTuples): the emitter builds many tuples only to take
them apart again (`a, b = b, a`). Tuples whose construction is not visible stay; dead code is removed after.
"""

from __future__ import annotations

from tsjit import log
from tsjit.ir.constants import NOT_CONSTANT, constant_of
from tsjit.ir.graph import Block, Graph, Node
from tsjit.ir.symbols import prim
from tsjit.passes.dead_code_elimination import eliminate_dead_code


def lower_simple_tuples(graph: Graph, remove_dead: bool = True) -> bool:
    """Forward tuple elements from their TupleConstruct, then remove dead code (as TorchScript's pass, even when
    nothing was lowered: the frontend's cleanups rely on it); returns whether anything changed. With `remove_dead`
    False, the caller removes dead code itself when this returns True (the executor's graphs are already clean)."""
    changed = _lower_block(graph.block)
    if remove_dead:
        changed = eliminate_dead_code(graph) or changed
    return changed


def _lower_block(block: Block) -> bool:
    changed = False
    for node in list(block.nodes()):
        changed |= _remove_tuple_node(node)
        for inner in node.blocks:
            changed |= _lower_block(inner)
    return changed


def _remove_tuple_node(node: Node) -> bool:
    if node.kind not in (prim.TupleUnpack, prim.TupleIndex, prim.TupleSlice):
        return False
    construct = node.inputs[0].node
    if construct.kind is not prim.TupleConstruct or not log.opt_allowed():
        return False
    log.graph_update(f"reading the elements of {node.kind} from their prim::TupleConstruct")
    if node.kind is prim.TupleUnpack:
        for output, element in zip(node.outputs, construct.inputs):
            output.replace_all_uses_with(element)
        return True
    if node.kind is prim.TupleIndex:
        return _forward_index(node, construct)
    return _forward_slice(node, construct)


def _forward_index(node: Node, construct: Node) -> bool:
    index = constant_of(node.inputs[1])
    if index is NOT_CONSTANT:
        return False
    length = len(construct.inputs)
    index = index + length if index < 0 else index
    if not 0 <= index < length:
        return False
    node.output().replace_all_uses_with(construct.inputs[index])
    return True


def _forward_slice(node: Node, construct: Node) -> bool:
    graph = node.owning_graph
    values = list(construct.inputs)[node.i("beg"):node.i("end")]
    with graph.insert_point_guard(node):
        replacement = graph.insert_node(graph.create(prim.TupleConstruct, values))
    replacement.output().set_type(node.output().type)
    node.output().replace_all_uses_with(replacement.output())
    return True
