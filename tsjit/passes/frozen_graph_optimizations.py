"""The optimizations of frozen graphs, as torch.jit.freeze and torch.jit.optimize_for_inference run them.

`optimize_frozen_graph` removes eval-mode dropout, then (with optimize_numerics) folds, until nothing changes
(a conv followed by mul then add folds in two rounds): batch_norm, add/sub and mul/div into convolutions,
batch_norm into linear layers. `optimize_for_inference_graph` adds the CPU inference rewrites that need no
MKLDNN: linear layers become a matmul by their pre-transposed weight.
"""

from __future__ import annotations

from tsjit.ir.graph import Graph
from tsjit.passes.frozen_conv_folding import (
    fold_frozen_conv_add_or_sub,
    fold_frozen_conv_batchnorm,
    fold_frozen_conv_mul_or_div,
)
from tsjit.passes.frozen_linear_folding import fold_frozen_linear_batchnorm
from tsjit.passes.frozen_linear_transpose import frozen_linear_transpose
from tsjit.passes.pass_runner import run_pass
from tsjit.passes.remove_dropout import remove_dropout

_FOLDINGS = (fold_frozen_conv_batchnorm, fold_frozen_conv_add_or_sub, fold_frozen_conv_mul_or_div,
             fold_frozen_linear_batchnorm)


def optimize_frozen_graph(graph: Graph, optimize_numerics: bool = True) -> bool:
    """Dropout removal and, with `optimize_numerics`, the foldings; returns whether anything changed."""
    changed = run_pass(remove_dropout, graph)
    while optimize_numerics:
        round_changed = False
        for fold in _FOLDINGS:
            round_changed |= run_pass(fold, graph)
        if not round_changed:
            break
        changed = True
    return changed


def optimize_for_inference_graph(graph: Graph) -> bool:
    """The frozen-graph optimizations, then the CPU inference rewrites; returns whether anything changed."""
    changed = optimize_frozen_graph(graph)
    return run_pass(frozen_linear_transpose, graph) or changed
