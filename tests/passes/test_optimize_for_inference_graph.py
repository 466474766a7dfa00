"""optimize_for_inference_graph: optimize_frozen_graph, then linear layers as a matmul by the transposed weight."""

from __future__ import annotations

from pass_case import check_pass
from test_fold_frozen_linear_batchnorm import LINEAR_BN, weights

from tsjit.passes.frozen_graph_optimizations import optimize_for_inference_graph


def test_batch_norm_folds_then_the_linear_becomes_a_matmul():
    check_pass(optimize_for_inference_graph, LINEAR_BN, constants=weights(), present=["aten::matmul", "aten::add"],
               absent=["aten::batch_norm", "aten::linear"])
