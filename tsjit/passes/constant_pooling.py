"""Constant pooling: one prim::Constant per distinct value, all at the start of the graph.

    graph(%x : Tensor):                         graph(%x : Tensor):
      %1 : int = prim::Constant[value=1]()        %1 : int = prim::Constant[value=1]()
      %y : Tensor = aten::add(%x, %x, %1)   ->    %y : Tensor = aten::add(%x, %x, %1)
      %2 : int = prim::Constant[value=1]()        %z : Tensor = aten::add(%y, %y, %1)
      %z : Tensor = aten::add(%y, %y, %2)

Constants are visited in program order (nested blocks included); each new one moves to the front of the graph,
each repeated one is replaced by the first. Two constants are the same when their kinds of value, values and
output types agree (so `1` and `True` stay apart). Mutable constants that are both graph outputs are kept
apart, since callers may mutate what a graph returns.

Values holding enum members are the exception: TorchScript compares enum IValues by the identity of their
EnumHolder, which each use of a member (`Color.RED` twice) creates anew and only copies of a node share. So two
such constants are the same only when one is a copy of the other (inlined or unrolled), which here means they
share their attribute entry (`Node.copy_attributes` shares it).
"""

from __future__ import annotations

from typing import Any

import torch

from tsjit import log
from tsjit.ir.alias_analysis import is_mutable_type
from tsjit.ir.graph import Block, Graph, Node
from tsjit.ir.symbols import prim
from tsjit.ir.types import holds_enum_member


def constant_pooling(graph: Graph) -> bool:
    """Deduplicate constants and hoist them to the graph's start; returns whether anything changed."""
    return _pool_block(graph.block, graph, {})


def _pool_block(block: Block, graph: Graph, seen: dict[Any, Node]) -> bool:
    changed = False
    for node in list(block.nodes()):
        if node.blocks:
            for inner in node.blocks:
                changed |= _pool_block(inner, graph, seen)
            continue
        if node.kind is not prim.Constant or not log.opt_allowed():
            continue
        key = constant_key(node)
        existing = seen.get(key)
        if existing is None:
            seen[key] = node
            first = next(iter(graph.nodes()))
            if node is not first:
                node.move_before(first)
                changed = True
        elif not _both_returned_mutable(node, existing, graph):
            log.graph_update(f"replacing %{node.output().debug_name} with the equal %{existing.output().debug_name}")
            node.output().replace_all_uses_with(existing.output())
            node.destroy()
            changed = True
    return changed


def constant_key(node: Node) -> Any:
    """What makes two constants interchangeable: their attributes (kind and value) and output type."""
    attributes = tuple((name, node.kind_of(name), _attribute_key(node._attribute(name)))
                       for name in sorted(node.attribute_names()))
    return attributes, node.output().type


def _attribute_key(entry: tuple[str, Any]) -> Any:
    value = entry[1]
    if holds_enum_member(value):
        return ("enum holder", id(entry))
    return _hashable(value)


def _hashable(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return ("tensor", id(value))  # tensors are equal only to themselves here
    if isinstance(value, list | tuple):
        return (type(value).__name__, tuple(_hashable(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((_hashable(k), _hashable(v)) for k, v in value.items()))
    if isinstance(value, float) and value != value:
        return ("nan",)
    try:
        hash(value)
    except TypeError:
        return ("object", id(value))
    return (type(value).__name__, value)


def _both_returned_mutable(node: Node, existing: Node, graph: Graph) -> bool:
    outputs = set(graph.outputs)
    return (is_mutable_type(node.output().type) and node.output() in outputs
            and existing.output() in outputs)
