"""Canonical order of control-flow outputs: sort the outputs of every If and Loop by their first use.

The emitter adds outputs to control flow nodes in the order variables happen to be discovered; sorting them
by where they are first used makes graphs that differ only in that order print identically (TorchScript's
CanonicalizeOutputs, run right after compiling):

    %b, %a = prim::If(%c)      ->    %a, %b = prim::If(%c)      (when %a is used before %b)

Outputs without uses keep their relative order, after the used ones. Uses in different blocks are ordered
as they appear in a graph dump.
"""

from __future__ import annotations

import functools

from tsjit import log
from tsjit.ir.graph import Block, Graph, Node, Use, Value
from tsjit.ir.symbols import prim


def order_outputs_by_first_use(graph: Graph) -> bool:
    """Reorder If and Loop outputs by first use; returns whether anything changed."""
    return _order_block(graph.block)


def _order_block(block: Block) -> bool:
    changed = False
    for node in list(block.reverse_nodes()):
        if node.kind in (prim.If, prim.Loop):
            order = sort_indexes(list(node.outputs))
            if order != list(range(len(order))) and log.opt_allowed():
                (_permute_loop_carried if node.kind is prim.Loop else _permute_if_outputs)(node, order)
                changed = True
        for inner in node.blocks:
            changed |= _order_block(inner)
    return changed


def sort_indexes(values: list[Value]) -> list[int]:
    """Indexes of `values` ordered by each value's first use (unused values last, in their order)."""
    first_uses = [_first_use(v) for v in values]

    def compare(i: int, j: int) -> int:
        a, b = first_uses[i], first_uses[j]
        if a is None and b is None:
            return i - j
        if a is None or b is None:
            return 1 if a is None else -1
        return -1 if _use_is_before(a, b) else 1

    return sorted(range(len(values)), key=functools.cmp_to_key(compare))


def _first_use(value: Value) -> Use | None:
    first = None
    for use in value.uses:
        if first is None or _use_is_before(use, first):
            first = use
    return first


def _use_is_before(a: Use, b: Use) -> bool:
    if a.user is b.user:
        return a.offset < b.offset
    return is_before_in_dump(a.user, b.user)


def is_before_in_dump(n1: Node, n2: Node) -> bool:
    """Whether n1 prints before n2: program order, the true block before the false one, owners first."""
    d1, d2 = _depth(n1), _depth(n2)
    while d1 > d2:
        n1, d1 = _owner(n1), d1 - 1
        if n1 is n2:
            return False
    while d2 > d1:
        n2, d2 = _owner(n2), d2 - 1
        if n2 is n1:
            return True
    while n1.owning_block is not n2.owning_block:
        owner1, owner2 = _owner(n1), _owner(n2)
        if owner1 is owner2:
            return owner1.blocks.index(_block(n1)) < owner1.blocks.index(_block(n2))
        n1, n2 = owner1, owner2
    return n1.is_before(n2)


def _block(node: Node) -> Block:
    block = node.owning_block
    assert block is not None, "the node is not in a graph"
    return block


def _owner(node: Node) -> Node:
    """The node whose block holds `node`, which must not be at the top level of its graph."""
    owner = _block(node).owning_node
    assert owner is not None, "a top-level node has no owner"
    return owner


def _depth(node: Node) -> int:
    depth = 0
    owner = _block(node).owning_node
    while owner is not None:
        owner, depth = _block(owner).owning_node, depth + 1
    return depth


def _permute_if_outputs(node: Node, order: list[int]) -> None:
    permute_outputs(node, order)
    for block in node.blocks:
        _permute_inputs(block.return_node, order)


def _permute_loop_carried(node: Node, order: list[int]) -> None:
    permute_outputs(node, order)
    _permute_inputs(node, [0, 1] + [i + 2 for i in order])
    body = node.blocks[0]
    _permute_inputs(body.return_node, [0] + [i + 1 for i in order])
    permute_outputs(body.param_node, [0] + [i + 1 for i in order])


def permute_outputs(node: Node, order: list[int]) -> None:
    """Reorder a node's outputs in place (the Values, their uses and names are kept)."""
    outputs = tuple(node.outputs[i] for i in order)
    node.outputs = outputs
    for offset, value in enumerate(outputs):
        value.offset = offset


def _permute_inputs(node: Node, order: list[int]) -> None:
    values = [node.inputs[i] for i in order]
    for i, value in enumerate(values):
        node.replace_input(i, value)
