"""Linear layers of frozen graphs as a matmul by the pre-transposed weight (optimize_for_inference).

    %y : Tensor = aten::linear(%x, %w, %b)     ->     %wt : Float(in, out) = prim::Constant[value=<Tensor>]()
                                                      %m : Tensor = aten::matmul(%x, %wt)
                                                      %y : Tensor = aten::add(%m, %b, %1)

With the weight a constant, its transpose is made once (contiguous), so each call multiplies without
transposing; the bias, if any, is added after.
"""

from __future__ import annotations

import torch

from tsjit import log
from tsjit.ir.graph import Graph
from tsjit.ir.symbols import aten
from tsjit.passes.dead_code_elimination import eliminate_dead_code
from tsjit.passes.frozen_folding_utils import constant_input


def frozen_linear_transpose(graph: Graph) -> bool:
    """Rewrite every linear with a constant 2-d weight; returns whether any was."""
    changed = False
    for node in [n for n in graph.all_nodes() if n.kind is aten.linear]:
        weight, bias = constant_input(node, "weight"), constant_input(node, "bias")
        if not isinstance(weight, torch.Tensor) or weight.dim() != 2 or not log.opt_allowed():
            continue
        if bias is not None and not isinstance(bias, torch.Tensor):
            continue
        log.graph_update("rewriting aten::linear as aten::matmul by the transposed weight")
        with graph.insert_point_guard(node):
            transposed = graph.insert_constant(weight.detach().t().contiguous())
            result = graph.insert(aten.matmul, [node.inputs[0], transposed])
            if bias is not None:
                result = graph.insert(aten.add, [result, node.named_input("bias")], {"alpha": 1})
        result.node.source_range = node.source_range
        node.output().replace_all_uses_with(result)
        node.destroy()
        changed = True
    if changed:
        eliminate_dead_code(graph)
    return changed
