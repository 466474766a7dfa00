"""Creating autodiff subgraphs: runs of nodes with gradient formulas become prim::DifferentiableGraph nodes.

(seed: jit-overview.md "Derivate Splitting": CreateAutodiffSubgraphs.) As fusion groups are found, adjacent
operations with known gradient formulas (runtime/symbolic_script.py) are grouped; each group becomes one
prim::DifferentiableGraph whose Subgraph holds the nodes (the constants they read copied in) and returns the
values read after it. The executor then splits each subgraph into a forward and a backward graph
(runtime/autodiff.py), and runs it with runtime/differentiable_graph_op.py:

    %t : Tensor = aten::mul(%x, %y)          %z : Tensor = prim::DifferentiableGraph_0(%x, %y)
    %z : Tensor = aten::tanh(%t)      ->     %n : int = aten::dim(%z)
    %n : int = aten::dim(%z)                 with prim::DifferentiableGraph_0 = graph(%x : Tensor, %y : Tensor):
                                               %t : Tensor = aten::mul(%x, %y)
                                               %z : Tensor = aten::tanh(%t)
                                               return (%z)

Walking each block backwards, a differentiable node not yet grouped that reads a value which may require grad (a
tensor input not typed `requires_grad=0`, a tensor read from a module attribute, or a result computed from one)
starts a group, which pulls in the differentiable producers of its inputs (same block), one at a time, while a
producer can move down to just before the group (AliasDb: nothing in between reads its results or writes what it
reads). Nodes without a formula (aten::size, list construction, an operator autograd must run) stay outside, their
results inputs of the group. Entering a DifferentiableGraph costs an autograd.Function call, so only groups of at
least `min_graph_size` operators are kept (2, as TorchScript's profiling executor); smaller ones are left as they
are.
"""

from __future__ import annotations

import functools

from tsjit import log
from tsjit.ir.alias_analysis import AliasDb
from tsjit.ir.graph import Block, Graph, Node, Value
from tsjit.ir.symbols import prim
from tsjit.ir.types import ListType, OptionalType, TensorType, TupleType, Type
from tsjit.ops.nondeterminism import is_nondeterministic
from tsjit.passes.graph_fuser import create_fusion_group, in_block, later_first
from tsjit.passes.inliner import insert_graph

DEFAULT_MIN_GRAPH_SIZE = 2


def create_autodiff_subgraphs(graph: Graph, min_graph_size: int = DEFAULT_MIN_GRAPH_SIZE) -> bool:
    """Group differentiable nodes into prim::DifferentiableGraph nodes; whether the graph changed."""
    slicer = _SubgraphSlicer(graph, _values_requiring_grad(graph))
    slicer.group_block(graph.block)
    for node in list(graph.all_nodes()):
        for block in node.blocks:
            slicer.group_block(block)
    changed = False
    for group in slicer.groups:
        if len(group) >= min_graph_size and log.opt_allowed():
            subgraph = create_fusion_group(graph, group, kind=prim.DifferentiableGraph)
            log.graph_update(f"{', '.join(str(n.kind) for n in group)} into a {subgraph.kind}")
            changed = True
    return changed


def inline_autodiff_subgraph(node: Node) -> None:
    """Replace a prim::DifferentiableGraph node by the nodes of its Subgraph (TorchScript's
    InlineAutodiffSubgraphs, for a group not worth entering)."""
    graph = node.owning_graph
    with graph.insert_point_guard(node):
        outputs = insert_graph(graph, node.g("Subgraph"), list(node.inputs))
    for old, new in zip(node.outputs, outputs):
        old.replace_all_uses_with(new)
    log.graph_update(f"inlined a {node.kind} of {len(list(node.g('Subgraph').nodes()))} nodes")
    node.destroy()


@functools.cache
def _is_differentiable():
    """runtime/symbolic_script.py's answer (the one edge from passes up to runtime: the formula table)."""
    from tsjit.runtime.symbolic_script import is_differentiable  # deferred: runtime loads when the pass runs

    return is_differentiable


class _SubgraphSlicer:
    """Finds the groups (moving producers next to their consumers); groups are lists of nodes in block order."""

    def __init__(self, graph: Graph, requires_grad: set[Value]):
        self.alias_db = AliasDb(graph)
        self.requires_grad = requires_grad
        self.groups: list[list[Node]] = []
        self.grouped: set[Node] = set()
        self.differentiable = _is_differentiable()

    def group_block(self, block: Block) -> None:
        for node in list(block.reverse_nodes()):
            if node in self.grouped or node.kind is prim.Constant or not self.differentiable(node):
                continue
            if not any(v in self.requires_grad for v in node.inputs):
                continue
            group = [node]
            self.grouped.add(node)
            self.pull_producers(group)
            self.groups.append(group)

    def pull_producers(self, group: list[Node]) -> None:
        while True:
            producer = next((p for p in self.producers(group) if self.can_pull(p, group)), None)
            if producer is None or not log.opt_allowed():
                return
            if not self.alias_db.move_before_topologically_valid(producer, group[0]) or producer.next is not group[0]:
                return
            group.insert(0, producer)
            self.grouped.add(producer)

    def producers(self, group: list[Node]) -> list[Node]:
        """The group's producers in its block, the latest first."""
        members, block = set(group), group[0].owning_block
        found = {v.node for n in group for v in n.inputs if v.node.owning_block is block and v.node not in members}
        return sorted(found, key=functools.cmp_to_key(later_first))

    def can_pull(self, producer: Node, group: list[Node]) -> bool:
        if producer in self.grouped or producer.kind is prim.Constant or not self.differentiable(producer):
            return False
        first = group[0]
        for value in producer.outputs:  # nothing between the producer and the group reads its results
            for use in value.uses:
                user = in_block(use.user, first.owning_block)
                if user is None or (user is not first and user.is_before(first)):
                    return False
        between = list(_between(producer, first))
        if is_nondeterministic(producer) and any(is_nondeterministic(inner) for node in between
                                                 for inner in (node, *_nested(node))):
            return False  # random draws stay in program order (eager's numbers under a seed)
        return not any(self.alias_db.writes_to_alias(node, producer.inputs) for node in between)


def _values_requiring_grad(graph: Graph) -> set[Value]:
    """The tensors that may require grad: inputs not typed `requires_grad=0`, module attributes, block inputs
    (loop-carried values, conservatively), and results of nodes reading any of them."""
    found = {v for v in graph.inputs if _may_require_grad(v.type)}
    for node in graph.all_nodes():
        for block in node.blocks:
            found.update(v for v in block.inputs if _may_require_grad(v.type))
        if node.kind is prim.GetAttr or any(v in found for v in node.inputs) or any(
                v in found for b in node.blocks for v in b.outputs):
            found.update(v for v in node.outputs if _may_require_grad(v.type))
    return found


def _may_require_grad(type_: Type) -> bool:
    if isinstance(type_, OptionalType):
        return _may_require_grad(type_.elem)
    if isinstance(type_, TupleType | ListType):
        return any(_may_require_grad(t) for t in type_.contained_types())
    return isinstance(type_, TensorType) and type_.requires_grad is not False and (
        type_.dtype is None or type_.dtype.is_floating_point or type_.dtype.is_complex)


def _nested(node: Node):
    return (inner for block in node.blocks for inner in block.all_nodes())


def _between(first: Node, last: Node):
    node = first.next
    while node is not None and node is not last:
        yield node
        node = node.next
