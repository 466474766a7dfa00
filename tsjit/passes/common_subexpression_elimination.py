"""Common subexpression elimination: compute each pure expression once.

    graph(%x : Tensor):                          graph(%x : Tensor):
      %1 : int = prim::Constant[value=1]()         %1 : int = prim::Constant[value=1]()
      %a : Tensor = aten::add(%x, %x, %1)    ->    %a : Tensor = aten::add(%x, %x, %1)
      %b : Tensor = aten::add(%x, %x, %1)          %c : Tensor = aten::mul(%a, %a)
      %c : Tensor = aten::mul(%a, %b)              return (%c)
      return (%c)

Two nodes are the same expression when their kinds, inputs (the same Values), output types and attributes
agree; attributes compare by value (`1` is not `True`, `0.0` is not `-0.0`), tensors by dtype, device, shape
and contents, subgraphs and other objects by identity. A later node equal to an earlier one is replaced by
it. Nodes in nested blocks see the expressions of the blocks around them (which dominate them), never those
of sibling blocks.

What is never merged, asking AliasDb (seed: "Writing optimization passes with AliasDb"): nodes with side
effects, nondeterministic ops (`aten::rand`, `dropout` unless `train` is a constant False), nodes with blocks,
nodes whose inputs or outputs any node writes (the flow-insensitive `has_writers`: the value read may differ),
two nodes whose outputs both reach the graph's outputs (the caller would see one value twice), and a node
with a match in an enclosing block when making them one would be observable (`safe_to_change_aliasing`).

Unlike torch.jit, which compares floats with `==`, `0.0` and `-0.0` stay apart.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from tsjit import log
from tsjit.ir.alias_analysis import AliasDb, has_side_effects
from tsjit.ir.graph import Block, Graph, Node
from tsjit.ops.nondeterminism import is_nondeterministic


def eliminate_common_subexpression(graph: Graph) -> bool:
    """Replace repeated pure expressions by their first occurrence; returns whether anything changed."""
    return _eliminate_in_block(graph.block, AliasDb(graph), _Table(None))


class _Table:
    """The expressions seen in one block, and (through `parent`) in the blocks enclosing it."""

    def __init__(self, parent: _Table | None):
        self.parent = parent
        self.nodes: dict[NodeKey, Node] = {}

    def find_in_parents(self, key: NodeKey) -> Node | None:
        table = self.parent
        while table is not None:
            if key in table.nodes:
                return table.nodes[key]
            table = table.parent
        return None


def _eliminate_in_block(block: Block, db: AliasDb, table: _Table) -> bool:
    changed = False
    for node in block.nodes():
        if node.blocks:
            for inner in node.blocks:
                changed |= _eliminate_in_block(inner, db, _Table(table))
            continue
        if not _is_candidate(node, db):
            continue
        key = NodeKey(node)
        outer = table.find_in_parents(key)
        if outer is not None:
            if db.safe_to_change_aliasing_relationship(node.outputs, outer.outputs):
                changed |= _replace(node, outer, db)
            continue
        existing = table.nodes.get(key)
        if existing is None:
            table.nodes[key] = node
        elif not (db.may_contain_alias(node.outputs, block.owning_graph.outputs)
                  and db.may_contain_alias(existing.outputs, block.owning_graph.outputs)):
            changed |= _replace(node, existing, db)
    return changed


def _is_candidate(node: Node, db: AliasDb) -> bool:
    return not (has_side_effects(node) or is_nondeterministic(node) or db.has_writers(node))


def _replace(node: Node, existing: Node, db: AliasDb) -> bool:
    if not log.opt_allowed():
        return False
    log.graph_update(f"replacing {node.kind} defining {', '.join('%' + v.debug_name for v in node.outputs)} "
                     f"with the equal node defining {', '.join('%' + v.debug_name for v in existing.outputs)}")
    for old, new in zip(node.outputs, existing.outputs):
        old.replace_all_uses_with(new)
        db.replace_value(old, new)
    node.destroy()
    return True


class NodeKey:
    """What makes two nodes the same expression; hashes by kind, inputs, output types and attributes."""

    __slots__ = ("node", "_hash", "_attributes")

    def __init__(self, node: Node):
        self.node = node
        self._attributes = tuple((name, node.kind_of(name), _attribute_key(node._attribute(name)[1]))
                                 for name in sorted(node.attribute_names(), key=str))
        self._hash = hash((node.kind, tuple(id(v) for v in node.inputs), tuple(v.type for v in node.outputs),
                           self._attributes))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NodeKey):
            return False
        a, b = self.node, other.node
        return (a.kind == b.kind and a.inputs == b.inputs and len(a.outputs) == len(b.outputs)
                and all(x.type == y.type for x, y in zip(a.outputs, b.outputs))
                and self._attributes == other._attributes)


def _attribute_key(value: Any) -> Any:
    """An attribute value as something hashable whose equality is "interchangeable as a constant"."""
    if isinstance(value, torch.Tensor):
        return _TensorKey(value)
    if isinstance(value, list | tuple):
        return (type(value).__name__, tuple(_attribute_key(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((_attribute_key(k), _attribute_key(v)) for k, v in value.items()))
    if isinstance(value, float):
        return ("float", "nan" if math.isnan(value) else value, math.copysign(1.0, value))
    if isinstance(value, complex):
        return ("complex", _attribute_key(value.real), _attribute_key(value.imag))
    try:
        hash(value)
    except TypeError:
        return ("object", id(value))
    return (type(value).__name__, value)


class _TensorKey:
    """A tensor attribute: equal to another of the same dtype, device, shape, grad flag and contents."""

    __slots__ = ("tensor",)

    def __init__(self, tensor: torch.Tensor):
        self.tensor = tensor

    def _meta(self) -> tuple:
        t = self.tensor
        return t.dtype, t.device, tuple(t.shape), t.layout, t.requires_grad

    def __hash__(self) -> int:
        return hash(self._meta())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _TensorKey):
            return False
        if self.tensor is other.tensor:
            return True
        return self._meta() == other._meta() and bool(torch.equal(self.tensor, other.tensor))
