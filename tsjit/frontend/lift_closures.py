"""Lambda lifting: prim::Closure blocks become graphs, and forked closures become prim::fork nodes (TorchScript's
lift_closures.cpp and inline_forked_closures.cpp; cleanup passes of every new graph, after convert_to_ssa).

`lift_closures` gives each closure's block a graph of its own. The values the block reads from outside become one
`context` tuple: built after the closure, unpacked at the top of the new graph. The closure is then the pair
(closure, context):

    %c : NoneType = prim::Closure()             %c : NoneType = prim::Closure_0()
      block0():                                 %ctx : (Tensor, int) = prim::TupleConstruct(%x, %k)
        %y : Tensor = aten::mul(%x, %k)    ->   %p : (NoneType, (Tensor, int)) = prim::TupleConstruct(%c, %ctx)
        -> (%y)                                 with prim::Closure_0 = graph(%context : (Tensor, int)):
                                                  %x.1 : Tensor, %k.1 : int = prim::TupleUnpack(%context)
                                                  ...

`inline_forked_closures` then turns `prim::forkClosure(%p)` into `prim::fork(%x, %k)` whose Subgraph is a copy of
the closure's graph taking the captured values as inputs instead of the context; the closure and its tuples are
left to dead code elimination. Every graph made here gets the cleanup passes too, which lifts closures nested in
it. Lifting after convert_to_ssa is what makes this simple: a captured variable is just a Value defined outside
the block.
"""

from __future__ import annotations

from collections.abc import Callable

from tsjit.errors import CompileError
from tsjit.ir import types as T
from tsjit.ir.graph import Block, Graph, Node, Value
from tsjit.ir.symbols import attr, prim

Cleanup = Callable[[Graph], None]


def lift_closures(graph: Graph, cleanup: Cleanup) -> bool:
    """Lift every closure of `graph` (those nested in closures are lifted by `cleanup` of the lifted graph)."""
    return _rewrite_in_block(graph.block, lambda n: n.kind is prim.Closure and bool(n.blocks),
                             lambda n: _lift_closure(n, cleanup))


def _rewrite_in_block(block: Block, matches: Callable[[Node], bool], rewrite: Callable[[Node], None]) -> bool:
    """Rewrite every node that matches, looking inside the blocks of those that do not."""
    changed = False
    for node in list(block.nodes()):
        if matches(node):
            rewrite(node)
            changed = True
        else:
            for inner in node.blocks:
                changed |= _rewrite_in_block(inner, matches, rewrite)
    return changed


def _lift_closure(closure: Node, cleanup: Cleanup) -> None:
    graph, block = closure.owning_graph, closure.blocks[0]
    subgraph = Graph()
    context = subgraph.add_input("context")
    unpack = subgraph.insert_node(subgraph.create(prim.TupleUnpack, [context], 0))
    pack = graph.create(prim.TupleConstruct, [], 1).insert_after(closure)
    captured: dict[Value, Value] = {}

    def capture(value: Value) -> Value:
        if value not in captured:
            pack.add_input(value)
            captured[value] = unpack.add_output().copy_metadata(value)
        return captured[value]

    subgraph.block.clone_from(block, capture)
    context_type = T.TupleType(tuple(v.type for v in pack.inputs))
    context.set_type(context_type)
    pack.output().set_type(context_type)
    pair = graph.create(prim.TupleConstruct, [], 1).insert_after(pack)
    closure.output().replace_all_uses_with(pair.output())
    pair.add_input(closure.output())
    pair.add_input(pack.output())
    pair.output().set_type(T.TupleType((closure.output().type, context_type)))
    closure.erase_block(0)
    closure.g_(attr.Subgraph, subgraph)
    cleanup(subgraph)


def inline_forked_closures(graph: Graph, cleanup: Cleanup) -> bool:
    """Every `prim::forkClosure` of `graph` becomes a prim::fork of the captured values."""
    return _rewrite_in_block(graph.block, lambda n: n.kind is prim.forkClosure,
                             lambda n: _inline_forked_closure(n, cleanup))


def _inline_forked_closure(fork_closure: Node, cleanup: Cleanup) -> None:
    pair = fork_closure.input().node
    closure, context = pair.inputs[0].node, pair.inputs[1].node
    assert closure.kind is prim.Closure and context.kind is prim.TupleConstruct, "forkClosure takes a lifted closure"
    fork_graph = closure.g(attr.Subgraph).copy()
    if len(fork_graph.inputs) != 1:
        raise CompileError("Cannot fork lambda with parameters", fork_closure.source_range)
    graph = fork_closure.owning_graph
    fork = graph.create(prim.fork, [], 1).insert_after(fork_closure)
    fork.source_range = fork_closure.source_range
    # the cleanup passes drop the unpacking when no captured value is used
    graph_context = fork_graph.inputs[0]
    unpack = graph_context.uses[0].user if graph_context.uses else None
    for i, value in enumerate(context.inputs):
        fork.add_input(value)
        graph_input = fork_graph.insert_input(i).copy_metadata(value)
        if unpack is not None:
            unpack.outputs[i].replace_all_uses_with(graph_input)
    if unpack is not None:
        unpack.destroy()
    fork_graph.erase_input(len(fork_graph.inputs) - 1)
    fork.output().copy_metadata(fork_closure.output())
    fork_closure.output().replace_all_uses_with(fork.output())
    fork_closure.destroy()
    fork.g_(attr.Subgraph, fork_graph)
    cleanup(fork_graph)
