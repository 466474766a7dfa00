"""Last uses: where each value can be released, so the interpreter frees tensors right after their last use.

A value read for the last time by a node of the block that defines it is *moved* there: the instruction clears
its register once it has read it. A value whose last reader sits in a nested block cannot be cleared there (a
loop body runs many times; a branch may not run at all), so it is dropped right after the If or Loop that holds
that reader, in the defining block:

    %a = ...                        # defined here
    %y = prim::Loop(%n, %true, %z)
      block0(%i, %z.1):
        %b = aten::add(%a, %z.1)    # not a move: the next iteration reads %a again
        -> (%true, %b)
    # drop %a                       # here %a dies, whatever the loop did

This is TorchScript's insertLastUses (runtime/interpreter/preprocess_graph.cpp), computed as a table instead of
inserting prim::Drop nodes into the graph. Values nobody reads are never stored at all (see interpreter.py).
"""

from __future__ import annotations

from collections import defaultdict
from typing import NamedTuple

from tsjit.ir.graph import Block, Graph, Node, Value


class LastUses(NamedTuple):
    """`moves[(node, i)]`: whether input i of node is the last use of its value (so it is cleared there);
    `drops[node]`: values to clear right after `node`, a control-flow node holding their last use."""

    moves: dict[tuple[Node, int], bool]
    drops: dict[Node, list[Value]]


def find_last_uses(graph: Graph) -> LastUses:
    """Scan the program backwards: the first use met of each value is its last use."""
    result = LastUses({}, defaultdict(list))
    _scan_block(graph.block, set(), result)
    return result


def _scan_block(block: Block, seen: set[Value], result: LastUses) -> None:
    _scan_node(block.return_node, seen, result)
    for node in block.reverse_nodes():
        _scan_node(node, seen, result)


def _scan_node(node: Node, seen: set[Value], result: LastUses) -> None:
    for block in node.blocks:
        _scan_block(block, seen, result)
    # backwards, so a value read twice by one node is moved by its later input
    for i in reversed(range(len(node.inputs))):
        _scan_use(node, i, seen, result)


def _scan_use(node: Node, i: int, seen: set[Value], result: LastUses) -> None:
    value = node.inputs[i]
    if value in seen:
        result.moves[(node, i)] = False
        return
    seen.add(value)
    same_depth = _owner_in_block(node, value.node.owning_block)
    result.moves[(node, i)] = same_depth is node
    if same_depth is not node:
        result.drops[same_depth].append(value)


def _owner_in_block(node: Node, block: Block) -> Node:
    """`node`, or the control-flow node enclosing it, that sits directly in `block`."""
    while node.owning_block is not block:
        node = node.owning_block.owning_node
    return node
