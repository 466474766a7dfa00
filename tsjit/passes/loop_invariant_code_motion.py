"""Loop-invariant code motion: a node of a loop body that computes the same value on every iteration runs once,
before the loop.

    %h : Tensor = prim::Loop(%n, %true, %h0)                  %wt : Tensor = aten::t(%w)
      block0(%i : int, %h1 : Tensor):                          %h : Tensor = prim::Loop(%n, %true, %h0)
        %wt : Tensor = aten::t(%w)                     ->        block0(%i : int, %h1 : Tensor):
        %h2 : Tensor = aten::mm(%h1, %wt)                          %h2 : Tensor = aten::mm(%h1, %wt)
        -> (%true, %h2)                                            -> (%true, %h2)

A recurrent cell called from a scripted loop transposes its weights at every step (`x.mm(w_ih.t())`); unrolling
repeats that eight times per iteration. TorchScript has no such pass: its loops run in C++, where a transpose costs
little; tsjit's plans are Python, where each op call counts.

A node moves when all of these hold:
- its inputs are all defined outside the loop (or by nodes already moved);
- it has no blocks, and nothing in the graph writes memory its inputs or outputs may alias (AliasDb's
  flow-insensitive `has_writers`), so every iteration would read the same memory;
- it is in the table below: ops that are deterministic, write nothing, and cannot fail on the types their inputs
  have. The last condition keeps a loop that runs zero times from raising an error it never raised
  (`aten::t` of a 3-d tensor fails).
The loop body's other nodes stay; nodes of nested blocks stay in their blocks. A node equal to one already moved
out of the same loop (unrolling copied it) is replaced by that one when both results only feed operators that make
new memory and write nothing (see `_stays_inside`).
"""

from __future__ import annotations

from collections.abc import Callable

from tsjit import log
from tsjit.ir import types as T
from tsjit.ir.alias_analysis import AliasDb
from tsjit.ir.constants import constant_of
from tsjit.ir.graph import Block, Graph, Node, Value
from tsjit.ir.symbols import Symbol, aten, prim
from tsjit.passes.common_subexpression_elimination import NodeKey


def loop_invariant_code_motion(graph: Graph) -> bool:
    """Move the invariant nodes of every prim::Loop body before the loop; returns whether any moved."""
    loops = [node for node in graph.all_nodes() if node.kind is prim.Loop]
    if not loops:
        return False
    aliases = AliasDb(graph)
    changed = False
    for loop in reversed(loops):  # inner loops first: what leaves an inner loop may then leave the outer one
        changed |= _hoist_from(loop, aliases)
    return changed


def _hoist_from(loop: Node, aliases: AliasDb) -> bool:
    body = loop.blocks[0]
    moved: dict[NodeKey, Node] = {}  # what this loop gave up, for the copies unrolling made
    changed = False
    for node in list(body.nodes()):
        if not (_is_invariant(node, body) and _is_movable(node, aliases) and log.opt_allowed()):
            continue
        key = NodeKey(node)
        earlier = moved.get(key)
        if earlier is not None and _stays_inside(node) and _stays_inside(earlier):
            log.graph_update(f"loop-invariant {node.kind} is one moved before: reusing it")
            for old, new in zip(node.outputs, earlier.outputs):
                old.replace_all_uses_with(new)
            node.destroy()
        else:
            log.graph_update(f"moving loop-invariant {node.kind} before its prim::Loop")
            node.move_before(loop)
            moved.setdefault(key, node)
        changed = True
    return changed


def _stays_inside(node: Node) -> bool:
    """Whether the node's results are only read by operators whose results are new memory and which write nothing
    (`aten::mm`): then no caller and no later node sees which of two equal nodes computed them, and one serves
    both. (CSE's test, whether they may reach the graph's outputs, says yes whenever the weights are inputs: the
    caller's tensors may all alias.)"""
    return all(_reads_into_new_memory(use.user, use.offset) for value in node.outputs for use in value.uses)


def _reads_into_new_memory(user: Node, offset: int) -> bool:
    schema = user.maybe_schema() if not user.blocks and user.kind.ns == "aten" else None
    if schema is None or offset >= len(schema.arguments):
        return False
    if schema.arguments[offset].alias_info is not None:  # written, or aliased by a result
        return False
    return all(result.alias_info is None for result in schema.returns)


def _is_invariant(node: Node, body: Block) -> bool:
    return not node.blocks and all(not _defined_in(value, body) for value in node.inputs)


def _defined_in(value: Value, body: Block) -> bool:
    """Whether `value` is defined in `body` or in a block nested in it (block inputs included)."""
    block = value.node.owning_block if value.node is not body.param_node else body
    while block is not None:
        if block is body:
            return True
        owner = block.owning_node
        block = owner.owning_block if owner is not None else None
    return False


def _is_movable(node: Node, aliases: AliasDb) -> bool:
    cannot_fail = _CANNOT_FAIL.get(node.kind)
    return cannot_fail is not None and cannot_fail(node) and not aliases.has_writers(node)


def _rank(value: Value) -> int | None:
    return value.type.rank if isinstance(value.type, T.TensorType) else None


def _dims_in_range(node: Node, rank: int | None) -> bool:
    """The constant int inputs after `self` are dimensions of a tensor of `rank` (negative ones count back)."""
    if rank is None:
        return False
    dims = [constant_of(value) for value in node.inputs[1:]]
    return all(isinstance(d, int) and not isinstance(d, bool) and -max(rank, 1) <= d < max(rank, 1) for d in dims)


# kind -> whether the node cannot fail given its input types; each op here is deterministic and writes nothing
_CANNOT_FAIL: dict[Symbol, Callable[[Node], bool]] = {
    aten.t: lambda node: (rank := _rank(node.inputs[0])) is not None and rank <= 2,
    aten.transpose: lambda node: len(node.inputs) == 3 and _dims_in_range(node, _rank(node.inputs[0])),
    aten.detach: lambda node: _rank(node.inputs[0]) is not None,
}
