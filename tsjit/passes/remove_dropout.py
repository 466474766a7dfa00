"""Dropout removal: in a frozen module (eval mode) `aten::dropout(%x, %p, False)` returns `%x`.

    %t : bool = prim::Constant[value=0]()
    %y : Tensor = aten::dropout(%x, %p, %t)        ->     (uses of %y use %x)

Only nodes whose `train` argument is the constant False are removed; the in-place and feature variants too.
"""

from __future__ import annotations

from tsjit import log
from tsjit.ir.constants import constant_value
from tsjit.ir.graph import Graph, Node
from tsjit.ir.symbols import aten, prim
from tsjit.passes.dead_code_elimination import eliminate_dead_code

DROPOUT_KINDS = frozenset({aten.dropout, aten.dropout_, aten.feature_dropout, aten.feature_dropout_})


def remove_dropout(graph: Graph) -> bool:
    """Remove every dropout that is known not to train; returns whether any was."""
    changed = False
    for node in [n for n in graph.all_nodes() if n.kind in DROPOUT_KINDS]:
        if _not_training(node) and log.opt_allowed():
            log.graph_update(f"removing {node.kind} in eval mode")
            node.output().replace_all_uses_with(node.inputs[0])
            node.destroy()
            changed = True
    if changed:
        eliminate_dead_code(graph)
    return changed


def _not_training(node: Node) -> bool:
    train = node.named_input("train")
    return train.node.kind is prim.Constant and constant_value(train.node) is False
