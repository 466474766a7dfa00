"""Graph fusion: runs of elementwise float operators become prim::FusionGroup nodes, each one compiled kernel.

(seed: jit-overview.md "Post-derivative optimization": FuseGraph; jit-overview-early.md "FusionGroup".)

    %a : Float(*, device=cpu) = aten::sin(%x)             %r : Float(*, device=cpu) = prim::FusionGroup_0(%x, %y)
    %b : Float(*, device=cpu) = aten::mul(%a, %y)    ->   with prim::FusionGroup_0 = graph(%x : Float(*, device=cpu),
    %r : Float(*, device=cpu) = aten::relu(%b)                                           %y : Float(*, device=cpu)):
                                                            %a : Float(*, device=cpu) = aten::sin(%x)
                                                            ...
                                                            return (%r)

First, as TorchScript's fuser does, a chunk into a constant number of pieces that are unpacked at once becomes
one prim::ConstantChunk node, which kernels compute by reading the chunked value at the chunk's offset:

    %l : Tensor[] = aten::chunk(%gates, %2, %1)
    %i : Float(*, *), %f : Float(*, *) = prim::ListUnpack(%l)
        ->  %i : Float(*, *), %f : Float(*, *) = prim::ConstantChunk[chunks=2, dim=1](%gates)

A node is fusible when tsjit.codegen.elementwise can compute it (or it is such a chunk) and the executor's shape
analysis typed its tensor operands and its result with one float dtype (float32 or float64) on the CPU and known
ranks; operands of other shapes broadcast (sizes known to differ and not 1 do not); its scalar operands are int or
float constants or values. Walking each block backwards, a fusible node not yet in a group (and not a chunk)
starts one, which then pulls in the fusible producers of its inputs (same dtype, same block), one at a time,
while a producer can move down to just before the group: nothing in between reads its results or writes memory
its inputs may alias (AliasDb; fusible operators write nothing). A producer whose result is also read after the
group becomes an output of the group, so it must be shaped like the group's first output (the kernel writes
outputs of one shape: same rank, no size known to differ) and must not be what a chunk splits; a chunk joins
only if the group reads all its pieces (a piece read elsewhere is a view, which a kernel does not make). So a
group is a contiguous run of nodes; it becomes one FusionGroup node whose Subgraph holds the nodes (the
constants they read copied in) and returns the values read outside the group. A group stops growing at
MAX_GROUP_SIZE nodes (the nodes before it start another). A group of a single operator is left alone: fusing it
would only put a guard in front of one eager kernel. Groups left side by side that read each other's results
or a same value then merge into one (merge_adjacent_groups). The seed's LSTM cell fuses into one
group taking the two matmuls' results, the biases and the cell state: the bias adds, the chunk, the gates.
Last, a cat of a group's outputs moves into the group, which writes the pieces in place (concat_fusion.py).

Fusion breaks autograd, so graphs with an input that requires grad are left alone (seed: post-derivative
optimization is for graphs that need no gradient). Tensors the graph reads from elsewhere (module parameters)
are checked at run time: the FusionGroup's Operation (tsjit.runtime.fusion) falls back to the subgraph when
an input requires grad, or is not what the kernel expects.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

import torch

from tsjit import log
from tsjit.codegen.elementwise import KINDS, OPERATORS, OPTIONAL_SCALAR, TENSOR
from tsjit.ir.alias_analysis import AliasDb
from tsjit.ir.constants import constant_value
from tsjit.ir.graph import Block, Graph, Node, Value
from tsjit.ir.symbols import Symbol, aten, prim
from tsjit.ir.types import FloatType, IntType, TensorType, Type, requires_grad
from tsjit.passes.concat_fusion import fuse_concats
from tsjit.passes.inliner import insert_graph

FUSIBLE_DTYPES = (torch.float32, torch.float64)
_CPU = torch.device("cpu")
MIN_GROUP_SIZE = 2
# At most this many nodes in one group: a kernel is one C expression per output, and the C compiler's time and
# memory grow faster than its size (a 4,000-operator chain in one kernel kept cc1 busy for 25 minutes at 2 GB).
MAX_GROUP_SIZE = 256


def fuse_graph(graph: Graph) -> bool:
    """Replace groups of fusible nodes by prim::FusionGroup nodes; returns whether the graph changed."""
    if any(requires_grad(value.type) for value in graph.inputs):
        log.graph_debug("an input requires grad: nothing is fused")
        return False
    changed = constant_chunks(graph)
    fuser = _Fuser(graph)
    fuser.group_block(graph.block)
    for node in list(graph.all_nodes()):
        for block in node.blocks:
            fuser.group_block(block)
    changed = fuser.create_fusion_groups() or changed
    changed = merge_adjacent_groups(graph) or changed
    return fuse_concats(graph) or changed


def merge_adjacent_groups(graph: Graph) -> bool:
    """Two FusionGroups next to each other become one (one kernel call instead of two) when the second reads
    what the first computes or both read a same value, the merged group's outputs may share one shape and it
    stays within MAX_GROUP_SIZE. The walk above pulls a producer only while no reader sits between it and the
    group, so a value read by several consumers (a backward graph's gradient of a chunked value, read by the
    gradient of each piece) leaves one group per consumer, side by side. Unrelated groups stay apart."""
    changed = False
    for block in [graph.block, *(b for n in list(graph.all_nodes()) for b in n.blocks)]:
        node = block.return_node.next
        while node is not block.return_node:
            following = node.next
            if (node.kind is prim.FusionGroup and following.kind is prim.FusionGroup
                    and _can_merge(node, following) and log.opt_allowed()):
                node = _merge(graph, node, following)
                changed = True
            else:
                node = following
    return changed


def _can_merge(first: Node, second: Node) -> bool:
    size = sum(1 for group in (first, second) for n in group.g("Subgraph").nodes() if n.kind is not prim.Constant)
    if size > MAX_GROUP_SIZE:
        return False
    if not any(v.node is first or v in first.inputs for v in second.inputs):
        return False
    dtypes = {v.type.dtype for group in (first, second) for v in group.outputs}
    outputs = [v for v in first.outputs if any(u.user is not second for u in v.uses)] + list(second.outputs)
    return len(dtypes) == 1 and all(_same_shape(v.type, outputs[0].type) for v in outputs)


def _merge(graph: Graph, first: Node, second: Node) -> Node:
    """Both groups' nodes put back in the graph, in order, and grouped again as one."""
    nodes: list[Node] = []
    for group in (first, second):
        with graph.insert_point_guard(group):
            start = group.prev
            assert start is not None  # a block's first node follows its param node
            outputs = insert_graph(graph, group.g("Subgraph"), list(group.inputs))
            nodes += _between(start, group)
        for old, new in zip(group.outputs, outputs):
            old.replace_all_uses_with(new)
        group.destroy()
    merged = create_fusion_group(graph, [n for n in nodes if n.kind is not prim.Constant])
    log.graph_update(f"merged two adjacent fusion groups into {merged.kind}")
    return merged


def constant_chunks(graph: Graph) -> bool:
    """Rewrite `prim::ListUnpack(aten::chunk(x, chunks, dim))` with constant chunks and dim, the list read by
    nothing else and x fusible, into `prim::ConstantChunk[chunks, dim](x)`."""
    changed = False
    for node in list(graph.all_nodes()):
        unpack = _unpacked_chunk(node)
        if unpack is None or not log.opt_allowed():
            continue
        chunk = graph.create(prim.ConstantChunk, [node.inputs[0]], len(unpack.outputs))
        chunk.i_("chunks", node.get("chunks")).i_("dim", node.get("dim")).insert_before(node)
        chunk.source_range, chunk.scope, chunk.callstack = node.source_range, node.scope, node.callstack
        for old, new in zip(unpack.outputs, chunk.outputs):
            new.copy_metadata(old)
            old.replace_all_uses_with(new)
        constants = [v.node for v in node.inputs[1:] if v.node.kind is prim.Constant]
        unpack.destroy()
        node.destroy()
        for constant in constants:  # the chunk count and dim, now attributes
            if not constant.output().uses:
                constant.destroy()
        log.graph_update(f"aten::chunk into prim::ConstantChunk[chunks={chunk.i('chunks')}, dim={chunk.i('dim')}]")
        changed = True
    return changed


def _unpacked_chunk(node: Node) -> Node | None:
    """The prim::ListUnpack of a chunk of a fusible tensor with constant chunks and dim unpacking all of them
    (None if not so). Other chunks stay as they are: only a fusion group gains from the rewrite."""
    if node.kind is not aten.chunk or len(node.output().uses) != 1 or not _is_fusible_tensor(node.inputs[0].type):
        return None
    unpack, chunks, dim = node.output().uses[0].user, node.get("chunks"), node.get("dim")
    if unpack.kind is not prim.ListUnpack or not isinstance(chunks, int) or not isinstance(dim, int):
        return None
    return unpack if len(unpack.outputs) == chunks else None


def fusible_dtype(node: Node) -> torch.dtype | None:
    """The dtype of a fusible node's tensors, or None when the node cannot be fused."""
    if node.kind is prim.ConstantChunk:
        return _chunk_dtype(node)
    if node.kind not in KINDS or len(node.outputs) != 1:
        return None
    schema = node.maybe_schema()
    entry = OPERATORS.get(schema.operator_name) if schema is not None else None
    result = node.output().type
    if entry is None or len(entry.roles) != len(node.inputs) or not _is_fusible_tensor(result):
        return None
    dtype = result.dtype
    tensors = [result]
    for value, role in zip(node.inputs, entry.roles):
        if role == TENSOR:
            if not _is_fusible_tensor(value.type) or value.type.dtype is not dtype:
                return None
            tensors.append(value.type)
        elif not _is_scalar(value, optional=role == OPTIONAL_SCALAR):
            return None
    return dtype if _broadcastable(tensors) else None


def _chunk_dtype(node: Node) -> torch.dtype | None:
    """A prim::ConstantChunk of a fusible tensor into pieces of its dtype and rank (what kernels can read)."""
    source = node.input().type
    if not _is_fusible_tensor(source) or not -source.rank <= node.i("dim") < source.rank:
        return None
    if not all(_is_fusible_tensor(v.type) and v.type.dtype is source.dtype and v.type.rank == source.rank
               for v in node.outputs):
        return None
    return source.dtype


def _is_fusible_tensor(type_: Type) -> bool:
    return (isinstance(type_, TensorType) and type_.dtype in FUSIBLE_DTYPES and type_.device == _CPU
            and type_.undefined is False and type_.sizes is not None)


def _is_scalar(value: Value, optional: bool) -> bool:
    """An int or float: a constant, or a value the kernel takes as an argument (None too, if optional)."""
    if value.node.kind is prim.Constant:
        constant = constant_value(value.node)
        if constant is None:
            return optional
        return isinstance(constant, int | float) and not isinstance(constant, bool)
    return isinstance(value.type, IntType | FloatType)


def _broadcastable(types: list[TensorType]) -> bool:
    """Whether these tensors may broadcast together: no dimension (aligned from the right) has two known sizes
    other than 1 that differ."""
    shapes = [t.sizes or () for t in types]  # fusible tensors have a known rank
    rank = max(map(len, shapes))
    padded = [(1,) * (rank - len(shape)) + shape for shape in shapes]
    return all(len({s for s in dims if s not in (None, 1)}) <= 1 for dims in zip(*padded))


def _same_shape(a: TensorType, b: TensorType) -> bool:
    """Whether two tensor types may have one shape: one rank, no size known to differ."""
    first, second = a.sizes or (), b.sizes or ()
    return len(first) == len(second) and all(x is None or y is None or x == y for x, y in zip(first, second))


class _Fuser:
    """Groups nodes (moving producers next to their consumers), then turns the groups into FusionGroups."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self.alias_db = AliasDb(graph)
        self.groups: list[list[Node]] = []
        self.grouped: set[Node] = set()

    def group_block(self, block: Block) -> None:
        for node in list(block.reverse_nodes()):
            seed = node not in self.grouped and node.kind is not prim.ConstantChunk
            dtype = fusible_dtype(node) if seed else None
            if dtype is not None:
                group = [node]
                self.grouped.add(node)
                self.pull_producers(group, dtype)
                self.groups.append(group)

    def pull_producers(self, group: list[Node], dtype: torch.dtype) -> None:
        """Move fusible producers of the group's inputs right before it and add them, until none can. The
        producers are kept as the group grows (recomputing them from every member made a long chain quadratic)."""
        members = set(group)
        producers = self.producers_of(group[0], members)
        while len(group) < MAX_GROUP_SIZE:
            producer = next((p for p in sorted(producers, key=functools.cmp_to_key(later_first))
                             if self.can_pull(p, group, members, dtype)), None)
            if producer is None or not log.opt_allowed():
                return
            moved = self.alias_db.move_before_topologically_valid(producer, group[0])
            if not moved or producer.next is not group[0]:  # AliasDb saw a hazard can_pull did not: stop here
                return
            group.insert(0, producer)
            members.add(producer)
            self.grouped.add(producer)
            producers.discard(producer)
            producers |= self.producers_of(producer, members)

    @staticmethod
    def producers_of(node: Node, members: set[Node]) -> set[Node]:
        """The nodes in `node`'s block, outside `members`, that define `node`'s inputs."""
        block = node.owning_block
        return {v.node for v in node.inputs if v.node.owning_block is block and v.node not in members}

    def can_pull(self, producer: Node, group: list[Node], members: set[Node], dtype: torch.dtype) -> bool:
        if producer in self.grouped or fusible_dtype(producer) is not dtype:
            return False
        first = group[0]
        read_after = False
        for value in producer.outputs:  # no reader between the producer and the group
            for use in value.uses:
                user = in_block(use.user, first.owning_block)
                if user is None or (user is not first and user.is_before(first)):
                    return False
                read_after = read_after or user not in members
        if read_after and not self.can_be_output(producer, group, members):
            return False
        # and no write to what it reads
        return not any(self.alias_db.writes_to_alias(node, producer.inputs) for node in _between(producer, first))

    def can_be_output(self, producer: Node, group: list[Node], members: set[Node]) -> bool:
        """Whether the group may output the producer's result: not a chunk's piece (a view), not what a chunk in
        the group splits, and shaped like the group's first output."""
        if producer.kind is prim.ConstantChunk or _feeds_chunk(producer, members):
            return False
        return _same_shape(producer.output().type, group[-1].outputs[0].type)

    def create_fusion_groups(self) -> bool:
        changed = False
        for group in self.groups:
            if len(group) >= MIN_GROUP_SIZE and log.opt_allowed():
                fusion_group = create_fusion_group(self.graph, group)
                log.graph_update(f"fused {', '.join(str(n.kind) for n in group)} into {fusion_group.kind} "
                                 f"with outputs {', '.join('%' + v.debug_name for v in fusion_group.outputs)}")
                changed = True
        return changed


def _feeds_chunk(node: Node, members: set[Node]) -> bool:
    """Whether a prim::ConstantChunk among `members` splits `node`'s result or a value computed from it there."""
    users = {use.user for value in node.outputs for use in value.uses if use.user in members}
    return any(user.kind is prim.ConstantChunk or _feeds_chunk(user, members) for user in users)


def later_first(a: Node, b: Node) -> int:
    return 1 if a.is_before(b) else -1


def in_block(node: Node, block: Block | None) -> Node | None:
    """`node`, or the node of `block` that contains it in a nested block (None if none does)."""
    current: Node | None = node
    while current is not None and current.owning_block is not block:
        owner = current.owning_block
        current = owner.owning_node if owner is not None else None
    return current


def _between(first: Node, last: Node) -> Iterator[Node]:
    """The nodes strictly between `first` and `last` of one block."""
    node = first.next
    while node is not None and node is not last:
        yield node
        node = node.next


def create_fusion_group(graph: Graph, nodes: list[Node], kind: Symbol = prim.FusionGroup) -> Node:
    """Replace a contiguous run of nodes by one prim::FusionGroup (or another subgraph node `kind`: a
    prim::DifferentiableGraph) computing the values read after them (the constants they read are copied into
    the subgraph)."""
    subgraph, inputs, constants, mapping = Graph(), [], [], {}
    members = set(nodes)
    for node in nodes:
        for value in node.inputs:
            if value in mapping:
                continue
            if value.node.kind is prim.Constant and not isinstance(value.type, TensorType):
                constant = subgraph.insert_node(subgraph.create_clone(value.node, lambda v: v))
                mapping[value] = constant.output()
                constants.append(value.node)
            else:
                mapping[value] = subgraph.add_input().copy_metadata(value)
                inputs.append(value)
        clone = subgraph.insert_node(subgraph.create_clone(node, mapping.__getitem__))
        mapping.update(zip(node.outputs, clone.outputs))
    outputs = [v for n in nodes for v in n.outputs if any(u.user not in members for u in v.uses)]
    for value in outputs:
        subgraph.register_output(mapping[value])
    fusion_group = graph.create(kind, inputs, len(outputs))
    fusion_group.g_("Subgraph", subgraph)
    fusion_group.insert_before(nodes[0])
    for old, new in zip(outputs, fusion_group.outputs):
        new.copy_metadata(old)
        old.replace_all_uses_with(new)
    for node in reversed(nodes):
        node.destroy()
    for constant in constants:  # copied in, and no longer read outside
        if not constant.output().uses:
            constant.destroy()
    return fusion_group
