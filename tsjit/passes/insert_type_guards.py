"""Type guards for fusion groups: a prim::TypeCheck of each group's tensor inputs, the group behind a prim::If on
it, and a prim::FallbackGraph for when the check fails (TorchScript's tensorexpr fuser, insertTypeGuard).

The profiling executor fuses with the types its profiled runs saw. Those hold only when the check passes:

    %r : Float(2, 3) = prim::FusionGroup_0(%x, %y)
        ->
    %x.1 : Float(2, 3, requires_grad=0, device=cpu), %y.1 : Float(1, 3, requires_grad=0, device=cpu), %ok : bool =
        prim::TypeCheck[types=[Float(2, 3, requires_grad=0, device=cpu), Float(1, 3, ...)]](%x, %y)
    %r.3 : Tensor = prim::If(%ok)
      block0():
        %r : Float(2, 3) = prim::FusionGroup_0(%x.1, %y.1)
        -> (%r)
      block1():
        %r.2 : Tensor = prim::FallbackGraph_1[remaining_depth=1](%x, %y)
        -> (%r.2)

The check covers what the group's subgraph assumes of an input: dtype, device, requires_grad and sizes (a size of
1 against a larger one is a broadcast the group was fused for); with `dynamic`, only the rank of the sizes (the
fusion strategy's DYNAMIC specializations). Strides are left out: the kernel's launch planner checks them on
every call (tsjit.codegen.launch). The fallback's Subgraph is the group's, its tensor types unrefined: it runs on
a profiling executor of its own (tsjit.runtime.profiling_graph_executor), which may specialize it again while
`remaining_depth` is above 0. A group already inside such an If is left alone.
"""

from __future__ import annotations

from tsjit import log
from tsjit.ir.graph import Graph, Node
from tsjit.ir.symbols import prim
from tsjit.ir.types import BoolType, TensorType, unshaped_type

SUBGRAPH = "Subgraph"
REMAINING_DEPTH = "remaining_depth"


def insert_type_guards(graph: Graph, dynamic: bool = False, remaining_depth: int = 0) -> bool:
    """Guard every unguarded prim::FusionGroup as above; returns whether the graph changed."""
    groups = [n for n in graph.all_nodes() if n.kind is prim.FusionGroup and not is_guarded(n)]
    guards = {group: [guard_type(v.type, dynamic) for v in group.g(SUBGRAPH).inputs if isinstance(v.type, TensorType)]
              for group in groups}
    changed = False
    for group in groups:
        if log.opt_allowed():
            _guard(group, guards[group], remaining_depth)
            changed = True
    return changed


def is_guarded(group: Node) -> bool:
    """Whether the group is the true branch of an If on a prim::TypeCheck."""
    owner = group.owning_block.owning_node if group.owning_block is not None else None
    return owner is not None and owner.kind is prim.If and owner.input().node.kind is prim.TypeCheck


def guard_type(type_: TensorType, dynamic: bool) -> TensorType:
    """What a guard checks of a tensor of type `type_` (strides left out, sizes only as a rank if dynamic)."""
    sizes = type_.sizes if not dynamic or type_.sizes is None else (None,) * len(type_.sizes)
    return TensorType(dtype=type_.dtype, device=type_.device, requires_grad=type_.requires_grad, sizes=sizes)


def _guard(group: Node, types: list[TensorType], remaining_depth: int) -> None:
    graph = group.graph
    tensors = [i for i, v in enumerate(group.g(SUBGRAPH).inputs) if isinstance(v.type, TensorType)]
    with graph.insert_point_guard(group):
        check = graph.insert_node(graph.create(prim.TypeCheck, [group.inputs[i] for i in tensors], len(tensors) + 1))
        check.tys_("types", types)
        for output, type_ in zip(check.outputs, types):
            output.set_type(type_)
        check.outputs[-1].set_type(BoolType.get())
        branch = graph.insert_node(graph.create(prim.If, [check.outputs[-1]], len(group.outputs)))
    fused, fallback_block = branch.add_block(), branch.add_block()
    fallback = fallback_block.append_node(graph.create(prim.FallbackGraph, group.inputs, len(group.outputs)))
    fallback.g_(SUBGRAPH, fallback_subgraph(group.g(SUBGRAPH)))
    fallback.i_(REMAINING_DEPTH, max(remaining_depth, 0))
    for output, merged, unfused in zip(group.outputs, branch.outputs, fallback.outputs):
        merged.set_type(unshaped_type(output.type))
        unfused.set_type(unshaped_type(output.type))
        output.replace_all_uses_with(merged)
        fused.register_output(output)
        fallback_block.register_output(unfused)
    group.move_before(fused.return_node)
    for k, i in enumerate(tensors):
        group.replace_input(i, check.outputs[k])


def fallback_subgraph(subgraph: Graph) -> Graph:
    """A copy of a fusion group's subgraph with every tensor type unrefined (its executor specializes it)."""
    copy = subgraph.copy()
    for value in copy.inputs:
        value.set_type(unshaped_type(value.type))
    for node in copy.all_nodes():
        for value in node.outputs:
            value.set_type(unshaped_type(value.type))
    return copy
